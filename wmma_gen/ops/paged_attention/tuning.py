"""Paged decode attention's Tuning (ops/contract.py): one study per specialization (dtype, kv
cache dtype, head dim, block size, causal; GQA ratio, window and softcap flags) and bucket
(context length, batch, Sq). Loaded only by the tuner.

Studies: `wmma-gen sweep --op paged_attention` crosses --dtypes, --head-dims, --causal,
--softcap (default off), --kv-dtypes (default KV_DTYPES) and --batches (default BATCHES)
(sweep_axes.py) with
  decode:          Sq = 1 against --seqs (the *context length* L of the longest sequence);
  chunked prefill: with --chunks (none by default, so a decode sweep stays as it was), Sq =
                   each chunk length against each --prefixes length P (default 1024, 8192)
                   of cached tokens: L = P + Sq. The chunk is the dense form
                   of the kernel (Sq <= 16 per sequence; lookup.py lets a packed varlen call of
                   the same key fall back to it).
heads / kv heads come from the spec's problem axes (spec.AXES: 32 / 8, the Llama-3-8B step).
Every study is ranked on its own problem's estimate.

Objective: the shared staged objective derived from the OpSpec (wmma_gen/tuner/objective.py
SpecObjective): suggest -> named checks (prune) -> compile the paged kernel + combine once
(ops/compile_op.py) -> spills (prune) -> gate: spec.check handed that CompiledSet on
spec.gate_problems (small problems with the same specialization key -- every size is a kernel
argument -- run on the emulator against the float64 reference) -> value: GPU time of both
kernels (source=hip) or spec.estimate of the set on the study's problem (source=model).
The default schedule is enqueued first (baselines), so an export never ranks below it.
"""
from __future__ import annotations

from wmma_gen.attention_common import paged_export
from wmma_gen.ops.contract import Tuning
from wmma_gen.targets import get_target

from .spec import AXES, as_problem

OP = "paged_attention"
AXIS = {a.name: a for a in AXES}
KV_DTYPES = ("", "fp8e4m3")     # "" = the query dtype (a 16-bit cache); fp8 bytes widened in registers
BATCHES = AXIS["batch"].sweep   # batch buckets (the context-length buckets are --seqs)
BLOCK_SIZE = 16                 # vLLM's default block size
COLUMNS = ("dtype", "kv_dtype", "head_dim", "block_size", "causal", "window", "softcap", "batch", "heads",
           "kv_heads", "seq_q", "seq_len")
PREFIXES = (1024, 8192)   # cached prefixes of the chunked-prefill studies (with --chunks)
QUICK = {"dtypes": ("f16",), "head_dims": (128,), "seqs": (8192,), "causal": (True,), "softcap": (False,),
         "batches": BATCHES, "kv_dtypes": KV_DTYPES, "trials": 4}     # decode only (no chunks axis)
DEFAULTS = {"dtypes": ("f16", "bf16"), "head_dims": (64, 128), "seqs": (1024, 8192, 32768), "causal": (True,),
            "softcap": (False,), "batches": BATCHES, "kv_dtypes": KV_DTYPES, "prefixes": PREFIXES, "trials": 16}
DTYPES = ("f16", "bf16")
SIZE_LABEL = "context length (keys of the longest sequence)"
FLOPS_CONVENTION = "4*D per visible (query, key) pair and query head"
# Ladder columns a ladder from before them lacks, with what such a ladder implies (the export
# writes both, so an fp8-Q study's entry reads back as one): fp8_wmma false (the dequantising
# path); q_dtype "" = Q in the row's dtype (the directive's default), fp8e4m3 / fp8e5m2 = fp8 bytes.
EXTRA_COLUMNS = {"fp8_wmma": False, "q_dtype": ""}


def items(cfg) -> list[tuple]:
    """(directive, problem) per study (module doc), or the rows of a problems file (autotune/problems.py)."""
    if cfg.problems:
        return [(p.directive(), p.sizes()) for p in cfg.problems]
    from .directive import PagedAttentionDirective
    heads, kv_heads = (AXIS[n].sweep[0] for n in ("heads", "kv_heads"))
    out, ax = [], cfg.axes
    for dt in cfg.dtypes:
        for kv in ax["kv_dtypes"]:
            for hd in ax["head_dims"]:
                for causal in ax["causal"]:
                    for cap in ax.get("softcap", (False,)):
                        d = PagedAttentionDirective(dt, hd, BLOCK_SIZE, kv, causal, softcap=cap)
                        for seq_q, seq_len in steps(ax):
                            for batch in ax["batches"]:
                                out.append((d, dict(batch=batch, heads=heads, kv_heads=kv_heads, seq_q=seq_q,
                                                    seq_len=seq_len, window_left=-1, window_right=-1)))
    return out


def steps(ax: dict) -> list[tuple[int, int]]:
    """(Sq, L) of every study's step: decode (1, each --seqs), then each chunk against each
    cached prefix (Sq, prefix + Sq)."""
    chunked = [(c, p + c) for c in ax.get("chunks", ()) for p in ax.get("prefixes", ())]
    return list(dict.fromkeys([(1, seq) for seq in ax["seqs"]] + chunked))


def _flags(d) -> str:
    return "".join(f"-{n}" for n in ("window", "softcap") if getattr(d, n))


def study_name(cfg, d, p) -> str:
    base = (f"paged_attention-{cfg.arch}-{d.dtype}-kv{d.kv_dtype}-hd{d.head_dim}-bs{d.block_size}-"
            f"{'causal' if d.causal else 'full'}{_flags(d)}-g{p['heads'] // p['kv_heads']}-sq{p['seq_q']}-"
            f"L{p['seq_len']}-b{p['batch']}")
    return f"{cfg.study_name}:{base}" if cfg.study_name else base


def row(d, p) -> dict:
    p = as_problem(p)
    return {"dtype": d.dtype, "kv_dtype": d.kv_dtype, "head_dim": d.head_dim, "block_size": d.block_size,
            "causal": d.causal, "window": d.window, "softcap": d.softcap, "batch": p.batch, "heads": p.heads,
            "kv_heads": p.kv_heads, "seq_q": p.seq_q, "seq_len": p.seq_len,
            "fp8_wmma": d.fp8_wmma, "q_dtype": "" if d.q_dtype == d.dtype else d.q_dtype}


def study_attrs(cfg, d, p) -> dict:
    t = get_target(cfg.arch)
    return {"arch": cfg.arch, "op": OP, "dtype": d.dtype, "directive": d.to_dict(), "problem": dict(p),
            "row": row(d, p), "peak_tflops": t.peak_tflops(d.dtype), "unit": "TFLOP/s",
            "flops_convention": FLOPS_CONVENTION}


def label(ua: dict) -> str:
    d, p = ua["directive"], ua["problem"]
    return (f"kv {d['kv_dtype']} hd{d['head_dim']} g{p['heads'] // p['kv_heads']} sq{p['seq_q']} "
            f"L{p['seq_len']} b{p['batch']}")


def series(r) -> str:
    """One ladder plot line per (dtype, kv dtype, head dim, batch)."""
    return f"{r['dtype']}/{r['kv_dtype']} hd{int(r['head_dim'])} b{int(r['batch'])}"


def size(r) -> float:
    return float(r["seq_len"])


def schedule_text(b) -> str:
    return (f"bn{b['block_n']} w{b['waves']} fq{b['frags_q']} ld{b['load_bits']} split{b['split_kv']} "
            f"q={b['q_in']}{' prefetch' if bool(b['prefetch']) else ''}")


def baselines(d, p, arch: str) -> list:
    """The default schedule for this problem (what paged_attention() runs without a file)."""
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
    key = [c for c in COLUMNS if c != "dtype"] + [c for c in EXTRA_COLUMNS if c in df]
    return paged_export.documents(df, arch, OP, key, _bucket, lookup, SPACE, FLOPS_CONVENTION)


def _bucket(r) -> dict:
    return {"seq": int(r["seq_len"]), "batch": int(r["batch"]), "seq_q": int(r["seq_q"])}


def validate_document(doc: dict, path) -> None:
    from . import lookup
    lookup.parse(doc, path)


def tuning() -> Tuning:
    return Tuning(COLUMNS, DTYPES, QUICK, DEFAULTS, SIZE_LABEL, baselines, items, study_name, row, label, series,
                  size, schedule_text, documents, validate_document, objective, extra_columns=EXTRA_COLUMNS,
                  study_attrs=study_attrs, module=__name__)
