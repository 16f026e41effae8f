"""The dummy op's kernel: Y[i] = 2 * X[i] + 1 (f16) for i < n, `block` threads per workgroup."""
from __future__ import annotations

from dataclasses import dataclass

from wmma_gen.kernels.signature import KArg, KernelSource, Signature
from wmma_gen.knobs import Knob, KnobSchedule

SPACE = (Knob("block", (32, 64, 128), "threads per workgroup (one element each)"),)


@dataclass(frozen=True)
class AxpySchedule(KnobSchedule):
    block: int = 64


AxpySchedule.bind(SPACE, ())

MLIR = """module attributes {{gpu.container_module}} {{
gpu.module @m [#rocdl.target<chip = "{arch}">] {{
  gpu.func @axpy(%X: memref<16777216xf16>, %Y: memref<16777216xf16>, %n: i32) kernel
      attributes {{known_block_size = array<i32: {block}, 1, 1>}} {{
    %tid = gpu.thread_id x
    %bid = gpu.block_id x
    %bs = arith.constant {block} : index
    %base = arith.muli %bid, %bs : index
    %i = arith.addi %base, %tid : index
    %ni = arith.index_cast %n : i32 to index
    %in = arith.cmpi slt, %i, %ni : index
    scf.if %in {{
      %x = memref.load %X[%i] : memref<16777216xf16>
      %two = arith.constant 2.0 : f16
      %one = arith.constant 1.0 : f16
      %t = arith.mulf %x, %two : f16
      %y = arith.addf %t, %one : f16
      memref.store %y, %Y[%i] : memref<16777216xf16>
    }}
    gpu.return
  }}
}}
}}
"""


def build_axpy(d, s: AxpySchedule, target) -> KernelSource:
    sig = Signature("axpy", (KArg("X", "in", "f16", shape=lambda p: (p["n"],)),
                             KArg("Y", "out", "f16", shape=lambda p: (p["n"],)),
                             KArg("n", "scalar", "i32", value=lambda p: p["n"])),
                    grid=lambda p: (-(-p["n"] // s.block), 1, 1), block=(s.block, 1, 1))
    return KernelSource("axpy", MLIR.format(arch=target.arch, block=s.block), target.arch, sig)
