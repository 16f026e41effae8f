"""Static quality of the default attention-backward schedules (issue #12 targets): no VGPR
spills and no scratch at head_dim 64 and 128 on gfx1100, gfx1151 and gfx1201, and main-loop
WMMA density (v_wmma per issued instruction of the steady-state loop, model/isa_loop.py)
>= 0.07 on gfx11 and >= 0.10 on gfx12 for the dK/dV and dQ kernels at head_dim 128."""
import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.ops.attention_bwd import build_backward, default_schedule, make_spec

ARCHS = ("gfx1100", "gfx1151", "gfx1201")
DENSITY = {"gfx11": 0.07, "gfx12": 0.10}


def _compiled(arch, d, causal):
    ks = build_backward(make_spec(arch, "f16", d, causal=causal), default_schedule(arch, d))
    return {name: compile_mlir(src.mlir, arch) for name, src in ks.items()}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_default_schedules_do_not_spill(arch, d, causal):
    for name, ck in _compiled(arch, d, causal).items():
        m = ck.metadata
        assert m.spills == 0 and m.scratch_bytes == 0, f"{arch} hd{d} {name}: {m}"
        assert m.vgpr_count <= 256


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("causal", [False, True])
def test_main_loop_wmma_density_hd128(arch, causal):
    fam = "gfx12" if arch.startswith("gfx12") else "gfx11"
    for name, ck in _compiled(arch, 128, causal).items():
        if name == "prepass":
            continue
        loop = find_main_loop(ck.isa)
        assert loop.found and loop.wmma > 0, f"{arch} {name}: no WMMA loop"
        density = loop.wmma / loop.issued
        assert density >= DENSITY[fam], f"{arch} hd128 {name}: density {density:.3f} < {DENSITY[fam]}"
