"""Regenerate the committed results/ files with the commands that write them (issue 38 item 5).

    python bench/regenerate.py --list              # every file, its command, what it needs, and whether it can run here
    python bench/regenerate.py                     # run every entry whose needs are met, one after another
    python bench/regenerate.py --only attention_table mla_table
    python bench/regenerate.py --timing            # also the host-timing benches (idle machine only)
    python bench/regenerate.py --readme            # rewrite the table in results/README.md from REGISTRY

REGISTRY is the one inventory of results/: which command writes which file, where its numbers come from and
what it needs. results/README.md's table is generated from it and tests/unit/test_results_registry.py checks
both against the files. An entry whose needs are not met here (a second MLIR provider, a peer source tree,
an idle machine, two commits' checkouts) is skipped with that reason, never silently; naming it with --only
runs it anyway when only `manual` or `timing` keeps it out. Each .md a bench writes starts with the line of
bench/results_header.py (command, date, commit, MLIR provider, source).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = ("python", "-m", "wmma_gen.cli.main")


@dataclass(frozen=True)
class Entry:
    name: str
    argv: tuple[str, ...]            # run from the checkout; "python" = this interpreter; {tmp} = a scratch dir
    outputs: tuple[str, ...]         # paths under results/
    source: str                      # words of bench/results_header.SOURCES
    what: str
    needs: tuple[str, ...] = ()      # keys of NEEDS
    minutes: float = 1.0             # CPU minutes of a run with a warm kernel cache, 2 cores (approximate)
    collect: tuple[tuple[str, str], ...] = ()   # (path under {tmp}, path under results/) copied after the run
    env: tuple[tuple[str, str], ...] = field(default=())

    def command(self) -> str:
        env = " ".join(f"{k}={v}" for k, v in self.env)
        return (env + " " if env else "") + " ".join(self.argv)


def _provider_missing() -> str | None:
    sys.path.insert(0, str(Path(__file__).parent))
    from provider_workers import PROVIDERS, installed
    missing = sorted(set(PROVIDERS) - set(installed()))
    return f"both MLIR providers installed (missing: {', '.join(missing)})" if missing else None


def _env_path(var: str, what: str):
    def check() -> str | None:
        v = os.environ.get(var)
        return None if v and Path(v).exists() else f"{var} naming {what}"
    return check


def _module(mod: str):
    return lambda: None if importlib.util.find_spec(mod) else f"the `{mod}` package"


def _fastlaunch() -> str | None:
    built = list((ROOT / "wmma_gen" / "device").glob("_fastlaunch*.so"))
    return None if built else "the C launcher built in place (`python setup.py build_ext --inplace`)"


# need -> a check returning None when met here, else what is missing. `timing` and `manual` are never met by a
# plain run: host-time figures want an idle machine, records are re-made only on purpose.
NEEDS = {
    "providers": _provider_missing,
    "triton": _module("triton"),
    "vllm": _env_path("WMMA_GEN_VLLM_DIST", "a vLLM wheel or sdist (`pip download vllm --no-deps --only-binary :all:`)"),
    "fastlaunch": _fastlaunch,
    "timing": lambda: "host timing: an idle machine (load average < 1) and --timing",
    "manual": lambda: "a record: re-made on purpose only (see `what`), never by a full run",
    "checkouts": lambda: "checkouts of the two commits a before/after record compares (run the command in each)",
}

RESULTS_SRC = "compiler output, model, published"
DEFAULT_PROVIDER = "flydsl"     # wmma_gen/compiler/mlir_api.PROVIDERS[0] (not imported here: it loads the bindings)
REGISTRY: tuple[Entry, ...] = (
    Entry("attention_table", ("python", "bench/attention_table.py"),
          ("attention_table.csv", "attention_table.md"), RESULTS_SRC,
          "attention forward defaults: VGPRs, loop density, model TFLOP/s beside published figures", minutes=1),
    Entry("attention_bwd_table", ("python", "bench/attention_bwd_table.py"),
          ("attention_bwd_table.csv", "attention_bwd_table.md"), RESULTS_SRC,
          "attention backward defaults beside published figures", minutes=1),
    Entry("attention_edge_density", ("python", "bench/attention_edge_density.py"),
          ("attention_edge_density.csv", "attention_edge_density.md"), "compiler output",
          "forward density with the edge-mask block counted", minutes=1),
    Entry("large_hd_table", ("python", "bench/large_hd_table.py"), ("large_head_dims.md",),
          "compiler output, model", "attention forward defaults at head dims 256-512 (docs/large_head_dims.md)",
          minutes=1),
    Entry("attention_sinks_static", ("python", "bench/attention_sinks_static.py"),
          ("attention_sinks_static.csv",), "compiler output",
          "every default forward with and without sinks: VGPRs, spills, instructions", minutes=2),
    Entry("mla_table", ("python", "bench/mla_table.py"), ("mla_table.md",), "model, compiler output",
          "MLA decode model estimates beside the DRAM limit", minutes=1),
    Entry("model_table", ("python", "bench/model_table.py"), ("model_estimates.csv",), "model",
          "model estimate of the best default GEMM per arch, dtype and shape", minutes=1),
    Entry("paged_attention_table", ("python", "bench/paged_attention_table.py"), ("paged_attention_table.md",),
          "model, compiler output, published", "paged decode model estimates, fp8 vs f16 KV, vLLM's Triton kernel "
          "per key", needs=("vllm", "triton"), minutes=3),
    Entry("shipped_sweeps", ("python", "bench/shipped_table.py", "--ops", "gemm", "attention", "attention_bwd"),
          ("shipped_sweeps.md",), "model, compiler output",
          "the shipped GEMM/attention files' entries beside the default under today's model (the sweep "
          "record above the table is history)", minutes=2),
    Entry("paged_sweeps", ("python", "bench/shipped_table.py", "--ops", "paged_attention"),
          ("paged_sweeps.md",), "model, compiler output",
          "the shipped paged files' entries beside the default under today's model", minutes=4),
    Entry("gemm_vs_triton", ("python", "bench/gemm_vs_triton.py", "--providers", DEFAULT_PROVIDER,
                             "--triton-from", "results/gemm_vs_triton.csv"),
          ("gemm_vs_triton.csv", "gemm_vs_triton.md"), "compiler output",
          "gfx1100 4096^3 GEMM loop density, ours (default and shipped) vs Triton's best config "
          "(Triton rows reused from the csv; drop --triton-from to recompile them, ~30 min)",
          needs=("triton",), minutes=2),
    Entry("gemm_static_quality", ("python", "bench/gemm_static_quality.py"),
          ("gemm_static_quality.csv", "gemm_static_quality.md"), "compiler output",
          "GEMM main loops under both MLIR providers", needs=("providers",), minutes=3),
    Entry("attention_provider_quality", ("python", "bench/attention_provider_quality.py"),
          ("attention_provider_quality.csv", "attention_provider_quality.md"), "compiler output",
          "attention main loops under both MLIR providers", needs=("providers",), minutes=6),
    Entry("calibrate", ("python", "bench/calibrate.py"),
          ("model_calibration.csv", "model_calibration.md", "model_calibration.png"), "model, published",
          "the model's fit against published measurements", needs=("triton",), minutes=6),
    # before peers: bench/peers.py takes its problems from these ladders
    Entry("ladders_gfx1100", CLI + ("sweep", "--quick", "--arch", "gfx1100", "--results", "{tmp}", "--no-progress"),
          tuple(f"gfx1100/{op}_ladder.{ext}" for op in ("gemm", "attention", "attention_bwd") for ext in ("csv", "png")),
          "model, emulator", "example ladders of the quick sweep (README's main job)", minutes=2,
          collect=tuple((f"gfx1100/{op}_ladder.{ext}", f"gfx1100/{op}_ladder.{ext}")
                        for op in ("gemm", "attention", "attention_bwd") for ext in ("csv", "png"))),
    Entry("peers", ("python", "bench/peers.py"), ("peers.csv", "peers.md"), "compiler output, model, emulator",
          "Triton GEMM/FA kernels compiled here beside ours, emulator-checked", needs=("triton",), minutes=25),
    Entry("tuner_efficiency", ("python", "bench/tuner_efficiency.py"), ("tuner_efficiency.csv",), "model",
          "TPE (50 trials) vs exhaustive best on the model objective", minutes=10),
    Entry("launch_overhead", ("python", "bench/launch_overhead.py"), ("launch_overhead.md",), "host CPU time",
          "host time per call through the HIP stand-in (README quotes it)", needs=("timing", "fastlaunch"), minutes=3),
    Entry("first_call", ("python", "bench/first_call.py", "--runs", "5"), ("first_call.md",), "host CPU time",
          "first call in a fresh process (README quotes it)", needs=("timing", "fastlaunch"), minutes=2),
    Entry("compile_time", ("python", "bench/compile_time.py"), ("compile_time.csv",), "host wall time",
          "per-candidate compile time before/after compile-once", needs=("timing",), minutes=3),
    Entry("contract", ("python", "bench/contract.py"), ("contract_bench.csv",), "host wall time",
          "static vs run-time shapes (builds commit a1a7fa5 too)", needs=("timing",), minutes=3),
    Entry("codegen_fingerprint_flydsl", ("python", "bench/codegen_fingerprint.py", "--record",
                                         "results/codegen_fingerprint_flydsl.json"),
          ("codegen_fingerprint_flydsl.json",), "compiler output",
          "the reference every codegen change is compared with: re-record only for an intended change",
          needs=("manual",), minutes=15),
    Entry("codegen_fingerprint_mlir", ("python", "bench/codegen_fingerprint.py", "--record",
                                       "results/codegen_fingerprint_mlir.json"),
          ("codegen_fingerprint_mlir.json",), "compiler output",
          "the same reference under mlir-gml", needs=("manual", "providers"), minutes=15,
          env=(("WMMA_GEN_MLIR_PROVIDER", "mlir"),)),
    Entry("attention_bwd_saddr_quality", ("python", "bench/codegen_fingerprint.py", "--only", "bwd", "--figures",
                                          "FILE"), ("attention_bwd_saddr_quality.csv",), "compiler output",
          "before (935ddf6) / after (c9cab3d) record of the backward's saddr reads: the figures of two checkouts",
          needs=("checkouts",)),
    Entry("attention_fwd_o_saddr_quality", ("python", "bench/codegen_fingerprint.py", "--only", "fwd", "--figures",
                                            "FILE"), ("attention_fwd_o_saddr_quality.csv",), "compiler output",
          "before (b39c090) / after (4a74572) record of the forward's O stores: the figures of two checkouts",
          needs=("checkouts",)),
)

BY_NAME = {e.name: e for e in REGISTRY}


def unmet(e: Entry, allow: set[str] = frozenset()) -> list[str]:
    """What `e` needs that is missing here (needs in `allow` count as met)."""
    return [r for r in (NEEDS[n]() for n in e.needs if n not in allow) if r]


def run(e: Entry) -> float:
    """Run one entry; returns its CPU seconds (children's user + system)."""
    tmp = Path(tempfile.mkdtemp(prefix=f"wmma_gen_regen_{e.name}_"))
    argv = [sys.executable if a == "python" else a.replace("{tmp}", str(tmp)) for a in e.argv]
    env = {**os.environ, **dict(e.env), "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    t0 = os.times()
    try:
        subprocess.run(argv, cwd=ROOT, env=env, check=True)
        for src, dst in e.collect:
            shutil.copyfile(tmp / src, ROOT / "results" / dst)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t1 = os.times()
    return (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)


README_BEGIN, README_END = "<!-- regenerate.py: table begin -->", "<!-- regenerate.py: table end -->"


def readme_table() -> str:
    rows = ["| file(s) in results/ | written by | source | needs | what |", "|---|---|---|---|---|"]
    for e in REGISTRY:
        files = ", ".join(f"`{o}`" for o in e.outputs)
        rows.append(f"| {files} | `{e.command()}` (`--only {e.name}`) | {e.source} | {', '.join(e.needs) or '-'} "
                    f"| {e.what} |")
    return "\n".join([README_BEGIN, *rows, README_END])


def write_readme(path: Path = ROOT / "results" / "README.md") -> None:
    text = path.read_text()
    i, j = text.index(README_BEGIN), text.index(README_END) + len(README_END)
    path.write_text(text[:i] + readme_table() + text[j:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--only", nargs="+", metavar="NAME", help=f"entries to run (of: {', '.join(BY_NAME)})")
    ap.add_argument("--list", action="store_true", help="print the inventory and what each entry needs; run nothing")
    ap.add_argument("--timing", action="store_true", help="also run the host-timing benches (idle machine only)")
    ap.add_argument("--readme", action="store_true", help="rewrite results/README.md's table from the registry")
    a = ap.parse_args(argv)
    bad = [n for n in a.only or () if n not in BY_NAME]
    if bad:
        ap.error(f"--only {' '.join(bad)}: not allowed; names are {', '.join(BY_NAME)}")
    if a.readme:
        write_readme()
        print("wrote results/README.md's table")
        return 0
    chosen = [BY_NAME[n] for n in a.only] if a.only else list(REGISTRY)
    allow = {"timing"} if a.timing else set()
    if a.only:
        allow |= {"timing", "manual"}
    if a.list:
        for e in chosen:
            missing = unmet(e, allow)
            state = "runs here" if not missing else "skipped: needs " + "; ".join(missing)
            print(f"{e.name}: {e.command()} -> {', '.join('results/' + o for o in e.outputs)} "
                  f"[source: {e.source}; ~{e.minutes:g} CPU min] {state}")
        return 0
    failed, spent = [], 0.0
    for e in chosen:
        missing = unmet(e, allow)
        if missing:
            print(f"== {e.name}: skipped, needs {'; '.join(missing)}", flush=True)
            continue
        print(f"== {e.name}: {e.command()}", flush=True)
        w0 = time.monotonic()
        try:
            cpu = run(e)
        except (subprocess.CalledProcessError, OSError) as err:
            print(f"== {e.name}: FAILED ({err})", flush=True)
            failed.append(e.name)
            continue
        spent += cpu
        print(f"== {e.name}: done in {time.monotonic() - w0:.0f} s wall, {cpu:.0f} s CPU (host, children)", flush=True)
    print(f"regenerate: {len(chosen)} entries, {len(failed)} failed{': ' + ', '.join(failed) if failed else ''}; "
          f"{spent / 60:.1f} CPU min", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
