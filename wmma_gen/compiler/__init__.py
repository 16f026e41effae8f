"""Compiler stages: MLIR GPU-dialect text -> ISA text and hsaco, in-process, cached."""
from .cache import KernelCache
from .compile import CompiledKernel, compile_mlir, hsaco, isa, lower, toolchain_info

__all__ = ["CompiledKernel", "KernelCache", "compile_mlir", "lower", "isa", "hsaco", "toolchain_info"]
