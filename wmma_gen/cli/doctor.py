"""`wmma-gen doctor`: what this machine can do (bindings, linker, HIP, cache)."""
from __future__ import annotations

from ..compiler import toolchain
from ..compiler.cache import default_dir
from ..errors import WmmaGenError
from .options import add_json, emit


def register(sub) -> None:
    p = sub.add_parser("doctor", help="check MLIR bindings, ld.lld provider, hip-python/GPUs and the cache")
    add_json(p)
    p.set_defaults(func=run)


def _hip() -> dict:
    try:
        from hip import hip  # hip-python
    except ImportError:
        return {"hip_python": False, "gpus": [], "note": "hip-python not installed (pip install 'wmma-gen[hip]')"}
    try:
        err, n = hip.hipGetDeviceCount()
        if err != hip.hipError_t.hipSuccess:
            return {"hip_python": True, "gpus": [], "note": f"hipGetDeviceCount: {err}"}
        gpus = []
        for i in range(n):
            props = hip.hipDeviceProp_t()
            hip.hipGetDeviceProperties(props, i)
            gpus.append(props.gcnArchName.decode() if isinstance(props.gcnArchName, bytes) else str(props.gcnArchName))
        return {"hip_python": True, "gpus": gpus, "note": ""}
    except Exception as e:  # the HIP runtime library may be absent even with hip-python installed
        return {"hip_python": True, "gpus": [], "note": f"HIP runtime unavailable: {e}"}


def run(args) -> int:
    report, ok = {}, True
    try:
        report["mlir"] = toolchain.mlir_version()
    except Exception as e:
        report["mlir"], ok = f"MISSING: {e}", False
    try:
        ln = toolchain.find_linker()
        report["lld"] = {"provider": ln.provider, "version": ln.version, "command": " ".join(ln.command)}
    except WmmaGenError as e:
        report["lld"], ok = f"MISSING: {e}", False
    report["hip"] = _hip()
    report["cache_dir"] = str(default_dir())
    report["ok"] = ok
    text = "\n".join([
        f"MLIR bindings : {report['mlir']}",
        f"ld.lld        : {report['lld'] if isinstance(report['lld'], str) else report['lld']['provider'] + ' - ' + report['lld']['version']}",
        f"hip-python    : {'yes' if report['hip']['hip_python'] else 'no'}; GPUs: {report['hip']['gpus'] or 'none'} {report['hip']['note']}",
        f"kernel cache  : {report['cache_dir']}",
        f"status        : {'OK' if ok else 'PROBLEMS'}",
    ])
    emit(args, report, text)
    return 0 if ok else 1
