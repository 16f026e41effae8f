"""Compiler stages: MLIR GPU-dialect text -> code object (hsaco) -> decoded ISA listing, in-process, cached."""
from .cache import KernelCache
from .compile import CODEGENS, CompiledKernel, compile_mlir, hsaco, llvm_isa, lower, toolchain_info
from ..codeobj.listing import listing

__all__ = ["CODEGENS", "CompiledKernel", "KernelCache", "compile_mlir", "lower", "hsaco", "listing", "llvm_isa",
           "toolchain_info"]
