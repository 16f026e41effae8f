"""First call in a fresh process (issue 36 item 5), each figure from its own fresh interpreter:

  first compile's imports  what compiling the first kernel imports: the MLIR provider's bindings
                           (`wmma_gen.compiler.mlir_api`) and the builders (compiler, GEMM and
                           attention kernel modules); and whether torch came with them
  import triton            `import triton`, in the interpreter that has it (--triton-python,
                           default the vLLM venv's; "not installed" otherwise)
  first cached launch      wmma_gen.torch.linear (f16, 64x256 @ 256x256^T) and
                           wmma_gen.torch.flash_attn_func (f16, (1, 128, 4, 64)) on CPU tensors
                           routed to the HIP stand-in with C no-op launches, their kernels already
                           in the disk cache (a warm-up process compiles them first): index lookup,
                           code-object load, plan, bind, launch -- and whether any MLIR was built or
                           the MLIR provider imported for it; also without the stand-in's own
                           hipModuleLoadData (it decodes the machine code for the emulator, which a
                           GPU runtime does not)

Every interpreter runs with bytecode caching on (PYTHONPYCACHEPREFIX: a temporary folder, filled
by a warm-up run of the same command), as an installed package has its .pyc files: the figures
are not the cost of compiling Python sources.

Source: host wall time on this machine (no GPU), median of --runs fresh processes.

    python bench/first_call.py [--runs 3] [--triton-python /work/venvs/vllm/bin/python] [--out results/first_call.md]
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
t = time.perf_counter()
{imports}
print(json.dumps({{"s": time.perf_counter() - t, "torch": "torch" in sys.modules}}))
"""
COMPILE_IMPORTS = ("import wmma_gen.compiler.mlir_api, wmma_gen.compiler.compile, wmma_gen.ops.compile_op, "
                   "wmma_gen.ops.gemm.kernel, wmma_gen.ops.attention.kernel")

LAUNCH = """
import sys, time, json, tempfile
sys.path[:0] = [{root!r}, {tests!r}]
from pathlib import Path
import torch
torch.set_num_threads(1)
from hipstub import EmuHipRuntime, StubLibrary, build, find_c_compiler
lib = StubLibrary(build(Path(tempfile.mkdtemp()), find_c_compiler()[0]))
rt = EmuHipRuntime("gfx1100"); lib.install(rt); rt.execute = False; lib.noop_launch(True)
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
t = time.perf_counter()
with routed(dev), torch.no_grad():
    fn(*args)
print(json.dumps({{"s": time.perf_counter() - t, "stats": compile_op.STATS,
                   "mlir_imported": "wmma_gen.compiler.mlir_api" in sys.modules,
                   "launches": lib.noop_launches(), "stub_load": rt.load_seconds}}))
"""


def run(python: str, code: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = PYC
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    if out.returncode:
        raise SystemExit(f"{python} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--triton-python", default="/work/venvs/vllm/bin/python")
    ap.add_argument("--out", default=str(ROOT / "results" / "first_call.md"))
    a = ap.parse_args(argv)
    launches = {op: LAUNCH.format(root=str(ROOT), tests=str(ROOT / "tests"), op=op) for op in ("linear", "attention")}
    for code in launches.values():
        run(sys.executable, code)                     # warm the disk cache, the index and the .pyc files
    rows = ["| what | median s | min s | note |", "|---|---|---|---|"]

    def timed(python, code):
        run(python, code)                             # .pyc files of this interpreter's modules
        return [run(python, code) for _ in range(a.runs)]
    for label, mods in (("import the MLIR provider (wmma_gen.compiler.mlir_api)", "import wmma_gen.compiler.mlir_api"),
                        ("first compile's imports (provider, compiler, GEMM + attention builders)", COMPILE_IMPORTS)):
        imp = timed(sys.executable, IMPORT.format(imports=mods))
        rows.append(f"| {label} | {statistics.median(r['s'] for r in imp):.3f} | {min(r['s'] for r in imp):.3f} | "
                    f"torch imported: {imp[0]['torch']} |")
    if Path(a.triton_python).exists():
        tri = timed(a.triton_python, IMPORT.format(imports="import triton"))
        rows.append(f"| import triton ({a.triton_python}) | {statistics.median(r['s'] for r in tri):.3f} | "
                    f"{min(r['s'] for r in tri):.3f} | torch imported: {tri[0]['torch']} |")
    else:
        rows.append(f"| import triton | - | - | not installed ({a.triton_python} missing) |")
    for op, code in launches.items():
        first = [run(sys.executable, code) for _ in range(a.runs)]
        name = "wt.linear" if op == "linear" else "wt.flash_attn_func"
        rows.append(f"| first cached launch ({name}, fresh process) | {statistics.median(r['s'] for r in first):.3f} | "
                    f"{min(r['s'] for r in first):.3f} | compile_op {first[0]['stats']}, MLIR provider imported: "
                    f"{first[0]['mlir_imported']}, launches {first[0]['launches']} |")
        rows.append(f"| the same minus the stand-in's hipModuleLoadData (the emulator decoding the code object; "
                    f"a GPU runtime loads it in ms) | {statistics.median(r['s'] - r['stub_load'] for r in first):.3f} | "
                    f"{min(r['s'] - r['stub_load'] for r in first):.3f} | stand-in load "
                    f"{statistics.median(r['stub_load'] for r in first):.3f} s |")
    text = ("First call in a fresh process (source: host wall time on this machine, no GPU; median of "
            f"{a.runs} fresh interpreters, .pyc cached). `python bench/first_call.py`\n\n" + "\n".join(rows) + "\n")
    print(text)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
