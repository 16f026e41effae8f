"""V_PERM_B32 (RDNA3 ISA §16 V_PERM_B32): the uniform-selector path (one literal selector for
every lane, as LLVM emits it) gives the same bytes as the per-lane table path and as a
byte-by-byte reference written from the manual, for every selector byte value 0-255 in every
byte position."""
import numpy as np

from wmma_gen.emu.isa.vop_int import _perm


def _reference(a: int, b: int, sel: int) -> int:
    data = [(b >> (8 * i)) & 0xFF for i in range(4)] + [(a >> (8 * i)) & 0xFF for i in range(4)]
    r = 0
    for k in range(4):
        c = (sel >> (8 * k)) & 0xFF
        v = data[c] if c < 8 else (0xFF if data[2 * (c - 8) + 1] & 0x80 else 0) if c < 12 else 0 if c == 12 else 0xFF
        r |= v << (8 * k)
    return r


def test_uniform_selector_matches_table_path_and_reference():
    rng = np.random.default_rng(9)
    a = rng.integers(0, 2 ** 32, (4, 32), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2 ** 32, (4, 32), dtype=np.uint64).astype(np.uint32)
    a[0, :4], b[0, :4] = [0x80808080, 0x7F7F7F7F, 0, 0xFFFFFFFF], [0x7F807F80, 0x807F807F, 0xFFFFFFFF, 0]
    pad = np.zeros((1, 32), np.uint32)
    for pos in range(4):
        for byte in range(256):
            sel = (0x0C0C0C0C & ~(0xFF << (8 * pos))) | (byte << (8 * pos))
            uniform = _perm(a, b, np.uint32(sel))
            sels = np.full((5, 32), sel, np.uint32)
            sels[4] ^= 0x01010101                     # one differing row forces the table path
            table = _perm(np.vstack([a, pad]), np.vstack([b, pad]), sels)[:4]
            assert uniform.dtype == np.uint32 and uniform.shape == (4, 32)
            assert np.array_equal(uniform, table), (pos, byte)
            assert [int(x) for x in uniform[0, :4]] == [_reference(int(x), int(y), sel)
                                                       for x, y in zip(a[0, :4], b[0, :4])], (pos, byte)
