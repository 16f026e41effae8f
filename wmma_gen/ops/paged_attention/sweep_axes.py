"""Paged decode's sweep axes (`wmma-gen sweep --op paged_attention`): the forward's head dims,
masks and --seqs (here the context length of the longest sequence), plus the batch buckets and
the KV-cache element types. Light: read by the sweep's parser (ops/contract.py SweepAxis)."""
from ..attention.sweep_axes import CAUSAL, HEAD_DIMS, SEQS
from ..contract import SweepAxis
from .directive import KV_DTYPES

SAME = "same"     # the query dtype (a 16-bit cache): PagedAttentionDirective's kv_dtype ""
FP8 = tuple(k for k in KV_DTYPES if k.startswith("fp8"))


def kv_dtype(text: str) -> str:
    """One KV-cache kind: `same` (-> "", the query dtype) or an fp8 format."""
    if text != SAME and text not in FP8:
        raise ValueError(f"{text!r} is not allowed: {SAME} (the query dtype) or {', '.join(FP8)}")
    return "" if text == SAME else text


BATCHES = SweepAxis("batches", "--batches", "int", "batch sizes",
                    "paged_attention: batch buckets, sequences per call (default 1,16)")
KV = SweepAxis("kv_dtypes", "--kv-dtypes", kv_dtype, "KV-cache dtypes",
               f"paged_attention: KV-cache element types from {SAME},{','.join(FP8)} (default {SAME},fp8e4m3)")
SWEEP_AXES = (HEAD_DIMS, SEQS, CAUSAL, BATCHES, KV)
