"""flash_attn_with_kvcache (the paged decode kernel) keeps head dims 16..256 while dense attention
takes up to 512: above 256 the call is refused before anything is compiled or launched, naming
head_dim, the value, the paged range and where larger head dims run (issue 40, docs/mla.md)."""
import pytest
import torch

from wmma_gen.errors import ScheduleError
from wmma_gen.torch import flash_attn_with_kvcache


@pytest.mark.parametrize("head_dim", [272, 512])
def test_paged_decode_above_256_names_head_dim_and_the_range(head_dim):
    q = torch.randn(1, 1, 2, head_dim, dtype=torch.float16)
    k = torch.randn(2, 16, 1, head_dim, dtype=torch.float16)
    table, lens = torch.tensor([[0, 1]], dtype=torch.int32), torch.tensor([20], dtype=torch.int32)
    with pytest.raises(ScheduleError, match=rf"head_dim\)?={head_dim} is not allowed: a multiple of 16 from 16 to 256 "
                                            r"\(paged decode; dense attention takes up to 512\)"):
        flash_attn_with_kvcache(q, k, k.clone(), cache_seqlens=lens, block_table=table)
