"""The backward at head dims 272..512 (operands="global": each wave reads its S/dP fragments of
Q, dO, K, V from global memory, only the transposed tiles in LDS; 16-key / 16-query slices split D
over 4 or 8 waves) with the default schedules on the emulator against the float64 reference
(attention_bwd_cases: dQ, dK, dV within TOL), gfx1100 and gfx1201, GQA, sequence lengths ending
inside tiles: d_split 8 (hd512) and 4 with an uneven split (hd304: 19 blocks over 4 waves)."""
import numpy as np
import pytest
from attention_bwd_cases import check

from wmma_gen.ops.attention_bwd import default_schedule


@pytest.mark.parametrize("arch, head_dim, dtype, causal", [("gfx1100", 512, "f16", False),
                                                           ("gfx1201", 304, "bf16", True)])
def test_default(arch, head_dim, dtype, causal):
    s = default_schedule(arch, head_dim)
    assert s.operands == "global" and s.lds_bytes(head_dim, "dkdv") <= 65536
    check(arch, np.random.default_rng(head_dim), dtype=dtype, heads=2, kv_heads=1, sq=21, sk=29, d=head_dim,
          causal=causal)
