"""`AttentionDirective`: *what* a flash-attention kernel computes -- never problem sizes.

    O[b, i, h] = sum_j softmax_j(scale * Q[b, i, h] . K[b, j, g]) V[b, j, g],   g = h // (H // Hkv)

over the keys j visible to query i; `LSE[b, h, i] = log sum_j exp(scale * Q.K)` over the same
keys. Batch, heads, kv heads, sequence lengths, cu_seqlens offsets, window sizes and the scale
are runtime kernel arguments, so one code object serves every size with the same directive.

Masking conventions (the common flash-attention ones; reference.visible_mask is the spec).
For a sequence of Sq queries and Sk keys, let off = Sk - Sq (queries are aligned to the
*bottom-right* of the score matrix, so the last query sees the last key):
  causal:          key j is visible to query i  iff  j <= i + off
  window (l, r):   key j is visible to query i  iff  i + off - l <= j <= i + off + r,
                   where l = -1 (r = -1) leaves that side unbounded
  causal + window: both hold, i.e. causal acts as r = 0.
When Sq > Sk, causal queries i < Sq - Sk see no key: their output row is 0 and their LSE is
-inf (never NaN). With varlen each sequence uses its own Sq_b and Sk_b.

Fields:
  dtype       "f16" | "bf16"         Q, K, V, O (and dO, dQ, dK, dV) element type; f32 accumulation
  head_dim    a multiple of 16 from 16 to 512 (HEAD_DIMS; WMMA tiles are 16 wide), each with a spill-free
              default schedule forward (attention/defaults.py) and backward (attention_bwd/defaults.py);
              above 256 the forward's waves split the head dim (d_split) and the backward reads its
              natural operand tiles from global memory (operands="global"; docs/large_head_dims.md)
  causal      bottom-right aligned causal mask
  window      a sliding window is applied (its left/right sizes are runtime arguments)
  varlen      packed sequences addressed through cu_seqlens_q / cu_seqlens_k
  return_lse  the forward also writes LSE (f32); the backward always reads it
  softcap     logit soft-capping s = c * tanh(s / c) before the masks and the softmax (Gemma-2,
              flash-attn's softcap); the cap c > 0 is a runtime f32 argument; LSE is of the capped logits
  sinks       attention sinks (GPT-OSS, flash-attn's s_aux / learnable_sink): a per-head f32 logit
              s_h (not scaled, not capped) joins every softmax row's denominator,
              O_i = sum_j exp(S_ij - LSE_i) V_j with LSE_i = log(exp(s_h) + sum_j exp(S_ij)) (LSE
              includes the sink; a row that sees no key has O = 0, LSE = s_h). Only the epilogue
              (or the split-KV combine) changes; the backward kernels need no flag (the LSE they
              read carries the sink) and d s_h = -sum_i exp(s_h - LSE_i) rowsum(dO_i * O_i).
  layout      "bshd" (batch, seq, heads, dim) | "bhsd" (batch, heads, seq, dim); varlen arrays
              are packed (total, heads, dim), which is "bshd" without the batch axis
  op          "attention" (forward) | "attention_bwd" (dQ, dK, dV from dO and the forward's LSE)
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ScheduleError
from ..knobs import JsonRecord
from ..ops.contract import option

DTYPES = ("f16", "bf16")
HEAD_DIMS = tuple(range(16, 513, 16))
LAYOUTS = ("bshd", "bhsd")
OPS = ("attention", "attention_bwd")


def _check_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise ScheduleError(name, value, "True or False")


@dataclass(frozen=True)
class AttentionDirective(JsonRecord):
    """A flash-attention kernel's compile-time facts (see the module docstring)."""
    # each option(...) is the field's CLI flag (ops/contract.Flag; check/compile/analyze --op attention)
    dtype: str = option(help="input dtype", choices=DTYPES)
    head_dim: int = option(help="a multiple of 16 from 16 to 512", cli_default=64)
    causal: bool = option(False, "bottom-right aligned causal mask")
    window: bool = option(False, "LEFT,RIGHT sliding window (-1 = unbounded; write --window=-1,0 when LEFT is "
                          "negative)", value=str, raw=True)      # the sides are the problem's: OpSpec.cli_values
    varlen: bool = False
    return_lse: bool = False
    layout: str = option("bshd", "memory layout of Q, K, V, O: bshd (batch, seq, heads, dim) or bhsd",
                         flag="--attn-layout", choices=LAYOUTS)
    op: str = "attention"
    softcap: bool = False     # last, so positional construction elsewhere is unchanged
    sinks: bool = False       # after softcap for the same reason

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ScheduleError("dtype", self.dtype, f"one of {', '.join(DTYPES)}")
        if isinstance(self.head_dim, bool) or self.head_dim not in HEAD_DIMS:
            raise ScheduleError("head_dim", self.head_dim, f"one of {', '.join(map(str, HEAD_DIMS))}")
        object.__setattr__(self, "head_dim", int(self.head_dim))
        for name in ("causal", "window", "varlen", "return_lse", "softcap", "sinks"):
            _check_bool(name, getattr(self, name))
        if self.layout not in LAYOUTS:
            raise ScheduleError("layout", self.layout, f"one of {', '.join(LAYOUTS)}")
        if self.varlen and self.layout != "bshd":
            raise ScheduleError("layout", self.layout,
                                "'bshd' when varlen (packed arrays are (total, heads, head_dim))")
        if self.op not in OPS:
            raise ScheduleError("op", self.op, f"one of {', '.join(OPS)}")
        if self.op == "attention_bwd" and self.sinks:
            raise ScheduleError("sinks", self.sinks, "False for op='attention_bwd' (the LSE it reads carries the sink)")
        if self.op == "attention_bwd" and self.return_lse:
            raise ScheduleError("return_lse", self.return_lse, "False for op='attention_bwd' (it reads LSE)")
