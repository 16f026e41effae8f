"""The peers' own kernels behind three out-of-band calibration points (issue 38 item 4), counted
here so bench/calibration_misses.py can print the numbers its explanations rest on.

    fa-1151-bwd              AITER's Triton FA backward (aiter/ops/triton/_triton_kernels/
                             flash_attn_triton_amd/bwd.py, `bwd_kernel_fused_noncausal`) with the
                             gfx1151 config of ROCm/aiter PR #4242 -- the tuned kernel that PR measured --
                             compiled here by Triton for gfx1151 (compiler output) and its two loops
                             counted; then the model's VALU-pipe term of those loops (model/loop_kernel.py:
                             v_wmma x wmma_cycles + VALU + 3 x transcendental, one clock each) over the
                             problem at efficiency 1: the most those loops can issue at a given clock
    fa-1201-ck*              Composable Kernel's gfx12 FMHA forward instance (tile from its codegen table;
                             no HIP compiler here): counts derived from the tile, stated how
    lib-1201-hipblaslt-8192  hipBLASLt's gfx1201 HHS solution MT128x128x32 (its Tensile logic YAML):
                             counts derived from the solution's parameters

The AITER source is read at run time, never copied into this repository: set WMMA_GEN_AITER_SRC to a
checkout of ROCm/aiter or to its bare git directory (e.g. a `git clone --bare`); without it, or without
Triton, `aiter_bwd` says why and returns None.
"""
from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

AITER_FILES = ("bwd", "utils", "common")
AITER_DIR = "aiter/ops/triton/_triton_kernels/flash_attn_triton_amd"
# ROCm/aiter PR #4242 ("[gfx1151] [triton-fa]: tune FlashAttention backward configs", 2026-07-14): non-causal
# backward on gfx1151 = 16x64 / 64x16 tiles, 4 warps, 2 stages, waves_per_eu 1; measured (median of 3, Radeon
# 8060S) B1/H16/S16384/D64 fp16 non-causal 9.585 -> 20.812 TFLOP/s. The baseline is the RDNA default of the
# stored bwd.py (32x32 tiles, 4 warps, 1 stage). BLK_SLICE_FACTOR: the PR text does not name it; 2 (every
# RDNA config of bwd.py) is assumed -- the fused non-causal kernel declares it and never reads it.
AITER_BWD = {"tuned": (dict(BLOCK_M1=16, BLOCK_N1=64, BLOCK_M2=64, BLOCK_N2=16, BLK_SLICE_FACTOR=2), 4, 2, 1, 20.812),
             "baseline": (dict(BLOCK_M1=32, BLOCK_N1=32, BLOCK_M2=32, BLOCK_N2=32, BLK_SLICE_FACTOR=2), 4, 1, 0, 9.585)}
AITER_PROBLEM = dict(batch=1, heads=16, seq=16384, head_dim=64)

# CK tile FMHA forward, gfx12 fp16/bf16 d128 instance when rocm-libraries PR #5455 benchmarked
# tile_example_fmha_fwd (2026-03-17): projects/composablekernel/example/ck_tile/01_fmha/codegen/ops/fmha_fwd.py,
# KernelComponentFactoryGfx12: FmhaFwdTileSize(bm0 64, bn0 64, bk0 32, bn1 128, bk1 32, bk0max 128, 4x1x1
# warps, WMMA 16x16x16), pipeline "qr" (Q in VGPRs, K and V staged through LDS). PR #5798 (2026-03-25) added
# the 128x64 8-warp tile for seq > 8k only and measured the earlier tile as its baseline; PR #5088 (2026-03-04)
# kept gfx12 unchanged.
CK_TILE = dict(bm0=64, bn0=64, bn1=128, d=128, waves=4, elem_bytes=2)
# hipBLASLt, projects/hipblaslt/library/src/amd_detail/rocblaslt/src/Tensile/Logic/asm_full/gfx1201/GridBased/
# gfx1201_Cijk_Ailk_Bljk_HHS_BH_Bias_S_HA_S_SAV_UserArgs.yaml (rocm-libraries eb27b31), the solution
# MT128x128x32_MI16x16x1 ... MIWT4_4 ... WG32_4_1. Issue #10861's trace for torch.mm f16 names
# Cijk_Ailk_Bljk_HHS_BH_Bias_HA_S_SAV_UserArgs_MT128x128x32_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1 ...
# MIWT4_4 ... WG32_4_1: the tile part matches, the problem-type part is spelled differently (another
# logic file or version; not resolved here).
HIPBLASLT = dict(MacroTile0=128, MacroTile1=128, DepthU=32, MIWaveGroup=(2, 2), MIWaveTile=(4, 4),
                 MatrixInstK=16, NumLoadsA=4, NumLoadsB=8, GlobalReadVectorWidthA=8, GlobalReadVectorWidthB=4,
                 LocalReadVectorWidth=8, PrefetchGlobalRead=2, PrefetchLocalRead=0, LdsNumBytes=51200,
                 LdsPadB=16, TransposeLDS=1)


# --- derived counts (published configs; no compiler) ---------------------------------------------------
def ck_counts(t: dict = CK_TILE) -> dict:
    """Per wave per key tile (bn0 keys) of CK's qr pipeline on gfx12, from its tile: each wave owns
    bm0/waves query rows; S = Q K^T is (rows/16) x (bn0/16) tiles x d/16 k-steps, O += P V is (rows/16) x
    (bn1/16) tiles x bn0/16 k-steps; every wave reads all of K and V from LDS (one 16x16 f16 B fragment =
    one ds_read_b128 per lane on gfx12), the workgroup stores K and V once (b128 per lane, split over waves)."""
    rows = t["bm0"] // t["waves"]
    wmma = (rows // 16) * (t["bn0"] // 16) * (t["d"] // 16) + (rows // 16) * (t["bn1"] // 16) * (t["bn0"] // 16)
    kv_bytes = t["bn0"] * (t["d"] + t["bn1"]) * t["elem_bytes"]
    b128 = 32 * 16                                          # bytes one wave moves per b128 instruction
    return dict(wmma=wmma, ds_read_b128=kv_bytes // b128, ds_write_b128=kv_bytes // b128 // t["waves"],
                global_load_b128=kv_bytes // b128 // t["waves"], rows_per_wave=rows)


def hipblaslt_counts(s: dict = HIPBLASLT) -> dict:
    """Per wave per DepthU iteration of the Tensile solution: MIWaveTile fragments x DepthU/MatrixInstK
    k-steps of v_wmma; NumLoads global loads of GlobalReadVectorWidth halves each (8 -> b128, 4 -> b64) and as
    many LDS stores; A and B fragments read from LDS at LocalReadVectorWidth 8 halves (one ds_read_b128 per
    16x16 fragment per k-step)."""
    steps = s["DepthU"] // s["MatrixInstK"]
    wa, wb = s["MIWaveTile"]
    return dict(wmma=wa * wb * steps, global_loads=s["NumLoadsA"] + s["NumLoadsB"],
                global_load_bits={16 * s["GlobalReadVectorWidthA"]: s["NumLoadsA"],
                                  16 * s["GlobalReadVectorWidthB"]: s["NumLoadsB"]},
                ds_write=s["NumLoadsA"] + s["NumLoadsB"], ds_read_b128=(wa + wb) * steps,
                waves=s["MIWaveGroup"][0] * s["MIWaveGroup"][1])


# --- AITER's Triton backward, compiled here ----------------------------------------------------------
def _aiter_text(src: Path, name: str) -> str:
    f = src / AITER_DIR / f"{name}.py"
    if f.is_file():
        return f.read_text()
    return subprocess.run(["git", f"--git-dir={src}", "show", f"HEAD:{AITER_DIR}/{name}.py"],
                          check=True, capture_output=True, text=True).stdout


@contextlib.contextmanager
def _aiter_module(src: Path):
    """bwd.py as an importable module (its package's utils/common beside it) with triton.autotune
    replaced by the identity for the import: the module builds its autotune lists at import time from the
    GPU it runs on, and only the @triton.jit functions are wanted here."""
    import triton
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp) / "aiter_fa_bwd"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        for n in AITER_FILES:
            (pkg / f"{n}.py").write_text(_aiter_text(src, n))
        saved, triton.autotune = triton.autotune, (lambda *a, **k: (lambda f: f))
        sys.path.insert(0, tmp)
        try:
            import aiter_fa_bwd.bwd as bwd
            yield bwd
        finally:
            triton.autotune = saved
            sys.path.remove(tmp)
            for m in [m for m in sys.modules if m.startswith("aiter_fa_bwd")]:
                del sys.modules[m]


_NONE_ARGS = {"cu_seqlens_q", "cu_seqlens_k", "seqused_q", "seqused_k", "Dropout_mask", "Alibi_slopes",
              "Descale_q", "Descale_k", "Descale_v"}


def _compile_fused_noncausal(fn, arch: str, dtype: str, cfg: dict, num_warps: int, num_stages: int,
                             waves_per_eu: int, heads: int, head_dim: int):
    """The launch of attention_backward_triton_impl(mode="fused", causal=False) for dense BSHD f16/bf16
    without dropout, alibi, fp8 or sliding window, as ASTSource: pointers and strides divisible by 16,
    the innermost strides 1 (the JIT specialises such ints), None arguments constexpr."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    import triton
    t = {"f16": "*fp16", "bf16": "*bf16"}[dtype]
    ptr = {**{n: t for n in ("Q", "K", "V", "DO", "DQ", "DK", "DV")}, "M": "*fp32", "Delta": "*fp32"}
    cx = dict(cfg, HQ=heads, HK=heads, HEAD_DIM_QK=head_dim, HEAD_DIM_V=head_dim, ACTUAL_HEAD_DIM_QK=head_dim,
              ACTUAL_HEAD_DIM_V=head_dim, ENABLE_DROPOUT=False, IS_VARLEN=False, USE_ALIBI=False, USE_EXP2=True,
              IS_FP8=False, FP8_MAX=448.0, USE_SEQUSED=False, USE_SLIDING_WINDOW=False, WINDOW_SIZE_LEFT=-1,
              WINDOW_SIZE_RIGHT=-1, DEBUG_TRITON=False, DEBUG_TRITON_DETAIL=False, NUM_XCD=1)
    sig, attrs = {}, {}
    for i, p in enumerate(fn.params):
        n = p.name
        if p.is_constexpr:
            sig[n] = "constexpr"
        elif n in _NONE_ARGS:
            sig[n], cx[n] = "constexpr", None
        elif n in ptr:
            sig[n], attrs[(i,)] = ptr[n], [["tt.divisibility", 16]]
        elif n in ("sm_scale", "dropout_p"):
            sig[n] = "fp32"
        elif re.fullmatch(r"stride_(q|k|v|dq|dk|dv|do)d", n):
            sig[n], cx[n] = "constexpr", 1
        else:
            sig[n] = "i32"
            if n.startswith(("stride_", "max_seqlen")):
                attrs[(i,)] = [["tt.divisibility", 16]]
    return triton.compile(ASTSource(fn, sig, constexprs=cx, attrs=attrs), target=GPUTarget("hip", arch, 32),
                          options={"num_warps": num_warps, "num_stages": num_stages, "waves_per_eu": waves_per_eu})


def loops(isa: str) -> list[dict]:
    """Every loop with v_wmma, in program order (one entry per loop head: its shortest back-edge):
    v_wmma, issued instructions, VALU, transcendental, scratch loads -- as model/isa_loop.py classifies."""
    from wmma_gen.model.isa_loop import _LABEL, classify, kernel_lines
    trans = re.compile(r"^\s*v_(exp|log|rcp|rsq|sqrt|sin|cos)_")
    lines = kernel_lines(isa)
    ops = [classify(t) for t in lines]
    labels = {m.group(1): i for i, t in enumerate(lines) if (m := _LABEL.match(t))}
    out: dict[int, dict] = {}
    for i, op in enumerate(ops):
        if op is None or op.kind != "branch":
            continue
        j = labels.get(lines[i].split(";", 1)[0].split()[-1])
        if j is None or j > i or j in out:
            continue
        body = [o for o in ops[j + 1:i + 1] if o is not None]
        n = sum(o.kind == "wmma" for o in body)
        if n:
            out[j] = dict(wmma=n, issued=sum(o.kind != "hint" for o in body),
                          valu=sum(o.kind == "valu" for o in body),
                          trans=sum(1 for x in lines[j + 1:i + 1] if trans.match(x)),
                          scratch=sum(o.kind == "scratch_load" for o in body))
    return [out[j] for j in sorted(out)]


def pipe_clocks(loop: dict, arch: str, dtype: str) -> float:
    """model/loop_kernel.py's VALU-pipe clocks of one wave's trip."""
    from wmma_gen.model.params import params_for, wmma_cycles
    from wmma_gen.targets import get_target
    p = params_for(arch)
    return loop["wmma"] * wmma_cycles(get_target(arch), dtype, "f32") + (loop["valu"] + 3 * loop["trans"]) * p.valu_clk


# Compiler output recorded here so the calibration needs neither the AITER source nor Triton (CI has no
# network): the two WMMA loops of `bwd_kernel_fused_noncausal` (ROCm/aiter e4048607a5, bwd.py) with PR #4242's
# tuned config, compiled by Triton 3.9.0 for gfx1151 f16 (`loops`: v_wmma, VALU, transcendental per trip).
# `aiter_bwd` compiles it again when WMMA_GEN_AITER_SRC is set and says whether the counts still match.
AITER_BWD_RECORDED = {"arch": "gfx1151", "dtype": "f16", "triton": "3.9.0", "aiter": "e4048607a5",
                      "dkdv": dict(wmma=16, valu=265, trans=8), "dq": dict(wmma=12, valu=139, trans=8)}
AITER_BWD_POINT = "fa-1151-bwd"


def bwd_tflops_per_ghz(dkdv: dict, dq: dict, cfg: dict, warps: int, arch: str, dtype: str) -> float:
    """TFLOP/s per GHz the two loops can issue at efficiency 1 with no stall (model/loop_kernel.py's VALU-pipe
    term) at the PR #4242 problem, FLOPs counted as AITER's bench_mha does (10 x D per (query, key) pair: 2.5 x
    the forward's 4 x D). Grid (heads, seq / BLOCK_N1); each program runs seq / BLOCK_M1 dK/dV trips and seq /
    BLOCK_N2 dQ trips, its `warps` waves spread evenly over the SIMDs."""
    from wmma_gen.targets import get_target
    t, q = get_target(arch), AITER_PROBLEM
    s, d, h = q["seq"], q["head_dim"], q["heads"]
    flops = 10 * d * q["batch"] * h * s * s
    wave_clocks = s // cfg["BLOCK_M1"] * pipe_clocks(dkdv, arch, dtype) + s // cfg["BLOCK_N2"] * pipe_clocks(dq, arch, dtype)
    simd_clocks = q["batch"] * h * (s // cfg["BLOCK_N1"]) * warps * wave_clocks / (t.cus * t.simds_per_cu)
    return flops / simd_clocks / 1e3


def recorded_floor() -> tuple[str, str, float, str]:
    """(point id, arch, TFLOP/s per GHz at efficiency 1, how) of the recorded tuned AITER backward: the
    published figure over it is the clock its loops need (a clock floor, model/calibration.fit)."""
    r = AITER_BWD_RECORDED
    cfg, warps = AITER_BWD["tuned"][0], AITER_BWD["tuned"][1]
    per_ghz = bwd_tflops_per_ghz(r["dkdv"], r["dq"], cfg, warps, r["arch"], r["dtype"])
    how = (f"AITER's fused backward (PR #4242 tuned config) compiled by Triton {r['triton']}: dK/dV loop "
           f"{r['dkdv']['wmma']} v_wmma + {r['dkdv']['valu']} VALU ({r['dkdv']['trans']} transcendental), dQ loop "
           f"{r['dq']['wmma']} + {r['dq']['valu']} ({r['dq']['trans']}) per trip")
    return AITER_BWD_POINT, r["arch"], per_ghz, how


def aiter_bwd(arch: str = "gfx1151", dtype: str = "f16") -> dict | None:
    """{config: figures} of AITER's fused non-causal backward at the PR #4242 problem, or None (why printed).
    bound_tflops[GHz]: bwd_tflops_per_ghz x that clock -- the most those loops can issue at that clock;
    `recorded` (tuned config at the recorded arch/dtype): whether the counts equal AITER_BWD_RECORDED."""
    src = os.environ.get("WMMA_GEN_AITER_SRC")
    if not src or not Path(src).exists():
        print("calibration_peer_kernels: WMMA_GEN_AITER_SRC (a ROCm/aiter checkout or bare git dir) not set: "
              "AITER's backward not compiled", file=sys.stderr)
        return None
    try:
        import triton  # noqa: F401
    except ImportError:
        print("calibration_peer_kernels: no triton: AITER's backward not compiled", file=sys.stderr)
        return None
    from wmma_gen.compiler.metadata import parse_isa_metadata
    from wmma_gen.model import calibration as C
    from wmma_gen.targets import get_target
    t, q = get_target(arch), AITER_PROBLEM
    out = {}
    with _aiter_module(Path(src)) as bwd:
        for name, (cfg, warps, stages, wpe, published) in AITER_BWD.items():
            ck = _compile_fused_noncausal(bwd.bwd_kernel_fused_noncausal, arch, dtype, cfg, warps, stages, wpe,
                                          q["heads"], q["head_dim"])
            isa = ck.asm["amdgcn"]
            md = parse_isa_metadata(isa)
            dkdv, dq = loops(isa)[:2]
            per_ghz = bwd_tflops_per_ghz(dkdv, dq, cfg, warps, arch, dtype)
            clocks = {"sustained": C.factors(t, "loop").clock_ghz, "boost": t.boost_ghz}
            keys = ("wmma", "valu", "trans")
            rec = AITER_BWD_RECORDED
            recorded = (None if name != "tuned" or (arch, dtype) != (rec["arch"], rec["dtype"]) else
                        all({k: L[k] for k in keys} == rec[n] for n, L in (("dkdv", dkdv), ("dq", dq))))
            out[name] = dict(config=cfg, num_warps=warps, num_stages=stages, waves_per_eu=wpe, published=published,
                             vgprs=md.vgpr_count, spills=md.vgpr_spill_count + md.sgpr_spill_count, dkdv=dkdv, dq=dq,
                             bound_tflops={k: per_ghz * g for k, g in clocks.items()}, clocks=clocks,
                             clock_needed=published / per_ghz, recorded=recorded)
    return out
