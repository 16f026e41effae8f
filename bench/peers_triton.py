"""Peer kernels written in Triton (our own code, in the usual Triton style) and their offline
compile for an AMD target with no GPU: `triton.compile(ASTSource(...), target=GPUTarget("hip",
arch, 32))` returns the code object (asm["hsaco"]) and the ISA text (asm["amdgcn"]).

    gemm_kernel       C[M,N] (f32 / i32) = A[M,K] @ B[K,N], row-major, tiles BM x BN x BK,
                      grouped program order (GROUP_M rows of tiles share B columns in L2):
                          for k in range(0, K, BK): acc += tl.dot(A tile, B tile)
                      layouts as wmma_gen names them: A stored K x M when TRANS_A ('T' first),
                      B stored N x K when TRANS_B ('T' second); tl.dot transposes in registers
    attention_kernel  FA-2 forward, Q K V O [B, H, S, D] contiguous, LSE [B*H, S] (f32, base e):
                          per query block: for each key block:
                              s = q k^T * scale*log2(e); m_new = max(m, rowmax(s)); p = exp2(s - m_new)
                              alpha = exp2(m - m_new); l = l*alpha + rowsum(p); acc = acc*alpha + p v
                          O = acc / l, LSE = (m + log2(l)) * ln(2)
    FA-2 backward (FlashAttention-2 paper, Algorithm 2, split in three launches, no atomics):
      bwd_preprocess  delta[row] = rowsum(dO * O)
      bwd_dkdv_kernel per key block (k, v): for each query block (causal: from the key block on):
                          p^T = exp2(k q^T * scale*log2(e) - LSE*log2(e));  dV += p^T dO
                          dp^T = v dO^T;  ds^T = p^T * (dp^T - delta);      dK += ds^T q
                      dK *= scale
      bwd_dq_kernel   per query block: for each key block (causal: up to the query block):
                          p = exp2(q k^T * scale*log2(e) - LSE*log2(e)); dp = dO v^T
                          ds = p * (dp - delta); dQ += ds k
                      dQ *= scale

Sizes are kernel arguments; the compile hints every pointer and every size/stride argument as a
multiple of 16 (as Triton's JIT does for such values), so a compiled object serves problems whose
sizes are multiples of the tiles. Import needs triton (the `peers` extra).
"""
from __future__ import annotations

import math
import time

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr, INT: tl.constexpr,
                TRANS_A: tl.constexpr = False, TRANS_B: tl.constexpr = False):
    pid = tl.program_id(0)
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = tl.minimum(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % rows_in_group
    tile_n = (pid % per_group) // rows_in_group
    rm = tile_m * BM + tl.arange(0, BM)
    rn = tile_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    # stride_am / stride_bk: the row stride of A / B as stored (K or M for A, N or K for B)
    if TRANS_A:
        a_tile = a_ptr + rk[None, :] * stride_am + rm[:, None]
        a_step = BK * stride_am
    else:
        a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :]
        a_step = BK
    if TRANS_B:
        b_tile = b_ptr + rn[None, :] * stride_bk + rk[:, None]
        b_step = BK
    else:
        b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :]
        b_step = BK * stride_bk
    acc = tl.zeros((BM, BN), dtype=tl.int32 if INT else tl.float32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(a_tile), tl.load(b_tile))
        a_tile += a_step
        b_tile += b_step
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc)


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, S, qk_scale,
                     D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0) * BM
    head = tl.program_id(1).to(tl.int64)                 # batch * heads + h
    base = head * S * D
    rows = start_m + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    dd = tl.arange(0, D)
    q = tl.load(q_ptr + base + rows[:, None] * D + dd[None, :])
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    hi = tl.minimum(S, start_m + BM) if CAUSAL else S
    for start_n in range(0, hi, BN):
        keys = start_n + cols
        k = tl.load(k_ptr + base + keys[None, :] * D + dd[:, None])       # K^T tile [D, BN]
        s = tl.dot(q, k) * qk_scale                                        # scale * log2(e) folded
        if CAUSAL:
            s = tl.where(rows[:, None] >= keys[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + keys[:, None] * D + dd[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + rows[:, None] * D + dd[None, :], acc.to(o_ptr.dtype.element_ty))
    tl.store(lse_ptr + head * S + rows, (m_i + tl.math.log2(l_i)) * 0.6931471805599453)


@triton.jit
def bwd_preprocess(o_ptr, do_ptr, delta_ptr, D: tl.constexpr, BM: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)          # over all B*H*S rows
    dd = tl.arange(0, D)
    o = tl.load(o_ptr + rows[:, None] * D + dd[None, :]).to(tl.float32)
    do = tl.load(do_ptr + rows[:, None] * D + dd[None, :]).to(tl.float32)
    tl.store(delta_ptr + rows, tl.sum(o * do, 1))


@triton.jit
def bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, S, qk_scale,
                    D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr):
    start_n = tl.program_id(0) * BN
    head = tl.program_id(1).to(tl.int64)
    base = head * S * D
    keys = start_n + tl.arange(0, BN)
    dd = tl.arange(0, D)
    k = tl.load(k_ptr + base + keys[:, None] * D + dd[None, :])
    v = tl.load(v_ptr + base + keys[:, None] * D + dd[None, :])
    dk = tl.zeros((BN, D), tl.float32)
    dv = tl.zeros((BN, D), tl.float32)
    lo = start_n // BM * BM if CAUSAL else 0
    for start_m in range(lo, S, BM):
        rows = start_m + tl.arange(0, BM)
        qT = tl.load(q_ptr + base + rows[None, :] * D + dd[:, None])                 # [D, BM]
        doT = tl.load(do_ptr + base + rows[None, :] * D + dd[:, None])               # [D, BM]
        lse2 = tl.load(lse_ptr + head * S + rows) * 1.4426950408889634
        delta = tl.load(delta_ptr + head * S + rows)
        pT = tl.math.exp2(tl.dot(k, qT) * qk_scale - lse2[None, :])                  # [BN, BM]
        if CAUSAL:
            pT = tl.where(keys[:, None] <= rows[None, :], pT, 0.0)
        dv += tl.dot(pT.to(v.dtype), tl.load(do_ptr + base + rows[:, None] * D + dd[None, :]))   # dO [BM, D]
        dsT = pT * (tl.dot(v, doT) - delta[None, :])
        dk += tl.dot(dsT.to(k.dtype), tl.load(q_ptr + base + rows[:, None] * D + dd[None, :]))    # Q [BM, D]
    dk = dk * (qk_scale * 0.6931471805599453)                                         # = softmax scale
    tl.store(dk_ptr + base + keys[:, None] * D + dd[None, :], dk.to(dk_ptr.dtype.element_ty))
    tl.store(dv_ptr + base + keys[:, None] * D + dd[None, :], dv.to(dv_ptr.dtype.element_ty))


@triton.jit
def bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, S, qk_scale,
                  D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0) * BM
    head = tl.program_id(1).to(tl.int64)
    base = head * S * D
    rows = start_m + tl.arange(0, BM)
    dd = tl.arange(0, D)
    q = tl.load(q_ptr + base + rows[:, None] * D + dd[None, :])
    do = tl.load(do_ptr + base + rows[:, None] * D + dd[None, :])
    lse2 = tl.load(lse_ptr + head * S + rows) * 1.4426950408889634
    delta = tl.load(delta_ptr + head * S + rows)
    dq = tl.zeros((BM, D), tl.float32)
    hi = tl.minimum(S, start_m + BM) if CAUSAL else S
    for start_n in range(0, hi, BN):
        keys = start_n + tl.arange(0, BN)
        kT = tl.load(k_ptr + base + keys[None, :] * D + dd[:, None])                 # [D, BN]
        vT = tl.load(v_ptr + base + keys[None, :] * D + dd[:, None])                 # [D, BN]
        p = tl.math.exp2(tl.dot(q, kT) * qk_scale - lse2[:, None])                   # [BM, BN]
        if CAUSAL:
            p = tl.where(rows[:, None] >= keys[None, :], p, 0.0)
        ds = p * (tl.dot(do, vT) - delta[:, None])
        dq += tl.dot(ds.to(q.dtype), tl.load(k_ptr + base + keys[:, None] * D + dd[None, :]))     # K [BN, D]
    dq = dq * (qk_scale * 0.6931471805599453)
    tl.store(dq_ptr + base + rows[:, None] * D + dd[None, :], dq.to(dq_ptr.dtype.element_ty))


_PTR = {"f16": "*fp16", "bf16": "*bf16", "i8": "*i8", "f32": "*fp32", "i32": "*i32"}
GEMM_ARGS = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
ATTN_ARGS = ("q_ptr", "k_ptr", "v_ptr", "o_ptr", "lse_ptr", "S", "qk_scale")


def _hints(names, skip=()) -> dict:
    """tt.divisibility 16 on every pointer and size argument (what the JIT infers for such values)."""
    return {(i,): [["tt.divisibility", 16]] for i, n in enumerate(names) if n not in skip}


def compile_gemm(arch: str, dtype: str, *, bm=128, bn=128, bk=32, group_m=8, num_warps=8, num_stages=2,
                 layout="NN"):
    """(CompiledKernel, compile seconds) of gemm_kernel for `arch` (cold: Triton's cache is bypassed
    by the caller setting TRITON_CACHE_DIR to a fresh directory). `layout`: NN, NT, TN or TT."""
    if layout not in ("NN", "NT", "TN", "TT"):
        raise ValueError(f"layout={layout!r}: one of NN, NT, TN, TT")
    acc = "i32" if dtype == "i8" else "f32"
    sig = dict(zip(GEMM_ARGS, (_PTR[dtype], _PTR[dtype], _PTR[acc]) + ("i32",) * 6))
    cx = dict(BM=bm, BN=bn, BK=bk, GROUP_M=group_m, INT=dtype == "i8",
              TRANS_A=layout[0] == "T", TRANS_B=layout[1] == "T")
    sig.update({k: "constexpr" for k in cx})
    src = ASTSource(gemm_kernel, sig, constexprs=cx, attrs=_hints(GEMM_ARGS))
    return _compile(src, arch, num_warps, num_stages)


def compile_attention(arch: str, dtype: str, head_dim: int, *, causal=False, bm=64, bn=64, num_warps=4,
                      num_stages=1):
    sig = dict(zip(ATTN_ARGS, (_PTR[dtype],) * 4 + ("*fp32", "i32", "fp32")))
    sig.update(D="constexpr", BM="constexpr", BN="constexpr", CAUSAL="constexpr")
    src = ASTSource(attention_kernel, sig, constexprs=dict(D=head_dim, BM=bm, BN=bn, CAUSAL=bool(causal)),
                    attrs=_hints(ATTN_ARGS, skip=("qk_scale",)))
    return _compile(src, arch, num_warps, num_stages)


PRE_ARGS = ("o_ptr", "do_ptr", "delta_ptr")
DKDV_ARGS = ("q_ptr", "k_ptr", "v_ptr", "do_ptr", "lse_ptr", "delta_ptr", "dk_ptr", "dv_ptr", "S", "qk_scale")
DQ_ARGS = ("q_ptr", "k_ptr", "v_ptr", "do_ptr", "lse_ptr", "delta_ptr", "dq_ptr", "S", "qk_scale")


def compile_attention_bwd(arch: str, dtype: str, head_dim: int, *, causal=False, bm=64, bn=64, num_warps=4,
                          num_stages=1) -> tuple[dict, float]:
    """({"pre", "dkdv", "dq"}: CompiledKernel, total compile seconds) of the FA-2 backward. LSE and delta
    are f32 [B*H, S]; dQ, dK, dV are written in the input dtype. The preprocess takes BM rows per program."""
    t, out = _PTR[dtype], {}
    pre = ASTSource(bwd_preprocess, dict(zip(PRE_ARGS, (t, t, "*fp32")), D="constexpr", BM="constexpr"),
                    constexprs=dict(D=head_dim, BM=bm), attrs=_hints(PRE_ARGS))
    sig_kv = dict(zip(DKDV_ARGS, (t,) * 4 + ("*fp32",) * 2 + (t, t, "i32", "fp32")))
    sig_q = dict(zip(DQ_ARGS, (t,) * 4 + ("*fp32",) * 2 + (t, "i32", "fp32")))
    cx = dict(D=head_dim, BM=bm, BN=bn, CAUSAL=bool(causal))
    for sig in (sig_kv, sig_q):
        sig.update({k: "constexpr" for k in cx})
    srcs = dict(pre=pre, dkdv=ASTSource(bwd_dkdv_kernel, sig_kv, constexprs=cx, attrs=_hints(DKDV_ARGS, skip=("qk_scale",))),
                dq=ASTSource(bwd_dq_kernel, sig_q, constexprs=cx, attrs=_hints(DQ_ARGS, skip=("qk_scale",))))
    total = 0.0
    for name, src in srcs.items():
        out[name], sec = _compile(src, arch, num_warps, num_stages)
        total += sec
    return out, total


def _compile(src, arch: str, num_warps: int, num_stages: int):
    t0 = time.perf_counter()
    ck = triton.compile(src, target=GPUTarget("hip", arch, 32), options={"num_warps": num_warps,
                                                                          "num_stages": num_stages})
    return ck, time.perf_counter() - t0


def qk_scale(head_dim: int) -> float:
    """softmax scale 1/sqrt(D) with log2(e) folded in (the kernel uses exp2)."""
    return 1.0 / math.sqrt(head_dim) * 1.4426950408889634


def version() -> str:
    return triton.__version__
