"""wmma_gen: WMMA kernel generator, emulator and autotuner for AMD RDNA GPUs."""
__version__ = "0.1.0"
