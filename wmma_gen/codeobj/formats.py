"""Encoding classes of gfx11 / gfx12 machine code: how to recognise one from its first dword,
its length, and its bit fields.

Sources: AMD "RDNA3 Instruction Set Architecture Reference Guide" (2023-02-20) chapter 15
"Microcode Formats" (§15.1 SOP2/SOPK/SOP1/SOPC/SOPP, §15.2 SMEM, §15.3 VOP2/VOP1/VOPC/VOP3/
VOP3SD/VOP3P/VOPD/DPP16/DPP8, §15.6 DS, §15.7 MUBUF, §15.9 FLAT/GLOBAL/SCRATCH); the RDNA3.5
guide has the same formats; AMD "RDNA4 Instruction Set Architecture Reference Guide" chapter
"Microcode Formats" (SMEM with 24-bit offset, VFLAT/VGLOBAL/VSCRATCH and VBUFFER 96-bit
encodings, the rest as RDNA3). Field positions were checked against LLVM's MC test vectors
(llvm/test/MC/Disassembler/AMDGPU/gfx11_dasm_*.txt, gfx12_dasm_*.txt; see
tests/emu/test_decode_vectors.py).

`classify(word, family)` returns the class name; `FIELDS[family][cls]` lists (name, lo, width)
over the instruction bits (bit 32 = bit 0 of the second dword).
"""
from __future__ import annotations

# class -> fixed length in dwords (before a literal / DPP dword)
BASE_DWORDS = {
    "sop2": 1, "sopk": 1, "sop1": 1, "sopc": 1, "sopp": 1, "vop1": 1, "vop2": 1, "vopc": 1,
    "smem": 2, "vop3": 2, "vop3p": 2, "vopd": 2, "ds": 2, "flat": 2, "mubuf": 2,
    "vflat": 3, "vbuffer": 3,
}


def classify(word: int, family: str) -> str | None:
    """The encoding class of an instruction whose first dword is `word` (None = not a
    class this decoder knows: VINTERP, LDSDIR, EXP, MIMG, MTBUF, ...)."""
    top7, top9 = word >> 25, word >> 23
    if top7 == 0x3F:            # VOP1 and VOPC take the two highest VOP2 opcodes
        return "vop1"
    if top7 == 0x3E:
        return "vopc"
    if word >> 31 == 0:
        return "vop2"
    if word >> 30 == 0b10:
        if top9 == 0x17D:
            return "sop1"
        if top9 == 0x17E:
            return "sopc"
        if top9 == 0x17F:
            return "sopp"
        if word >> 28 == 0b1011:
            return "sopk"
        return "sop2"
    top6, top8 = word >> 26, word >> 24
    if top8 == 0xCC:
        return "vop3p"
    if top6 == 0b110101:
        return "vop3"
    if top6 == 0b110010:
        return "vopd"
    if top6 == 0b111101:
        return "smem"
    if top6 == 0b110110:
        return "ds"
    if family == "gfx11":
        if top6 == 0b110111:
            return "flat"
        if top6 == 0b111000:
            return "mubuf"
    else:
        if top6 == 0b111011:
            return "vflat"
        if top6 == 0b110001:
            return "vbuffer"
    return None


_COMMON = {
    "sop2": (("ssrc0", 0, 8), ("ssrc1", 8, 8), ("sdst", 16, 7), ("op", 23, 7)),
    "sopk": (("simm16", 0, 16), ("sdst", 16, 7), ("op", 23, 5)),
    "sop1": (("ssrc0", 0, 8), ("op", 8, 8), ("sdst", 16, 7)),
    "sopc": (("ssrc0", 0, 8), ("ssrc1", 8, 8), ("op", 16, 7)),
    "sopp": (("simm16", 0, 16), ("op", 16, 7)),
    "vop2": (("src0", 0, 9), ("vsrc1", 9, 8), ("vdst", 17, 8), ("op", 25, 6)),
    "vop1": (("src0", 0, 9), ("op", 9, 8), ("vdst", 17, 8)),
    "vopc": (("src0", 0, 9), ("vsrc1", 9, 8), ("op", 17, 8)),
    # VOP3 / VOP3SD: sdst [14:8] replaces abs [10:8] + op_sel [14:11] in the SD form
    "vop3": (("vdst", 0, 8), ("abs", 8, 3), ("opsel", 11, 4), ("sdst", 8, 7), ("clamp", 15, 1),
             ("op", 16, 10), ("src0", 32, 9), ("src1", 41, 9), ("src2", 50, 9), ("omod", 59, 2),
             ("neg", 61, 3)),
    "vop3p": (("vdst", 0, 8), ("neg_hi", 8, 3), ("opsel", 11, 3), ("opsel_hi2", 14, 1), ("clamp", 15, 1),
              ("op", 16, 7), ("src0", 32, 9), ("src1", 41, 9), ("src2", 50, 9), ("opsel_hi", 59, 2),
              ("neg", 61, 3)),
    "vopd": (("srcx0", 0, 9), ("vsrcx1", 9, 8), ("opy", 17, 5), ("opx", 22, 4), ("srcy0", 32, 9),
             ("vsrcy1", 41, 8), ("vdsty", 49, 7), ("vdstx", 56, 8)),
    "ds": (("offset0", 0, 8), ("offset1", 8, 8), ("gds", 17, 1), ("op", 18, 8), ("addr", 32, 8),
           ("data0", 40, 8), ("data1", 48, 8), ("vdst", 56, 8)),
    # DPP16 / DPP8 dword (RDNA3 ISA §15.3.8 / §15.3.9), bit 0 = bit 0 of that dword
    "dpp16": (("src0", 0, 8), ("dpp_ctrl", 8, 9), ("fi", 18, 1), ("bc", 19, 1), ("src0_neg", 20, 1),
              ("src0_abs", 21, 1), ("src1_neg", 22, 1), ("src1_abs", 23, 1), ("bank_mask", 24, 4),
              ("row_mask", 28, 4)),
    "dpp8": (("src0", 0, 8), ("sel", 8, 24)),
}

FIELDS = {
    "gfx11": {**_COMMON,
              "smem": (("sbase", 0, 6), ("sdata", 6, 7), ("dlc", 13, 1), ("glc", 14, 1), ("op", 18, 8),
                       ("offset", 32, 21), ("soffset", 57, 7)),
              "flat": (("offset", 0, 13), ("dlc", 13, 1), ("glc", 14, 1), ("slc", 15, 1), ("seg", 16, 2),
                       ("op", 18, 7), ("addr", 32, 8), ("data", 40, 8), ("saddr", 48, 7), ("sve", 55, 1),
                       ("vdst", 56, 8)),
              "mubuf": (("offset", 0, 12), ("op", 18, 8), ("vaddr", 32, 8), ("vdata", 40, 8), ("srsrc", 48, 5),
                        ("offen", 54, 1), ("idxen", 55, 1), ("soffset", 56, 8))},
    "gfx12": {**_COMMON,
              "smem": (("sbase", 0, 6), ("sdata", 6, 7), ("op", 13, 8), ("th", 21, 3), ("scope", 24, 2),
                       ("offset", 32, 24), ("soffset", 57, 7)),
              "vflat": (("saddr", 0, 7), ("op", 14, 8), ("seg", 24, 2), ("vdst", 32, 8), ("sve", 49, 1),
                        ("scope", 50, 2), ("th", 52, 3), ("vsrc", 55, 8), ("vaddr", 64, 8), ("offset", 72, 24)),
              "vbuffer": (("soffset", 0, 7), ("op", 14, 8), ("vdata", 32, 8), ("srsrc", 41, 7), ("scope", 50, 2),
                          ("th", 52, 3), ("offen", 62, 1), ("idxen", 63, 1), ("vaddr", 64, 8), ("offset", 72, 24))},
}


def fields(bits: int, family: str, cls: str) -> dict[str, int]:
    return {name: (bits >> lo) & ((1 << width) - 1) for name, lo, width in FIELDS[family][cls]}


def sext(value: int, width: int) -> int:
    return value - (1 << width) if value >> (width - 1) & 1 else value
