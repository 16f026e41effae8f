"""Scalar ALU and program control: SOP1, SOP2, SOPC, SOPK, SOPP.

Semantics: RDNA3 ISA guide chapter 4 "Program Flow Control" and chapter 5 "Scalar ALU
Operations" (§5.2 SOP2, §5.3 SOPK, §5.4 SOP1, §5.5 SOPC; SCC rules in §5.1); opcode names as
llvm/docs/AMDGPU/AMDGPUAsmGFX11.rst lists them. Values are (W,) arrays, one per wave.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .table import GFX11, GFX12, Op, rows

u32, u64, i32, i64 = np.uint32, np.uint64, np.int32, np.int64
C2, CK, C1, CC, CP = ("RDNA3 ISA §5.2 SOP2", "RDNA3 ISA §5.3 SOPK", "RDNA3 ISA §5.4 SOP1",
                      "RDNA3 ISA §5.5 SOPC", "RDNA3 ISA §4 SOPP")
M32 = u64(0xFFFFFFFF)


def S(name, dst, src, fn, cite=C2):
    return Op(name, "salu", dst, src, fn, cite)


def _add_c(a, b, c=0):
    r = a.astype(u64) + b.astype(u64) + np.asarray(c).astype(u64)
    return r.astype(u32), r > M32


def _sub_b(a, b, c=0):
    r = a.astype(i64) - b.astype(i64) - np.asarray(c).astype(i64)
    return r.astype(u32), r < 0


def _add_i(a, b):
    r = a.astype(i64) + b.astype(i64)
    return r.astype(i32), (r > 0x7FFFFFFF) | (r < -0x80000000)


def _sub_i(a, b):
    r = a.astype(i64) - b.astype(i64)
    return r.astype(i32), (r > 0x7FFFFFFF) | (r < -0x80000000)


def _bfe(a, b, signed, width):
    off = (b & 0x3F if width == 64 else b & 0x1F).astype(a.dtype)
    n = ((b >> 16) & 0x7F).astype(np.int64)
    x = (a >> off).astype(u64)
    n = np.minimum(n, width)
    mask = np.where(n >= 64, ~u64(0), (u64(1) << n.astype(u64)) - u64(1))
    r = x & mask
    if signed:
        sign = np.where(n > 0, (r >> np.maximum(n - 1, 0).astype(u64)) & u64(1), u64(0)).astype(bool)
        r = np.where(sign & (n < 64), r | ~mask, r)
    return r.astype(a.dtype)


def _logic(name, f, w):
    t = "b64" if w == 64 else "b32"
    return S(f"s_{name}_{t}", f"{t} SCC", f"{t} {t}", lambda a, b: (r := f(a, b), r != 0), C2)


def _saveexec(name, f):
    """sdst = EXEC; EXEC = f(src, EXEC); SCC = EXEC != 0 (RDNA3 ISA §5.4 S_*_SAVEEXEC_B32)."""
    return S(f"s_{name}_saveexec_b32", "b32 EXEC SCC", "b32 EXEC",
             lambda s, e: (e, (r := f(s, e)), r != 0), C1)


def _cmp(name, t, f):
    return S(f"s_cmp_{name}_{t}", "SCC", f"{t} {t}", f, CC)


_LOGIC = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
          "nand": lambda a, b: ~(a & b), "nor": lambda a, b: ~(a | b), "xnor": lambda a, b: ~(a ^ b),
          "and_not1": lambda a, b: a & ~b, "or_not1": lambda a, b: a | ~b}
_CMPS = {"eq": np.equal, "lg": np.not_equal, "gt": np.greater, "ge": np.greater_equal,
         "lt": np.less, "le": np.less_equal}
_SAVEEXEC = {"and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
             "nand": lambda s, e: ~(s & e), "nor": lambda s, e: ~(s | e), "xnor": lambda s, e: ~(s ^ e),
             "and_not0": lambda s, e: ~e & s, "or_not0": lambda s, e: ~e | s,
             "and_not1": lambda s, e: s & ~e, "or_not1": lambda s, e: s | ~e}


def _shift(t, f):
    return lambda a, b: (r := f(a, (b & (63 if t == 64 else 31)).astype(a.dtype)), r != 0)


def _sext(x, bits):
    return x.astype({8: np.int8, 16: np.int16}[bits]).astype(i32)


SALU = rows(
    # SOP2 arithmetic (§5.2): SCC = carry / borrow / signed overflow
    S("s_add_u32", "u32 SCC", "u32 u32", _add_c),
    S("s_sub_u32", "u32 SCC", "u32 u32", _sub_b),
    S("s_addc_u32", "u32 SCC", "u32 u32 SCC", _add_c),
    S("s_subb_u32", "u32 SCC", "u32 u32 SCC", _sub_b),
    S("s_add_i32", "i32 SCC", "i32 i32", _add_i),
    S("s_sub_i32", "i32 SCC", "i32 i32", _sub_i),
    S("s_min_i32", "i32 SCC", "i32 i32", lambda a, b: (np.minimum(a, b), a < b)),
    S("s_min_u32", "u32 SCC", "u32 u32", lambda a, b: (np.minimum(a, b), a < b)),
    S("s_max_i32", "i32 SCC", "i32 i32", lambda a, b: (np.maximum(a, b), a > b)),
    S("s_max_u32", "u32 SCC", "u32 u32", lambda a, b: (np.maximum(a, b), a > b)),
    S("s_cselect_b32", "b32", "b32 b32 SCC", lambda a, b, c: np.where(c != 0, a, b)),
    S("s_cselect_b64", "b64", "b64 b64 SCC", lambda a, b, c: np.where(c != 0, a, b)),
    S("s_mul_i32", "i32", "i32 i32", lambda a, b: (a.astype(i64) * b.astype(i64)).astype(i32)),
    S("s_mul_hi_u32", "u32", "u32 u32", lambda a, b: ((a.astype(u64) * b.astype(u64)) >> u64(32)).astype(u32)),
    S("s_mul_hi_i32", "i32", "i32 i32", lambda a, b: ((a.astype(i64) * b.astype(i64)) >> 32).astype(i32)),
    S("s_lshl_b32", "b32 SCC", "b32 u32", _shift(32, lambda a, b: a << b)),
    S("s_lshl_b64", "b64 SCC", "b64 u32", _shift(64, lambda a, b: a << b)),
    S("s_lshr_b32", "b32 SCC", "b32 u32", _shift(32, lambda a, b: a >> b)),
    S("s_lshr_b64", "b64 SCC", "b64 u32", _shift(64, lambda a, b: a >> b)),
    S("s_ashr_i32", "i32 SCC", "i32 u32", lambda a, b: (r := a >> (b & 31).astype(i32), r != 0)),
    S("s_ashr_i64", "i64 SCC", "i64 u32", lambda a, b: (r := a >> (b & 63).astype(i64), r != 0)),
    *[S(f"s_lshl{n}_add_u32", "u32 SCC", "u32 u32",
        lambda a, b, n=n: (lambda r: (r.astype(u32), r > M32))((a.astype(u64) << u64(n)) + b.astype(u64)))
      for n in (1, 2, 3, 4)],
    S("s_bfm_b32", "b32", "u32 u32",
      lambda a, b: (((u64(1) << (a & 31).astype(u64)) - u64(1)) << (b & 31).astype(u64)).astype(u32)),
    S("s_bfe_u32", "u32 SCC", "u32 u32", lambda a, b: (r := _bfe(a, b, False, 32), r != 0)),
    S("s_bfe_i32", "i32 SCC", "i32 u32", lambda a, b: (r := _bfe(a, b, True, 32), r != 0)),
    S("s_bfe_u64", "u64 SCC", "u64 u32", lambda a, b: (r := _bfe(a, b, False, 64), r != 0)),
    S("s_bfe_i64", "i64 SCC", "i64 u32", lambda a, b: (r := _bfe(a, b, True, 64), r != 0)),
    S("s_absdiff_i32", "i32 SCC", "i32 i32", lambda a, b: (r := np.abs(a.astype(i64) - b).astype(i32), r != 0)),
    S("s_pack_ll_b32_b16", "b32", "b32 b32", lambda a, b: (a & u32(0xFFFF)) | (b << u32(16))),
    S("s_pack_lh_b32_b16", "b32", "b32 b32", lambda a, b: (a & u32(0xFFFF)) | (b & u32(0xFFFF0000))),
    S("s_pack_hh_b32_b16", "b32", "b32 b32", lambda a, b: (a >> u32(16)) | (b & u32(0xFFFF0000))),
    *[_logic(n, f, w) for n, f in _LOGIC.items() for w in (32, 64)],
    # SOPK (§5.3): 16-bit immediates, printed as plain constants
    S("s_movk_i32", "i32", "i32", lambda k: _sext(k, 16), CK),
    S("s_cmovk_i32", "i32", "i32 D SCC", lambda k, d, c: np.where(c != 0, _sext(k, 16), d), CK),
    S("s_addk_i32", "i32 SCC", "D i32", lambda d, k: _add_i(d, _sext(k, 16)), CK),
    S("s_mulk_i32", "i32", "D i32", lambda d, k: (d.astype(i64) * _sext(k, 16)).astype(i32), CK),
    *[S(f"s_cmpk_{n}_{t}", "SCC", f"{t} {t}", lambda a, k, f=f, t=t:
        f(a, _sext(k, 16) if t == "i32" else k & u32(0xFFFF)), CK)
      for n, f in _CMPS.items() for t in ("i32", "u32")],
    # SOP1 (§5.4)
    S("s_mov_b32", "b32", "b32", lambda a: a, C1),
    S("s_mov_b64", "b64", "b64", lambda a: a, C1),
    S("s_cmov_b32", "b32", "b32 D SCC", lambda a, d, c: np.where(c != 0, a, d), C1),
    S("s_not_b32", "b32 SCC", "b32", lambda a: (r := ~a, r != 0), C1),
    S("s_not_b64", "b64 SCC", "b64", lambda a: (r := ~a, r != 0), C1),
    S("s_abs_i32", "i32 SCC", "i32", lambda a: (r := np.abs(a), r != 0), C1),
    S("s_brev_b32", "b32", "b32", lambda a: _brev(a), C1),
    S("s_bcnt1_i32_b32", "i32 SCC", "b32", lambda a: (r := _popcnt(a), r != 0), C1),
    S("s_bcnt1_i32_b64", "i32 SCC", "b64", lambda a: (r := _popcnt(a), r != 0), C1),
    S("s_ctz_i32_b32", "i32", "b32", lambda a: _ctz(a, 32), C1),
    S("s_ctz_i32_b64", "i32", "b64", lambda a: _ctz(a, 64), C1),
    S("s_clz_i32_u32", "i32", "b32", lambda a: _clz(a), C1),
    S("s_sext_i32_i8", "i32", "i32", lambda a: _sext(a, 8), C1),
    S("s_sext_i32_i16", "i32", "i32", lambda a: _sext(a, 16), C1),
    S("s_bitset0_b32", "b32", "u32 D", lambda b, d: d & ~(u32(1) << (b & 31)), C1),
    S("s_bitset1_b32", "b32", "u32 D", lambda b, d: d | (u32(1) << (b & 31)), C1),
    *[_saveexec(n, f) for n, f in _SAVEEXEC.items()],
    # SOPC (§5.5)
    *[_cmp(n, t, f) for n, f in _CMPS.items() for t in ("i32", "u32")],
    _cmp("eq", "u64", np.equal), _cmp("lg", "u64", np.not_equal),
    S("s_bitcmp0_b32", "SCC", "b32 u32", lambda a, b: ((a >> (b & 31)) & 1) == 0, CC),
    S("s_bitcmp1_b32", "SCC", "b32 u32", lambda a, b: ((a >> (b & 31)) & 1) == 1, CC),
    S("s_bitcmp0_b64", "SCC", "b64 u32", lambda a, b: ((a >> (b & 63).astype(u64)) & u64(1)) == 0, CC),
    S("s_bitcmp1_b64", "SCC", "b64 u32", lambda a, b: ((a >> (b & 63).astype(u64)) & u64(1)) == 1, CC),
    S("s_cmov_b64", "b64", "b64 D SCC", lambda a, d, c: np.where(c != 0, a, d), C1),
    S("s_bcnt0_i32_b32", "i32 SCC", "b32", lambda a: (r := 32 - _popcnt(a), r != 0), C1),
    S("s_pack_hl_b32_b16", "b32", "b32 b32", lambda a, b: (a >> u32(16)) | (b << u32(16))),
)


def _popcnt(a):
    return np.bitwise_count(a).astype(i32)


def _ctz(a, w):
    a = a.astype(u64)
    low = a & (~a + u64(1))  # isolate lowest set bit
    r = np.where(a == 0, -1, np.log2(np.where(low == 0, 1, low).astype(np.float64)).astype(i64))
    return r.astype(i32)


def _clz(a):
    a = a.astype(u64)
    r = np.where(a == 0, -1, 31 - np.floor(np.log2(np.maximum(a, 1).astype(np.float64))).astype(i64))
    return r.astype(i32)


def _brev(a):
    b = a.astype(u32)
    r = np.zeros_like(b)
    for i in range(32):
        r |= ((b >> u32(i)) & u32(1)) << u32(31 - i)
    return r


# SOPK s_waitcnt_{vs,vm,lgkm,exp}cnt are SOPK_Real32_gfx11 only (llvm SOPInstructions.td,
# "SOPK - GFX11, GFX12"; absent from AMDGPUAsmGFX12.rst); s_waitcnt itself is gfx11+gfx12.
NOP11 = ("s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt", "s_waitcnt_expcnt")
NOP = ("s_waitcnt",
       "s_waitcnt_depctr", "s_delay_alu", "s_clause", "s_nop", "s_sleep", "s_setprio",
       "s_inst_prefetch", "s_set_inst_prefetch_distance", "s_icache_inv", "s_version",
       "s_sendmsg", "s_ttracedata", "buffer_gl0_inv", "buffer_gl1_inv", "s_dcache_inv", "v_nop",
       "s_gl1_inv")
CONTROL = rows(
    *[Op(n, "nop", cite=f"{CP}: scheduling/caching hint, no architectural effect here") for n in NOP],
    Op("s_denorm_mode", "denorm", cite=f"{CP} S_DENORM_MODE"),
    *[Op(n, "nop", cite=f"{CP}: counter wait (gfx11 only)", archs=GFX11) for n in NOP11],
    # gfx12 has no S_BARRIER (SOPP_Real_32_gfx11 only, llvm SOPInstructions.td); see CONTROL12 below.
    Op("s_barrier", "barrier", cite=f"{CP} S_BARRIER", archs=GFX11),
    Op("s_endpgm", "end", cite=f"{CP} S_ENDPGM"),
    Op("s_code_end", "end", cite=f"{CP} S_CODE_END"),
    Op("s_branch", "branch", cite=f"{CP} S_BRANCH"),
    *[Op(f"s_cbranch_{c}", "branch", src=c, cite=f"{CP} S_CBRANCH_{c.upper()}")
      for c in ("scc0", "scc1", "vccz", "vccnz", "execz", "execnz")],
)


# ---- gfx12 (RDNA4) rows ------------------------------------------------------------
# gfx12 (RDNA4) scalar rows: split wait counters, the split workgroup barrier, and the
# SALU opcodes LLVM renamed or added for GFX12. Every row is gated to GFX12 (table.GFX12).
#
# Sources (llvm/llvm-project, llvm/lib/Target/AMDGPU/SOPInstructions.td, "SOPP - GFX12
# only", "SOPP - GFX11, GFX12", "SOP2 - GFX12", "SOP2 - GFX6, GFX7" with
# *_Renamed_gfx12, "SOPK - GFX11, GFX12"; operand syntax llvm/docs/AMDGPU/AMDGPUAsmGFX12.rst):
#   * s_wait_loadcnt/storecnt/samplecnt/bvhcnt/expcnt/dscnt/kmcnt, s_wait_loadcnt_dscnt,
#     s_wait_storecnt_dscnt are GFX12-only SOPP (0x40-0x49); S_WAITCNT_DEPCTR is printed
#     s_wait_alu on GFX12. They only wait for outstanding memory / ALU results; the emulator
#     completes every instruction before the next starts (program order), so each is a no-op.
#   * S_BARRIER is SOPP_Real_32_gfx11 only; GFX12 splits it into s_barrier_signal (SOP1) and
#     s_barrier_wait (SOPP 0x14). LLVM emits the pair `s_barrier_signal -1` /
#     `s_barrier_wait -1` for a workgroup barrier (gpu.barrier). Modelled as ONE rendezvous
#     at the wait: the signal is a checked no-op (id must be -1) and s_barrier_wait -1 blocks
#     the wave until every live wave of its workgroup reaches a barrier wait, exactly the
#     scheduler's s_barrier rendezvous. For race-free code this gives the same results as
#     hardware (where waves may pass the wait once all have *signalled*); code between the
#     two halves that depends on other waves' progress is not modelled. Named barriers fault.
#   * Renames (same encoding, same semantics as the gfx11 row they copy):
#     s_add_u32 -> s_add_co_u32, s_sub_u32 -> s_sub_co_u32, s_add_i32 -> s_add_co_i32,
#     s_sub_i32 -> s_sub_co_i32, s_addc_u32 -> s_add_co_ci_u32, s_subb_u32 -> s_sub_co_ci_u32,
#     s_addk_i32 -> s_addk_co_i32. LLVM keeps the old names as assembler aliases on GFX12,
#     so the old rows stay ungated.
#   * New GFX12 SOP2: s_add_nc_u64 (S_ADD_U64, 0x53), s_sub_nc_u64 (0x54), s_mul_u64 (0x55):
#     64-bit two's complement add / sub / low 64 bits of the product, SCC unchanged (the
#     "nc" = no carry out).
u64 = np.uint64
TD = "llvm AMDGPU SOPInstructions.td"
CP12, C2_12 = f"{TD} SOPP - GFX12", f"{TD} SOP2 - GFX12"

_RENAMED = {"s_add_u32": "s_add_co_u32", "s_sub_u32": "s_sub_co_u32", "s_add_i32": "s_add_co_i32",
            "s_sub_i32": "s_sub_co_i32", "s_addc_u32": "s_add_co_ci_u32",
            "s_subb_u32": "s_sub_co_ci_u32", "s_addk_i32": "s_addk_co_i32"}

WAITS = ("s_wait_loadcnt", "s_wait_storecnt", "s_wait_samplecnt", "s_wait_bvhcnt", "s_wait_expcnt",
         "s_wait_dscnt", "s_wait_kmcnt", "s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt", "s_wait_alu")


def _s12(name, src, fn):
    return Op(name, "salu", "u64", src, fn, C2_12, archs=GFX12)


SALU12 = rows(
    *[replace(SALU[old], mnemonic=new, archs=GFX12, cite=f"{SALU[old].cite}; renamed {new} on GFX12 ({TD})")
      for old, new in _RENAMED.items()],
    _s12("s_add_nc_u64", "u64 u64", lambda a, b: a.astype(u64) + b.astype(u64)),
    _s12("s_sub_nc_u64", "u64 u64", lambda a, b: a.astype(u64) - b.astype(u64)),
    _s12("s_mul_u64", "u64 u64", lambda a, b: a.astype(u64) * b.astype(u64)),
)

CONTROL12 = rows(
    *[Op(n, "nop", cite=f"{CP12}: counter wait, no effect in program order", archs=GFX12) for n in WAITS],
    Op("s_barrier_signal", "barrier_signal", cite=f"{TD} SOP1 GFX12 S_BARRIER_SIGNAL (paired with the wait)",
       archs=GFX12),
    Op("s_barrier_wait", "barrier_wait", cite=f"{CP12} S_BARRIER_WAIT (workgroup rendezvous)", archs=GFX12),
)
