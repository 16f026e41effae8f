"""The attention backward's Tuning (pre-pass + dK/dV + dQ kernels, one schedule): studies per
(dtype, head_dim, causal, seq) like the forward's (ops/attention/tuning.py, whose helpers it
shares), ranked by the sum of the three kernels' model estimates or GPU times.

Objective: suggest (AttentionBwdSchedule SPACE) -> named checks (prune) -> compile the three
kernels into one CompiledSet (spills prune) -> gate: the spec's check handed that set on the
gate problems vs the float64 reference -> value.
"""
from __future__ import annotations



from wmma_gen.ops import registry
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention_bwd.schedule import SPACE, AttentionBwdSchedule

from ..contract import Tuning
from wmma_gen.targets import get_target

fwd = registry.sibling("attention", "tuning")   # the forward's Tuning, looked up (no op folder imported)
BATCH, DTYPES, EXTRA_COLUMNS, HEADS = fwd.BATCH, fwd.DTYPES, fwd.EXTRA_COLUMNS, fwd.HEADS
PROBLEM_COLUMNS, SIZE_LABEL, label, row, series, size = (fwd.PROBLEM_COLUMNS, fwd.SIZE_LABEL, fwd.label, fwd.row,
                                                         fwd.series, fwd.size)

OP = "attention_bwd"
SCHEDULE = AttentionBwdSchedule
QUICK = {"dtypes": ("f16",), "head_dims": (64,), "seqs": (1024,), "causal": (True,), "trials": 4}
DEFAULTS = {"dtypes": ("f16", "bf16"), "head_dims": (64, 128), "seqs": (1024, 4096), "causal": (False, True),
            "trials": 16}


def items(cfg) -> list[tuple[AttentionDirective, dict]]:
    if cfg.problems:          # autotune/problems.py: directives already of this op
        return fwd.items(cfg)
    return [(AttentionDirective(d.dtype, d.head_dim, causal=d.causal, op=OP), p) for d, p in fwd.items(cfg)]


def study_name(cfg, d, p) -> str:
    return fwd.study_name(cfg, d, p).replace("attention-", "attention_bwd-", 1)


def study_attrs(cfg, d, p) -> dict:
    return {**fwd.study_attrs(cfg, d, p), "op": OP, "flops_convention": "2.5x the forward's: 10*D per visible pair"}


def schedule_text(b) -> str:
    return (f"dkdv {b['block_m']}x{b['block_n']} w{b['waves']} ds{b['d_split']} | "
            f"dq {b['dq_block_m']}x{b['dq_block_n']} w{b['dq_waves']} ds{b['dq_d_split']}")


def domains_of(d) -> dict:
    """The knob domains a head dim searches unless the caller narrows them: up to 256 the natural
    tiles in LDS and splits up to 4 (what those sweeps searched before hd512), above 256 the
    global-operand kernels (their natural tiles do not fit 64 KiB of LDS: defaults.py)."""
    if d.head_dim <= 256:
        return {"operands": ("lds",), "d_split": (1, 2, 4), "dq_d_split": (1, 2, 4)}
    return {"operands": ("global",)}


def baselines(d, p, arch: str) -> list[AttentionBwdSchedule]:
    return [registry.get(OP).default_schedule(d, arch)]


class AttentionBwdObjective(fwd.AttentionObjective):
    """The forward's objective (attention.py) over the backward's schedule and its pre-pass,
    dK/dV and dQ kernels: value = the sum of the three kernels' GPU times or model estimate."""
    OP = OP
    SPACE = SPACE
    SCHEDULE = AttentionBwdSchedule
    MISMATCH = "gradients disagree with the reference"

    def _problems(self, s) -> list[str]:
        return s.problems(self.directive.head_dim, self.directive.dtype, get_target(self.arch))

    def _sizes(self) -> dict:
        p = self.problem
        return {"total_q": p["batch"] * p["seq_q"], "total_k": p["batch"] * p["seq_k"], "window_left": -1,
                "window_right": -1, **p, "head_dim": self.directive.head_dim,
                "scale": 1.0 / self.directive.head_dim ** 0.5}


def objective(d, p, arch: str, device, *, domains=None, seed: int = 0, gate_cache=None, **_hooks):
    return AttentionBwdObjective(d, p, arch, device, domains=domains, seed=seed,
                                 gate_cache={} if gate_cache is None else gate_cache)


def documents(df, arch: str) -> dict:
    """file name -> document (ops/attention_bwd/lookup.py format)."""
    from wmma_gen.ops.attention_bwd import lookup
    docs = fwd.documents(df, arch, SPACE)
    out = {}
    for doc in docs.values():
        for e in doc["entries"]:
            e["flops_convention"] = "2.5x the forward's: 10*D per visible (query, key) pair"
        out[lookup.file_name(arch, doc["dtype"])] = {**doc, "schema": lookup.SCHEMA,
                                                    "schema_version": lookup.SCHEMA_VERSION, "op": OP}
    return out


def validate_document(doc: dict, path) -> None:
    from wmma_gen.ops.attention_bwd import lookup
    lookup.parse(doc, path)


def tuning() -> Tuning:
    return Tuning(tuple(PROBLEM_COLUMNS), DTYPES, QUICK, DEFAULTS, SIZE_LABEL, baselines, items, study_name, row,
                  label, series, size, schedule_text, documents, validate_document, objective,
                  extra_columns=EXTRA_COLUMNS, study_attrs=study_attrs, module=__name__,
                  domains_of=domains_of)
