"""The peers' own kernels behind the out-of-band calibration points (issue 38 item 4), counted so
bench/calibration_misses.py can print the numbers its explanations rest on.

    fa-1100-tut-*            Triton's fused-attention tutorial 06 (`_attn_fwd`, `_attn_bwd`) at every config
                             its HIP autotune list holds, compiled by Triton 3.9 for gfx1100 f16 d64 and its
                             WMMA loops counted (TUT06_*: recorded compiler output and model estimates)
    fa-1151-bwd              AITER's Triton FA backward (aiter/ops/triton/_triton_kernels/
                             flash_attn_triton_amd/bwd.py, `bwd_kernel_fused_noncausal`) with the
                             gfx1151 config of ROCm/aiter PR #4242 -- the tuned kernel that PR measured --
                             compiled by Triton for gfx1151 and its two loops counted (AITER_BWD_RECORDED);
                             then the model's VALU-pipe term of those loops (model/loop_kernel.py:
                             v_wmma x wmma_cycles + VALU + 3 x transcendental, one clock each) over the
                             problem at efficiency 1: the most those loops can issue at a given clock
    fa-1201-ck*              Composable Kernel's gfx12 FMHA forward instance (tile from its codegen table;
                             no HIP compiler here): counts derived from the tile, stated how
    lib-1201-hipblaslt-8192  hipBLASLt's gfx1201 HHS solution MT128x128x32 (its Tensile logic YAML):
                             counts derived from the solution's parameters

Other projects' code never enters this repository, nor any script that would build it: the Triton and AITER
counts here are RECORDED compiler output (data with provenance), obtained outside this repository by compiling
the named public source with the installed Triton 3.9 offline (triton.compile(ASTSource, GPUTarget("hip", arch,
32)), as bench/peers_triton.py compiles our own Triton kernels) and counting the ISA with `loops` below
(model/isa_loop.py's classification).
"""
from __future__ import annotations


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


# --- counting an ISA (compiler output) ------------------------------------------------------------
def loops(isa: str) -> list[dict]:
    """Every loop with v_wmma, in program order (one entry per loop head: its shortest back-edge):
    v_wmma, issued instructions, VALU, transcendental, scratch loads -- as model/isa_loop.py classifies."""
    from wmma_gen.model.isa_loop import _LABEL, classify, count_transcendental, kernel_lines
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
                          trans=count_transcendental(body),
                          scratch=sum(o.kind == "scratch_load" for o in body))
    return [out[j] for j in sorted(out)]


def pipe_clocks(loop: dict, arch: str, dtype: str) -> float:
    """model/loop_kernel.py's VALU-pipe clocks of one wave's trip."""
    from wmma_gen.model.params import params_for, wmma_cycles
    from wmma_gen.targets import get_target
    p = params_for(arch)
    return loop["wmma"] * wmma_cycles(get_target(arch), dtype, "f32") + (loop["valu"] + 3 * loop["trans"]) * p.valu_clk


# Recorded compiler output (obtained outside this repository, see the module docstring): the two WMMA loops of
# `bwd_kernel_fused_noncausal` (ROCm/aiter e4048607a5, bwd.py) with PR #4242's tuned and baseline configs,
# compiled by Triton 3.9.0 for gfx1151 f16; per trip (`loops`): v_wmma, issued, VALU, transcendental, scratch
# loads; VGPRs and spills (VGPR + SGPR) from the code object's metadata.
AITER_BWD_RECORDED = {
    "arch": "gfx1151", "dtype": "f16", "triton": "3.9.0", "aiter": "e4048607a5",
    "tuned": dict(vgprs=256, spills=59, dkdv=dict(wmma=16, issued=575, valu=265, trans=8, scratch=28),
                  dq=dict(wmma=12, issued=228, valu=139, trans=8, scratch=0)),
    "baseline": dict(vgprs=256, spills=94, dkdv=dict(wmma=24, issued=991, valu=455, trans=16, scratch=61),
                     dq=dict(wmma=20, issued=419, valu=219, trans=16, scratch=0))}
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
    r, t = AITER_BWD_RECORDED, AITER_BWD_RECORDED["tuned"]
    cfg, warps = AITER_BWD["tuned"][0], AITER_BWD["tuned"][1]
    per_ghz = bwd_tflops_per_ghz(t["dkdv"], t["dq"], cfg, warps, r["arch"], r["dtype"])
    how = (f"AITER's fused backward (PR #4242 tuned config) compiled by Triton {r['triton']}: dK/dV loop "
           f"{t['dkdv']['wmma']} v_wmma + {t['dkdv']['valu']} VALU ({t['dkdv']['trans']} transcendental), dQ loop "
           f"{t['dq']['wmma']} + {t['dq']['valu']} ({t['dq']['trans']}) per trip")
    return AITER_BWD_POINT, r["arch"], per_ghz, how


def aiter_recorded() -> dict:
    """{config: figures} of AITER's fused non-causal backward at the PR #4242 problem from the recorded counts:
    bound_tflops[sustained|boost] = bwd_tflops_per_ghz x that clock (the most those loops can issue there),
    clock_needed = published / bwd_tflops_per_ghz."""
    from wmma_gen.model import calibration as C
    from wmma_gen.targets import get_target
    r = AITER_BWD_RECORDED
    t = get_target(r["arch"])
    clocks = {"sustained": C.factors(t, "loop").clock_ghz, "boost": t.boost_ghz}
    out = {}
    for name, (cfg, warps, stages, wpe, published) in AITER_BWD.items():
        rec = r[name]
        per_ghz = bwd_tflops_per_ghz(rec["dkdv"], rec["dq"], cfg, warps, r["arch"], r["dtype"])
        out[name] = dict(config=cfg, num_warps=warps, num_stages=stages, waves_per_eu=wpe, published=published,
                         vgprs=rec["vgprs"], spills=rec["spills"], dkdv=rec["dkdv"], dq=rec["dq"], clocks=clocks,
                         bound_tflops={k: per_ghz * g for k, g in clocks.items()}, clock_needed=published / per_ghz)
    return out


# --- Triton tutorial 06 (fa-1100-tut-*), recorded ------------------------------------------------------
# Recorded compiler output and model estimates (obtained outside this repository, see the module docstring).
# Source: triton-lang/triton python/tutorials/06-fused-attention.py at commit dc6ee3ed2cf9b2b436544d6153351f9bc679cc61
# (the commit date is not in the offline store; the file cites PR #5622 and uses tl._experimental_descriptor_load,
# i.e. the early-2025 form; the forward `_attn_fwd` in the STAGE form -- causal = an unmasked off-band loop, then
# an on-band masked loop -- is the same in the 2024 versions). Its HIP autotune list: BLOCK_M {64, 128} x BLOCK_N
# {32, 64} x num_warps {4, 8}, num_stages 1, and keep() drops num_warps 8 whenever BLOCK_M x BLOCK_N < 128 x 128,
# i.e. always here: the autotuner tries the four 4-warp configs (`tried`); the 8-warp ones are counted too. The
# forward launch adds waves_per_eu=3 (HEAD_DIM <= 64) and allow_flush_denorm. The backward is not autotuned:
# `_attn_bwd_preprocess` (BLOCK_M 128) + `_attn_bwd` (BLOCK_M1 32, BLOCK_N1 128, BLOCK_M2 128, BLOCK_N2 32,
# BLK_SLICE_FACTOR 2, 4 warps, 5 stages), always causal. Triton 3.9 has no block pointers, so the forward's four
# make_block_ptr / tl.advance were written as the plain pointer tensors they denote (no boundary check: what
# Triton's RewriteTensorPointer lowered them to on AMD); nothing else was changed.
# Compiled by Triton 3.9.0 for gfx1100 f16, B1 H8 S16384 d64 (the point's problem; ints specialised as the JIT
# does: == 1 constexpr, multiples of 16 hinted). Per WMMA loop, program order (forward causal: off-band, on-band;
# the on-band loop of BLOCK_M == BLOCK_N runs once and is straight-line code): (v_wmma, issued, scratch loads,
# global loads, LDS reads, LDS stores) per trip; VGPRs; spills = VGPR + SGPR spill count of the code object.
# est: TFLOP/s, source=model, computed as bench/peers.py's peer_estimate computes our Triton forward (main loop x every
# trip), re-recorded after issue 38's transcendental fix at gfx1100 2.500 GHz, loop efficiency 0.588 (the same
# recompile, outside this repository, reproduced every loop's v_wmma, issued and scratch counts above but 128x32
# 4-warp non-causal's issued, 411 against 410; at ead8424's
# model, whose count ran from the loop head to the kernel's end, it reproduced every est within 0.1: 48.6-54.8 /
# causal 45.6-50.3 then). The backward's est below is still ead8424's (loop efficiency 0.642).
TUT06_SOURCE = ("triton-lang/triton dc6ee3ed2c python/tutorials/06-fused-attention.py (tutorial 06), compiled by "
                "Triton 3.9.0 for gfx1100 f16 B1 H8 S16384 d64")
TUT06_FWD_FIELDS = ("causal", "block_m", "block_n", "num_warps", "tried", "vgprs", "spills", "loops", "est")
TUT06_FWD = (
    (False, 64, 32, 4, True, 190, 0, ((16, 259, 0, 4, 32, 6),), 50.5),
    (False, 64, 32, 8, False, 158, 0, ((12, 317, 0, 2, 113, 19),), 34.2),
    (False, 64, 64, 4, True, 254, 8, ((32, 431, 2, 8, 64, 12),), 52.8),
    (False, 64, 64, 8, False, 248, 0, ((24, 455, 0, 4, 113, 43),), 34.9),
    (False, 128, 32, 4, True, 246, 0, ((32, 410, 0, 4, 32, 6),), 51.6),
    (False, 128, 32, 8, False, 174, 0, ((16, 365, 0, 2, 144, 2),), 52.3),
    (False, 128, 64, 4, True, 255, 32, ((64, 710, 8, 8, 64, 12),), 53.8),
    (False, 128, 64, 8, False, 162, 0, ((32, 415, 0, 4, 64, 10),), 53.6),
    (True, 64, 32, 4, True, 243, 0, ((16, 256, 0, 4, 32, 6), (16, 318, 0, 4, 32, 6)), 50.3),
    (True, 64, 32, 8, False, 200, 0, ((12, 317, 0, 2, 113, 19), (12, 373, 0, 2, 113, 19)), 33.9),
    (True, 64, 64, 4, True, 256, 4, ((32, 443, 0, 8, 64, 12),), 52.2),
    (True, 64, 64, 8, False, 255, 0, ((24, 464, 0, 4, 113, 43),), 34.4),
    (True, 128, 32, 4, True, 256, 64, ((32, 416, 0, 4, 32, 6), (32, 513, 0, 4, 32, 6)), 50.9),
    (True, 128, 32, 8, False, 216, 0, ((16, 366, 0, 2, 144, 2), (16, 414, 0, 2, 144, 2)), 51.6),
    (True, 128, 64, 4, True, 256, 160, ((64, 729, 11, 8, 64, 12), (64, 1003, 22, 8, 64, 12)), 52.5),
    (True, 128, 64, 8, False, 256, 2, ((32, 413, 0, 4, 64, 10), (32, 534, 0, 4, 64, 10)), 52.9),
)
# The backward `_attn_bwd` (one kernel, four WMMA loops: dK/dV masked (16-row steps), dK/dV, dQ masked (16-key
# steps), dQ), same tuple per loop. est: the four loops through model/loop_kernel.py one by one (their own trips:
# 8192 / 260096 / 8192 / 260096; the 2.5x-forward FLOPs split 1.5 / 1.0 as bench/peers_bwd.py splits them;
# transcendentals counted between each loop's head and back-edge) plus the preprocess, summed. Every loop is
# latency-bound (scratch reloads waited out); est_no_scratch: the same with the loops' scratch loads and stores
# removed (a counterfactual: what the spills cost in the model).
TUT06_BWD = dict(vgprs=256, spills=1663, lds=32768, warps=4, stages=5,
                 block=dict(BLOCK_M1=32, BLOCK_N1=128, BLOCK_M2=128, BLOCK_N2=32, BLK_SLICE_FACTOR=2),
                 loops=dict(dkdv_masked=(32, 599, 62, 18, 144, 2), dkdv=(64, 1362, 230, 36, 288, 6),
                            dq_masked=(24, 343, 16, 2, 80, 2), dq=(48, 621, 71, 4, 160, 4)),
                 est=13.7, est_no_scratch=35.4)
TUT06_POINTS = {"fa-1100-tut-fwd": False, "fa-1100-tut-fwd-causal": True}


def tut06_fwd(causal: bool, tried_only: bool = True) -> list[dict]:
    """The recorded forward configs of one mode as dicts (TUT06_FWD_FIELDS), best estimate first."""
    rows = [dict(zip(TUT06_FWD_FIELDS, r)) for r in TUT06_FWD if r[0] == causal and (r[4] or not tried_only)]
    return sorted(rows, key=lambda r: -r["est"])


def _loop_text(loop: tuple) -> str:
    w, issued, scratch, gl, dsr, dsw = loop
    return (f"{w} v_wmma / {issued} issued = {w / issued:.3f}, {scratch} scratch loads, {gl} global loads, "
            f"{dsr} LDS reads, {dsw} LDS stores")


def tut06_text(point_id: str, published: float) -> str | None:
    """The report's `peer` counts for a tutorial-06 point: every recorded config (forward: the autotuner's
    four, best by the model first, and the range) or the backward's loops, with the model estimates."""
    if point_id == "fa-1100-tut-bwd-causal":
        b = TUT06_BWD
        loops = "; ".join(f"{n}: {_loop_text(v)}" for n, v in b["loops"].items())
        return (f"peer (recorded: {TUT06_SOURCE}) `_attn_bwd` {b['block']['BLOCK_M1']}x{b['block']['BLOCK_N1']} / "
                f"{b['block']['BLOCK_M2']}x{b['block']['BLOCK_N2']}, {b['warps']} warps, {b['stages']} stages (fixed, "
                f"not autotuned): {b['vgprs']} VGPRs, {b['spills']} spills, {loops}; model {b['est']} TFLOP/s "
                f"(published / est {published / b['est']:.2f}), {b['est_no_scratch']} without the scratch traffic "
                f"({published / b['est_no_scratch']:.2f})")
    if point_id not in TUT06_POINTS:
        return None
    rows = tut06_fwd(TUT06_POINTS[point_id])
    parts = [f"{r['block_m']}x{r['block_n']} {r['num_warps']} warps: {r['vgprs']} VGPRs, {r['spills']} spills, "
             + "; ".join(("on-band " if i else "") + _loop_text(L) for i, L in enumerate(r["loops"]))
             + f"; model {r['est']}" for r in rows]
    lo, hi = rows[-1]["est"], rows[0]["est"]
    return (f"peer (recorded: {TUT06_SOURCE}; the {len(rows)} configs its HIP autotuner tries, best by the model "
            f"first): " + " | ".join(parts) + f" -- model {lo}..{hi} TFLOP/s, published / est "
            f"{published / hi:.2f}..{published / lo:.2f} (best config {published / hi:.2f})")
