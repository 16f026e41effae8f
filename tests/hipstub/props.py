"""Fill a hipDeviceProp_t for the stub device, using hip-python's own struct wrapper.

The numeric fields go through the wrapper's setters, so their offsets are the bindings'.
The wrapper has getters but no setters for the char[256] fields (`name`, `gcnArchName`);
their offsets are found once by probing: write a marker at each candidate offset of a
scratch buffer and read it back through the wrapper's getter.
"""
from __future__ import annotations

import ctypes
import functools

SCRATCH = 8192           # > sizeof(hipDeviceProp_tR0600) (about 1.5 KiB)
CHAR_FIELD = 256


@functools.lru_cache(maxsize=None)
def char_field_offset(field: str) -> int:
    from hip import hip
    buf = (ctypes.c_char * SCRATCH)()
    props = hip.hipDeviceProp_t.fromObj(ctypes.addressof(buf))
    for off in range(SCRATCH - CHAR_FIELD):
        buf[off:off + 6] = b"probe\0"
        found = getattr(props, field) in ("probe", b"probe")
        buf[off:off + 6] = b"\0" * 6
        if found:
            return off
    raise RuntimeError(f"hipDeviceProp_t.{field} not found in the first {SCRATCH} bytes")


def fill_properties(addr: int, name: str, arch: str, target, memory_bytes: int) -> None:
    from hip import hip
    for field, text in (("name", name), ("gcnArchName", f"{arch}:sramecc-:xnack-")):
        raw = text.encode()[:CHAR_FIELD - 1] + b"\0"
        ctypes.memmove(addr + char_field_offset(field), raw, len(raw))
    props = hip.hipDeviceProp_t.fromObj(addr)
    for field, value in (("totalGlobalMem", memory_bytes), ("multiProcessorCount", target.cus),
                         ("warpSize", target.wave_size), ("maxThreadsPerBlock", target.max_workgroup_threads),
                         ("sharedMemPerBlock", target.lds_bytes), ("l2CacheSize", target.l2_bytes),
                         ("clockRate", int(target.boost_ghz * 1e6))):   # clockRate is in kHz
        getattr(props, f"set_{field}")(0, value)
