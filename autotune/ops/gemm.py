"""Tuning adapter of wmma_gemm: studies per (dtype, shape), the Objective (objective.py),
ladder columns and the exported schedule files (read back by wmma_gen/ops/gemm/lookup.py)."""
from __future__ import annotations

import math

import wmma_gen
from wmma_gen.ops.gemm import lookup
from wmma_gen.ops.gemm.defaults import LARGE
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.schedule import SPACE, Schedule
from wmma_gen.targets import get_target

from ..space import suggest_schedule

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


def cli_fields(args, base: dict) -> dict:
    """SweepConfig fields from `wmma-gen sweep` flags: --shapes-file and --shapes (parsed and
    checked by the CLI), else the defaults."""
    shapes = tuple(getattr(args, "shapes_file", None) or ()) + tuple(getattr(args, "shapes", None) or ())
    return {"shapes": tuple(dict.fromkeys(shapes or base["shapes"]))}


def label(ua: dict) -> str:
    d = ua["directive"]
    return f"{d['m']}x{d['n']}x{d['k']}"


def schedule_text(b) -> str:
    return (f"{b['block_m']}x{b['block_n']}x{b['block_k']} w{b['waves_m']}x{b['waves_n']} "
            f"lds={b['lds']} ld{b['load_bits']} {b['raster']} sk{b['split_k']}")


def series(r) -> str:
    """One ladder plot line per dtype (its peak is drawn with the same name)."""
    return str(r["dtype"])


def items(cfg) -> list[tuple[GemmDirective, dict]]:
    return [(d, {"m": d.m, "n": d.n, "k": d.k, "batch": d.batch})
            for d in (GemmDirective(dt, m, n, k) for dt in cfg.dtypes for (m, n, k) in cfg.shapes)]


def study_name(cfg, d: GemmDirective, p=None) -> str:
    base = f"{d.op}-{cfg.arch}-{d.dtype}-{d.acc}-{d.layout}-{d.m}x{d.n}x{d.k}"
    return f"{cfg.study_name}:{base}" if cfg.study_name else base


def row(d: GemmDirective, p=None) -> dict:
    return {"dtype": d.dtype, "acc": d.acc, "layout": d.layout, "m": d.m, "n": d.n, "k": d.k, "batch": d.batch}


def size(r) -> float:
    return float(r["m"] * r["n"] * r["k"]) ** (1 / 3)


def study_attrs(cfg, d: GemmDirective, p=None) -> dict:
    t = get_target(cfg.arch)
    return {"arch": cfg.arch, "op": cfg.op, "dtype": d.dtype, "directive": d.to_dict(), "row": row(d),
            "peak_tflops": t.peak_tflops(d.dtype), "unit": "TOP/s" if d.is_int else "TFLOP/s"}


def baselines(d: GemmDirective, p, arch: str) -> list[Schedule]:
    t = get_target(arch)
    return [s for s in BASELINES if not s.problems(d, t)]


def propose(trial, domains) -> str:
    return suggest_schedule(trial, domains, SPACE, Schedule).to_json()


def compile_schedule(d: GemmDirective, s: Schedule, arch: str):
    """The objective's compile stage (a picklable module function: the sweep's compile pool
    runs it ahead in worker processes, which fills the shared on-disk compile cache)."""
    from wmma_gen.ops.gemm.build import compile_gemm
    return compile_gemm(d, s, arch)


def objective(d, p, arch: str, device, *, domains=None, seed: int = 0, gate_cache=None, compile=None,
              check=None, estimate=None, corrupt=None, factory=None):
    from ..objective import Objective
    return (factory or Objective)(d, arch, device, domains=domains, compile=compile, check=check,
                                  estimate=estimate, corrupt=corrupt,
                                  gate_cache={} if gate_cache is None else gate_cache, seed=seed)


def _scalar(v):
    if hasattr(v, "item"):
        v = v.item()
    return None if isinstance(v, float) and math.isnan(v) else v


def documents(df, arch: str) -> dict[str, dict]:
    """file name -> schema document, from the ladder's validated rank-1 rows for `arch`."""
    from ..ladder import stamp   # late: ladder builds its columns from this adapter
    best = df[(df["arch"] == arch) & (df["rank"] == 1) & (df["validated"].astype(bool))]
    docs: dict[str, dict] = {}
    for (op, dtype), rows in best.groupby(["op", "dtype"], sort=True):
        rows = rows.sort_values(["acc", "layout", "m", "n", "k", "tflops"], ascending=[True, True, True, True, True, False])
        rows = rows.drop_duplicates(["acc", "layout", "m", "n", "k"])
        entries = []
        for _, r in rows.iterrows():
            entries.append({
                "bucket": {"m": int(r["m"]), "n": int(r["n"]), "k": int(r["k"])},
                "acc": r["acc"], "layout": r["layout"],
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


def validate_document(doc: dict, path) -> None:
    lookup.parse(doc, path)
