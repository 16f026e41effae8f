"""The attention forward's Tuning (ops/contract.py): studies per (dtype, head_dim, causal, seq),
the objective, ladder columns and the exported schedule files. Loaded only by the tuner.

Objective stages (wmma_gen/tuner/objective.py, STYLE rule 7): suggest -> validate (prune) -> compile once
(ops/compile_op.py: a CompiledSet) -> spills (prune) -> correctness gate: the spec's check handed
that CompiledSet on the spec's gate problems against the float64 reference (prune on failure)
-> value: GPU time through the launcher (source=hip) or the spec's estimate of the same set
(source=model).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Optional

from wmma_gen.errors import EmulatorFault
from wmma_gen.ops import registry
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.schedule import SPACE, AttentionSchedule
from wmma_gen.targets import get_target

from wmma_gen.tuner.objective import StagedObjective

from ..contract import Tuning

OP = "attention"
SCHEDULE = AttentionSchedule
PROBLEM_COLUMNS = ["dtype", "head_dim", "causal", "batch", "heads", "kv_heads", "seq_q", "seq_k"]
BATCH, HEADS = 1, 16          # the problem each study is ranked on (B x H x S x S x D)
QUICK = {"dtypes": ("f16",), "head_dims": (64, 128), "seqs": (1024,), "causal": (False,), "softcap": (False,),
         "trials": 6}
DEFAULTS = {"dtypes": ("f16", "bf16"), "head_dims": (64, 128), "seqs": (1024, 4096), "causal": (False, True),
            "softcap": (False,), "trials": 24}

SIZE_LABEL = "sequence length (Sq = Sk)"
DTYPES = ("f16", "bf16")


def label(ua: dict) -> str:
    d, p = ua["directive"], ua["problem"]
    mask = " causal" if d["causal"] else ""
    if (p["batch"], p["heads"], p["kv_heads"], p["seq_q"]) == (BATCH, HEADS, HEADS, p["seq_k"]) and \
            not (d["window"] or d["varlen"]):
        return f"hd{d['head_dim']}{mask}{softcap_tag(d).replace('-', ' ')} S{p['seq_q']}"
    return f"hd{d['head_dim']}{mask} {p['seq_q']}x{p['seq_k']}{_tags(d, p).replace('-', ' ')}"


def _tags(d, p: dict) -> str:
    """What a problems-file study's name adds: batch, heads, kv heads, window, varlen, layout."""
    d = d if isinstance(d, dict) else d.to_dict()
    tags = [f"b{p['batch']}h{p['heads']}kv{p['kv_heads']}"]
    tags += [f"w{p['window_left']}_{p['window_right']}"] if d["window"] else []
    tags += (["varlen"] if d["varlen"] else []) + ([d["layout"]] if d["layout"] != "bshd" else [])
    return "".join("-" + t for t in tags) + softcap_tag(d)


def softcap_tag(d) -> str:
    """A softcap study's name and label carry it (absent otherwise: older names unchanged)."""
    return "-softcap" if (d if isinstance(d, dict) else d.to_dict()).get("softcap") else ""


def schedule_text(b) -> str:
    return (f"{b['block_m']}x{b['block_n']} w{b['waves']} kv{b['kv_buffers']} q={b['q_in']} "
            f"ld{b['load_bits']} split{b['split_kv']}" + (f" ds{b['d_split']}" if b.get("d_split", 1) > 1 else ""))


def series(r) -> str:
    """One ladder plot line per (dtype, head dim, mask)."""
    return f"{r['dtype']} hd{int(r['head_dim'])}{' causal' if bool(r['causal']) else ''}"


def items(cfg) -> list[tuple[AttentionDirective, dict]]:
    """(directive, problem) per study: the problems file's (autotune/problems.py), else
    BATCH x HEADS x S x S per (dtype, head dim, mask, softcap, S)."""
    if cfg.problems:
        return [(p.directive(), p.sizes()) for p in cfg.problems]
    out, ax = [], cfg.axes
    for dt in cfg.dtypes:
        for hd in ax["head_dims"]:
            for causal in ax["causal"]:
                for cap in ax.get("softcap", (False,)):
                    for seq in ax["seqs"]:
                        out.append((AttentionDirective(dt, hd, causal=causal, softcap=cap),
                                    dict(batch=BATCH, heads=HEADS, kv_heads=HEADS, seq_q=seq, seq_k=seq)))
    return out


def study_name(cfg, d, p) -> str:
    base = f"attention-{cfg.arch}-{d.dtype}-hd{d.head_dim}-{'causal' if d.causal else 'full'}-s{p['seq_q']}x{p['seq_k']}"
    base += _tags(d, p) if cfg.problems else softcap_tag(d)
    return f"{cfg.study_name}:{base}" if cfg.study_name else base


def row(d, p) -> dict:
    """The study's problem columns, plus EXTRA_COLUMNS (for a ladder that carries them)."""
    return {"dtype": d.dtype, "head_dim": d.head_dim, "causal": d.causal, **{k: p[k] for k in PROBLEM_COLUMNS[3:]},
            "window": d.window, "varlen": d.varlen, "softcap": d.softcap}


def size(r) -> float:
    return float(r["seq_k"])


def study_attrs(cfg, d, p) -> dict:
    t = get_target(cfg.arch)
    return {"arch": cfg.arch, "op": OP, "dtype": d.dtype, "directive": d.to_dict(), "problem": p,
            "row": row(d, p), "peak_tflops": t.peak_tflops(d.dtype), "unit": "TFLOP/s",
            "flops_convention": "4*D per visible (query, key) pair"}


def baselines(d, p, arch: str) -> list[AttentionSchedule]:
    """The op's default first (an export never ranks below untuned attention()), then
    a few shapes of the space."""
    spec = registry.get(OP)
    out = [spec.default_schedule(d, arch)]
    shapes = (dict(block_m=64, block_n=32, waves=4), dict(block_m=128, block_n=64, waves=8),
              dict(block_m=32, block_n=64, waves=2))
    if d.head_dim > 256:     # the head-dim split's shapes (defaults.py): both splits, and decode's tile
        shapes = (dict(block_m=64, block_n=16, waves=8, d_split=2), dict(block_m=32, block_n=16, waves=8, d_split=4),
                  dict(block_m=16, block_n=16, waves=4, d_split=4))
    for kw in shapes:
        s = AttentionSchedule(**kw)
        if s not in out and (d.head_dim <= 256 or not s.problems(d, get_target(arch))):
            out.append(s)
    return out


def compile_set(op: str, d, s, arch: str):
    """The CompiledSet of schedule s (ops/compile_op.py: LRU, disk index, content cache)."""
    from wmma_gen.ops.compile_op import compile_op
    return compile_op(registry.get(op), d, s, None, arch)


@dataclass
class AttentionObjective(StagedObjective):
    """`objective(trial) -> TFLOP/s` for one (arch, directive, problem) study, on the shared
    stages of wmma_gen/tuner/objective.py.

    The attention backward's objective (attention_bwd.py) is this one over its own schedule
    and kernels: an op supplies its knob table (SPACE, SCHEDULE), `_problems`, `_kernels`
    ({name: (KernelSource, CompiledKernel)}) and `_sizes` (GPU-timing problem)."""
    directive: AttentionDirective
    problem: dict
    arch: str
    device: object
    domains: Optional[dict] = None
    seed: int = 0
    gate_cache: dict = field(default_factory=dict)

    OP = OP
    SPACE = SPACE
    SCHEDULE = AttentionSchedule
    MISMATCH = "output disagrees with the reference"

    def _problems(self, s) -> list[str]:
        return s.problems(self.directive, get_target(self.arch))

    def _kernels(self, s) -> dict:
        self._set = compile_set(self.OP, self.directive, s, self.arch)
        return self._set.pairs()

    def _sizes(self) -> dict:
        return {**self.problem, "scale": 1.0 / self.directive.head_dim ** 0.5}

    def _flops(self) -> float:
        return registry.get(self.OP).flops(self.directive, self.problem)

    def _time(self, trial, s, ks) -> tuple[float, str, str]:
        if self.on_gpu:
            from wmma_gen.tuner.timing import time_signature

            from .varlen_gate import time_varlen
            p = self._sizes()
            timer = time_varlen if self.directive.varlen else time_signature
            return sum(timer(self.device, ck, src.signature, p) for src, ck in ks.values()), "hip", ""
        spec = registry.get(self.OP)
        e = spec.estimate(self._set, self.directive, s, spec.problem_from(self.problem), self.arch)
        return float(e.seconds), e.source, e.limiter

    def _gate(self, s, ks) -> dict:
        """The timed objects themselves (the CompiledSet the check is handed) on every gate
        problem; the worst row is kept (a wrong or faulting one stops the gate)."""
        d, spec, cs = self.directive, registry.get(self.OP), self._set
        isa_hash = cs.isa_hash
        if isa_hash in self.gate_cache:
            return dict(self.gate_cache[isa_hash])
        worst = None
        window = gate_window(d, self.problem)
        for gp in spec.gate_problems(d, s, None):
            try:
                if d.varlen:     # packed sequences of unequal lengths (through the API: same LRU object)
                    from .varlen_gate import check_varlen
                    r = check_varlen(asdict(gp) | {"head_dim": d.head_dim}, d, window=window, arch=self.arch,
                                     device=self.device, seed=self.seed, schedule=s)
                else:
                    if window:
                        gp = replace(gp, window_left=window[0], window_right=window[1])
                    r = spec.check(cs, d, gp, self.device, self.seed)
                row_ = {"passed": bool(r.passed), "max_abs": float(r.max_abs),
                        "tol": float(r.tol), "worst": r.worst, "source": r.source, "isa_hash": isa_hash,
                        "seq_q": gp.seq_q, "seq_k": gp.seq_k}
            except EmulatorFault as e:
                row_ = {"passed": False, "max_abs": float("inf"), "tol": 0.0, "worst": f"fault: {e}"[:300]}
            if worst is None or not row_["passed"] or \
                    row_["max_abs"] / max(row_["tol"], 1e-30) > worst["max_abs"] / max(worst["tol"], 1e-30):
                worst = row_
            if not worst["passed"]:
                break
        if not worst["passed"]:
            worst["why"] = f"{self.MISMATCH}: {worst['worst']} error {worst['max_abs']:.3g} > tol {worst['tol']:.3g}"
        self.gate_cache[isa_hash] = worst
        return dict(worst)


def gate_window(d, p: dict):
    """The window the gate runs a windowed kernel with: the problem's sides capped at 24 keys,
    so the small gate problems (registry gate_problems) see both edges; None without a window."""
    if not d.window:
        return None
    return tuple(-1 if x < 0 else min(x, 24) for x in (p.get("window_left", -1), p.get("window_right", -1)))


def domains_of(d) -> dict:
    """The knob domains a head dim searches unless the caller narrows them: d_split 1 up to 256
    (one wave holds a query block's O^T: the sweeps there are unchanged), 2/4/8 above (kv_buffers
    1: the S^T exchange rides its two barriers; schedule.d_split_buffers)."""
    if d.head_dim <= 256:
        return {"d_split": (1,)}
    return {"d_split": (2, 4, 8), "kv_buffers": (1,)}


def objective(d, p, arch: str, device, *, domains=None, seed: int = 0, gate_cache=None, **_hooks):
    return AttentionObjective(d, p, arch, device, domains=domains, seed=seed,
                              gate_cache={} if gate_cache is None else gate_cache)


def documents(df, arch: str, space: tuple = SPACE) -> dict:
    """file name -> document (ops/attention/lookup.py format) from the validated rank-1 rows."""
    import wmma_gen
    from wmma_gen.ops.attention import lookup
    from wmma_gen.tuner import stamp
    best = df[(df["arch"] == arch) & (df["rank"] == 1) & (df["validated"].astype(bool))]
    docs = {}
    for dtype, rows in best.groupby("dtype", sort=True):
        key = ["head_dim", "causal", "seq_k", "seq_q"] + [c for c in EXTRA_COLUMNS if c in rows.columns]
        rows = rows.sort_values(key + ["tflops"], ascending=[True] * len(key) + [False]).drop_duplicates(key)
        entries = [{"head_dim": int(r["head_dim"]), "causal": bool(r["causal"]), "bucket": bucket(r), **flags(r),
                    "schedule": {k.name: _plain(r[k.name]) for k in space if _present(r, k.name)},
                    "tflops": round(float(r["tflops"]), 3), "unit": r["unit"], "source": r["source"],
                    "validated": True, "vgprs": int(r["vgprs"]), "lds_bytes": int(r["lds_bytes"]),
                    "isa_hash": r["isa_hash"], "object_sha256": _plain(r.get("object_sha256")) or "",
                    "study": r["study"], "trial": int(r["trial"]),
                    "flops_convention": "4*D per visible (query, key) pair",
                    "toolchain": {"mlir": r["toolchain_mlir"], "lld": r["toolchain_lld"]}}
                   for _, r in rows.iterrows()]
        docs[lookup.file_name(arch, dtype)] = {
            "schema": lookup.SCHEMA, "schema_version": lookup.SCHEMA_VERSION, "arch": arch, "op": OP,
            "dtype": dtype, "generated": stamp(), "wmma_gen_version": wmma_gen.__version__,
            "toolchain": file_toolchain(entries), "entries": entries}
    return docs


def file_toolchain(entries: list) -> dict:
    """The file's toolchain, as GEMM files state it: the entries' one, or {"mixed": [...]} when
    they were tuned with several (a reader sees the provider without opening every entry)."""
    tcs = sorted({(e["toolchain"]["mlir"], e["toolchain"]["lld"]) for e in entries})
    if len(tcs) == 1:
        return {"mlir": tcs[0][0], "lld": tcs[0][1]}
    return {"mixed": [{"mlir": m, "lld": lld} for m, lld in tcs]}


# Key fields beyond PROBLEM_COLUMNS, with the value an older study or ladder implies: row() gives
# them; a ladder that carries them (as optional columns) makes documents() export them (lookup.py
# prefers the same flags).
EXTRA_COLUMNS = {"window": False, "varlen": False, "softcap": False}


def bucket(r) -> dict:
    """What lookup.py matches: seq = Sk; seq_q when Sq != Sk (a file of Sq = Sk studies reads as before)."""
    sq, sk = int(r["seq_q"]), int(r["seq_k"])
    return {"seq": sk} if sq == sk else {"seq": sk, "seq_q": sq}


def flags(r) -> dict:
    """window / varlen of the entry when the ladder row says and they are set (lookup.py prefers the same)."""
    return {c: True for c in EXTRA_COLUMNS if c in r.index and _plain(r[c]) is True}


def validate_document(doc: dict, path) -> None:
    from wmma_gen.ops.attention import lookup
    lookup.parse(doc, path)


def _present(r, name: str) -> bool:
    """A ladder from before a knob existed has no value for it (absent or NaN): the entry leaves
    it out, so reading it back gives the schedule's default, what that kernel was built with."""
    import pandas as pd
    return name in r.index and not pd.isna(r[name])


def _plain(v):
    return v.item() if hasattr(v, "item") else v


def tuning() -> Tuning:
    return Tuning(tuple(PROBLEM_COLUMNS), DTYPES, QUICK, DEFAULTS, SIZE_LABEL, baselines, items, study_name, row,
                  label, series, size, schedule_text, documents, validate_document, objective,
                  extra_columns=EXTRA_COLUMNS, study_attrs=study_attrs, module=__name__,
                  domains_of=domains_of)
