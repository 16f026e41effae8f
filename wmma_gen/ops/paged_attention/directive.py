"""`PagedAttentionDirective`: *what* a paged-KV decode attention kernel computes -- never sizes.

For sequence b with cached length L = seq_lens[b] (the new query tokens included) and Sq query
tokens, query i sits at position L - Sq + i (bottom-right alignment, as the dense forward's
directive.py). Key j of the sequence lives in the cache at

    K[j] = k_cache[block_table[b, j // block_size], j % block_size, g]   (vLLM's layout:
           k_cache / v_cache (num_blocks, block_size, kv_heads, head_dim)),  g = h // (H // Hkv)

    O[b, i, h] = sum_j softmax_j(cap(scale * k_scale * Q[b, i, h] . K[j])) v_scale * V[j]

over the keys visible to query i: all j < L; causal keeps j <= L - Sq + i; window (left, right)
as the dense forward (runtime sizes, -1 unbounded); cap(x) = softcap * tanh(x / softcap) when
softcap is on. Rows that see no key (L = 0, or causal rows before the cache) give O = 0 and
LSE = -inf.

Fields:
  dtype       "f16" | "bf16"   Q and O element type (f32 accumulation)
  kv_dtype    the cache's element type: "f16" | "bf16" (= dtype), or "fp8e4m3" / "fp8e5m2"
              (OCP FP8, one byte; dequantised to dtype in registers with per-kv-head scales --
              a per-tensor scale is the same value for every head)
  head_dim    a multiple of 16 from 16 to 256 (WMMA tiles are 16 wide)
  block_size  rows per cache block (vLLM's default is 16)
  causal, window, softcap, return_lse: flags (their sizes are runtime arguments)
  varlen      chunked prefill: q is packed (total_q, heads, D), sequence b's Sq_b = cu_seqlens_q[b+1]
              - cu_seqlens_q[b] query tokens (any length, 0 allowed) against its cached prefix
  fp8_wmma    fp8 caches only, targets with fp8 WMMA (gfx12): multiply natively on
              v_wmma_f32_16x16x16_{fp8,bf8}_fp8 instead of widening the cache to dtype.
              Q is quantised per query row to E4M3 with a scale computed in the kernel
              (amax|q| / 448), P (x 2**8) to E4M3 (fp8_tiles.py says why); the numerics differ
              from the dequantising path (about 2**-4 relative in S and P), so this is the
              caller's choice, never a schedule knob.
  q_dtype     "" = dtype (Q in the 16-bit query dtype), or "fp8e4m3" / "fp8e5m2" with fp8_wmma:
              Q is given as fp8 bytes and used as it is (no quantisation in the kernel; its
              scale rides in `scale`) -- dense fp8 attention (dense_fp8.py). O stays dtype.
  sinks       attention sinks (GPT-OSS, s_aux): a per-head f32 logit joins every row's softmax
              denominator (attention_common/directive.py); the paged kernel's partials are sink-free and
              the combine kernel adds the sink (its code is the only one that changes).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...attention_common.paged_directive import (BLOCK_SIZES, DTYPES, KV_DTYPES, check_cache,  # noqa: F401
                                                check_flags, check_one_of)
from ...errors import ScheduleError
from ...knobs import JsonRecord
from ..contract import option

HEAD_DIMS = tuple(range(16, 257, 16))


@dataclass(frozen=True)
class PagedAttentionDirective(JsonRecord):
    # each option(...) is the field's CLI flag (ops/contract.Flag; check/compile/analyze --op paged_attention)
    dtype: str = option(help="input dtype", choices=DTYPES)
    head_dim: int = option(help=f"a multiple of 16 from 16 to {HEAD_DIMS[-1]}", cli_default=64)
    block_size: int = option(16, "rows per cache block", choices=BLOCK_SIZES)
    kv_dtype: str = option("", "cache dtype: '' = --dtype, or fp8e4m3 / fp8e5m2")
    causal: bool = option(True, "bottom-right aligned causal mask")
    window: bool = False
    softcap: bool = False
    return_lse: bool = False
    varlen: bool = False        # chunked prefill: packed query chunks (total_q, H, D) + cu_seqlens_q
    fp8_wmma: bool = False      # fp8 caches: Q and P quantised to E4M3, both products on fp8 WMMA
    q_dtype: str = ""           # "" = dtype; fp8e4m3 / fp8e5m2: Q given as fp8 bytes (fp8_wmma only)
    sinks: bool = False         # attention sinks (GPT-OSS s_aux): the combine's per-head logit

    def __post_init__(self):
        check_cache(self, HEAD_DIMS, f"a multiple of 16 from 16 to {HEAD_DIMS[-1]} (paged decode; dense attention "
                    "takes up to 512)")
        check_one_of("block_size", self.block_size, BLOCK_SIZES)
        check_flags(self, ("causal", "window", "softcap", "return_lse", "varlen", "fp8_wmma", "sinks"))
        if self.fp8_wmma and not self.fp8:
            raise ScheduleError("fp8_wmma", self.fp8_wmma, f"False for kv_dtype={self.kv_dtype} (fp8 caches only)")
        if self.q_dtype == "":
            object.__setattr__(self, "q_dtype", self.dtype)
        if self.q_dtype != self.dtype and (self.q_dtype not in ("fp8e4m3", "fp8e5m2") or not self.fp8_wmma):
            raise ScheduleError("q_dtype", self.q_dtype, f"{self.dtype!r} (the query dtype), or fp8e4m3 / fp8e5m2 "
                                "with fp8_wmma=True")

    @property
    def fp8(self) -> bool:
        return self.kv_dtype.startswith("fp8")

    @property
    def q_fp8(self) -> bool:
        """Q is given as fp8 bytes (used as it is by the fp8 WMMA)."""
        return self.q_dtype.startswith("fp8")


def combine_directive(d):
    """The dense forward's directive whose combine kernel finishes this op's partials (bshd O
    (batch, Sq, heads, D) and LSE (batch, heads, Sq); varlen O (total_q, heads, D), LSE
    (heads, total_q))."""
    from ...attention_common.directive import AttentionDirective
    return AttentionDirective(d.dtype, d.head_dim, return_lse=d.return_lse, varlen=d.varlen, sinks=d.sinks)
