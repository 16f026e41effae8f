"""First call in a fresh process (issue 36 item 5), each figure from its own fresh interpreter:

  import of the compiler   `import wmma_gen.compiler` (the MLIR provider's bindings: what the
                           first compile pays before any MLIR), and whether torch came with it
  import triton            the same for `import triton`, in the interpreter that has it
                           (--triton-python, default the vLLM venv's; "not installed" otherwise)
  first cached launch      wmma_gen.torch.linear (f16, 64x256 @ 256x256^T) on CPU tensors routed to
                           the HIP stand-in with C no-op launches, its kernel already in the disk
                           cache (a warm-up process compiles it first): index lookup, code-object
                           load, plan, bind, launch -- and whether any MLIR was built for it; also
                           without the stand-in's own hipModuleLoadData (it decodes the machine code
                           for the emulator, which a GPU runtime does not)

Source: host wall time on this machine (no GPU), median of --runs fresh processes.

    python bench/first_call.py [--runs 3] [--triton-python /work/venvs/vllm/bin/python]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

IMPORT = """
import sys, time, json
t = time.perf_counter()
import {mod}
print(json.dumps({{"s": time.perf_counter() - t, "torch": "torch" in sys.modules}}))
"""

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
from wmma_gen.ops.gemm import kernel as gemm_kernel
built = []
orig = gemm_kernel.build_gemm
gemm_kernel.build_gemm = lambda *a, **k: built.append(1) or orig(*a, **k)
dev = HipDevice()
x, w = torch.randn(64, 256).half(), torch.randn(256, 256).half()
t = time.perf_counter()
with routed(dev), torch.no_grad():
    wt.linear(x, w)
print(json.dumps({{"s": time.perf_counter() - t, "mlir_builds": len(built), "stats": compile_op.STATS,
                   "launches": lib.noop_launches(), "stub_load": rt.load_seconds}}))
"""


def run(python: str, code: str) -> dict:
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        raise SystemExit(f"{python} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--triton-python", default="/work/venvs/vllm/bin/python")
    a = ap.parse_args(argv)
    launch = LAUNCH.format(root=str(ROOT), tests=str(ROOT / "tests"))
    run(sys.executable, launch)                       # warm the disk cache and index
    rows = ["| what | median s | min s | note |", "|---|---|---|---|"]
    imp = [run(sys.executable, IMPORT.format(mod="wmma_gen.compiler")) for _ in range(a.runs)]
    rows.append(f"| import wmma_gen.compiler (MLIR provider) | {statistics.median(r['s'] for r in imp):.3f} | "
                f"{min(r['s'] for r in imp):.3f} | torch imported: {imp[0]['torch']} |")
    if Path(a.triton_python).exists():
        tri = [run(a.triton_python, IMPORT.format(mod="triton")) for _ in range(a.runs)]
        rows.append(f"| import triton ({a.triton_python}) | {statistics.median(r['s'] for r in tri):.3f} | "
                    f"{min(r['s'] for r in tri):.3f} | torch imported: {tri[0]['torch']} |")
    else:
        rows.append(f"| import triton | - | - | not installed ({a.triton_python} missing) |")
    first = [run(sys.executable, launch) for _ in range(a.runs)]
    rows.append(f"| first cached launch (wt.linear, fresh process) | {statistics.median(r['s'] for r in first):.3f} | "
                f"{min(r['s'] for r in first):.3f} | MLIR builds {first[0]['mlir_builds']}, compile_op "
                f"{first[0]['stats']}, launches {first[0]['launches']} |")
    rows.append("| the same minus the stand-in's hipModuleLoadData (the emulator decoding the code object; "
                f"a GPU runtime loads it in ms) | {statistics.median(r['s'] - r['stub_load'] for r in first):.3f} | "
                f"{min(r['s'] - r['stub_load'] for r in first):.3f} | stand-in load "
                f"{statistics.median(r['stub_load'] for r in first):.3f} s |")
    text = ("First call in a fresh process (source: host wall time on this machine, no GPU; median of "
            f"{a.runs} fresh interpreters). `python bench/first_call.py`\n\n" + "\n".join(rows) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
