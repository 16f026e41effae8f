"""Re-rank the shipped schedule files' entries against the built-in default under the current model
(no sweep): a model-ranked entry whose schedule no longer beats the default on its bucket problem by more than
the model's resolution (autotune/model_tie.py: 1%; a tie keeps the default) -- or beats it only at the model's
guessed parameter values (model/robustness.py) -- or whose main loop issues fewer
v_wmma per instruction than the default's (model/isa_loop.main_loop_density: the model may not trade loop
density for wave quantisation without a GPU measurement, issue 38) is replaced by the default schedule, which is
gated on the emulator on the op's gate problems first (the same check a sweep trial passes) and carries its
own model figure and code-object attrs. Entries that still win are left as they are. The judges are
tests/compile/test_shipped_beat_default.py's and tests/compile/test_shipped_density.py's.

    nice -n 15 python bench/rerank_shipped.py [--op paged_attention] [--dry-run]

Prints one line per replaced entry (source = model, never measured) and rewrites the files in place
(atomically, through schedule_files' reader as a check).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # this checkout's wmma_gen and autotune

from autotune.ladder import builtin_default  # noqa: E402
from wmma_gen.tuner.objective import object_attrs  # noqa: E402
from autotune.loop_density import bucket_problem as problem, entry_directive as directive  # noqa: E402
from autotune.loop_density import set_density as density  # noqa: E402  (export applies the same rule)
from autotune.model_tie import beats  # noqa: E402  (a model tie keeps the default, as export does)
from wmma_gen import schedule_files as sf  # noqa: E402
from wmma_gen.model import robustness  # noqa: E402
from wmma_gen.ops import registry  # noqa: E402
from wmma_gen.ops.compile_op import compile_op  # noqa: E402


def still_wins(spec, d, tuned, default, p, arch: str) -> bool:
    if density(spec, d, tuned, p, arch) < density(spec, d, default, p, arch) - 1e-12:
        return False
    mine, base = spec.estimate_of(d, tuned, p, arch), spec.estimate_of(d, default, p, arch)
    if not beats(mine.tflops, base.tflops):      # within the model's resolution: a tie keeps the default
        return False
    return not robustness.flips(arch, lambda: (spec.estimate_of(d, tuned, p, arch).tflops,
                                               spec.estimate_of(d, default, p, arch).tflops))


def default_entry(spec, e: dict, d, default, p, arch: str) -> dict:
    """The entry with the default schedule, gated on the emulator and re-estimated."""
    key = spec.key_of(d, default, spec.problem_from(p))
    cs = compile_op(spec, d, default, key, arch)
    for gp in spec.gate_problems(d, default, key):
        r = spec.check(cs, d, gp, "emu", 0)
        if not r.passed:
            raise SystemExit(f"default {default} fails its gate on {gp}: {r}")
    est = spec.estimate(cs, d, default, spec.problem_from(p), arch)
    attrs = object_attrs(cs.pairs())
    return {**e, "schedule": default.to_dict(), "tflops": round(float(est.tflops), 3), "source": "model",
            "validated": True, "vgprs": attrs["vgprs"], "lds_bytes": attrs["lds_bytes"], "isa_hash": attrs["isa_hash"],
            "object_sha256": attrs["object_sha256"], "toolchain": attrs["toolchain"],
            "trial": "default (re-ranked by bench/rerank_shipped.py)"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", default=None)
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    for path in sorted(sf.SHIPPED_DIR.glob("*.json")):
        doc = json.loads(path.read_text())
        if a.op and doc["op"] != a.op:
            continue
        arch, op, dtype, spec = doc["arch"], doc["op"], doc["dtype"], registry.get(doc["op"])
        changed = 0
        for i, e in enumerate(doc["entries"]):
            d, p, default = builtin_default(op, directive(op, dtype, e), arch, problem(op, e))
            tuned = spec.schedule.from_dict(e["schedule"])
            if tuned == default or e["source"] != "model" or still_wins(spec, d, tuned, default, p, arch):
                continue
            print(f"{path.name}[{i}] bucket {e['bucket']} kv {e.get('kv_dtype')} hd {e.get('head_dim')}: "
                  f"{tuned} -> default {default}", flush=True)
            if not a.dry_run:
                doc["entries"][i] = default_entry(spec, e, d, default, p, arch)
            changed += 1
        if changed and not a.dry_run:
            doc["generated"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f, indent=1)
                f.write("\n")
            os.replace(tmp, path)
        print(f"{path.name}: {changed} of {len(doc['entries'])} entries replaced by the default", flush=True)


if __name__ == "__main__":
    main()
