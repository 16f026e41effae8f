"""Start-up time of the CLI next to the interpreter's own: `wmma-gen targets`, `wmma-gen --help`
and `python -c pass`, each a fresh process, timed from outside (subprocess wall time: start,
imports, parser, output, exit). The three commands run in turn, round after round, so a machine
whose speed drifts slows all of them alike; the first `--warmup` rounds are not counted.
Prints wall min and median per command, the median overhead over `python -c pass`, the median
CPU seconds (user + system of the child: less sensitive to a busy machine than wall time) and
the README row. Issue 14 target: < 0.4 s for `wmma-gen targets`.

    python bench/cli_start.py [--runs 15] [--warmup 2]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def cli_command() -> list[str]:
    """The console script installed next to this interpreter (what a user runs), else `-m`."""
    script = Path(sys.executable).with_name("wmma-gen")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "wmma_gen.cli.main"]


def run_once(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds = user + system of the child) of one fresh process."""
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        raise SystemExit(f"{' '.join(cmd)} exited {child.returncode}: {done.stderr[-500:]}")
    return seconds, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="counted runs per command (default 15)")
    ap.add_argument("--warmup", type=int, default=2, help="uncounted first rounds (default 2)")
    args = ap.parse_args()
    cli = cli_command()
    commands = {"python -c pass": [sys.executable, "-c", "pass"],
                "wmma-gen --help": [*cli, "--help"],
                "wmma-gen targets": [*cli, "targets"]}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for i in range(args.warmup + args.runs):
        for name, cmd in commands.items():
            t = run_once(cmd)
            if i >= args.warmup:
                times[name].append(t)
    wall = {name: [w for w, _ in ts] for name, ts in times.items()}
    cpu = {name: [c for _, c in ts] for name, ts in times.items()}
    med = {name: statistics.median(ts) for name, ts in wall.items()}
    low = {name: min(ts) for name, ts in wall.items()}
    cpu_med = {name: statistics.median(ts) for name, ts in cpu.items()}
    base = med["python -c pass"]
    print(f"CLI: {' '.join(cli)}; {args.runs} runs each (after {args.warmup} warm-up rounds), fresh processes; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'command':18} {'wall min s':>10} {'wall median s':>13} {'median - pass':>13} {'cpu median s':>12}")
    for name in commands:
        print(f"{name:18} {low[name]:10.3f} {med[name]:13.3f} {med[name] - base:13.3f} {cpu_med[name]:12.3f}")
    print("README row:")
    print(f"| CLI start, fresh process (target < 0.4 s) | wall median (min): `wmma-gen targets` "
          f"{med['wmma-gen targets']:.2f} s ({low['wmma-gen targets']:.2f}), `wmma-gen --help` "
          f"{med['wmma-gen --help']:.2f} s ({low['wmma-gen --help']:.2f}), `python -c pass` {base:.2f} s "
          f"({low['python -c pass']:.2f}); CPU median {cpu_med['wmma-gen targets']:.2f} / "
          f"{cpu_med['wmma-gen --help']:.2f} / {cpu_med['python -c pass']:.2f} s; neither command loads MLIR, "
          f"matplotlib or optuna | `python bench/cli_start.py` ({args.runs} interleaved runs; "
          f"load average {os.getloadavg()[0]:.0f} on {os.cpu_count()} cores) |")

if __name__ == "__main__":
    main()
