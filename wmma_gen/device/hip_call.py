"""One hip-python call's result: hip-python returns `(hipError_t, results...)` tuples; a failed call
raises DeviceError naming the call, the hipError_t name and hipGetErrorString (what hip.py and
hip_capture.py share)."""
from __future__ import annotations

from ..errors import DeviceError


def hip_text(value) -> str:
    """A hip-python string result (bytes, CStr or a (hipSuccess, CStr) tuple) as str."""
    value = value[-1] if isinstance(value, tuple) else value     # hip-python 10: (hipSuccess, CStr)
    value = value.decode() if hasattr(value, "decode") else value
    return "" if value is None else str(value)


def hip_check(hip, result, call: str):
    """Unpack a hip-python `(err, *values)` result, raising DeviceError on failure."""
    err, values = (result[0], result[1:]) if isinstance(result, tuple) else (result, ())
    if err != hip.hipError_t.hipSuccess:
        try:
            text = hip_text(hip.hipGetErrorString(err))
        except Exception:  # error text is best effort; the code itself is reported
            text = ""
        name = getattr(err, "name", str(err))
        raise DeviceError(f"{call} failed: {name} ({int(getattr(err, 'value', 0))}): {text}".rstrip(": "))
    return values[0] if len(values) == 1 else values
