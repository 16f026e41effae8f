"""Paged attention's sweep axes (`wmma-gen sweep --op paged_attention`): the forward's head dims,
masks, --seqs (here the context length of the longest sequence) and --softcap, plus the batch
buckets, the KV-cache element types and the chunked-prefill studies (--chunks query tokens per
sequence against --prefixes cached tokens). Light: read by the sweep's parser (ops/contract.py
SweepAxis)."""
from ...attention_common.sweep_axes import CAUSAL, HEAD_DIMS, SEQS, SOFTCAP
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
MAX_CHUNK = 16   # query tokens per sequence the spec's (dense-form) problems take: inputs.MAX_SQ


def chunk(text: str) -> int:
    """One chunked-prefill query length: 1..MAX_CHUNK tokens per sequence."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_CHUNK:
        raise ValueError(f"{text!r} is not allowed: an integer from 1 to {MAX_CHUNK} (query tokens per sequence "
                         "in one chunk)")
    return int(text)


CHUNKS = SweepAxis("chunks", "--chunks", chunk, "query-chunk lengths",
                   f"paged_attention: chunked-prefill studies, query tokens per sequence (1..{MAX_CHUNK}), each "
                   "against every --prefixes length (default none: decode studies only)")
PREFIXES = SweepAxis("prefixes", "--prefixes", "seq", "cached-prefix lengths",
                     "paged_attention: chunked-prefill studies, tokens already cached before the chunk "
                     "(default 1024,8192)")
SWEEP_AXES = (HEAD_DIMS, SEQS, CAUSAL, SOFTCAP, BATCHES, KV, CHUNKS, PREFIXES)
