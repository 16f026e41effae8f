"""Per-test CPU seconds of a pytest run, and the idle-core estimate docs/testing.md quotes.

As a pytest plugin (`PYTHONPATH=bench python -m pytest -p pytest_cpu ...`, with or without `-n`) it
appends one JSON line per test to $PYTEST_CPU_OUT (default pytest_cpu.jsonl): the test's CPU seconds,
process plus reaped children (`resource.getrusage`), which another session's load on the shared
cores does not inflate the way it inflates wall time, and one line per process with its CPU at the
end of collection. As a script (`python bench/pytest_cpu.py FILE... [--ids FAST_IDS]`) it sums the
lines by test folder and prints the estimate: summed CPU / workers + one worker's collection. That
is an estimate (it ignores sleeps and uneven worker loads), not a timing.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import resource
import time

import pytest

OUT = os.environ.get("PYTEST_CPU_OUT", "pytest_cpu.jsonl")


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _plain(nodeid: str) -> str:
    """The node id without the `@<group>` suffix pytest-xdist's loadgroup adds to an xdist_group's
    tests (tests/tiers.py GROUPS and SHARED_SETUP), so they match `pytest --co -q` output."""
    return re.sub(r"@[\w./-]+\.py(::\w+)?$", "", nodeid)


def _write(row: dict) -> None:
    row["worker"] = os.environ.get("PYTEST_XDIST_WORKER", "")
    with open(OUT, "a") as f:
        f.write(json.dumps(row) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = _cpu(), time.perf_counter()
    yield
    _write({"id": _plain(item.nodeid), "cpu": round(_cpu() - cpu, 3), "wall": round(time.perf_counter() - wall, 3)})


def pytest_collection_finish(session):
    _write({"collect_cpu": round(_cpu(), 3), "tests": len(session.items)})


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="JSON-lines files the plugin wrote (a later line for a test wins)")
    ap.add_argument("--ids", help="only these node ids (e.g. `pytest --co -q -m 'not slow'` output)")
    ap.add_argument("--workers", type=int, default=2, help="cores of the estimate (default 2)")
    a = ap.parse_args(argv)
    tests, collect = {}, []
    for name in a.files:
        for line in open(name):
            row = json.loads(line)
            if "id" in row:
                tests[_plain(row["id"])] = row
            else:
                collect.append(row["collect_cpu"])
    if a.ids:
        keep = {x.strip() for x in open(a.ids) if "::" in x}
        tests = {k: v for k, v in tests.items() if k in keep}
        print(f"{len(keep - set(tests))} of the {len(keep)} ids were not measured")
    folders, counts = collections.Counter(), collections.Counter()
    for nodeid, row in tests.items():
        folder = nodeid.split("/")[1] if nodeid.startswith("tests/") else nodeid.split("/")[0]
        folders[folder] += row["cpu"]
        counts[folder] += 1
    total, col = sum(folders.values()), max(collect, default=0.0)
    print(f"{len(tests)} tests, {total:.1f} s CPU; collection {col:.1f} s CPU (the largest of {len(collect)})")
    for folder, cpu in folders.most_common():
        print(f"  {folder:20s} {counts[folder]:5d} tests {cpu:7.1f} s")
    est = total / a.workers + col
    print(f"estimate on {a.workers} idle cores: {est:.0f} s ({est / 60:.1f} min)")


if __name__ == "__main__":
    main()
