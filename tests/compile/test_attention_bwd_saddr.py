"""The attention backward reads Q, K, V, O and dO in the FLAT-global SADDR form
(kernels/global_tensor.py over kernels/saddr.py): a uniform 64-bit base in SGPRs plus a 32-bit
per-lane VGPR offset (RDNA3 ISA guide ch. 10 "Global, Scratch and Flat Instructions", SADDR
field; RDNA4 ISA guide, same chapter), the form GEMM and the attention forward use."""
import re

import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.model.isa_loop import kernel_lines
from wmma_gen.ops.attention_bwd import build_backward, default_schedule, make_spec

SADDR = re.compile(r"^global_load_\w+ v(\[\d+:\d+\]|\d+), v\d+, s\[\d+:\d+\]")


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("masks", [False, True])
def test_row_reads_use_sgpr_base(arch, masks):
    spec = make_spec(arch, "bf16", 64, causal=masks, window=masks, varlen=masks)
    for name, src in build_backward(spec, default_schedule(arch, 64)).items():
        k = compile_mlir(src.mlir, arch)
        assert k.metadata.spills == 0, f"{name}: {k.metadata}"
        # the 16-byte loads are the row reads of q/k/v/o/do (stage_rows, pre-pass)
        rows = [ln for ln in kernel_lines(k.isa) if ln.startswith("global_load_b128")]
        assert rows, f"{name}: no 16-byte global loads"
        bad = [ln for ln in rows if not SADDR.match(ln)]
        assert not bad, f"{arch} {name}: {bad[:3]}"


SADDR_STORE = re.compile(r"^global_store_\w+ v\d+, v(\[\d+:\d+\]|\d+), s\[\d+:\d+\]")
SADDR_B32 = re.compile(r"^global_load_b32 v\d+, v\d+, s\[\d+:\d+\]")


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("masks", [False, True])
def test_row_vectors_and_outputs_use_sgpr_base(arch, masks):
    """LSE/Di reads (global_load_b32), the pre-pass's Di store and the dQ/dK/dV stores are saddr
    too: no 64-bit per-lane address (issue 26 item 3: one global-tensor vocabulary)."""
    spec = make_spec(arch, "f16", 64, causal=masks, window=masks, varlen=masks)
    for name, src in build_backward(spec, default_schedule(arch, 64)).items():
        lines = kernel_lines(compile_mlir(src.mlir, arch).isa)
        stores = [ln for ln in lines if ln.startswith("global_store")]
        assert stores, f"{name}: no global stores"
        bad = [ln for ln in stores if not SADDR_STORE.match(ln)]
        assert not bad, f"{arch} {name}: {bad[:3]}"
        rows = [ln for ln in lines if ln.startswith("global_load_b32")]
        bad = [ln for ln in rows if not SADDR_B32.match(ln)]
        assert not bad, f"{arch} {name}: {bad[:3]}"
        if name != "prepass":
            assert rows, f"{name}: no LSE/Di loads"
