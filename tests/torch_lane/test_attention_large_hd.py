"""Head dims above 256 (forward only: the backward takes 16..256) through the torch lane on the
emulator: flash_attn_func and flash_attn_varlen_func against float64 torch references written
from the math (torch_ref), SDPA's registry running them on wmma_gen, and the refusal of calls
that record autograd (flash-attn: ValueError before the forward runs; SDPA: torch's own kernel)."""
import pytest
import torch
import torch.nn.functional as F

import torch_ref as ref
from wmma_gen.torch import flash_attn_func, flash_attn_varlen_func, sdpa

TOL = 4.0


def _rand(*shape, dtype):
    return torch.randn(*shape, dtype=torch.float64).to(dtype)


def test_flash_attn_func_hd512_causal_gqa():
    q, k, v = _rand(1, 13, 2, 512, dtype=torch.bfloat16), *(_rand(1, 21, 1, 512, dtype=torch.bfloat16)
                                                           for _ in range(2))
    with torch.no_grad():
        out, lse, _ = flash_attn_func(q, k, v, causal=True, return_attn_probs=True)
    ro, rl = ref.attention(*(t.double() for t in (q, k, v)), causal=True)
    assert ref.rel_err(out, ro) <= TOL * ref.EPS[torch.bfloat16]
    assert ref.rel_err(lse, rl) <= 1e-5


def test_flash_attn_varlen_func_hd384():
    cu = torch.tensor([0, 7, 19], dtype=torch.int32)
    q, k, v = (_rand(19, 2, 384, dtype=torch.float16) for _ in range(3))
    with torch.no_grad():
        out = flash_attn_varlen_func(q, k, v, cu, cu, 12, 12, causal=True)
    ro, _ = ref.attention_varlen(*(t.double() for t in (q, k, v)), cu.tolist(), cu.tolist(), causal=True)
    assert ref.rel_err(out, ro) <= TOL * ref.EPS[torch.float16]


def test_grad_above_256_is_refused_before_the_forward():
    q, k, v = (_rand(1, 5, 1, 288, dtype=torch.float16).requires_grad_() for _ in range(3))
    with pytest.raises(ValueError, match=r"head_dim=288 with inputs requiring grad.*torch.no_grad"):
        flash_attn_func(q, k, v)


def test_sdpa_registry_runs_hd320_and_leaves_its_grad_to_torch():
    q, k, v = (_rand(1, 2, 11, 320, dtype=torch.float16) for _ in range(3))
    with sdpa.enabled(cpu=True):
        with torch.no_grad():
            got, ops = _with_ops(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
        assert ops == {"wmma_gen::attention"}
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        _, ops = _with_ops(lambda: F.scaled_dot_product_attention(*leaves, is_causal=True).sum().backward())
        assert ops == set() and leaves[0].grad is not None      # torch's own forward and backward
    ro, _ = ref.attention(*(t.double() for t in (q, k, v)), causal=True, layout="bhsd")
    assert ref.rel_err(got, ro) <= TOL * ref.EPS[torch.float16]


def _with_ops(fn):
    from torch.profiler import profile
    with profile() as prof:
        out = fn()
    return out, {e.name for e in prof.events() if e.name.startswith("wmma_gen::")}
