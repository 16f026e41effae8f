"""The provenance line every results/*.md starts with (issue 38 item 5): the command that wrote the file,
the date, the commit, the MLIR provider and the source of its numbers -- one format, written by the benches
(never by hand) and read back by bench/regenerate.py and tests/unit/test_results_registry.py.

    Written by `python bench/attention_table.py` on 2026-12-05 at commit a2bcf45; MLIR provider flydsl==0.5.0
    (...); source: compiler output, model.
"""
from __future__ import annotations

import datetime
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# What a number can be (results/README.md explains each); a header names one or more, comma-separated.
SOURCES = ("model", "emulator", "compiler output", "host CPU time", "host wall time", "hip", "published")

PATTERN = re.compile(r"^Written by `(?P<command>[^`]+)` on (?P<date>\d{4}-\d{2}-\d{2}) at commit (?P<commit>[0-9a-f]+|unknown)"
                     r"; MLIR provider (?P<provider>.+?); source: (?P<source>[^.]+)\.$", re.M)


def command(argv: list[str] | None = None) -> str:
    """`python bench/<script> <args>` for this process: the script relative to the checkout."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]).resolve()
    name = script.relative_to(ROOT).as_posix() if script.is_relative_to(ROOT) else argv[0]
    return " ".join(["python", name, *(shlex.quote(a) for a in argv[1:])])


def commit(dirty: bool = False) -> str:
    """HEAD's short hash; with `dirty`, `git describe --always --dirty` (marks uncommitted edits)."""
    args = ["describe", "--always", "--dirty"] if dirty else ["rev-parse", "--short", "HEAD"]
    try:
        out = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True,
                             text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out or "unknown"


def default_provider() -> str:
    from wmma_gen.compiler import mlir_api
    return mlir_api.provider().identity


def line(source: str, provider: str | None = None, argv: list[str] | None = None) -> str:
    """The header line. `source`: comma-separated words of SOURCES; `provider`: default = the MLIR provider
    this process compiles with (a bench comparing providers names them all)."""
    bad = [s for s in (w.strip() for w in source.split(",")) if s not in SOURCES]
    if bad:
        raise ValueError(f"source={source!r}: {bad} not allowed; each comma-separated word is one of {SOURCES}")
    prov = default_provider() if provider is None else provider
    if ";" in prov:
        raise ValueError(f"provider={prov!r}: no ';' allowed (it ends the field)")
    return (f"Written by `{command(argv)}` on {datetime.date.today().isoformat()} at commit {commit()}; "
            f"MLIR provider {prov}; source: {source}.")


def parse(text: str, near_top: int = 6) -> dict | None:
    """The header's fields if one of the first `near_top` lines is a header line, else None."""
    for ln in text.splitlines()[:near_top]:
        m = PATTERN.match(ln)
        if m:
            return m.groupdict()
    return None


def put(text: str, header: str, near_top: int = 6) -> str:
    """`text` with its header line replaced by `header` (or, without one, `header` after the title)."""
    lines = text.split("\n")
    for i, ln in enumerate(lines[:near_top]):
        if PATTERN.match(ln):
            lines[i] = header
            return "\n".join(lines)
    at = 1 if lines and lines[0].startswith("# ") else 0
    return "\n".join(lines[:at] + ([""] if at else []) + [header, ""] + lines[at:]).replace("\n\n\n", "\n\n", 1)
