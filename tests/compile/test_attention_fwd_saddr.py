"""The attention forward writes O in the FLAT-global SADDR form (kernels/global_tensor.GlobalTensor.write
over kernels/saddr.py): a uniform 64-bit base in SGPRs plus a 32-bit per-lane VGPR offset (RDNA3 ISA
guide ch. 10 "Global, Scratch and Flat Instructions", SADDR field; RDNA4 ISA guide, same chapter),
as it reads Q, K and V. The f32 LSE stays a flat memref store (kernel.epilogue says why)."""
import re

import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.model.isa_loop import kernel_lines
from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.ops.attention.directive import AttentionDirective
from wmma_gen.ops.attention.kernel import build_attention
from wmma_gen.targets import get_target

SADDR_STORE = re.compile(r"^global_store_\w+ v\d+, v(\[\d+:\d+\]|\d+), s\[\d+:\d+\]")


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("masks", [False, True])
def test_o_stores_use_sgpr_base(arch, masks):
    t = get_target(arch)
    d = AttentionDirective("f16", 64, return_lse=True, causal=masks, window=masks, varlen=masks)
    s = default_schedule(t, d)
    k = compile_mlir(build_attention(d, s, t).mlir, arch)
    stores = [ln for ln in kernel_lines(k.isa) if ln.startswith("global_store")]
    o = [ln for ln in stores if ln.startswith("global_store_b128")]   # 8 halves of O per lane and 16-d tile
    assert len(o) == s.frags_q * d.head_dim // 16, stores
    bad = [ln for ln in o if not SADDR_STORE.match(ln)]
    assert not bad, f"{arch}: {bad[:3]}"
    assert [ln for ln in stores if ln.startswith("global_store_b32")], f"{arch}: no LSE store"
