"""Tuning adapter of wmma_gemm: studies per (dtype, shape), the Objective (objective.py),
ladder columns and the exported schedule files (wmma_gen/schedules_db.py)."""
from __future__ import annotations

from wmma_gen.defaults import LARGE
from wmma_gen.directive import GemmDirective
from wmma_gen.schedule import SPACE, Schedule
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
    return suggest_schedule(trial, domains).to_json()


def objective(d, p, arch: str, device, *, domains=None, seed: int = 0, gate_cache=None, compile=None,
              check=None, estimate=None, corrupt=None, factory=None):
    from ..objective import Objective
    return (factory or Objective)(d, arch, device, domains=domains, compile=compile, check=check,
                                  estimate=estimate, corrupt=corrupt,
                                  gate_cache={} if gate_cache is None else gate_cache, seed=seed)


def documents(df, arch: str) -> dict:
    from ..export import documents as gemm_documents
    return gemm_documents(df, arch)


def validate_document(doc: dict, path) -> None:
    from wmma_gen import schedules_db
    schedules_db.parse(doc, path)
