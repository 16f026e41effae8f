"""Build tests/hipstub/hipstub.c into a libamdhip64.so and connect it to an EmuHipRuntime.

How hip-python finds it: hip-python 10.x resolves the runtime lazily at the first HIP call
(rocm/bindings/cyhip.pyx `__init` -> rocm/bindings/util/paths.py `get_library_path`): a
library bundled in the rocm package, then rocm_sdk, then $ROCM_PATH|$ROCM_HOME|/opt/rocm
/lib/libamdhip64.so, and last the bare name "libamdhip64.so" for dlopen. On a machine without
ROCm it is that bare name, and glibc's dlopen answers a bare name with an already loaded
object whose DT_SONAME matches. So the stub is built with soname libamdhip64.so and loaded
with ctypes first; hip-python's dlopen then returns it. (A failed earlier attempt is not
cached by hip-python: it retries dlopen at every call until one succeeds.)
`StubLibrary.connected()` checks the bindings really reach the stub (a machine with ROCm
loads the real runtime instead, and the stub tests skip).
"""
from __future__ import annotations

import ctypes
import importlib.util
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

from .runtime import CODES, EmuHipRuntime, HipStubError

SOURCE = Path(__file__).with_name("hipstub.c")
SONAME = "libamdhip64.so"

P, INT, U, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_size_t
PROTOTYPES = {   # slot name -> argument types of the callback (hipstub.c FORWARD calls)
    "hipInit": (U,), "hipGetDeviceCount": (P,), "hipGetDeviceProperties": (P, INT), "hipSetDevice": (INT,),
    "hipGetErrorText": (INT, INT, P, S), "hipMalloc": (P, S), "hipFree": (P,), "hipMemcpy": (P, P, S, INT),
    "hipMemcpyAsync": (P, P, S, INT, P), "hipMemset": (P, INT, S), "hipModuleLoadData": (P, P),
    "hipModuleGetFunction": (P, P, ctypes.c_char_p), "hipModuleUnload": (P,),
    "hipModuleLaunchKernel": (P, P, P, U, P, P, P), "hipStreamCreate": (P,), "hipStreamSynchronize": (P,),
    "hipStreamDestroy": (P,), "hipEventCreate": (P,), "hipEventRecord": (P, P), "hipEventSynchronize": (P,),
    "hipEventElapsedTime": (P, P, P), "hipEventDestroy": (P,), "hipDeviceSynchronize": (),
    "hipStreamBeginCapture": (P, INT), "hipStreamEndCapture": (P, P), "hipStreamIsCapturing": (P, P),
    "hipGraphInstantiate": (P, P, P, P, S), "hipGraphLaunch": (P, P), "hipGraphExecDestroy": (P,),
    "hipGraphDestroy": (P,),
}


def find_c_compiler() -> tuple[list[str] | None, str]:
    """(command, "") or (None, why not): cc/gcc/clang on PATH, else `python -m ziglang cc`."""
    for name in ("cc", "gcc", "clang"):
        exe = shutil.which(name)
        if exe:
            return [exe], ""
    if importlib.util.find_spec("ziglang") is not None:
        return [sys.executable, "-m", "ziglang", "cc"], ""
    return None, "no C compiler found (cc, gcc, clang on PATH, or the ziglang package)"


def build(out_dir: Path, cc: list[str]) -> Path:
    out = Path(out_dir) / SONAME
    cmd = [*cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", f"-Wl,-soname,{SONAME}", "-o", str(out), str(SOURCE)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"building the HIP stub failed: {' '.join(cmd)}\n{done.stderr}")
    return out


# Callbacks installed in a loaded library's table, by library path: the C table points at them
# and ctypes never unloads a library, so they must outlive a dropped StubLibrary object.
_INSTALLED: dict[str, list] = {}


class StubLibrary:
    """The loaded stub; `install(runtime)` points every slot at that runtime's methods."""

    def __init__(self, path: Path):
        self.path = path
        self.lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        self.lib.wgStubSlotName.restype = ctypes.c_char_p
        self.slots = {self.lib.wgStubSlotName(i).decode(): i for i in range(self.lib.wgStubSlotCount())}
        missing = set(self.slots) ^ set(PROTOTYPES)
        if missing:
            raise RuntimeError(f"hipstub.c slots and PROTOTYPES disagree on {sorted(missing)}")
        self.runtime: EmuHipRuntime | None = None
        self._callbacks: list = []

    def install(self, runtime: EmuHipRuntime) -> None:
        self._callbacks = []
        for name, argtypes in PROTOTYPES.items():
            cb = ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(_entry(runtime, name))
            self._callbacks.append(cb)
            self.lib.wgStubSetSlot(self.slots[name], ctypes.cast(cb, ctypes.c_void_p))
        self.runtime = runtime
        _INSTALLED[str(self.path)] = self._callbacks

    def noop_launch(self, on: bool) -> bool:
        """Make hipModuleLaunchKernel return hipSuccess in C without reaching Python (the
        benchmark's no-op launch); returns the previous setting."""
        return bool(self.lib.wgStubSetNoopLaunch(int(bool(on))))

    def noop_launches(self) -> int:
        self.lib.wgStubNoopLaunches.restype = ctypes.c_ulonglong
        return int(self.lib.wgStubNoopLaunches())

    def uninstall(self) -> None:
        for i in self.slots.values():
            self.lib.wgStubSetSlot(i, None)
        self.runtime, self._callbacks = None, []
        _INSTALLED.pop(str(self.path), None)

    def connected(self) -> tuple[bool, str]:
        """Whether hip-python's calls arrive here (install a runtime first)."""
        from hip import hip
        before = self.runtime.calls["hipGetDeviceCount"]
        try:
            hip.hipGetDeviceCount()
        except RuntimeError as e:    # the bindings could not dlopen any libamdhip64.so
            return False, f"hip-python did not load the stub: {e}"
        if self.runtime.calls["hipGetDeviceCount"] == before:
            return False, "hip-python is bound to another libamdhip64.so (a real ROCm install?)"
        return True, ""


def _entry(runtime: EmuHipRuntime, name: str):
    method = getattr(runtime, name)

    def call(*args):
        runtime.calls[name] += 1
        try:
            injected = runtime.take_injected(name)
            if injected:
                return CODES[injected]
            method(*args)
            return 0
        except HipStubError as e:
            runtime.last_reason = str(e)
            return e.code
        except Exception:   # a C caller cannot take a Python exception: record it, answer an error
            runtime.crashes.append(f"{name}: {traceback.format_exc()}")
            return CODES["hipErrorUnknown"]
    return call
