"""The exported schedule documents of the paged-cache ops (ops/paged_attention/tuning.py,
ops/mla/tuning.py): from a ladder's validated rank-1 rows, one entry per (key, bucket) -- the best
by tflops -- in one document per dtype, in the op's lookup.py format."""
from __future__ import annotations

from typing import Callable

import wmma_gen


def plain(v):
    """A numpy scalar as its Python value (JSON-safe); anything else as it is."""
    return v.item() if hasattr(v, "item") else v


def documents(df, arch: str, op: str, key: list, bucket: Callable, lookup, space: tuple,
              flops_convention: str) -> dict:
    """file name -> document. key: the row columns an entry is unique by (besides dtype);
    bucket(row) -> the entry's bucket; lookup: the op's lookup module (entry_key_of, file_name,
    SCHEMA, SCHEMA_VERSION)."""
    from wmma_gen.tuner import stamp
    best = df[(df["arch"] == arch) & (df["rank"] == 1) & (df["validated"].astype(bool))]
    docs = {}
    for dtype, rows in best.groupby("dtype", sort=True):
        rows = rows.sort_values(key + ["tflops"], ascending=[True] * len(key) + [False]).drop_duplicates(key)
        entries = [{**lookup.entry_key_of(r), "bucket": bucket(r),
                    "schedule": {k.name: plain(r[k.name]) for k in space},
                    "tflops": round(float(r["tflops"]), 3), "unit": r["unit"], "source": r["source"],
                    "validated": True, "vgprs": int(r["vgprs"]), "lds_bytes": int(r["lds_bytes"]),
                    "isa_hash": r["isa_hash"], "object_sha256": plain(r.get("object_sha256")) or "",
                    "study": r["study"], "trial": int(r["trial"]), "flops_convention": flops_convention,
                    "toolchain": {"mlir": r["toolchain_mlir"], "lld": r["toolchain_lld"]}}
                   for _, r in rows.iterrows()]
        docs[lookup.file_name(arch, dtype)] = {
            "schema": lookup.SCHEMA, "schema_version": lookup.SCHEMA_VERSION, "arch": arch, "op": op,
            "dtype": dtype, "generated": stamp(), "wmma_gen_version": wmma_gen.__version__, "entries": entries}
    return docs
