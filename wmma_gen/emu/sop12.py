"""gfx12 (RDNA4) scalar rows: split wait counters, the split workgroup barrier, and the
SALU opcodes LLVM renamed or added for GFX12. Every row is gated to GFX12 (table.GFX12).

Sources (llvm/llvm-project, llvm/lib/Target/AMDGPU/SOPInstructions.td, "SOPP - GFX12
only", "SOPP - GFX11, GFX12", "SOP2 - GFX12", "SOP2 - GFX6, GFX7" with
*_Renamed_gfx12, "SOPK - GFX11, GFX12"; operand syntax llvm/docs/AMDGPU/AMDGPUAsmGFX12.rst):
  * s_wait_loadcnt/storecnt/samplecnt/bvhcnt/expcnt/dscnt/kmcnt, s_wait_loadcnt_dscnt,
    s_wait_storecnt_dscnt are GFX12-only SOPP (0x40-0x49); S_WAITCNT_DEPCTR is printed
    s_wait_alu on GFX12. They only wait for outstanding memory / ALU results; the emulator
    completes every instruction before the next starts (program order), so each is a no-op.
  * S_BARRIER is SOPP_Real_32_gfx11 only; GFX12 splits it into s_barrier_signal (SOP1) and
    s_barrier_wait (SOPP 0x14). LLVM emits the pair `s_barrier_signal -1` /
    `s_barrier_wait -1` for a workgroup barrier (gpu.barrier). Modelled as ONE rendezvous
    at the wait: the signal is a checked no-op (id must be -1) and s_barrier_wait -1 blocks
    the wave until every live wave of its workgroup reaches a barrier wait, exactly the
    scheduler's s_barrier rendezvous. For race-free code this gives the same results as
    hardware (where waves may pass the wait once all have *signalled*); code between the
    two halves that depends on other waves' progress is not modelled. Named barriers fault.
  * Renames (same encoding, same semantics as the gfx11 row they copy):
    s_add_u32 -> s_add_co_u32, s_sub_u32 -> s_sub_co_u32, s_add_i32 -> s_add_co_i32,
    s_sub_i32 -> s_sub_co_i32, s_addc_u32 -> s_add_co_ci_u32, s_subb_u32 -> s_sub_co_ci_u32,
    s_addk_i32 -> s_addk_co_i32. LLVM keeps the old names as assembler aliases on GFX12,
    so the old rows stay ungated.
  * New GFX12 SOP2: s_add_nc_u64 (S_ADD_U64, 0x53), s_sub_nc_u64 (0x54), s_mul_u64 (0x55):
    64-bit two's complement add / sub / low 64 bits of the product, SCC unchanged (the
    "nc" = no carry out).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .sop import SALU
from .table import GFX12, Op, rows

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
