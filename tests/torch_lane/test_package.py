"""wmma_gen.torch as a package: importing wmma_gen (or its device-resident core) never imports
torch; importing wmma_gen.torch registers the custom ops; warmup compiles what a model needs
so that step 1 plans nothing new."""
import subprocess
import sys

import pytest
import torch

from block import Block
from wmma_gen.ops import plans
import wmma_gen.torch as wt


def test_import_wmma_gen_does_not_import_torch():
    code = ("import sys, wmma_gen, wmma_gen.ops.device_calls, wmma_gen.device.select, wmma_gen.device.operand\n"
            "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_custom_ops_are_registered_with_fakes():
    for name in ("attention", "attention_backward", "gemm"):
        assert hasattr(torch.ops.wmma_gen, name)
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        q, k = torch.empty(2, 24, 4, 32, dtype=torch.bfloat16), torch.empty(2, 40, 2, 32, dtype=torch.bfloat16)
        o, lse = torch.ops.wmma_gen.attention(q, k, k, None, None, 24, 40, True, -1, -1, 0.2, "bshd")
        assert (o.shape, o.dtype, lse.shape, lse.dtype) == (q.shape, q.dtype, (2, 4, 24), torch.float32)
        cu = torch.empty(3, dtype=torch.int32)
        o, lse = torch.ops.wmma_gen.attention(q[0], k[0], k[0], cu, cu, 12, 20, False, -1, -1, 0.2, "bshd")
        assert lse.shape == (4, 24)
        c = torch.ops.wmma_gen.gemm(torch.empty(3, 32, 64, dtype=torch.int8), torch.empty(48, 64, dtype=torch.int8),
                                    None, "NT", "", "")
        assert (c.shape, c.dtype) == ((3, 32, 48), torch.int32)


def test_warmup_problems_then_nothing_new():
    probs = [{"op": "attention", "q": (1, 24, 2, 32), "k": (1, 24, 1, 32), "causal": True},
             {"op": "linear", "x": (24, 64), "weight": (40, 64), "bias": True, "activation": "silu",
              "dtype": torch.bfloat16}]
    assert wt.warmup(probs) > 0
    assert wt.warmup(probs) == 0


def test_warmup_model_prepares_step_one_and_keeps_grads():
    model = Block()
    x = torch.randn(1, 40, 64).half()           # a sequence length no other test uses: its plans are new
    assert wt.warmup(model, x) > 0
    assert all(p.grad is None for p in model.parameters())
    before = set(plans._plans)
    model(x).sum().backward()         # the training step, as warmed up
    assert set(plans._plans) == before
    with pytest.raises(ValueError, match="example_inputs"):
        wt.warmup(model)


def test_opcheck_schema_fake_autograd_and_aot_dispatch():
    """torch.library.opcheck: the schemas, the fakes against the real outputs, the autograd
    registration and AOT dispatch (what torch.compile relies on) of all three ops."""
    a, b = torch.randn(32, 64).half().requires_grad_(), torch.randn(48, 64).half().requires_grad_()
    torch.library.opcheck(torch.ops.wmma_gen.gemm, (a, b, torch.randn(48).requires_grad_(), "NT", "silu", ""))
    q = torch.randn(1, 32, 2, 32).half().requires_grad_()
    k, v = (torch.randn(1, 32, 1, 32).half().requires_grad_() for _ in range(2))
    args = (None, None, 32, 32, True, -1, -1, 0.17, "bshd")
    torch.library.opcheck(torch.ops.wmma_gen.attention, (q, k, v) + args)
    o, lse = torch.ops.wmma_gen.attention(q, k, v, *args)
    do = torch.randn_like(o)
    torch.library.opcheck(torch.ops.wmma_gen.attention_backward,
                          (do, q.detach(), k.detach(), v.detach(), o.detach(), lse) + args)
