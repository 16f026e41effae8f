"""A transformer block on wmma_gen.torch ops (attention on views of one packed QKV projection
+ GELU MLP), shared by the torch.compile tests and the tiny GPT example's shape."""
import torch
from torch import nn

from wmma_gen.torch import flash_attn_func, linear


class Block(nn.Module):
    def __init__(self, d_model=64, heads=2, kv_heads=1, head_dim=32, dtype=torch.float16):
        super().__init__()
        self.h, self.hkv, self.hd = heads, kv_heads, head_dim
        self.qkv = nn.Linear(d_model, (heads + 2 * kv_heads) * head_dim, dtype=dtype)
        self.proj = nn.Linear(heads * head_dim, d_model, dtype=dtype)
        self.up = nn.Linear(d_model, 4 * d_model, dtype=dtype)
        self.down = nn.Linear(4 * d_model, d_model, dtype=dtype)

    def forward(self, x):
        b, s, _ = x.shape
        qkv = linear(x, self.qkv.weight, self.qkv.bias)
        q, k, v = qkv.split([self.h * self.hd, self.hkv * self.hd, self.hkv * self.hd], dim=-1)
        a = flash_attn_func(q.view(b, s, self.h, self.hd), k.view(b, s, self.hkv, self.hd),
                            v.view(b, s, self.hkv, self.hd), causal=True)       # strided views, no copy
        x = x + linear(a.reshape(b, s, -1), self.proj.weight, self.proj.bias)
        return x + linear(linear(x, self.up.weight, self.up.bias, activation="gelu"), self.down.weight,
                          self.down.bias)
