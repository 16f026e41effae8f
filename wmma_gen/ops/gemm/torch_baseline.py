"""The GEMM's `wmma-gen bench --vs torch` baseline (OpSpec.torch_baseline): torch.matmul on a
ladder row's problem, operands stored as the row's layout says (T = transposed view)."""
from __future__ import annotations


def torch_matmul(torch, r):
    """(callable, FLOPs, label) for ladder row `r`, or None when torch has no matmul for its dtype."""
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}.get(str(r["dtype"]))
    if dt is None:
        return None
    m, n, k, batch = (int(r[c]) for c in ("m", "n", "k", "batch"))
    a = torch.randn(batch, k, m, dtype=dt, device="cuda").mT if r["layout"][0] == "T" else \
        torch.randn(batch, m, k, dtype=dt, device="cuda")
    b = torch.randn(batch, n, k, dtype=dt, device="cuda").mT if r["layout"][1] == "T" else \
        torch.randn(batch, k, n, dtype=dt, device="cuda")
    return (lambda: torch.matmul(a, b)), 2.0 * m * n * k * batch, "torch.matmul"
