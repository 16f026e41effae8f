"""MLA's sweep axes (`wmma-gen sweep --op mla`): --seqs (the context length of the longest
sequence), --batches, --causal, --kv-dtypes (flags shared with the other ops: the first op
declaring a flag gives its reader, the same readers here) and --mla-heads (query heads sharing
the latent: 16 for DeepSeek-V2-Lite, 128 for V3 / Kimi K2) and --mla-seq-qs (query tokens per
sequence: 1, or 2..16 for speculative decode). Light: read by the sweep's parser."""
from ..contract import SweepAxis

SAME = "same"
FP8 = ("fp8e4m3", "fp8e5m2")


def kv_dtype(text: str) -> str:
    """One latent-cache kind: `same` (-> "", the query dtype) or an fp8 format."""
    if text != SAME and text not in FP8:
        raise ValueError(f"{text!r} is not allowed: {SAME} (the query dtype) or {', '.join(FP8)}")
    return "" if text == SAME else text


def seq_q(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 16:
        raise ValueError(f"{text!r} is not allowed: an integer from 1 to 16 (query tokens per sequence)")
    return int(text)


SEQS = SweepAxis("seqs", "--seqs", "seq", "sequence lengths", "mla: context length of the longest sequence")
BATCHES = SweepAxis("batches", "--batches", "int", "batch sizes", "mla: batch buckets (default 1,16)")
CAUSAL = SweepAxis("causal", "--causal", "on_off", "masks", "mla: causal among the Sq query tokens (default off)")
KV = SweepAxis("kv_dtypes", "--kv-dtypes", kv_dtype, "KV-cache dtypes",
               f"mla: latent-cache element types from {SAME},{','.join(FP8)} (default {SAME},fp8e4m3)")
HEADS = SweepAxis("heads", "--mla-heads", "int", "query head counts", "mla: query heads (default 16,128)")
SEQ_QS = SweepAxis("seq_qs", "--mla-seq-qs", seq_q, "query tokens per sequence",
                   "mla: query tokens per sequence, 1..16 (default 1)")
SWEEP_AXES = (SEQS, BATCHES, CAUSAL, KV, HEADS, SEQ_QS)
