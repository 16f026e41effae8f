"""A tiny GPT trained with wmma_gen ops beside the same model on pure torch ops.

    python examples/tiny_gpt.py                      # 2 layers, d_model 64, 4 heads / 2 kv heads
                                                     # (head dim 16), seq 32, vocab 64, 20 steps
    python examples/tiny_gpt.py --layers 1 --steps 4 --heads 2 --kv-heads 1

Both runs start from the same weights and see the same batches (next-token prediction on
a fixed affine sequence, so the loss falls). The wmma_gen run computes every linear layer
(fused bias, fused GELU) and the causal GQA attention in f16 kernels with f32 accumulation,
forward and backward; master weights, embeddings, layer norms, the loss and Adam stay f32
torch. The torch run is f32 throughout. On CPU tensors the kernels run on the emulator
(exact, slow: seconds per step); put the model and data on an AMD GPU ("cuda" in ROCm torch)
to run them there. The two loss curves differ only by f16 rounding of the kernels' operands.
"""
from __future__ import annotations

import argparse
import math
import time

import torch
import torch.nn.functional as F
from torch import nn


class TorchOps:
    """The reference: f32 torch."""
    name = "torch"

    def linear(self, x, w, b=None, activation=None):
        y = F.linear(x, w, b)
        return F.gelu(y) if activation == "gelu" else y

    def attention(self, q, k, v):          # (B, S, H, D) / (B, S, Hkv, D), causal
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=True, enable_gqa=q.shape[2] != k.shape[2])
        return o.transpose(1, 2)


class WmmaOps:
    """wmma_gen.torch kernels on `dtype` operands (casts are autograd-tracked device-side ops)."""
    name = "wmma_gen"

    def __init__(self, dtype=torch.float16):
        import wmma_gen.torch as wt
        self.wt, self.dtype = wt, dtype

    def linear(self, x, w, b=None, activation=None):
        return self.wt.linear(x.to(self.dtype), w.to(self.dtype), b, activation=activation).float()

    def attention(self, q, k, v):
        dt = self.dtype
        return self.wt.flash_attn_func(q.to(dt), k.to(dt), v.to(dt), causal=True).float()


class GPT(nn.Module):
    def __init__(self, vocab=64, d_model=64, layers=2, heads=4, kv_heads=2, seq=32):
        super().__init__()
        self.h, self.hkv, self.hd = heads, kv_heads, d_model // heads
        self.tok, self.pos = nn.Embedding(vocab, d_model), nn.Embedding(seq, d_model)
        self.blocks = nn.ModuleList(nn.ModuleDict({
            "ln1": nn.LayerNorm(d_model), "qkv": nn.Linear(d_model, (heads + 2 * kv_heads) * self.hd),
            "proj": nn.Linear(heads * self.hd, d_model), "ln2": nn.LayerNorm(d_model),
            "up": nn.Linear(d_model, 4 * d_model), "down": nn.Linear(4 * d_model, d_model)}) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx, ops):
        b, s = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(s, device=idx.device))
        for blk in self.blocks:
            qkv = ops.linear(blk["ln1"](x), blk["qkv"].weight, blk["qkv"].bias)
            q, k, v = qkv.split([self.h * self.hd, self.hkv * self.hd, self.hkv * self.hd], dim=-1)
            a = ops.attention(q.reshape(b, s, self.h, self.hd), k.reshape(b, s, self.hkv, self.hd),
                              v.reshape(b, s, self.hkv, self.hd))
            x = x + ops.linear(a.reshape(b, s, -1), blk["proj"].weight, blk["proj"].bias)
            hid = ops.linear(blk["ln2"](x), blk["up"].weight, blk["up"].bias, activation="gelu")
            x = x + ops.linear(hid, blk["down"].weight, blk["down"].bias)
        return ops.linear(self.ln_f(x), self.head.weight)


def batches(steps: int, batch: int, seq: int, vocab: int, seed: int = 0):
    """Sequences t[i+1] = (5 t[i] + 3) mod vocab from random starts: learnable next tokens."""
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        t = torch.empty(batch, seq + 1, dtype=torch.long)
        t[:, 0] = torch.randint(0, vocab, (batch,), generator=g)
        for i in range(seq):
            t[:, i + 1] = (5 * t[:, i] + 3) % vocab
        yield t[:, :-1], t[:, 1:]


def train(ops, *, steps=20, layers=2, d_model=64, heads=4, kv_heads=2, seq=32, vocab=64, batch=4, lr=3e-3,
          seed=0, device="cpu") -> list[float]:
    torch.manual_seed(seed)
    model = GPT(vocab, d_model, layers, heads, kv_heads, seq).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for x, y in batches(steps, batch, seq, vocab, seed):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x, ops).reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--vocab", type=int, default=64)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--dtype", choices=("f16", "bf16"), default="f16")
    ap.add_argument("--device", default="cpu", help="cpu (emulator) or cuda (an AMD GPU under ROCm torch)")
    a = ap.parse_args(argv)
    kw = dict(steps=a.steps, layers=a.layers, d_model=a.d_model, heads=a.heads, kv_heads=a.kv_heads, seq=a.seq,
              vocab=a.vocab, batch=a.batch, device=a.device)
    curves = {}
    for ops in (TorchOps(), WmmaOps(torch.float16 if a.dtype == "f16" else torch.bfloat16)):
        t = time.time()
        curves[ops.name] = train(ops, **kw)
        print(f"{ops.name:9s} {time.time() - t:6.1f} s")
    print("step   torch     wmma_gen  diff")
    for i, (r, w) in enumerate(zip(curves["torch"], curves["wmma_gen"])):
        print(f"{i:4d}  {r:8.4f}  {w:8.4f}  {w - r:+.4f}")
    worst = max(abs(w - r) for r, w in zip(curves["torch"], curves["wmma_gen"]))
    print(f"max |diff| {worst:.4f} (initial loss ~ ln(vocab) = {math.log(a.vocab):.3f})")


if __name__ == "__main__":
    main()
