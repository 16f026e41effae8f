"""A model figure within the model's resolution of the default's is a tie, and a tie keeps the default.

Without a GPU a tuned entry replaces the built-in default only on the model's word (source "model"). Where
two schedules' estimates are equal -- both at the same memory roofline, as split_kv 16 and 64 of a batch-1
paged decode at 8k / 32k keys (12 shipped entries until this rule) -- or differ by less than the effects the
model leaves out, the ranking between them is the order the sweep happened to try them in, not evidence.

RESOLUTION (relative, 1%) is the size of those left-out effects on the knobs the tuner turns: the split-KV
combine kernel is not in the paged model and grows with split_kv -- at 64 splits of a batch-1 Llama-3-8B decode
step it reads 1 MiB of partials, ~1.3 us of 86 us = 1.5% (docs/paged_attention.md, arithmetic at the model's
DRAM rate); the loop model has no tail term for a partial last round (model/loop_kernel.py). A model win of
at most 1% could be reversed by either, so it does not displace the default. Measured figures (source
"hip") are not judged here: a GPU timing is the evidence this rule asks for.

Applied by the ladder's ranking (autotune/ladder.py: a tying trial ranks below the default's own trial, so
the exported entry is the default and pins its bucket), by export for entries whose study had no default
trial (`no_model_tie`: such an entry is dropped with one line) and by the shipped re-rank
(bench/rerank_shipped.py); tests/compile/test_shipped_beat_default.py holds the shipped files to it.
"""
from __future__ import annotations

from typing import Callable

RESOLUTION = 0.01


def beats(mine: float, default: float) -> bool:
    """Whether model figure `mine` beats the default's `default` by more than the model's resolution."""
    return float(mine) > float(default) * (1.0 + RESOLUTION)


def ties(mine: float, default: float) -> bool:
    """Within the resolution either way: neither figure is evidence against the other."""
    lo, hi = sorted((float(mine), float(default)))
    return hi <= lo * (1.0 + RESOLUTION)


def entry_figures(op: str, dtype: str, arch: str, e: dict):
    """(entry's model TFLOP/s, default's, default schedule) on the entry's bucket problem (the problem its
    sweep study ranked: autotune/loop_density.bucket_problem); the figures are None when the entry's
    schedule is the default."""
    from wmma_gen.ops import registry
    from .ladder import builtin_default
    from .loop_density import bucket_problem, entry_directive
    spec = registry.get(op)
    d, p, default = builtin_default(op, entry_directive(op, dtype, e), arch, bucket_problem(op, e))
    tuned = spec.schedule.from_dict(e["schedule"])
    if tuned == default:
        return None, None, default
    return spec.estimate_of(d, tuned, p, arch).tflops, spec.estimate_of(d, default, p, arch).tflops, default


def no_model_tie(docs: list, note: Callable[[str], None]) -> list:
    """`docs` [(file name, document, Tuning)] without the model-ranked entries that are not the default and
    do not beat it by more than RESOLUTION on their bucket problem; documents left empty are removed. (The
    ladder already ranks the default's trial first on a tie; this catches ladders whose study had none.)"""
    from .loop_density import KNOWN
    from .shadow import key_text
    out = []
    for name, doc, ad in docs:
        kept = []
        for e in doc["entries"]:
            if e.get("source") != "model" or doc["op"] not in KNOWN:
                kept.append(e)          # measured; or an op whose bucket problem is not known (loop_density says so)
                continue
            mine, base, default = entry_figures(doc["op"], doc["dtype"], doc["arch"], e)
            if mine is None or beats(mine, base):
                kept.append(e)
                continue
            how = (f"within the model's resolution ({RESOLUTION:.0%}) of" if ties(mine, base) else "below")
            note(f"dropped {doc['op']} {doc['arch']} {doc['dtype']} {key_text(e)}: today's model figure {mine:.3f} is "
                 f"{how} the default's {base:.3f} ({default}) -- a model-ranked entry must beat the default by more "
                 f"than {RESOLUTION:.0%}; a GPU measurement (source hip) can show a real difference")
        if kept:
            out.append((name, {**doc, "entries": kept}, ad))
        else:
            note(f"not writing {name}: every entry was dropped")
    return out
