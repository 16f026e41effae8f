"""The LLVM-24 head-dim-64 backward schedules (ops/attention_bwd/defaults._LLVM_DEFAULTS: 8 waves,
128-key tiles, fence="grad" on gfx11, sched="ilp" on gfx12) on the emulator under whichever MLIR
provider is loaded, so a mlir-gml run checks them too. Sk = 150 spans two 128-key tiles, the
second one ragged -- the other backward tests stay below 128 keys (tolerances: attention_bwd_cases.TOL)."""
import numpy as np
import pytest

from attention_bwd_cases import check
from wmma_gen.ops.attention_bwd import default_schedule


@pytest.mark.parametrize("arch", ("gfx1100", "gfx1201"))
@pytest.mark.parametrize("dtype,causal", [("f16", True), ("bf16", False)])
def test_llvm24_hd64_two_key_tiles(arch, dtype, causal):
    s = default_schedule(arch, 64, llvm=24)
    assert s.block_n == 128 and (s.fence, s.sched) != ("none", "default"), s   # the LLVM-24 entries
    check(arch, np.random.default_rng(150), dtype=dtype, schedule=s, heads=2, kv_heads=1, sq=40, sk=150,
          d=64, causal=causal)
