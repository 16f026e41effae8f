"""MLA decode's Tuning (ops/contract.py): one study per specialization (dtype, latent-cache
dtype, head dims, block size, causal) and bucket (context length, batch, Sq, heads). Loaded only
by the tuner.

Studies: `wmma-gen sweep --op mla` crosses --dtypes, --kv-dtypes (default same,fp8e4m3),
--causal (default off), --mla-heads (16, 128), --mla-seq-qs (1), --seqs (context length of the
longest sequence; 1024, 8192, 32768) and --batches (1, 16) (sweep_axes.py); head dims are
DeepSeek-V2/V3's 576 / 512 and the block size FlashMLA's 64. The space is MLASchedule's (waves,
load_bits, split_kv: the split count matters most in decode, where B * ceil(H Sq / 16)
workgroups may not fill the GPU; fp8_wmma for fp8 caches on gfx12).

Objective: the shared staged objective derived from the OpSpec (wmma_gen/tuner/objective.py
SpecObjective): suggest -> named checks -> compile both kernels -> spills (prune) -> gate:
spec.check on spec.gate_problems (emulator vs the float64 reference) -> value: GPU time of both
kernels (source=hip) or spec.estimate (source=model). The default schedule is enqueued first.
"""
from __future__ import annotations

from wmma_gen.attention_common import paged_export
from wmma_gen.ops.contract import Tuning
from wmma_gen.targets import get_target

from .spec import as_problem

OP = "mla"
BLOCK_SIZE = 64
HEAD_DIM, HEAD_DIM_V = 576, 512
COLUMNS = ("dtype", "kv_dtype", "head_dim", "head_dim_v", "block_size", "causal", "batch", "heads", "seq_q",
           "seq_len")
QUICK = {"dtypes": ("bf16",), "seqs": (8192,), "causal": (False,), "batches": (1, 16), "kv_dtypes": ("",),
         "heads": (128,), "seq_qs": (1,), "trials": 4}
DEFAULTS = {"dtypes": ("f16", "bf16"), "seqs": (1024, 8192, 32768), "causal": (False,), "batches": (1, 16),
            "kv_dtypes": ("", "fp8e4m3"), "heads": (16, 128), "seq_qs": (1,), "trials": 12}
DTYPES = ("f16", "bf16")
SIZE_LABEL = "context length (keys of the longest sequence)"
FLOPS_CONVENTION = "2*(D + Dv) per (query row, key)"


def items(cfg) -> list[tuple]:
    """(directive, problem) per study (module doc), or the rows of a problems file (autotune/problems.py:
    wmma_gen.torch.record_problems writes them through recorded.py)."""
    if cfg.problems:
        return [(p.directive(), p.sizes()) for p in cfg.problems]
    from .directive import MLADirective
    ax, out = cfg.axes, []
    for dt in cfg.dtypes:
        for kv in ax["kv_dtypes"]:
            for causal in ax["causal"]:
                d = MLADirective(dt, HEAD_DIM, HEAD_DIM_V, BLOCK_SIZE, kv, causal)
                for heads in ax["heads"]:
                    for sq in ax["seq_qs"]:
                        for seq in ax["seqs"]:
                            for batch in ax["batches"]:
                                out.append((d, dict(batch=batch, heads=heads, seq_q=sq, seq_len=seq)))
    return out


def study_name(cfg, d, p) -> str:
    base = (f"mla-{cfg.arch}-{d.dtype}-kv{d.kv_dtype}-d{d.head_dim}v{d.head_dim_v}-bs{d.block_size}-"
            f"{'causal' if d.causal else 'full'}-h{p['heads']}-sq{p['seq_q']}-L{p['seq_len']}-b{p['batch']}")
    return f"{cfg.study_name}:{base}" if cfg.study_name else base


def row(d, p) -> dict:
    p = as_problem(p)
    return {"dtype": d.dtype, "kv_dtype": d.kv_dtype, "head_dim": d.head_dim, "head_dim_v": d.head_dim_v,
            "block_size": d.block_size, "causal": d.causal, "batch": p.batch, "heads": p.heads, "seq_q": p.seq_q,
            "seq_len": p.seq_len}


def study_attrs(cfg, d, p) -> dict:
    t = get_target(cfg.arch)
    return {"arch": cfg.arch, "op": OP, "dtype": d.dtype, "directive": d.to_dict(), "problem": dict(p),
            "row": row(d, p), "peak_tflops": t.peak_tflops(d.dtype), "unit": "TFLOP/s",
            "flops_convention": FLOPS_CONVENTION}


def label(ua: dict) -> str:
    d, p = ua["directive"], ua["problem"]
    return f"kv {d['kv_dtype']} h{p['heads']} sq{p['seq_q']} L{p['seq_len']} b{p['batch']}"


def series(r) -> str:
    return f"{r['dtype']}/{r['kv_dtype']} h{int(r['heads'])} b{int(r['batch'])}"


def size(r) -> float:
    return float(r["seq_len"])


def schedule_text(b) -> str:
    return f"w{b['waves']} ld{b['load_bits']} split{b['split_kv']}{' fp8wmma' if b.get('fp8_wmma') else ''}"


def baselines(d, p, arch: str) -> list:
    from wmma_gen.ops import registry
    return [registry.get(OP).default_schedule(d, arch, as_problem(p))]


def objective(d, p, arch: str, device, **kw):
    from wmma_gen.tuner.objective import spec_objective
    return spec_objective(OP)(d, p, arch, device, **kw)


def documents(df, arch: str) -> dict:
    """file name -> document (lookup.py format) from the validated rank-1 rows, one entry per
    (key, bucket)."""
    from . import lookup
    from .schedule import SPACE
    return paged_export.documents(df, arch, OP, [c for c in COLUMNS if c != "dtype"], _bucket, lookup, SPACE,
                                  FLOPS_CONVENTION)


def _bucket(r) -> dict:
    return {"seq": int(r["seq_len"]), "batch": int(r["batch"]), "seq_q": int(r["seq_q"]), "heads": int(r["heads"])}


def validate_document(doc: dict, path) -> None:
    from . import lookup
    lookup.parse(doc, path)


def tuning() -> Tuning:
    return Tuning(COLUMNS, DTYPES, QUICK, DEFAULTS, SIZE_LABEL, baselines, items, study_name, row, label, series,
                  size, schedule_text, documents, validate_document, objective, study_attrs=study_attrs,
                  module=__name__)
