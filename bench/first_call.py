"""First call in a fresh process (issue 36 item 5), each figure from its own fresh interpreter:

  first compile's imports  what compiling an op's first kernel imports (GEMM, attention): the
                           modules a cold-cache compile of the op's selftest kernel loaded
                           (recorded in one process), imported in a fresh one and timed there
                           (the compile's own work is not counted); and whether torch came along
  import triton            `import triton`, in the interpreter --triton-python names (default: the
                           one running this bench; the row names it and triton's version, or says
                           "not installed"); both bare and
                           with torch already imported (a torch user's context: torch brings
                           numpy, which the MLIR provider's `ir` imports)
  the MLIR provider        `wmma_gen.compiler.mlir_api` alone (flydsl's MLIR core)
  import wmma_gen.torch    with torch already imported (what a user pays before any call)
  first cached launch      wmma_gen.torch.linear (f16, 64x256 @ 256x256^T) and
                           wmma_gen.torch.flash_attn_func (f16, (1, 128, 4, 64)) on CPU tensors
                           routed to the HIP stand-in with C no-op launches, their kernels already
                           in the disk cache (a warm-up process compiles them first): index lookup,
                           code-object load, plan, bind, launch -- and whether any MLIR was built or
                           the MLIR provider (or pandas / optuna) imported for it.
                           Wall and process CPU time of the call; then without the stand-in's own
                           hipModuleLoadData (it decodes the machine code for the emulator, which a
                           GPU runtime does not); then "GPU-equivalent": plus what the launch path
                           imports that the stand-in had already imported for its emulator (those
                           modules, imported in a fresh process with torch, wmma_gen.torch and
                           HipDevice loaded, and timed there), so a GPU process's first call is not
                           flattered by the stand-in

Every interpreter runs with bytecode caching on (PYTHONPYCACHEPREFIX: a temporary folder, filled
by a warm-up run of the same command), as an installed package has its .pyc files: the figures
are not the cost of compiling Python sources.

Source: host wall time on this machine (no GPU), median of --runs fresh processes (CPU time beside
it where the machine's load makes wall time noisy); the compiles' imports and `import triton` run
in interleaved rounds, and their rows give the CPU-time ratio to triton's.

    python bench/first_call.py [--runs 3] [--triton-python PYTHON] [--out results/first_call.md]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYC = tempfile.mkdtemp(prefix="wmma-bench-pyc-")

IMPORT = """
import sys, time, json
{setup}
before = set(sys.modules)
t, c = time.perf_counter(), time.process_time()
{imports}
s, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps({{"s": s, "cpu": cpu, "torch": "torch" in sys.modules and "torch" not in before}}))
"""

# A cold-cache compile of the op's first selftest kernel; prints the modules it imported.
COMPILE = """
import sys, json
sys.path[:0] = [{root!r}]
from wmma_gen.ops import registry
from wmma_gen.ops.compile_op import compile_op
before = set(sys.modules)
spec = registry.get({op!r})
d, p = spec.selftest("gfx1100")[0]
s = spec.default_schedule(d, "gfx1100", p)
compile_op(spec, d, s, spec.key_of(d, s, p), "gfx1100")
print(json.dumps(sorted(set(sys.modules) - before)))
"""

LAUNCH = """
import sys, time, json, tempfile, builtins, importlib
sys.path[:0] = [{root!r}, {tests!r}]
from pathlib import Path
import torch
torch.set_num_threads(1)
from hipstub import EmuHipRuntime, StubLibrary, build, find_c_compiler
lib = StubLibrary(build(Path(tempfile.mkdtemp()), find_c_compiler()[0]))
rt = EmuHipRuntime("gfx1100")
stub_load = [0.0, 0.0]               # wall, CPU seconds in the stand-in's hipModuleLoadData
real_load = rt.hipModuleLoadData
def timed_load(*args):
    t, c = time.perf_counter(), time.process_time()
    try:
        return real_load(*args)
    finally:
        stub_load[0] += time.perf_counter() - t
        stub_load[1] += time.process_time() - c
rt.hipModuleLoadData = timed_load
lib.install(rt); rt.execute = False; lib.noop_launch(True)
import wmma_gen.torch as wt
from wmma_gen.device.hip import HipDevice
from wmma_gen.device.select import routed
from wmma_gen.ops import compile_op
dev = HipDevice()
if {op!r} == "linear":
    args, fn = (torch.randn(64, 256).half(), torch.randn(256, 256).half()), wt.linear
else:
    q = torch.randn(1, 128, 4, 64).half()
    args, fn = (q, q.clone(), q.clone()), wt.flash_attn_func
STUB = str(Path({tests!r}) / "hipstub")
wanted = set()                       # modules the launch path imports (not the stand-in's own imports)
def note(mod, fromlist=()):
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_filename.startswith(STUB):
            return
        f = f.f_back
    for m in (mod, *(getattr(mod, x, None) for x in fromlist or ())):
        name = getattr(m, "__name__", None) if isinstance(m, type(sys)) else getattr(m, "__module__", None)
        if name:
            wanted.add(name)
real_import, real_import_module = builtins.__import__, importlib.import_module
def hooked_import(name, globals=None, locals=None, fromlist=(), level=0):
    mod = real_import(name, globals, locals, fromlist, level)
    if fromlist:
        note(mod, fromlist)
    else:
        try:
            full = importlib._bootstrap._resolve_name(name, (globals or {{}}).get("__package__") or "", level) \
                if level else name
        except (ImportError, ValueError):
            full = None
        note(sys.modules.get(full, mod))
    return mod
def hooked_import_module(name, package=None):
    mod = real_import_module(name, package)
    note(mod)
    return mod
before = set(sys.modules)
if {record!r}:                       # one recording run; the timed runs have no hook
    builtins.__import__, importlib.import_module = hooked_import, hooked_import_module
t, c = time.perf_counter(), time.process_time()
with routed(dev), torch.no_grad():
    fn(*args)
s, cpu = time.perf_counter() - t, time.process_time() - c
builtins.__import__, importlib.import_module = real_import, real_import_module
fresh = sorted(set(sys.modules) - before)
print(json.dumps({{"s": s, "cpu": cpu, "stats": compile_op.STATS,
                   "mlir_imported": "wmma_gen.compiler.mlir_api" in sys.modules,
                   "heavy": [m for m in ("pandas", "optuna", "yaml") if m in fresh],
                   "fresh": fresh, "preloaded": sorted(m for m in wanted if m in before and m in sys.modules),
                   "launches": lib.noop_launches(), "stub_load": stub_load[0], "stub_cpu": stub_load[1]}}))
"""
GPU_SETUP = "import torch\nimport wmma_gen.torch\nfrom wmma_gen.device.hip import HipDevice\n"


def run(python: str, code: str, env_extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = PYC
    env.update(env_extra or {})
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    if out.returncode:
        raise SystemExit(f"{python} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def triton_version(python: str) -> str:
    """triton's version in interpreter `python` ("" if it has none, or the interpreter is missing)."""
    try:
        out = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('triton'))"],
                             capture_output=True, text=True)
    except OSError:
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def imports_of(mods) -> str:
    """Import statements for `mods`, wmma_gen's first: they import the rest as they do in a call
    (e.g. the MLIR provider's package without its __init__, compiler/mlir_api.py), so the other
    names (what functions imported on the way) are then found, or imported if only a function did."""
    ours = sorted(m for m in mods if m.split(".")[0] == "wmma_gen")
    return "\n".join(f"import {m}" for m in ours + sorted(set(mods) - set(ours))) or "pass"


def med(rows, f=lambda r: r["s"]) -> str:
    vals = [f(r) for r in rows]
    return f"{statistics.median(vals):.3f} | {min(vals):.3f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--triton-python", default=sys.executable,
                    help="interpreter whose `import triton` is the baseline (default: this one)")
    ap.add_argument("--out", default=str(ROOT / "results" / "first_call.md"))
    a = ap.parse_args(argv)
    launch = lambda op, record: LAUNCH.format(root=str(ROOT), tests=str(ROOT / "tests"), op=op, record=record)
    launches = {op: launch(op, False) for op in ("linear", "attention")}
    recorded = {}
    for op in launches:
        run(sys.executable, launch(op, False))        # warm the disk cache, the index and the .pyc files
        recorded[op] = run(sys.executable, launch(op, True))   # what the launch path imports
    rows = ["| what | median s | min s | CPU s (median) | note |", "|---|---|---|---|---|"]

    def timed(python, code):
        run(python, code)                             # .pyc files of this interpreter's modules
        return [run(python, code) for _ in range(a.runs)]

    def import_row(label, python, setup, mods, note=""):
        r = timed(python, IMPORT.format(setup=setup, imports=imports_of(mods)))
        rows.append(f"| {label} | {med(r)} | {statistics.median(x['cpu'] for x in r):.3f} | "
                    f"torch imported by it: {r[0]['torch']}{note} |")
        return r
    triton = triton_version(a.triton_python)
    compiled = {}
    with tempfile.TemporaryDirectory(prefix="wmma-bench-cold-") as cold:
        for op in ("gemm", "attention"):
            mods = run(sys.executable, COMPILE.format(root=str(ROOT), op=op), {"WMMA_GEN_CACHE_DIR": cold})
            compiled[op] = [m for m in mods if not m.startswith("wmma_gen.ops.registry")]
    for context, setup in (("", ""), (", torch already imported", "import torch\n")):
        # the compiles' imports and triton's in interleaved rounds (the machine's load moves between
        # rows run one after another); each row's CPU median also as a ratio to triton's
        jobs = [(f"first {op} compile's imports (its {len(mods)} modules){context}", sys.executable,
                 IMPORT.format(setup=setup + "import wmma_gen.ops.registry", imports=imports_of(mods)))
                for op, mods in compiled.items()]
        if triton:
            jobs.append((f"import triton {triton} ({a.triton_python}){context}", a.triton_python,
                         IMPORT.format(setup=setup, imports="import triton")))
        for _, python, code in jobs:
            run(python, code)                         # .pyc files of this interpreter's modules
        got = {label: [] for label, _, _ in jobs}
        for _ in range(a.runs):
            for label, python, code in jobs:
                got[label].append(run(python, code))
        base = statistics.median(x["cpu"] for x in got[jobs[-1][0]]) if triton else None
        for label, r in got.items():
            cpu = statistics.median(x["cpu"] for x in r)
            ratio = f", {cpu / base:.2f}x triton's CPU time" if base and not label.startswith("import triton") else ""
            rows.append(f"| {label} | {med(r)} | {cpu:.3f} | torch imported by it: {r[0]['torch']}{ratio} |")
        if not triton:
            rows.append(f"| import triton | - | - | - | not installed in {a.triton_python} |")
    import_row("import the MLIR provider (wmma_gen.compiler.mlir_api)", sys.executable, "",
               ["wmma_gen.compiler.mlir_api"])
    import_row("import wmma_gen.torch (torch already imported)", sys.executable, "import torch", ["wmma_gen.torch"])
    for op, code in launches.items():
        first = [run(sys.executable, code) for _ in range(a.runs)]
        name = "wt.linear" if op == "linear" else "wt.flash_attn_func"
        rec = recorded[op]
        both = imports_of(rec["preloaded"] + rec["fresh"])
        t_all = timed(sys.executable, IMPORT.format(setup=GPU_SETUP, imports=both))
        t_fresh = timed(sys.executable, IMPORT.format(setup=GPU_SETUP + imports_of(rec["preloaded"]),
                                                      imports=imports_of(rec["fresh"])))
        extra = {k: max(0.0, statistics.median(r[k] for r in t_all) - statistics.median(r[k] for r in t_fresh))
                 for k in ("s", "cpu")}
        rows.append(f"| first cached launch ({name}, fresh process) | {med(first)} | "
                    f"{statistics.median(r['cpu'] for r in first):.3f} | compile_op {first[0]['stats']}, MLIR provider "
                    f"imported: {first[0]['mlir_imported']}, heavy modules: {first[0]['heavy'] or 'none'}, "
                    f"launches {first[0]['launches']} |")
        rows.append(f"| the same minus the stand-in's hipModuleLoadData (the emulator decoding the code object; "
                    f"a GPU runtime loads it in ms) | {med(first, lambda r: r['s'] - r['stub_load'])} | "
                    f"{statistics.median(r['cpu'] - r['stub_cpu'] for r in first):.3f} | stand-in load "
                    f"{statistics.median(r['stub_load'] for r in first):.3f} s |")
        rows.append(f"| GPU-equivalent: the same plus importing the {len(rec['preloaded'])} launch-path modules "
                    f"the stand-in had imported (+{extra['s']:.3f} s) | "
                    f"{med(first, lambda r: r['s'] - r['stub_load'] + extra['s'])} | "
                    f"{statistics.median(r['cpu'] - r['stub_cpu'] for r in first) + extra['cpu']:.3f}"
                    f" | {', '.join(m for m in rec['preloaded'] if m.startswith('wmma_gen')) or 'none'} (and the stdlib) |")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    import results_header
    text = ("# First call in a fresh process\n\n" + results_header.line("host CPU time, host wall time") + "\n\n"
            "First call in a fresh process (source: host wall time and process CPU time on this machine, no GPU; "
            f"median of {a.runs} fresh interpreters, .pyc cached; load average {load:.1f} at the end). "
            "\n\n" + "\n".join(rows) + "\n")
    print(text)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
