"""torch.compile(fullgraph=True) traces a block built on wmma_gen ops (one opaque custom op per
call, fake implementations for shapes) with no graph break, and runs the same kernels as
eager. aot_eager runs the same torch glue too: bit-identical. Inductor compiles the glue
(the GELU derivative, bias sums, residual adds) with its own vectorised math: within 2 ulp
of the largest gradient (measured: 1 ulp on one tensor)."""
import time

import torch

import torch_ref as ref
from block import Block


def _run(model, x):
    for p in model.parameters():
        p.grad = None
    xi = x.clone().requires_grad_()
    y = model(xi)
    y.backward(torch.ones_like(y) / y.numel() ** 0.5)
    return y.detach(), [xi.grad] + [p.grad for p in model.parameters()]


def _same(model, compiled, x, ulps=0.0):
    y, grads = _run(model, x)
    yc, grads_c = _run(compiled, x)
    for a, b in zip([y] + grads, [yc] + grads_c):
        assert torch.equal(a, b) if not ulps else ref.rel_err(b, a) <= ulps * ref.EPS[torch.float16]


def test_compiled_block_aot_eager_fullgraph_equals_eager():
    torch._dynamo.reset()
    model = Block()
    x = torch.randn(2, 32, 64).half()
    _same(model, torch.compile(model, backend="aot_eager", fullgraph=True), x)


def test_compiled_block_inductor_matches_eager():
    torch._dynamo.reset()
    model = Block()
    x = torch.randn(1, 32, 64).half()
    t = time.time()
    _same(model, torch.compile(model, fullgraph=True), x, ulps=2.0)
    print(f"inductor compile + run: {time.time() - t:.1f} s")   # 10-40 s here (cold/warm inductor cache)
