"""Head dims above 256 through the torch lane on the emulator: flash_attn_func (forward and
autograd) and flash_attn_varlen_func against float64 torch references written from the math
(torch_ref), and SDPA's registry running forward and backward on wmma_gen."""
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


def test_flash_attn_func_hd288_autograd():
    """Forward and backward (the backward's operands="global" kernels) against float64 autograd."""
    q, k, v = (_rand(1, 9, 1, 288, dtype=torch.float16).requires_grad_() for _ in range(3))
    out = flash_attn_func(q, k, v, causal=True)
    leaves = ref.leaves(q, k, v, dtype=torch.float64)
    ro, _ = ref.attention(*leaves, causal=True)
    do = torch.randn_like(ro)
    out.backward(do.to(torch.float16))
    ro.backward(do)
    for name, got, want in zip(("out", "dq", "dk", "dv"), (out, q.grad, k.grad, v.grad), (ro, *(t.grad for t in leaves))):
        assert ref.rel_err(got, want) <= TOL * ref.EPS[torch.float16], name


def test_sdpa_registry_runs_hd320_forward_and_backward():
    q, k, v = (_rand(1, 2, 11, 320, dtype=torch.float16) for _ in range(3))
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    with sdpa.enabled(cpu=True):
        got, ops = _with_ops(lambda: _fwd_bwd(leaves))
    assert ops == {"wmma_gen::attention", "wmma_gen::attention_backward"}
    ro, _ = ref.attention(*(t.double() for t in (q, k, v)), causal=True, layout="bhsd")
    assert ref.rel_err(got, ro) <= TOL * ref.EPS[torch.float16]
    assert all(t.grad is not None and torch.isfinite(t.grad).all() for t in leaves)


def _fwd_bwd(leaves):
    o = F.scaled_dot_product_attention(*leaves, is_causal=True)
    o.float().sum().backward()
    return o.detach()


def _with_ops(fn):
    from torch.profiler import profile
    with profile() as prof:
        out = fn()
    return out, {e.name for e in prof.events() if e.name.startswith("wmma_gen::")}
