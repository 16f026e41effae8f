"""Exported MLA schedules (<arch>-mla-<dtype>.json) and their lookup.

The format, the shared checks and the search path ($WMMA_GEN_SCHEDULES > user dir > shipped,
WMMA_GEN_LOG=schedules) are wmma_gen/schedule_files.py's, as for every op. An entry:

    {"head_dim": 576, "head_dim_v": 512, "kv_dtype": "bf16", "block_size": 64, "causal": false,
     "bucket": {"seq": 8192, "batch": 16, "seq_q": 1, "heads": 128},
     "schedule": {<every MLASchedule field>}, "tflops": 2.1, "unit": "TFLOP/s",
     "source": "model" | "hip", "validated": true, ...}

bucket.seq is the context length the block table holds (max_blocks * block_size: what a call
knows without reading cache_seqlens, which may live on the GPU). Read back through the same
validators as user input (MLADirective, MLASchedule.from_dict and its named checks).

`lookup(arch, d, problem)`: among the entries with the directive's key whose schedule is legal
for it, the one ranked first by (|log2 Sq/seq_q|, |log2 H/heads|, |log2 L/seq|, |log2 B/batch|),
from the first file in the search path that has one; else None (the caller runs defaults.py).
"""
from __future__ import annotations

from pathlib import Path

from ... import schedule_files as sf
from ...attention_common import paged_lookup as pl
from ...schedule_files import SCHEMA, SCHEMA_VERSION, ScheduleFileError, ScheduleFileWarning  # noqa: F401
from ...targets import get_target
from .directive import BLOCK_SIZES, DTYPES, HEAD_DIMS, KV_DTYPES
from .schedule import MLASchedule

OP = "mla"
KEY = ("head_dim", "head_dim_v", "kv_dtype", "block_size", "causal")
BUCKET = ("seq", "batch", "seq_q", "heads")


class MLAScheduleFileWarning(ScheduleFileWarning):
    """An exported MLA schedule file was refused; the next file or the default is used."""


def file_name(arch: str, dtype: str) -> str:
    return sf.file_name(arch, OP, dtype)


def entry_key_of(r) -> dict:
    """An entry's key fields from a ladder row (tuning.documents)."""
    return {"head_dim": int(r["head_dim"]), "head_dim_v": int(r["head_dim_v"]), "kv_dtype": str(r["kv_dtype"]),
            "block_size": int(r["block_size"]), "causal": str(r["causal"]) == "True"}


def _key(e: dict, where: str, path, dtype: str) -> dict:
    for n in ("head_dim", "head_dim_v"):
        pl.need_one_of(e, n, HEAD_DIMS, where, path)
    pl.need_kv_dtype(e.get("kv_dtype"), dtype, DTYPES, KV_DTYPES, where, path)
    pl.need_one_of(e, "block_size", BLOCK_SIZES, where, path)
    sf.need(isinstance(e.get("causal"), bool), path, f"{where}.causal", e.get("causal"), "true or false")
    pl.need_bucket(e["bucket"], BUCKET, where, path)
    return {**{n: e[n] for n in KEY}, **{n: e["bucket"][n] for n in BUCKET}}


def _directive(dtype: str, k: dict):
    from .directive import MLADirective
    return MLADirective(dtype, k["head_dim"], k["head_dim_v"], k["block_size"], k["kv_dtype"], k["causal"])


def parse(doc, path="<memory>") -> list[dict]:
    """The validated entries of a document (ScheduleFileError naming file and field otherwise)."""
    return pl.parse_entries(doc, path, OP, DTYPES, _key, _directive, MLASchedule)


def load_file(path) -> list[dict]:
    return sf.load(path, parse)


def bucket(e: dict) -> str:
    return " ".join(f"{n}={e[n]}" for n in KEY + BUCKET)


def lookup(arch: str, d, problem: dict, directory: str | Path | None = None) -> MLASchedule | None:
    """The exported schedule for directive d and problem (batch, heads, seq_q, max_blocks) on
    arch, or None (module doc)."""
    t = get_target(arch)
    want = {"seq": problem["max_blocks"] * d.block_size, "batch": problem["batch"], "seq_q": problem["seq_q"],
            "heads": problem["heads"]}

    def pick(entries):
        same = [e for e in entries if all(e[n] == getattr(d, n) for n in KEY) and not e["schedule"].problems(d, t)]
        return min(same, key=lambda e: tuple(pl.far(want[n], e[n]) for n in ("seq_q", "heads", "seq", "batch"))) \
            if same else None

    key = " ".join(f"{n}={getattr(d, n)}" for n in KEY) + " " + " ".join(f"{n}={v}" for n, v in want.items())
    e = sf.lookup(OP, arch, d.dtype, key, pick, load_file=load_file, bucket=bucket, shipped=sf.SHIPPED_DIR,
                  directory=directory, warning=MLAScheduleFileWarning)
    return e["schedule"] if e else None


def choose_schedule(d, problem: dict, arch: str) -> MLASchedule:
    """What a call without a schedule runs: the exported entry for the nearest bucket, else the
    default (defaults.py: split_kv from the table's capacity, the batch and the heads)."""
    from .defaults import default_schedule
    found = lookup(arch, d, problem)
    if found is not None:
        return found
    cap = problem["max_blocks"] * d.block_size
    return default_schedule(d, arch, dict(batch=problem["batch"], heads=problem["heads"], seq_q=problem["seq_q"],
                                          seq_lens=[cap] * problem["batch"]))
