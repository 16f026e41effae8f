"""`MLADirective`: *what* an MLA decode kernel computes -- never sizes.

Multi-head latent attention with absorbed weights (DeepSeek-V2 section 2.1.2; FlashMLA's
`flash_mla_with_kvcache`): every token caches one latent row c_j of head_dim values
(kv_lora_rank 512 + rope 64 = 576 in DeepSeek-V2/V3), shared by all query heads (one kv head).
For sequence b with cached length L = seq_lens[b] and Sq query tokens (query i at position
L - Sq + i), head h:

    O[b, i, h] = sum_j softmax_j(scale * Q[b, i, h] . c_j) * c_j[:head_dim_v]

over the keys j < L; causal keeps j <= L - Sq + i (bottom-right, FlashMLA's and vLLM's
convention for speculative decode: FlashMLA's test reference masks with
ones(s_q, s_k).tril(diagonal=s_k - s_q)). Rows that see no key give O = 0 and LSE = -inf.
Key j lives at kv_cache[block_table[b, j // block_size], j % block_size, 0, :].

Fields:
  dtype       "f16" | "bf16"    Q and O element type (f32 accumulation)
  head_dim    Q / latent width: a multiple of 64 from 64 to 576 (576 in the models)
  head_dim_v  V width, the first head_dim_v values of each latent row: a multiple of 64,
              at most head_dim (512 in the models)
  block_size  rows per cache block: 16, 32, 64 (FlashMLA's) or 128
  kv_dtype    "" = dtype, or "fp8e4m3" / "fp8e5m2" (a latent cache of OCP fp8 bytes with one
              f32 scale; widened to dtype in registers, kernels/fp8_widen.py)
  causal      bottom-right causal mask between the Sq query tokens
"""
from __future__ import annotations

from dataclasses import dataclass

from ...attention_common.paged_directive import (BLOCK_SIZES, DTYPES, KV_DTYPES, check_cache,  # noqa: F401
                                                check_flags, check_one_of)
from ...errors import ScheduleError
from ...knobs import JsonRecord
from ..contract import option

HEAD_DIMS = tuple(range(64, 577, 64))


@dataclass(frozen=True)
class MLADirective(JsonRecord):
    # each option(...) is the field's CLI flag (ops/contract.Flag; check/compile/analyze --op mla)
    dtype: str = option(help="input dtype", choices=DTYPES)
    head_dim: int = option(576, "Q / latent width: a multiple of 64 from 64 to 576")
    head_dim_v: int = option(512, "V width (the first head_dim_v values of each latent row): a multiple of 64, "
                             "at most --head-dim")
    block_size: int = option(64, "rows per cache block", choices=BLOCK_SIZES)
    kv_dtype: str = option("", "cache dtype: '' = --dtype, or fp8e4m3 / fp8e5m2")
    causal: bool = option(False, "bottom-right aligned causal mask")

    def __post_init__(self):
        check_cache(self, HEAD_DIMS)
        if isinstance(self.head_dim_v, bool) or self.head_dim_v not in HEAD_DIMS or self.head_dim_v > self.head_dim:
            raise ScheduleError("head_dim_v", self.head_dim_v, f"a multiple of 64 from 64 to head_dim={self.head_dim}")
        check_one_of("block_size", self.block_size, BLOCK_SIZES)
        check_flags(self, ("causal",))

    @property
    def fp8(self) -> bool:
        return self.kv_dtype.startswith("fp8")
