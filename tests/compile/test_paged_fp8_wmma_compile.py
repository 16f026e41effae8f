"""fp8_wmma paged decode (ops/paged_attention/fp8_tiles.py) from compiler output only: the main
loop multiplies on the 8-bit float WMMA forms (E4M3 cache: fp8_fp8; E5M2: bf8_fp8 -- A is the
cache tile, B the E4M3 Q or P; RDNA4 ISA guide "V_WMMA_F32_16X16X16_*"), P is quantised in the
loop (v_cvt_pk_fp8_f32), no 16-bit WMMA or widening is left, the defaults are spill-free; and
the choice is refused where it cannot exist (gfx11, 16-bit caches, Q staged in LDS)."""
import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.ops.paged_attention.api import compile_paged
from wmma_gen.ops.paged_attention.defaults import default_schedule
from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective
from wmma_gen.ops.paged_attention.schedule import PagedSchedule
from wmma_gen.targets import get_target

FORM = {"fp8e4m3": "v_wmma_f32_16x16x16_fp8_fp8", "fp8e5m2": "v_wmma_f32_16x16x16_bf8_fp8"}


def _directive(kv, head_dim=64, masks=False, dtype="f16"):
    return PagedAttentionDirective(dtype, head_dim, 16, kv, True, masks, masks, True, fp8_wmma=True)


@pytest.mark.parametrize("kv", ["fp8e4m3", "fp8e5m2"])
def test_main_loop_runs_fp8_wmma_and_quantises_p(kv):
    d = _directive(kv)
    (src, ck), _ = compile_paged(d, default_schedule(d, "gfx1201", 4, 2048), "gfx1201")
    loop = find_main_loop(ck.isa)
    names = [op.mnemonic for op in loop.ops]
    dts, kts = d.head_dim // 16, 1            # block_n 16: one key tile per trip
    assert loop.found
    assert names.count(FORM[kv]) == 2 * dts * kts, names           # S^T (dts) + O^T (dts) per 16 keys
    assert names.count("v_cvt_pk_fp8_f32") == 4 * kts, names        # 8 P values, 2 per instruction
    assert not any(n.startswith("v_wmma") and n != FORM[kv] for n in names), "a 16-bit WMMA is left"
    assert "v_cvt_pk_fp8_f32" in [op.mnemonic for op in loop.outside]   # Q, once, before the loop


@pytest.mark.parametrize("head_dim", [16, 80, 128, 192, 256])
@pytest.mark.parametrize("kv", ["fp8e4m3", "fp8e5m2"])
@pytest.mark.parametrize("rows", [4, 64])
def test_defaults_spill_free(head_dim, kv, rows):
    d = _directive(kv, head_dim, masks=True, dtype="bf16")
    s = default_schedule(d, "gfx1201", rows, 2048, batch=1, kv_heads=1)     # the widest split, 16
    (_, ck), _ = compile_paged(d, s, "gfx1201")
    m = ck.metadata
    assert m.vgpr_spill_count == 0 and m.scratch_bytes == 0, (s, m.vgpr_count)
    assert m.lds_bytes == s.lds_bytes(d) <= 65536


def test_refused_where_it_cannot_exist():
    with pytest.raises(ScheduleError, match="fp8_wmma"):
        PagedAttentionDirective("f16", 64, 16, "f16", fp8_wmma=True)
    d = _directive("fp8e4m3")
    with pytest.raises(ScheduleError, match="gfx1100"):
        PagedSchedule().validate(d, get_target("gfx1100"))
    with pytest.raises(ScheduleError, match="q_in"):
        PagedSchedule(q_in="lds").validate(d, get_target("gfx1201"))


@pytest.mark.parametrize("q, kv, form", [("fp8e5m2", "fp8e4m3", "v_wmma_f32_16x16x16_fp8_bf8"),
                                         ("fp8e5m2", "fp8e5m2", "v_wmma_f32_16x16x16_bf8_bf8")])
def test_fp8_queries_pick_the_mixed_forms(q, kv, form):
    """q_dtype (dense fp8 attention): Q's bytes are the B operand as given -- no quantisation
    before the loop, and S^T = K8 Q8^T takes the form named A type first (K), then B (Q)."""
    d = PagedAttentionDirective("bf16", 64, 16, kv, True, fp8_wmma=True, q_dtype=q)
    (_, ck), _ = compile_paged(d, default_schedule(d, "gfx1201", 4, 2048), "gfx1201")
    loop = find_main_loop(ck.isa)
    names = [op.mnemonic for op in loop.ops]
    assert names.count(form) == d.head_dim // 16, names
    assert names.count(FORM[kv]) == d.head_dim // 16, names        # O^T += V8^T P8^T, P always E4M3
    assert "v_cvt_pk_fp8_f32" not in [op.mnemonic for op in loop.outside], "Q was requantised"
    assert ck.metadata.vgpr_spill_count == 0
