"""Which repeat-call launch HipDevice.prepack builds: the C Launcher (device/_fastlaunch.c, built
by `pip install` as setup.py's optional extension) or the pure-Python closure (device/hip.py).

    launcher_module()   the _fastlaunch module, or None when it is not built or WMMA_GEN_NATIVE_LAUNCH=0
    launch_address()    the address of hipModuleLaunchKernel in the HIP runtime hip-python loaded, or None
    fire(plan, values, stream)   _fastlaunch.fire, or its Python twin fire_python (same launches)
    shape_key(head, tensors)     _fastlaunch.shape_key, or shape_key_python (the same tuple)
    lookup(entries, head, tensors[, stream, env])   (key, entry, outputs of a hit): torch/replay.py
    run(entry, tensors, device, stream, env)       one call-site cache hit (outputs, or None)
    eager_mode(checks, grad_enabled, tensor_types, *tensors)  torch/runtime.py's eager_mode
    bind_mode(checks, grad_enabled, tensor_types)   that with its first three arguments bound
Each is the C function of _fastlaunch or its Python twin `<name>_python` (same arguments, same
result: tests/torch_lane/test_native_launch.py runs both).

The C Launcher calls hipModuleLaunchKernel through the very library hip-python dlopen'ed
(found in /proc/self/maps, its symbol read with dlsym through ctypes), so a HIP stand-in
(tests/hipstub) sees those launches as it sees hip-python's. With two HIP runtimes mapped, or
none, or on a system without /proc, the Python closure runs (`launch_address` is None).
"""
from __future__ import annotations

import ctypes
import os

_state: dict = {}


def launcher_module():
    if os.environ.get("WMMA_GEN_NATIVE_LAUNCH", "1") == "0":
        return None
    if "mod" not in _state:
        try:
            from . import _fastlaunch
        except ImportError:
            _fastlaunch = None
        _state["mod"] = _fastlaunch
    return _state["mod"]


def _mapped_runtimes() -> set[str]:
    try:
        with open("/proc/self/maps") as f:
            return {line.split(None, 5)[5].strip() for line in f
                    if "libamdhip64" in line and len(line.split(None, 5)) == 6}
    except OSError:
        return set()


def launch_address() -> int | None:
    """hipModuleLaunchKernel of the one HIP runtime mapped into this process (the one hip-python
    loaded at its first call), or None."""
    if "addr" in _state:
        return _state["addr"]
    paths = {p for p in _mapped_runtimes() if os.path.basename(p).startswith("libamdhip64.so")}
    addr = None
    if len(paths) == 1:
        try:
            lib = ctypes.CDLL(paths.pop(), mode=ctypes.RTLD_GLOBAL)     # already loaded: the same handle
            addr = ctypes.cast(lib.hipModuleLaunchKernel, ctypes.c_void_p).value
        except (OSError, AttributeError):
            addr = None
    if addr is not None:         # cache only success: hip-python may load the runtime later
        _state["addr"] = addr
    return addr


def fire_python(plan: tuple, values: tuple, stream) -> bool:
    """The Python twin of _fastlaunch.fire: launch k of `plan` ((launch, indices), ...) gets
    values[i] for i in its indices (None -> 0, a tensor -> its data_ptr())."""
    for launch, idx in plan:
        launch(tuple([_addr(values[i]) for i in idx]), stream)
    return True


def _addr(v) -> int:
    """An address from an int, None (0) or an object with data_ptr() (a torch tensor)."""
    return 0 if v is None else v if isinstance(v, int) else v.data_ptr()


def shape_key_python(head: tuple, tensors: tuple) -> tuple:
    """The Python twin of _fastlaunch.shape_key: head, then per tensor (shape, strides, dtype,
    device, address mod 16), flat; None for a None tensor (torch/replay.py's key)."""
    k = list(head)
    for t in tensors:
        if t is None:
            k.append(None)
        else:
            k += (t.shape, t.stride(), t.dtype, t.device, t.data_ptr() & 15)
    return tuple(k)


def run_python(entry: tuple, tensors: tuple, device, stream, env: tuple):
    """The Python twin of _fastlaunch.run: a call-site cache hit (torch/replay.py's entry
    (token, outs, plan, scratch, ...); env (gen [int], captures [int], empty_strided, held)): the
    outputs allocated (an entry of outs that is a tensor, not (shape, strides, dtype): handed out as
    it is), held during a capture, every launch fired; None when the token is stale
    or needs scratch (replay.py's slow path)."""
    token, outs, plan = entry[:3]
    gen, captures, empty, held = env
    if token.gen != gen[0] or token.scratch:
        return None
    made = [empty(o[0], o[1], dtype=o[2], device=device) if type(o) is tuple else o for o in outs]   # o: kept
    values = (*tensors, *made, None)
    if captures[0]:
        held(*values)
    fire(plan, values, stream)
    return made


def lookup_python(entries: dict, head: tuple, tensors: tuple, stream=None, env=None) -> tuple:
    """The Python twin of _fastlaunch.lookup: (key, entry or None, outputs or None); with env
    given, a recorded entry is run (run_python) on `stream`."""
    k = shape_key_python(head, tensors)
    e = entries.get(k)
    made = None
    if env is not None and type(e) is tuple and len(e) >= 4:
        made = run_python(e, tensors, tensors[0].device, stream, env)
    return k, e, made


def eager_mode_python(checks: tuple, grad_enabled, tensor_types: tuple, *tensors) -> int:
    """The Python twin of _fastlaunch.eager_mode (torch/runtime.py's eager_mode): 0 when a check
    returns true or a tensor's type is not exactly one of tensor_types, 2 when grad is enabled
    and a tensor requires it, else 1."""
    for check in checks:
        r = check()
        if r is not None and r:
            return 0
    grad, needs = grad_enabled(), False
    for t in tensors:
        if t is None:
            continue
        if type(t) not in tensor_types:
            return 0
        if grad and t.requires_grad:
            needs = True
    return 2 if needs else 1


_mod = launcher_module()
fire = fire_python if _mod is None else _mod.fire                        # torch/replay.py's hot path
shape_key = shape_key_python if _mod is None else _mod.shape_key
lookup = lookup_python if _mod is None else _mod.lookup
run = run_python if _mod is None else _mod.run
eager_mode = eager_mode_python if _mod is None else _mod.eager_mode


def bind_mode(checks: tuple, grad_enabled, tensor_types: tuple):
    """mode(*tensors) = eager_mode(checks, grad_enabled, tensor_types, *tensors): the C module
    keeps the three (one call per op), else a partial of the active eager_mode."""
    if eager_mode is not eager_mode_python and _mod is not None:
        return _mod.bind_mode(checks, grad_enabled, tensor_types)
    import functools
    return functools.partial(eager_mode, checks, grad_enabled, tensor_types)
