"""wmma_gen: WMMA kernel generator, emulator and autotuner for AMD RDNA GPUs."""
__version__ = "0.1.0"

from .ops.gemm import gemm  # noqa: E402

__all__ = ["gemm", "__version__"]
