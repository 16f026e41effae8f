"""The GEMM's Tuning (ops/contract.py): studies per (dtype, shape), the objective (the shared
SpecObjective of wmma_gen/tuner/objective.py over the GEMM's OpSpec), ladder columns and the
exported schedule files (read back by wmma_gen/ops/gemm/lookup.py). Loaded only by the tuner.

The gate runs the very code object that is timed and exported (sizes are kernel arguments):
on small problems of one or two macro tiles per axis with the same specialization key
(spec.gate_problems, signature.gate_problems) -- the emulator is slow, and one tile pair
already exercises every instruction the schedule emits.
"""
from __future__ import annotations

import math

import wmma_gen
from wmma_gen.errors import ScheduleError
from wmma_gen.ops.gemm import lookup
from wmma_gen.ops.gemm.defaults import LARGE
from wmma_gen.ops.gemm.directive import ACTIVATIONS, GemmDirective
from wmma_gen.ops.gemm.schedule import SPACE, Schedule
from wmma_gen.ops.gemm.problem import GemmProblem, as_problem
from wmma_gen.targets import get_target
from wmma_gen.tuner.objective import spec_objective

from ..contract import Tuning

OP = "gemm"
SCHEDULE = Schedule
PROBLEM_COLUMNS = ["dtype", "acc", "layout", "m", "n", "k", "batch"]
# Known-good starting points enqueued into every new study (those outside the space or illegal
# for the directive are skipped; the objective would prune them anyway).
BASELINES: tuple[Schedule, ...] = (
    LARGE,  # the built-in default: an export never ranks below what gemm() does untuned
    Schedule(),
    Schedule(block_m=128, block_n=128, block_k=32, waves_m=2, waves_n=2),
    Schedule(block_m=64, block_n=128, block_k=32, waves_m=2, waves_n=2),
    Schedule(block_m=128, block_n=64, block_k=32, waves_m=2, waves_n=2, lds="ab", buffers=2),
)

SIZE_LABEL = "problem size (M*N*K)^(1/3)"
DTYPES = ("f16", "bf16", "i8", "i4", "fp8", "bf8")
QUICK = {"dtypes": ("f16", "i8"), "shapes": ((1024, 1024, 1024), (2048, 2048, 2048)), "trials": 12}
DEFAULTS = {"dtypes": ("f16", "bf16", "i8", "i4"),
            "shapes": ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096)), "trials": 40}


def label(ua: dict) -> str:
    d = GemmDirective.from_dict(ua["directive"])      # fills what older studies did not store (layout NN)
    p = as_problem(ua.get("problem") or ua.get("row") or ua["directive"])   # older studies: sizes in row/directive
    tags = _tags(d, p).replace("-biasn", " +bias").replace("-biasm", " +row_bias")
    tags = tags.replace("-", " ")
    shape = f"{p.m}x{p.n}x{p.k}"
    return shape if d.layout == "NN" and not tags else f"{d.layout} {shape}{tags}"


def _tags(d: GemmDirective, p: GemmProblem) -> str:
    """What a study's name adds for a problem beyond dtype, acc, layout and shape (none for the
    plain problems `--shapes` sweeps: their names are unchanged)."""
    tags = ([f"b{p.batch}"] if p.batch != 1 else []) + ([f"bias{d.bias}"] if d.bias else [])
    tags += ([d.activation] if d.activation else []) + ([f"out{d.out_dtype}"] if d.out_dtype != d.acc else [])
    return "".join("-" + t for t in tags)


def schedule_text(b) -> str:
    return (f"{b['block_m']}x{b['block_n']}x{b['block_k']} w{b['waves_m']}x{b['waves_n']} "
            f"lds={b['lds']} ld{b['load_bits']} {b['raster']} sk{b['split_k']}")


def series(r) -> str:
    """One ladder plot line per dtype (its peak is drawn with the same name)."""
    return str(r["dtype"])


def items(cfg) -> list[tuple[GemmDirective, dict]]:
    """(directive, problem) per study: the problems file's (autotune/problems.py), else NN,
    batch 1, no epilogue per (dtype, shape)."""
    if cfg.problems:
        return [(p.directive(), p.sizes()) for p in cfg.problems]
    return [(GemmDirective(dt), GemmProblem(m, n, k).as_dict()) for dt in cfg.dtypes for (m, n, k) in cfg.axes["shapes"]]


def study_name(cfg, d: GemmDirective, p) -> str:
    p = as_problem(p)
    base = f"{d.op}-{cfg.arch}-{d.dtype}-{d.acc}-{d.layout}-{p.m}x{p.n}x{p.k}{_tags(d, p)}"
    return f"{cfg.study_name}:{base}" if cfg.study_name else base


def row(d: GemmDirective, p) -> dict:
    """The study's problem columns, plus EXTRA_COLUMNS (for a ladder that carries them)."""
    return {"dtype": d.dtype, "acc": d.acc, "layout": d.layout, **as_problem(p).as_dict(),
            "bias": d.bias, "activation": d.activation}


def size(r) -> float:
    return float(r["m"] * r["n"] * r["k"]) ** (1 / 3)


def study_attrs(cfg, d: GemmDirective, p) -> dict:
    t = get_target(cfg.arch)
    return {"arch": cfg.arch, "op": cfg.op, "dtype": d.dtype, "directive": d.to_dict(),
            "problem": as_problem(p).as_dict(), "row": row(d, p), "peak_tflops": t.peak_tflops(d.dtype), "unit": "TOP/s" if d.is_int else "TFLOP/s"}


def baselines(d: GemmDirective, p, arch: str) -> list[Schedule]:
    """The built-in default fitted to this problem first (what gemm() runs untuned: LARGE, or
    a smaller tile for a small problem -- the figure export compares with), then BASELINES."""
    from wmma_gen.ops.gemm.api import fit_schedule
    t = get_target(arch)
    try:
        first = [fit_schedule(d, arch, as_problem(p))]
    except ScheduleError:
        first = []
    return list(dict.fromkeys(first + [s for s in BASELINES if not s.problems(d, t, as_problem(p))]))


# The objective is the shared one over the OpSpec (wmma_gen/tuner/objective.py SpecObjective): the
# GEMM's validate, admit (occupancy) and gate attributes are OpSpec fields (spec.py).
objective = spec_objective(OP)


def _scalar(v):
    if hasattr(v, "item"):
        v = v.item()
    return None if isinstance(v, float) and math.isnan(v) else v


def documents(df, arch: str) -> dict[str, dict]:
    """file name -> schema document, from the ladder's validated rank-1 rows for `arch`."""
    from wmma_gen.tuner import stamp
    best = df[(df["arch"] == arch) & (df["rank"] == 1) & (df["validated"].astype(bool))]
    docs: dict[str, dict] = {}
    for (op, dtype), rows in best.groupby(["op", "dtype"], sort=True):
        key = ["acc", "layout", "m", "n", "k", "batch"] + [c for c in EXTRA_COLUMNS if c in rows.columns]
        rows = rows.sort_values(key + ["tflops"], ascending=[True] * len(key) + [False]).drop_duplicates(key)
        entries = []
        for _, r in rows.iterrows():
            entries.append({
                "bucket": bucket(r), "acc": r["acc"], "layout": r["layout"], **epilogue(r),
                "schedule": {k.name: _scalar(r[k.name]) for k in SPACE},
                "tflops": round(float(r["tflops"]), 3), "unit": r["unit"],
                "fraction_of_peak": round(float(r["fraction_of_peak"]), 4), "source": r["source"],
                "validated": True, "gate_source": _scalar(r.get("gate_source")) or "",
                "vgprs": int(r["vgprs"]), "lds_bytes": int(r["lds_bytes"]),
                "occupancy": None if _scalar(r.get("occupancy")) is None else int(r["occupancy"]), "isa_hash": r["isa_hash"],
                "object_sha256": _scalar(r.get("object_sha256")) or "",
                "study": r["study"], "trial": int(r["trial"]),
                "toolchain": {"mlir": r["toolchain_mlir"], "lld": r["toolchain_lld"]},
                "timestamp": str(r["timestamp"]),
            })
        tcs = sorted({(e["toolchain"]["mlir"], e["toolchain"]["lld"]) for e in entries})
        docs[lookup.file_name(arch, op, dtype)] = {
            "schema": lookup.SCHEMA, "schema_version": lookup.SCHEMA_VERSION,
            "arch": arch, "op": op, "dtype": dtype, "generated": stamp(),
            "wmma_gen_version": wmma_gen.__version__,
            "toolchain": {"mlir": tcs[0][0], "lld": tcs[0][1]} if len(tcs) == 1
            else {"mixed": [{"mlir": m, "lld": lld} for m, lld in tcs]},
            "entries": entries,
        }
    return docs


# Key fields beyond PROBLEM_COLUMNS, with the value an older study or ladder implies: row() gives
# them; a ladder that carries them (as optional columns) makes documents() export them
# ("epilogue", which lookup.py prefers to match).
EXTRA_COLUMNS = {"bias": "", "activation": ""}


def bucket(r) -> dict:
    """The entry's bucket: what lookup.py matches (shape; batch when not 1, so a batch-1 file
    reads as before)."""
    b = {"m": int(r["m"]), "n": int(r["n"]), "k": int(r["k"])}
    return {**b, "batch": int(r["batch"])} if int(r["batch"]) != 1 else b


def epilogue(r) -> dict:
    """{"epilogue": {bias, activation}} when the ladder row says (lookup.py prefers the same), else {}."""
    if not all(c in r.index for c in EXTRA_COLUMNS):
        return {}
    bias, act = (_scalar(r[c]) for c in EXTRA_COLUMNS)
    return {"epilogue": {"bias": bias if bias in ("n", "m") else "", "activation": act if act in ACTIVATIONS else ""}}


def validate_document(doc: dict, path) -> None:
    lookup.parse(doc, path)


def tuning() -> Tuning:
    return Tuning(tuple(PROBLEM_COLUMNS), DTYPES, QUICK, DEFAULTS, SIZE_LABEL, baselines, items, study_name, row,
                  label, series, size, schedule_text, documents, validate_document, objective,
                  extra_columns=EXTRA_COLUMNS, study_attrs=study_attrs, module=__name__)
