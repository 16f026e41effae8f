"""Pass pipelines: one string per stage and arch (STYLE rule 2). No env var changes them."""
from __future__ import annotations


def lowering_pipeline(arch: str) -> str:
    """GPU-dialect module -> ROCDL/LLVM dialect (stage `lower`).

    index-bitwidth=32: index math in 32 bits (operands are limited to < 2**31 elements,
    see schedule.operand_size); measured ~25% fewer instructions and faster codegen."""
    return ("builtin.module(canonicalize,cse,"
            f"convert-amdgpu-to-rocdl{{chipset={arch}}},"
            "gpu.module(convert-scf-to-cf,convert-math-to-llvm,"
            f"convert-gpu-to-rocdl{{chipset={arch} use-bare-ptr-memref-call-conv=true index-bitwidth=32}}),"
            "reconcile-unrealized-casts)")


def binary_pipeline(fmt: str, toolkit: str) -> str:
    """ROCDL module -> gpu.binary holding ISA text (fmt=isa) or a linked hsaco (fmt=bin)."""
    return f"builtin.module(gpu-module-to-binary{{format={fmt} toolkit={toolkit}}})"
