"""DS (LDS) instructions against numpy: widths, two-address forms, d16 halves, swizzle,
bpermute / permute (RDNA3 ISA guide chapter 11, §16 DS opcodes)."""
from __future__ import annotations

import numpy as np
import pytest

from emu_helpers import run_lanes

L = np.arange(32)


def test_store_b32_then_load_every_width(rng):
    x = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    out = run_lanes("""\tds_store_b32 v1, v10
\ts_waitcnt lgkmcnt(0)
\tv_lshlrev_b32_e32 v2, 3, v0
\tv_and_b32_e32 v2, 0x78, v2
\tds_load_b64 v[20:21], v2
\tds_load_u8 v22, v1 offset:1
\tds_load_i16 v23, v1 offset:2
\tv_and_b32_e32 v3, 7, v0
\tv_lshlrev_b32_e32 v3, 4, v3
\tds_load_b128 v[24:27], v3
\ts_waitcnt lgkmcnt(0)""", [x], n_out=8, lds=128)
    mem = x.view(np.uint8)
    pairs = x.reshape(16, 2)
    np.testing.assert_array_equal(out[0], pairs[(L % 16), 0])
    np.testing.assert_array_equal(out[1], pairs[(L % 16), 1])
    np.testing.assert_array_equal(out[2], mem[4 * L + 1])
    np.testing.assert_array_equal(out[3], (x >> 16).astype(np.uint16).view(np.int16).astype(np.int32).view(np.uint32))
    quads = x.reshape(8, 4)
    for k in range(4):
        np.testing.assert_array_equal(out[4 + k], quads[L % 8, k])


@pytest.mark.parametrize("stride", ["", "_stride64"])
def test_two_address_store_and_load(rng, stride):
    a, b = (rng.integers(0, 1 << 31, 32, dtype=np.uint32) for _ in range(2))
    scale = 4 * (64 if stride else 1)      # offsets count elements, x64 for _stride64
    spacing = 4 if stride else 32          # bytes between lanes: no two writes overlap
    lds = 32 * spacing + 5 * scale + 16
    out = run_lanes(f"""\tv_mul_u32_u24_e32 v2, {spacing}, v0
\tds_store_2addr{stride}_b32 v2, v10, v11 offset0:2 offset1:5
\ts_waitcnt lgkmcnt(0)
\tds_load_2addr{stride}_b32 v[20:21], v2 offset0:5 offset1:2
\tds_load_b32 v22, v2 offset:{2 * scale}
\ts_waitcnt lgkmcnt(0)""", [a, b], n_out=3, lds=lds)
    np.testing.assert_array_equal(out[0], b)
    np.testing.assert_array_equal(out[1], a)
    np.testing.assert_array_equal(out[2], a)


def test_d16_loads_keep_the_other_half(rng):
    x = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    keep = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    out = run_lanes("""\tds_store_b32 v1, v10
\ts_waitcnt lgkmcnt(0)
\tv_mov_b32_e32 v20, v11
\tv_mov_b32_e32 v21, v11
\tv_mov_b32_e32 v22, v11
\tds_load_u16_d16_hi v20, v1
\tds_load_u16_d16 v21, v1 offset:2
\tds_load_i8_d16_hi v22, v1 offset:3
\ts_waitcnt lgkmcnt(0)
\tds_store_b16_d16_hi v1, v11
\ts_waitcnt lgkmcnt(0)
\tds_load_b32 v23, v1
\ts_waitcnt lgkmcnt(0)""", [x, keep], n_out=4, lds=128)
    lo16, hi16 = x & 0xFFFF, x >> 16
    np.testing.assert_array_equal(out[0], (keep & 0xFFFF) | (lo16 << 16))
    np.testing.assert_array_equal(out[1], (keep & 0xFFFF0000) | hi16)
    sb = (x >> 24).astype(np.uint8).view(np.int8).astype(np.int16).view(np.uint16).astype(np.uint32)
    np.testing.assert_array_equal(out[2], (keep & 0xFFFF) | (sb << 16))
    np.testing.assert_array_equal(out[3], (x & 0xFFFF0000) | (keep >> 16))


@pytest.mark.parametrize("pattern,src", [
    ("swizzle(QUAD_PERM,3,2,1,0)", (L & ~3) | (3 - (L & 3))),
    ("swizzle(SWAP,8)", L ^ 8),
    ("swizzle(REVERSE,16)", L ^ 15),
    ("swizzle(BROADCAST,4,1)", (L & ~3) | 1),
    ('swizzle(BITMASK_PERM,"01pip")', ((L & 0b00111) | 0b01000) ^ 0b00010),
    ("0x041f", L ^ 1),
])
def test_ds_swizzle(rng, pattern, src):
    x = rng.integers(0, 1 << 31, 32, dtype=np.uint32)
    out, = run_lanes(f"""\tds_swizzle_b32 v20, v10 offset:{pattern}
\ts_waitcnt lgkmcnt(0)""", [x])
    np.testing.assert_array_equal(out, x[src])


def test_bpermute_and_permute(rng):
    x = rng.integers(0, 1 << 31, 32, dtype=np.uint32)
    perm = rng.permutation(32).astype(np.uint32)
    back, fwd = run_lanes("""\tv_lshlrev_b32_e32 v12, 2, v11
\tds_bpermute_b32 v20, v12, v10
\tds_permute_b32 v21, v12, v10
\ts_waitcnt lgkmcnt(0)""", [x, perm], n_out=2)
    np.testing.assert_array_equal(back, x[perm])
    expect = np.zeros(32, np.uint32)
    expect[perm] = x
    np.testing.assert_array_equal(fwd, expect)


def test_bpermute_reads_zero_from_inactive_lanes(rng):
    x = rng.integers(1, 1 << 31, 32, dtype=np.uint32)
    out, = run_lanes("""\tv_mov_b32_e32 v20, 5
\tv_xor_b32_e32 v12, 0x7c, v1
\ts_mov_b32 exec_lo, 0xffff
\tds_bpermute_b32 v20, v12, v10
\ts_waitcnt lgkmcnt(0)
\ts_mov_b32 exec_lo, -1""", [x])
    np.testing.assert_array_equal(out[:16], 0)   # sources 31..16 are inactive
    np.testing.assert_array_equal(out[16:], 5)   # inactive lanes keep their value
