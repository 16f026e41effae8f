"""Exported paged-attention schedules (<arch>-paged_attention-<dtype>.json) and their lookup.

The format, the shared checks and the search path ($WMMA_GEN_SCHEDULES > user dir > shipped,
WMMA_GEN_LOG=schedules) are wmma_gen/schedule_files.py's, as for every op. An entry:

    {"head_dim": 128, "kv_dtype": "fp8e4m3", "block_size": 16, "group": 4, "causal": true,
     "window": false, "softcap": false, ["varlen": false, "fp8_wmma": false, "q_dtype": "f16",]
     "bucket": {"seq": 8192, "batch": 16, "seq_q": 1},
     "schedule": {<every PagedSchedule field>}, "tflops": 1.9, "unit": "TFLOP/s",
     "source": "model" | "hip", "validated": true, ...}

`group` is the GQA ratio heads // kv_heads; bucket.seq the context length (keys the block
table holds: max_blocks * block_size -- what a call knows without reading seq_lens, which may
live on the GPU), batch the sequences, seq_q the query tokens per sequence. q_dtype is the
element type Q was tuned with: the file's dtype, or fp8e4m3 / fp8e5m2 bytes (fp8_wmma only);
files written before the field existed lack it, and then it is the file's dtype (their sweeps
gave Q in it). Read back through the same validators as user input (PagedAttentionDirective,
PagedSchedule.from_dict and its named checks against the directive and the file's target).

`lookup(arch, d, problem)`: among the entries with the directive's head_dim, kv_dtype, GQA group,
causal, window, softcap and fp8_wmma (absent: false -- a native-fp8 call never takes a schedule tuned
on the dequantising path; sweeps tune that path only) and q_dtype (absent: the file's dtype -- a call
with fp8 Q bytes takes only an entry tuned with fp8 Q bytes of that format) whose schedule is legal
for it (block_n divides its block size), the one ranked first by (other block size, other varlen,
|log2 Sq/seq_q|, |log2 L/seq|, |log2 B/batch|), from the first file in the search path that has
one; else None and the caller runs the default schedule (defaults.py: its split_kv from the
call's batch and kv heads). Sq ranks before L: a decode step (Sq = 1) and
a prefill chunk (Sq = 16) of the same context run different grids (tuning.py's chunked-prefill
studies), and a packed varlen call falls back to the dense-form entries of its key (the
sweep's chunks are that form; the schedule is checked against the varlen directive). A refused
file is skipped with a warning naming the file and field.
"""
from __future__ import annotations

from pathlib import Path

from ... import schedule_files as sf
from ...attention_common import paged_lookup as pl
from ...schedule_files import SCHEMA, SCHEMA_VERSION, ScheduleFileError, ScheduleFileWarning  # noqa: F401
from ...targets import get_target
from .directive import BLOCK_SIZES, DTYPES, HEAD_DIMS, KV_DTYPES
from .schedule import PagedSchedule

OP = "paged_attention"
DEFAULT_DIR = sf.SHIPPED_DIR
FLAGS = ("causal", "window", "softcap")
Q_FP8 = ("fp8e4m3", "fp8e5m2")   # Q given as fp8 bytes (PagedAttentionDirective.q_dtype, fp8_wmma only)
BUCKET = ("seq", "batch", "seq_q")


class PagedScheduleFileWarning(ScheduleFileWarning):
    """An exported paged-attention schedule file was refused; the next file or the default is used."""


def file_name(arch: str, dtype: str) -> str:
    return sf.file_name(arch, OP, dtype)


def entry_key_of(r) -> dict:
    """An entry's key fields from a ladder row (tuning.documents). A row without fp8_wmma or
    q_dtype (a ladder from before those columns) was tuned on the dequantising path with Q in
    the row's dtype; q_dtype "" also means the row's dtype."""
    q = r.get("q_dtype")
    return {"head_dim": int(r["head_dim"]), "kv_dtype": str(r["kv_dtype"]), "block_size": int(r["block_size"]),
            "group": int(r["heads"]) // int(r["kv_heads"]), **{f: bool(r[f]) for f in FLAGS},
            # str(): a cell is a bool, numpy.bool_ or (CSV) text; never bool(NaN), which is True
            "fp8_wmma": str(r.get("fp8_wmma", False)) == "True", "q_dtype": q if isinstance(q, str) and q else
            str(r["dtype"])}


def _key(e: dict, where: str, path, dtype: str) -> dict:
    pl.need_one_of(e, "head_dim", HEAD_DIMS, where, path)
    kv = e.get("kv_dtype")
    pl.need_kv_dtype(kv, dtype, DTYPES, KV_DTYPES, where, path)
    pl.need_one_of(e, "block_size", BLOCK_SIZES, where, path)
    sf.need(pl.positive_int(e.get("group")), path, f"{where}.group", e.get("group"),
            "a positive integer (heads // kv_heads)")
    for f in FLAGS + ("varlen", "fp8_wmma"):
        sf.need(isinstance(e.get(f, False), bool), path, f"{where}.{f}", e.get(f), "true or false")
    sf.need("causal" in e, path, f"{where}.causal", None, "true or false")
    q = e.get("q_dtype", dtype)      # files from before the field: Q in the file's dtype
    sf.need(q == dtype or (q in Q_FP8 and e.get("fp8_wmma", False) is True), path, f"{where}.q_dtype", q,
            f"{dtype!r} (the file's dtype), or {' / '.join(Q_FP8)} with fp8_wmma true")
    b = e["bucket"]
    pl.need_bucket(b, BUCKET, where, path)
    return {"head_dim": e["head_dim"], "kv_dtype": kv, "block_size": e["block_size"], "group": e["group"],
            **{f: e.get(f, False) for f in FLAGS + ("varlen", "fp8_wmma")}, "q_dtype": q, **{n: b[n] for n in BUCKET}}


def _directive(dtype: str, k: dict):
    from .directive import PagedAttentionDirective
    return PagedAttentionDirective(dtype, k["head_dim"], k["block_size"], k["kv_dtype"], k["causal"], k["window"],
                                   k["softcap"], varlen=k["varlen"], fp8_wmma=k["fp8_wmma"], q_dtype=k["q_dtype"])


def parse(doc, path="<memory>") -> list[dict]:
    """The validated entries of a document (ScheduleFileError naming file and field otherwise)."""
    return pl.parse_entries(doc, path, OP, DTYPES, _key, _directive, PagedSchedule)


def load_file(path) -> list[dict]:
    return sf.load(path, parse)


def nearest(entries: list[dict], block_size: int, seq: int, batch: int, seq_q: int, varlen: bool = False) -> dict:
    return min(entries, key=lambda e: (e["block_size"] != block_size, e["varlen"] != varlen,
                                       pl.far(seq_q, e["seq_q"]), pl.far(seq, e["seq"]), pl.far(batch, e["batch"])))


def _flags(e: dict) -> str:
    q = f" q_dtype={e['q_dtype']}" if e["q_dtype"] in Q_FP8 else ""
    return "".join(f" {f}=True" for f in ("window", "softcap", "varlen", "fp8_wmma") if e[f]) + q


def bucket(e: dict) -> str:
    return (f"head_dim={e['head_dim']} kv_dtype={e['kv_dtype']} block_size={e['block_size']} group={e['group']} "
            f"causal={e['causal']}{_flags(e)} seq={e['seq']} batch={e['batch']} seq_q={e['seq_q']}")


def lookup(arch: str, d, problem: dict, directory: str | Path | None = None) -> PagedSchedule | None:
    """The exported schedule for directive d and problem (heads, kv_heads, seq_q, batch,
    max_blocks; inputs.check_shapes' dict) on arch, or None (module doc)."""
    t = get_target(arch)
    group = problem["heads"] // problem["kv_heads"]
    seq = problem["max_blocks"] * d.block_size

    def pick(entries):
        # Exact on what changes the kernel: the GQA group sets the packed rows per workgroup, and
        # Q's element type (q_dtype) its fragments and quantisation.
        same = [e for e in entries if (e["head_dim"], e["kv_dtype"], e["group"], e["causal"], e["window"],
                                       e["softcap"], e["fp8_wmma"], e["q_dtype"]) == (
                    d.head_dim, d.kv_dtype, group, d.causal, d.window, d.softcap, d.fp8_wmma, d.q_dtype)
                and not e["schedule"].problems(d, t)]
        return nearest(same, d.block_size, seq, problem["batch"], problem["seq_q"], d.varlen) if same else None

    key = (f"head_dim={d.head_dim} kv_dtype={d.kv_dtype} block_size={d.block_size} group={group} causal={d.causal}"
           f"{_flags(d.to_dict())} seq={seq} batch={problem['batch']} seq_q={problem['seq_q']}")
    e = sf.lookup(OP, arch, d.dtype, key, pick, load_file=load_file, bucket=bucket, shipped=DEFAULT_DIR,
                  directory=directory, warning=PagedScheduleFileWarning)
    return e["schedule"] if e else None


def choose_schedule(d, problem: dict, arch: str) -> PagedSchedule:
    """What a call without a schedule runs: the exported entry for the nearest bucket, else
    the default table (defaults.py)."""
    from .defaults import default_schedule
    found = lookup(arch, d, problem)
    if found is not None:
        return found
    return default_schedule(d, arch, problem["heads"] // problem["kv_heads"] * problem["seq_q"],
                            problem["max_blocks"] * d.block_size, batch=problem["batch"],
                            kv_heads=problem["kv_heads"])
