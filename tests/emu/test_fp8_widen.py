"""kernels/fp8_widen.py: the machine code LLVM emits for the fp8 -> f16 widening, run on the emulator for all
256 byte values of E4M3FN and E5M2, against a decode written here from the OCP 8-bit float spec ("OCP 8-bit
Floating Point Specification (OFP8)" rev. 1.0, section 5.1: E4M3 bias 7, no inf, NaN S.1111.111; E5M2 bias
15, inf S.11111.00, NaN S.11111.{01,10,11}; subnormals 2**(1-bias) * 0.M) in float64 -- not from
wmma_gen.numerics. E4M3 widens to x * 2**-8 (the kernel folds the 2**8 into its scale)."""
from __future__ import annotations

import numpy as np
import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.compiler.mlir_api import ir
from wmma_gen.compiler.mlir_api import gpu_ops as gpu
from wmma_gen.compiler.mlir_api import memref
from wmma_gen.emu.api import run_code_object
from wmma_gen.kernels import fp8_widen, irb
from wmma_gen.kernels.module import gpu_module_text
from wmma_gen.kernels.views import flat_view, pointer_type


def ofp8_decode(byte: int, kind: str) -> float:
    """Value of one OFP8 byte (float64), from the spec's field definitions."""
    ebits, mbits, bias = (4, 3, 7) if kind == "fp8e4m3" else (5, 2, 15)
    s, e, m = byte >> 7, (byte >> mbits) & ((1 << ebits) - 1), byte & ((1 << mbits) - 1)
    sign = -1.0 if s else 1.0
    if kind == "fp8e4m3" and e == 15 and m == 7:
        return float("nan")
    if kind == "fp8e5m2" and e == 31:
        return sign * float("inf") if m == 0 else float("nan")
    if e == 0:
        return sign * 2.0 ** (1 - bias) * (m / 2 ** mbits)
    return sign * 2.0 ** (e - bias) * (1 + m / 2 ** mbits)


def _widen_kernel(kind: str, arch: str) -> bytes:
    """Lane t reads word t (four fp8 bytes) and writes its two words of halves at 2t, 2t + 1."""
    def emit():
        ptr = pointer_type("i32")
        f = gpu.GPUFuncOp(ir.TypeAttr.get(ir.FunctionType.get([ptr, ptr], [])),
                          known_block_size=ir.DenseI32ArrayAttr.get([64, 1, 1]))
        f.attributes["sym_name"] = ir.StringAttr.get("widen")
        f.attributes["gpu.kernel"] = ir.UnitAttr.get()
        block = f.body.blocks.append(ptr, ptr)
        with ir.InsertionPoint(block):
            src, dst = (flat_view(a, "i32") for a in block.arguments)
            t = gpu.ThreadIdOp(ir.Attribute.parse("#gpu<dim x>")).result
            words = fp8_widen.widen_words(kind, memref.load(src, [t]))
            for k, w in enumerate(words):
                memref.store(w, dst, [irb.iadd(irb.imul(t, 2), k)])
            gpu.ReturnOp([])
    return compile_mlir(gpu_module_text("widen", arch, emit), arch).hsaco


@pytest.mark.parametrize("kind", ["fp8e4m3", "fp8e5m2"])
@pytest.mark.parametrize("arch", ["gfx1100", "gfx1151"])
def test_widening_is_exact_for_every_byte(kind, arch):
    src = np.arange(256, dtype=np.uint8).view(np.uint32)
    out = run_code_object(_widen_kernel(kind, arch), "widen", grid=(1, 1, 1), block=(64, 1, 1),
                          args=[src, np.zeros(128, np.uint32)]).buffers[1]
    got = out.view(np.float16).astype(np.float64)
    scale = 2.0 ** -8 if kind == "fp8e4m3" else 1.0
    want = np.array([ofp8_decode(b, kind) * scale for b in range(256)])
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan], want[~nan])
    assert np.array_equal(np.signbit(got), np.arange(256) >= 128)     # signs of zeros and NaNs kept
    assert (want[~nan] != 0).sum() == (252 if kind == "fp8e4m3" else 248)   # subnormals are nonzero


def test_the_reference_decode_matches_the_spec_table():
    """Spot values from the OFP8 spec's tables (section 5.1)."""
    assert ofp8_decode(0x7E, "fp8e4m3") == 448.0 and ofp8_decode(0x01, "fp8e4m3") == 2.0 ** -9
    assert ofp8_decode(0x08, "fp8e4m3") == 2.0 ** -6 and np.isnan(ofp8_decode(0xFF, "fp8e4m3"))
    assert ofp8_decode(0x7B, "fp8e5m2") == 57344.0 and ofp8_decode(0x01, "fp8e5m2") == 2.0 ** -16
    assert ofp8_decode(0xFC, "fp8e5m2") == -np.inf and np.isnan(ofp8_decode(0x7D, "fp8e5m2"))
