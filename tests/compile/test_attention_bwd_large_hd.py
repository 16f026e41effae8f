"""Static quality of the backward's defaults at head dims 272..512 (operands="global": natural
tiles read per wave from global memory, only the transposed tiles in LDS), no GPU needed: the
pre-pass, dK/dV and dQ kernels compile with 0 VGPR spills and no scratch in the heaviest variant
(bf16, causal + window + varlen + softcap), within 64 KiB of LDS as the schedule declares. Two head
dims per family stay in the quick suite (d_split 4 with an uneven split, and 8); the rest are slow."""
import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.attention_common.directive import HEAD_DIMS
from wmma_gen.ops.attention_bwd import build_backward, default_schedule, make_spec
from wmma_gen.targets import get_target

QUICK = (304, 512)
CASES = [pytest.param(arch, hd, marks=() if hd in QUICK else pytest.mark.slow)
         for arch in ("gfx1100", "gfx1201") for hd in HEAD_DIMS if hd > 256]


@pytest.mark.parametrize("arch, head_dim", CASES)
def test_large_head_dim_backward_default_no_spills(arch, head_dim):
    s = default_schedule(arch, head_dim)
    assert s.operands == "global"
    spec = make_spec(arch, "bf16", head_dim, causal=True, window=True, varlen=True, softcap=True)
    for name, src in build_backward(spec, s).items():
        m = compile_mlir(src.mlir, arch).metadata
        assert m.vgpr_spill_count == 0 and m.scratch_bytes == 0, (name, m)
        if name in ("dkdv", "dq"):
            assert m.lds_bytes == s.lds_bytes(head_dim, name) <= get_target(arch).lds_bytes == 65536
