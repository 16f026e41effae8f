"""Export keeps an entry only if it beats what it would shadow (issue 37).

An exported file sits in the search path with other files of its (arch, op, dtype) -- the shipped
ones, a user file, $WMMA_GEN_SCHEDULES directories -- and the lookup (wmma_gen/schedule_files.py)
takes the best-matching bucket of all of them, file precedence breaking ties. A new entry for a
bucket that another file already has (the same bucket and the same op key fields: acc, layout,
epilogue; head_dim, causal, flags; the paged op's kv_dtype, group, block size...) therefore
takes that bucket's calls from the existing entry whenever the new file comes first (the user
dir before the shipped files). The README's main job once exported a 2-entry user file whose gemm
f16 1024^3 entry the model rated 63.5 TFLOP/s over the shipped 67.7.

So, before anything is written, every new entry is compared with the entry of the same key in
the other files (the file being replaced excluded), measured the same way -- the same source
(model or hip), unit and FLOP-counting convention -- and:
  * kept when it is strictly faster, or when no other file has its key (then it shadows no
    entry at its own bucket; the lookup gives it the calls nearer to it than to any other);
  * dropped when it is not faster, or when the existing figure was measured another way (no
    comparison is possible: keep the existing one until a same-source figure exists).
One line per entry says which and why (`note`, stderr by default). A document left with no entry
is not written.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

# the op key fields an entry may carry besides its bucket, with the value their absence means
# (each op's lookup.parse applies the same defaults)
KEY_FIELDS = {"acc": None, "layout": "NN", "epilogue": {}, "head_dim": None, "causal": None, "window": False,
              "varlen": False, "softcap": False, "kv_dtype": None, "group": None, "block_size": None,
              "fp8_wmma": False, "q_dtype": ""}


def entry_key(e: dict) -> str:
    return json.dumps({"bucket": e.get("bucket"), **{k: e.get(k, d) for k, d in KEY_FIELDS.items()}},
                      sort_keys=True, default=str)


def key_text(e: dict) -> str:
    fields = {**e.get("bucket", {}), **{k: e[k] for k in KEY_FIELDS if k in e and e[k] not in ("", {}, None)}}
    return " ".join(f"{k}={v}" for k, v in fields.items())


def measured_as(e: dict) -> tuple:
    return e.get("source"), e.get("unit"), e.get("flops_convention")


def existing_entries(name: str, out: Path, validate: Callable) -> dict:
    """entry key -> (entry, file, origin): the first (highest precedence) entry of each key in
    the search path's other files named `name`; refused files shadow nothing and are skipped."""
    from wmma_gen import schedule_files as sf
    found: dict = {}
    target = (Path(out) / name).resolve()
    for d, origin in sf.search_dirs():
        path = d / name
        if not path.is_file() or path.resolve() == target:
            continue
        try:
            doc = sf.read(path)
            validate(doc, path)
        except sf.ScheduleFileError:
            continue
        for e in doc["entries"]:
            found.setdefault(entry_key(e), (e, path, origin))
    return found


def against_shadowed(docs: list, out, note: Callable[[str], None]) -> list:
    """`docs` [(file name, document, Tuning)] with each document's entries filtered as the
    module doc says; documents left empty are removed."""
    kept_docs = []
    for name, doc, ad in docs:
        existing = existing_entries(name, Path(out), ad.validate_document)
        kept = []
        for e in doc["entries"]:
            what = f"{doc['op']} {doc['arch']} {doc['dtype']} {key_text(e)}: {e['tflops']} {e.get('unit', '')} " \
                   f"({e.get('source')})"
            old = existing.get(entry_key(e))
            if old is None:
                kept.append(e)
                note(f"kept {what}: no other schedule file has this bucket")
                continue
            o, path, origin = old
            theirs = f"{o['tflops']} {o.get('unit', '')} ({o.get('source')}) in {path} ({origin})"
            if measured_as(o) != measured_as(e):
                note(f"dropped {what}: the entry it would shadow, {theirs}, was measured another way; no same-source "
                     "comparison is possible")
            elif float(e["tflops"]) > float(o["tflops"]):
                kept.append(e)
                note(f"kept {what}: beats the entry it shadows, {theirs}")
            else:
                note(f"dropped {what}: does not beat the entry it would shadow, {theirs}")
        if kept:
            kept_docs.append((name, {**doc, "entries": kept}, ad))
        else:
            note(f"not writing {name}: every entry was dropped")
    return kept_docs
