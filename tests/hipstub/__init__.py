"""An emulator-backed HIP runtime for tests: a C libamdhip64.so (hipstub.c) whose entry
points forward to Python callbacks (bind.py) implemented over wmma_gen's emulator
(runtime.py). The real hip-python bindings and the real HipDevice run against it."""
from .bind import StubLibrary, build, find_c_compiler
from .runtime import DEVICE_NAME, EmuHipRuntime, FakeClock, HipStubError

__all__ = ["StubLibrary", "build", "find_c_compiler", "EmuHipRuntime", "FakeClock", "HipStubError", "DEVICE_NAME"]
