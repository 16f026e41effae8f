"""float64 torch math references for tests/torch_lane (autograd gives their gradients)."""
import torch

EPS = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}   # unit roundoff of each dtype


def visible(sq: int, sk: int, causal: bool, window=(-1, -1)) -> torch.Tensor:
    """flash-attn 2 masks, bottom-right aligned: (sq, sk) bool, True where key j is visible to query i."""
    i = torch.arange(sq)[:, None]
    j = torch.arange(sk)[None, :]
    off = sk - sq
    vis = torch.ones(sq, sk, dtype=torch.bool)
    if causal:
        vis &= j <= i + off
    left, right = window
    if left >= 0:
        vis &= j >= i + off - left
    if right >= 0:
        vis &= j <= i + off + right
    return vis


def attention_bhsd(q, k, v, scale, vis):
    """(o, lse) for q (B, H, Sq, D), k/v (B, Hkv, Sk, D); rows that see no key give o = 0, lse = -inf."""
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    s = (q @ k.transpose(-1, -2)) * scale
    any_key = vis.any(-1, keepdim=True)
    s = torch.where(vis, s, float("-inf"))
    lse = torch.logsumexp(s, -1)
    p = torch.softmax(torch.where(any_key, s, 0.0), -1) * any_key     # finite gradients on empty rows
    return p @ v, lse


def attention(q, k, v, *, causal=False, window=(-1, -1), scale=None, layout="bshd"):
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    if layout == "bshd":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    o, lse = attention_bhsd(q, k, v, scale, visible(q.shape[2], k.shape[2], causal, window))
    return (o.transpose(1, 2) if layout == "bshd" else o), lse


def attention_varlen(q, k, v, cu_q, cu_k, **kw):
    """Packed (total, H, D) sequences: each one attended on its own; lse (H, total_q)."""
    outs, lses = [], []
    for b in range(len(cu_q) - 1):
        qs, ks, vs = q[cu_q[b]:cu_q[b + 1]], k[cu_k[b]:cu_k[b + 1]], v[cu_k[b]:cu_k[b + 1]]
        o, lse = attention(qs[None], ks[None], vs[None], **kw)
        outs.append(o[0])
        lses.append(lse[0])
    return torch.cat(outs), torch.cat(lses, dim=1)


def leaves(*ts, dtype=None):
    """Detached copies requiring grad (dtype: kept, or converted -- e.g. float64 for the reference)."""
    return [t.detach().to(dtype or t.dtype).requires_grad_() for t in ts]


def rel_err(got, ref) -> float:
    """max |got - ref| / max(max |ref|, 1e-6), in float64; inf entries must agree exactly."""
    got, ref = got.double(), ref.double()
    fin = torch.isfinite(ref)
    assert torch.equal(fin, torch.isfinite(got)) and torch.equal(got[~fin], ref[~fin])
    scale = max(ref[fin].abs().max().item() if fin.any() else 0.0, 1e-6)
    return (got[fin] - ref[fin]).abs().max().item() / scale if fin.any() else 0.0
