"""`wmma-gen doctor`: what this machine can do (bindings, linker, HIP, cache, emulator WMMA path).

Each check imports what it inspects inside run(), so building the CLI parser loads none of
it. (The linker and cache checks live in wmma_gen.compiler, whose package __init__ loads
the MLIR bindings; when those are missing, doctor says so instead of failing to start.)
"""
from __future__ import annotations

from ..errors import WmmaGenError
from .options import add_json, emit


def register(sub) -> None:
    p = sub.add_parser("doctor", help="check MLIR bindings, ld.lld provider, hip-python/GPUs and the cache")
    add_json(p)
    p.set_defaults(func=run)


def _hip() -> dict:
    """hip-python and the devices it reports; an emulator-backed HIP runtime is named as such."""
    from ..device.hip import import_hip, timing_source, visible_devices
    try:
        import_hip()
    except WmmaGenError as e:
        return {"hip_python": False, "gpus": [], "emulated": [], "note": str(e)}
    found, reason = visible_devices()
    gpus = [arch for arch, name in found if timing_source(name) == "hip"]
    emulated = [f"{arch} ({name})" for arch, name in found if timing_source(name) != "hip"]
    note = reason or (f"emulator-backed HIP devices (not GPUs): {', '.join(emulated)}" if emulated else "")
    return {"hip_python": True, "gpus": gpus, "emulated": emulated, "note": note}


def _compiler():
    """wmma_gen.compiler's toolchain and cache modules, or the reason they cannot load."""
    try:
        from ..compiler import cache, toolchain
    except ImportError as e:    # the package __init__ imports the MLIR bindings
        return None, None, f"MISSING: {e}"
    return toolchain, cache, ""


def run(args) -> int:
    report, ok = {}, True
    toolchain, cache, why = _compiler()
    if toolchain is None:
        report["mlir"], report["lld"], report["cache_dir"], ok = why, why, why, False
    else:
        try:
            from ..compiler import mlir_api   # provider, LLVM version and origin (issue 18)
            pv = mlir_api.provider()
            report["mlir"] = {"provider": pv.name, "llvm": pv.llvm_version, "distribution": pv.distribution,
                              "origin": pv.path, "selected_by": f"{mlir_api.SETTING}={pv.selected_by}",
                              "rocdl_target": mlir_api.rocdl_problem() or "ok"}
            ok = report["mlir"]["rocdl_target"] == "ok"
        except Exception as e:  # noqa: BLE001  -- any failure to load the bindings is what doctor reports
            report["mlir"], ok = f"MISSING: {e}", False
        try:
            ln = toolchain.find_linker()
            report["lld"] = {"provider": ln.provider, "version": ln.version, "command": " ".join(ln.command)}
        except WmmaGenError as e:
            report["lld"], ok = f"MISSING: {e}", False
        report["cache_dir"] = str(cache.default_dir())
    report["hip"] = _hip()
    from ..emu import native     # builds the emulator's compiled WMMA kernel if it is not cached yet
    report["emulator_wmma"] = native.status()
    report["ok"] = ok
    lld, hip, mlir = report["lld"], report["hip"], report["mlir"]
    text = "\n".join([
        f"MLIR bindings : {mlir if isinstance(mlir, str) else mlir['provider'] + ' - ' + mlir['distribution']}"
        + ("" if isinstance(mlir, str) else f", LLVM {mlir['llvm']}, ROCDL target {mlir['rocdl_target']}; "
           f"{mlir['selected_by']}; from {mlir['origin']}"),
        f"ld.lld        : {lld if isinstance(lld, str) else lld['provider'] + ' - ' + lld['version']}",
        f"hip-python    : {'yes' if hip['hip_python'] else 'no'}; GPUs: {hip['gpus'] or 'none'} {hip['note']}",
        f"kernel cache  : {report['cache_dir']}",
        f"emulator WMMA : {report['emulator_wmma']}",
        f"status        : {'OK' if ok else 'PROBLEMS'}",
    ])
    emit(args, report, text)
    return 0 if ok else 1
