"""Run a bench's worker once per MLIR provider, side by side, and collect its rows.

Two providers' bindings cannot share a process (wmma_gen/compiler/mlir_api.py loads one per
process), so the provider-comparison benches (gemm_static_quality, gemm_vs_triton,
attention_provider_quality) start their own script as `--worker ...` under
WMMA_GEN_MLIR_PROVIDER=<provider>, in parallel, and read the JSON lines it prints.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROVIDERS = {"mlir": "mlir", "flydsl": "flydsl"}       # provider -> the module that must be importable


def installed() -> list[str]:
    """The providers whose bindings are importable here."""
    return [p for p, mod in PROVIDERS.items() if importlib.util.find_spec(mod)]


def run_workers(script: str, jobs: dict[str, tuple[str, list[str]]]) -> dict[str, list[dict]]:
    """jobs: label -> (provider, worker arguments after `--worker`). Starts every job at once
    and returns label -> the rows its worker printed; a failed worker stops the bench, naming it."""
    procs = {label: subprocess.Popen([sys.executable, script, "--worker", *args], stdout=subprocess.PIPE,
                                     text=True, cwd=ROOT, env={**os.environ, "WMMA_GEN_MLIR_PROVIDER": provider})
             for label, (provider, args) in jobs.items()}
    rows = {}
    for label, proc in procs.items():
        out, _ = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"{label}: worker failed with exit code {proc.returncode}")
        rows[label] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return rows
