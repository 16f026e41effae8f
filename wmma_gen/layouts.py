"""WMMA fragment lane layouts: (lane, element) -> matrix coordinates.

One place for every layout fact; the kernel builder and the emulator both use these
functions, and tests check them against a numpy definition written from the manuals.

Families:
  "gfx11": RDNA3/RDNA3.5 wave32 v_wmma_*_16x16x16_*.
      Source: "RDNA3 Instruction Set Architecture Reference Guide", section 7.9
      "Wave Matrix Multiply Accumulate (WMMA)", dense matrix VGPR layout tables:
      A (16xK): lane l holds row l%16, elements k = 0..15 in order (two per VGPR for 16-bit
      types, four per VGPR for 8-bit, eight for 4-bit); lanes 16-31 repeat lanes 0-15.
      B (Kx16): lane l holds column l%16, same k order; lanes 16-31 repeat.
      C/D 32-bit (f32/i32): VGPR v of lane l holds row 2*v + l//16, column l%16.
      C/D 16-bit (f16/bf16 accumulate): 8 VGPRs; the value for row 2*v + l//16 sits in the
      low half of VGPR v when OPSEL[2]=0 (element 2*v of a vector<16xT>), high half when 1.
  "gfx12": RDNA4 wave32 v_wmma_*_16x16x16_* (and 16x16x32 iu4, not used).
      Sources: GPUOpen, "Using the Matrix Cores of AMD RDNA 4 architecture GPUs" (2025),
      and AMD's matrix instruction calculator (InstCalcGfx12, v1.3.2), which fixes the K
      order: no lane duplication; A lane l holds row l%16, B lane l column l%16, 8 elements:
        16-bit A/B: element i is k = 4*(l//16) + 8*(i//4) + i%4 (lanes 0-15: k 0-3, 8-11;
                    lanes 16-31: k 4-7, 12-15);
        8-bit and 4-bit A/B: k = 8*(l//16) + i;
      C/D VGPR v of lane l holds row 8*(l//16) + v, column l%16 (16-bit C/D packed 2/VGPR
      in the same order, element v).
      The GEMM builder loads a K-permuted order (k = 8*(l//16) + i for every width) for A
      and B alike; the WMMA sums over all K slots, so any permutation shared by A and B
      gives the same product (kernels/fragments.py, lane_run).
"""
from __future__ import annotations

FAMILIES = ("gfx11", "gfx12")
WAVE = 32
TILE = 16  # M and N of every WMMA used here


def ab_elements(family: str) -> int:
    """Elements of A (or B) each lane holds for a 16x16x16 WMMA."""
    return {"gfx11": 16, "gfx12": 8}[family]


def a_coord(family: str, lane: int, i: int, bits: int = 16) -> tuple[int, int]:
    """(row m, depth k) of element i of lane's A fragment (16x16 tile of A); `bits` is the
    element width (it changes the K order on gfx12 only)."""
    if family == "gfx11":
        return lane % 16, i
    if bits == 16:
        return lane % 16, 4 * (lane // 16) + 8 * (i // 4) + i % 4
    return lane % 16, 8 * (lane // 16) + i


def b_coord(family: str, lane: int, i: int, bits: int = 16) -> tuple[int, int]:
    """(depth k, column n) of element i of lane's B fragment (16x16 tile of B)."""
    m_or_n, k = a_coord(family, lane, i, bits)
    return k, m_or_n


def c_coord(family: str, lane: int, v: int) -> tuple[int, int]:
    """(row, column) of accumulator value v (0..7) of the lane (32-bit C/D, or the
    selected half of 16-bit C/D)."""
    if family == "gfx11":
        return 2 * v + lane // 16, lane % 16
    return 8 * (lane // 16) + v, lane % 16


def c_vector_index(family: str, acc_bits: int, v: int, opsel: int = 0) -> int:
    """Index in the accumulator vector value (MLIR vector<Nx T>) of accumulator value v.

    gfx11 16-bit accumulators use a 16-element vector with the result in the half chosen
    by opsel; every other case is a dense 8-element vector."""
    if family == "gfx11" and acc_bits == 16:
        return 2 * v + opsel
    return v


def c_vector_len(family: str, acc_bits: int) -> int:
    return 16 if (family == "gfx11" and acc_bits == 16) else 8
