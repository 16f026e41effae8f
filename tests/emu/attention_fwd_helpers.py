"""Run the flash-attention forward kernel on the emulator and compare with the float64
reference (wmma_gen/attention_common/reference.py).

Tolerances (absolute, per output element), with u = unit roundoff of the input dtype
(f16 2**-11, bf16 2**-8):
  O:   the kernel rounds P to the input dtype before the second WMMA (relative error <= u per
       term) and rounds O once to the output dtype (<= u |O|); the f32 accumulation of S and
       O adds ~D * 2**-24 relative, negligible next to u. With the reference's weights summing
       to 1, |O_kernel - O_ref| <= u * max|V| + u * |O| + f32 terms <= 2u * max|V| (+ margin
       for the exp2/scale rounding of P, ~1e-6 relative): tol_O = 3u * max|V|.
  LSE: computed in f32 from f32 scores of exactly-representable inputs: tol = 1e-5 * (1 + |LSE|)
       (|S| ~ sqrt(D) * scale terms, v_exp/v_log within 1 ulp).
Rows that see no key must give O = 0 and LSE = -inf exactly.
"""
from __future__ import annotations

import numpy as np

from wmma_gen import numerics
from wmma_gen.compiler import compile_mlir
from wmma_gen.device.emu import EmuDevice
from wmma_gen.device.launcher import launch
from wmma_gen.ops.attention.combine import build_attention_combine
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.kernel import build_attention
from wmma_gen.attention_common.reference import attention_forward
from wmma_gen.ops.attention.schedule import AttentionSchedule
from wmma_gen.targets import get_target

UNIT = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}


def rounded(rng, shape, dtype):
    """(storage array, float64 values) of standard-normal data rounded to dtype."""
    x = rng.standard_normal(shape).astype(np.float32)
    if dtype == "f16":
        h = x.astype(np.float16)
        return h, h.astype(np.float64)
    bits = numerics.f32_to_bf16_bits(x)
    return bits, numerics.bf16_bits_to_f32(bits).astype(np.float64)


def as_f64(x, dtype):
    return x.astype(np.float64) if dtype == "f16" else numerics.bf16_bits_to_f32(x).astype(np.float64)


def make_inputs(rng, dtype, D, batch, heads, kv_heads, seq_q, seq_k, layout="bshd", lens=None):
    """Q, K, V storage arrays and float64 copies; `lens` = [(sq_b, sk_b)] makes varlen."""
    if lens is not None:
        tq, tk = sum(a for a, _ in lens), sum(b for _, b in lens)
        shapes = [(tq, heads, D), (tk, kv_heads, D), (tk, kv_heads, D)]
    elif layout == "bhsd":
        shapes = [(batch, heads, seq_q, D), (batch, kv_heads, seq_k, D), (batch, kv_heads, seq_k, D)]
    else:
        shapes = [(batch, seq_q, heads, D), (batch, seq_k, kv_heads, D), (batch, seq_k, kv_heads, D)]
    return [rounded(rng, sh, dtype) for sh in shapes]


def run(arch, d: AttentionDirective, s: AttentionSchedule, *, batch=1, heads=2, kv_heads=1, seq_q=40, seq_k=72,
        lens=None, window=None, scale=None, seed=0, views=None):
    """Launch on the emulator; returns (O float64, LSE or None, reference O, reference LSE,
    max|V|). `views` optionally maps the storage arrays before the launch (strided views)."""
    rng = np.random.default_rng(seed)
    (q, qf), (k, kf), (v, vf) = make_inputs(rng, d.dtype, d.head_dim, batch, heads, kv_heads, seq_q, seq_k,
                                            d.layout, lens)
    src = build_attention(d, s, get_target(arch))
    ck = compile_mlir(src.mlir, arch)
    prob = dict(batch=batch, heads=heads, kv_heads=kv_heads, seq_q=seq_q, seq_k=seq_k, scale=scale)
    arrays = {"Q": q, "K": k, "V": v}
    cu_q = cu_k = None
    if lens is not None:
        cu_q = np.concatenate([[0], np.cumsum([a for a, _ in lens])]).astype(np.int32)
        cu_k = np.concatenate([[0], np.cumsum([b for _, b in lens])]).astype(np.int32)
        prob.update(batch=len(lens), total_q=int(cu_q[-1]), total_k=int(cu_k[-1]),
                    seq_q=max(1, max(a for a, _ in lens)), seq_k=max(1, max(b for _, b in lens)))
        arrays.update(cu_seqlens_q=cu_q, cu_seqlens_k=cu_k)
    if window is not None:
        prob.update(window_left=window[0], window_right=window[1])
    if views is not None:
        arrays = views(arrays)
    out, _ = launch(ck, src.signature, prob, EmuDevice(), arrays)
    if s.split_kv > 1:  # second kernel: merge the partial results (host round trip in tests)
        comb = build_attention_combine(d, s, get_target(arch))
        out, _ = launch(compile_mlir(comb.mlir, arch), comb.signature, prob, EmuDevice(),
                        {"O_part": out["O_part"], "LSE_part": out["LSE_part"]})
    ro, rl = attention_forward(qf, kf, vf, scale=scale, causal=d.causal, window=window, cu_seqlens_q=cu_q,
                               cu_seqlens_k=cu_k, layout=d.layout)
    return as_f64(out["O"], d.dtype), out.get("LSE"), ro, rl, np.abs(vf).max(initial=0.0)


def check(arch, d, s, **kw):
    o, lse, ro, rl, vmax = run(arch, d, s, **kw)
    assert not np.isnan(o).any(), "NaN in O"
    tol = 3 * UNIT[d.dtype] * max(vmax, 1.0)
    err = np.abs(o - ro).max(initial=0.0)
    assert err <= tol, f"O max error {err} > {tol}"
    if d.return_lse:
        fin = np.isfinite(rl)
        assert np.array_equal(np.isneginf(lse), ~fin), "LSE -inf rows differ"
        lerr = np.abs(lse[fin] - rl[fin]) / (1 + np.abs(rl[fin]))
        assert lerr.max(initial=0.0) <= 1e-5, f"LSE relative error {lerr.max()}"
        dead = np.broadcast_to(_rows_like_o(~fin, d)[..., None], o.shape)
        assert np.all(o[dead] == 0), "rows that see no key must be exactly 0"
    return o, lse


def _rows_like_o(x, d):
    """A per-(query, head) array in LSE layout brought to O's row layout."""
    if d.varlen:
        return x.T                       # (H, total) -> (total, H)
    return x if d.layout == "bhsd" else x.transpose(0, 2, 1)
