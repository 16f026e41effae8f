"""Global memory (FLAT-global encoding) and scalar memory (SMEM) rows.

Semantics: RDNA3 ISA guide chapter 10 "Global, Scratch and Flat" (§10.1 address
computation: saddr + zero-extended 32-bit vaddr + signed offset, or 64-bit vaddr when
saddr is `off`), §16 GLOBAL opcodes (d16: the 16-bit result goes to the low / high half
and the other half is kept), and chapter 5 §5.7 "Scalar Memory" (s_load_b32..b512,
address = sbase + offset (+ soffset), low two bits ignored). `args`: size in bytes, sign
extension, d16 half for loads / high-half source for stores.

gfx12 (AMDGPUAsmGFX12.rst VGLOBAL): the same opcodes take cache-policy modifiers
`th:TH_*` and `scope:SCOPE_*` instead of glc/slc/dlc; they change caching only and are
parsed and ignored, except that a returning atomic is marked `th:TH_ATOMIC_RETURN` (the gfx11
`glc`). global_inv / global_wb (GFX12-only cache invalidate / write-back) are no-ops: the
emulator has one coherent memory.
"""
from __future__ import annotations

from .table import GFX12, Op, rows

CG, CS = "RDNA3 ISA §10 / §16 GLOBAL opcodes", "RDNA3 ISA §5.7 Scalar Memory"


def G(name, kind, size, signed=False, half=None, cite=CG):
    return Op(name, kind, cite=cite, args={"size": size, "signed": signed, "half": half})


GLOBAL = rows(
    *[G(f"global_load_b{8 * n}", "global_load", n) for n in (4, 8, 12, 16)],
    G("global_load_u8", "global_load", 1), G("global_load_i8", "global_load", 1, True),
    G("global_load_u16", "global_load", 2), G("global_load_i16", "global_load", 2, True),
    G("global_load_d16_b16", "global_load", 2, half="lo"),
    G("global_load_d16_hi_b16", "global_load", 2, half="hi"),
    G("global_load_d16_u8", "global_load", 1, half="lo"),
    G("global_load_d16_i8", "global_load", 1, True, half="lo"),
    G("global_load_d16_hi_u8", "global_load", 1, half="hi"),
    G("global_load_d16_hi_i8", "global_load", 1, True, half="hi"),
    *[G(f"global_store_b{8 * n}", "global_store", n) for n in (1, 2, 4, 8, 12, 16)],
    G("global_store_d16_hi_b8", "global_store", 1, half="hi"),
    G("global_store_d16_hi_b16", "global_store", 2, half="hi"),
    Op("global_atomic_add_u32", "global_atomic", cite=CG, args={"size": 4, "op": "add", "type": "u32"}),
    Op("global_atomic_add_f32", "global_atomic", cite=CG, args={"size": 4, "op": "add", "type": "f32"}),
    Op("global_atomic_max_i32", "global_atomic", cite=CG, args={"size": 4, "op": "max", "type": "i32"}),
    Op("global_atomic_min_i32", "global_atomic", cite=CG, args={"size": 4, "op": "min", "type": "i32"}),
    Op("global_atomic_max_u32", "global_atomic", cite=CG, args={"size": 4, "op": "max", "type": "u32"}),
    Op("global_atomic_min_u32", "global_atomic", cite=CG, args={"size": 4, "op": "min", "type": "u32"}),
)

# SCRATCH (RDNA3 ISA §10.2 "Scratch (private) instructions", RDNA4 ISA "Scratch"): the address is
# an offset in the lane's private segment: SGPR saddr (if not `off`) + VGPR vaddr (if not `off`)
# + the signed instruction offset; the hardware's per-lane swizzle of the segment is not
# observable through scratch_* instructions, so each lane owns a private byte array of the
# kernel descriptor's private_segment_fixed_size (run/launch.py).
CSCR = "RDNA3 ISA §10.2 / §16 SCRATCH opcodes"
SCRATCH = rows(
    *[G(n.replace("global_", "scratch_", 1), "scratch_" + r.kind.split("_", 1)[1], r.args["size"],
        r.args["signed"], r.args["half"], CSCR)
      for n, r in GLOBAL.items() if r.kind in ("global_load", "global_store")],
)

CACHE12 = rows(*[Op(n, "nop", cite="AMDGPUAsmGFX12.rst VGLOBAL: cache invalidate/write-back, no effect "
                              "on one coherent memory", archs=GFX12) for n in ("global_inv", "global_wb")])

SMEM = rows(*[Op(f"s_load_b{32 * n}", "smem", cite=CS, args={"dwords": n}) for n in (1, 2, 4, 8, 16)],
            # gfx12 SMEM (AMDGPUAsmGFX12.rst SMEM): b96 and sub-dword loads, zero/sign-extended
            # to 32 bits; the address is aligned down to the access size like the dword forms.
            Op("s_load_b96", "smem", cite="AMDGPUAsmGFX12.rst SMEM", archs=GFX12, args={"dwords": 3}),
            *[Op(f"s_load_{t}{8 * b}", "smem", cite="AMDGPUAsmGFX12.rst SMEM", archs=GFX12,
                 args={"bytes": b, "signed": t == "i"}) for t in ("u", "i") for b in (1, 2)])
