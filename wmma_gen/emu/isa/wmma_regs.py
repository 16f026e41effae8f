"""Moving WMMA operands between the VGPR file and 16x16 matrices, shared by wmma11 and wmma12.

Both layouts (RDNA3 ISA guide §7.9, RDNA4 via [CALC] InstCalcGfx12) place element (i, j) of a
matrix in register r, lane l, slot h (16-bit elements: two per VGPR, low half first) such
that the matrix index bits are a permutation of the (r, l, h) index bits. `RegPlan` finds
that permutation from the lane maps (the same tables the semantic functions are checked
against), and then moves the data with one strided copy instead of element gathers. A map
that is not a bit permutation (the gfx11 16-bit C/D with its opsel half) has no plan and its
callers use the gather path.
"""
from __future__ import annotations

from itertools import permutations

import numpy as np

u32 = np.uint32


class NotReplicated(Exception):
    """A gfx11 WMMA's A or B lanes 16-31 do not replicate lanes 0-15 (RDNA3 ISA §7.9). Raised
    by a WMMA row asked to check (WmmaOp.checks_replication); the binder names the lanes.
    `first_wave`: waves before it were checked (and may have their D written already)."""

    def __init__(self, first_wave: int = 0):
        super().__init__(f"A/B not replicated across half-waves at or after wave {first_wave}")
        self.first_wave = first_wave


class RegPlan:
    """Matrix M (W, 16, 16) <-> registers x (R, W, lanes * per) as element views: element
    e of lane l is x[e // per, w, l * per + e % per]; M[w, i, j] is element elem[i, j] of
    lane lane[i, j]. `ok` is False when the map is not a permutation of index bits.
    Low index bits that the map keeps in place (the two halves of a VGPR that stay
    neighbours) are moved together as one wider word."""

    def __init__(self, lane: np.ndarray, elem: np.ndarray, per: int, lanes: int):
        self.shape, self.lanes, self.per = lane.shape, lanes, per
        self.lane_map, self.elem_map = np.asarray(lane), np.asarray(elem)
        src = (elem // per) * (lanes * per) + lane * per + elem % per   # per-wave source index
        n = src.size
        self.regs = n // (lanes * per)
        nb, b_lh = n.bit_length() - 1, (lanes * per).bit_length() - 1
        flat = src.ravel()
        bit_of = [int(flat[1 << q]).bit_length() - 1 for q in range(nb)]
        basis = np.zeros(n, np.int64)
        for q in range(nb):
            basis |= ((np.arange(n) >> q) & 1) << bit_of[q]
        self.ok = (n == lanes * per * self.regs and n & (n - 1) == 0 and sorted(bit_of) == list(range(nb))
                   and np.array_equal(basis, flat))
        if not self.ok:
            return
        k, itemsize = 0, max(4 // per, 1)      # merged words stay <= 8 bytes
        while k < b_lh and bit_of[k] == k and itemsize << (k + 1) <= 8:
            k += 1
        self.k, self.b_r, self.b_lh = k, nb - b_lh, b_lh - k

        def axis(p):     # axis of source bit p in x.reshape((2,)*b_r + (W,) + (2,)*(b_lh - k))
            return self.b_r - 1 - (p - b_lh) if p >= b_lh else self.b_r + 1 + (b_lh - 1 - p)
        self.order = (self.b_r,) + tuple(axis(bit_of[nb - 1 - t]) for t in range(nb - k))
        self.nb = nb - k
        self._elem_shape = (2,) * self.b_r, (2,) * b_lh            # one element per axis (k = 0)
        self._elem_order = (self.b_r,) + tuple(self.b_r - 1 - (p - b_lh) if p >= b_lh else self.b_r + b_lh - p
                                              for p in (bit_of[nb - 1 - t] for t in range(nb)))

    def _units(self, x: np.ndarray) -> np.ndarray:
        """Elements -> words of 2^k elements (the bits the map keeps together)."""
        size = x.dtype.itemsize << self.k
        if size > 8:
            raise ValueError(f"RegPlan word of {size} bytes")
        return x.view(np.dtype(f"<u{size}")) if self.k else x

    def view(self, x: np.ndarray) -> np.ndarray:
        """x (R, W, lanes*per) -> a view of its words shaped (W, 2, ..., 2) in matrix bit order."""
        x = self._units(x)
        return x.reshape((2,) * self.b_r + (x.shape[1],) + (2,) * self.b_lh).transpose(self.order)

    def element_view(self, x: np.ndarray) -> np.ndarray:
        """x (R, W, lanes*per) of any element dtype -> a view (W, 2, ..., 2) in matrix bit
        order, one element per index (no word merging), so np.copyto can gather and cast in
        one pass: np.copyto(m.reshape(W, *(2,) * log2(m.size // W)), plan.element_view(x))."""
        regs, lanes = self._elem_shape
        return x.reshape(regs + (x.shape[1],) + lanes).transpose(self._elem_order)

    def to_matrix(self, x: np.ndarray) -> np.ndarray:
        """Raw element bits (W, 16, 16), contiguous, in x's element dtype."""
        w = x.shape[1]
        out = np.empty((w, 1 << self.nb), self._units(x[:1, :1]).dtype)
        np.copyto(out.reshape((w,) + (2,) * self.nb), self.view(x))
        return out.view(x.dtype).reshape((w,) + self.shape)

    def from_matrix(self, m: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Write raw element bits m (W, 16, 16) into registers `out` (R, W, lanes*per)."""
        words = self._units(np.ascontiguousarray(m, out.dtype).reshape(m.shape[0], -1))
        np.copyto(self.view(out), words.reshape((m.shape[0],) + (2,) * self.nb))
        return out


def require_replicated(*operands, first_wave: int = 0) -> None:
    """gfx11: lanes 16-31 of each A/B operand (W, 32, R) equal lanes 0-15, else NotReplicated
    (first_wave: the operands' wave 0 in the instruction's group; waves before it are done)."""
    for x in operands:
        x = np.asarray(x)
        if (x[:, 16:] != x[:, :16]).any():
            raise NotReplicated(first_wave)


def into(out, d):
    """D (W, 32, R) written to the (R, W, 32) block `out` when given (WmmaOp.writes_out)."""
    if out is None:
        return d
    np.copyto(out, np.asarray(d).transpose(2, 0, 1))
    return out.transpose(1, 2, 0)


def reg_view(regs, bits: int, lanes: slice = slice(None)) -> np.ndarray:
    """(W, 32, R) uint32 registers (the binder's view of g.v) -> (R, W, L * 32/bits) elements
    of `bits` bits (little-endian slots, as the VGPR bytes hold them), lanes `lanes` only."""
    x = np.asarray(regs, u32).transpose(2, 0, 1)[:, :, lanes]
    if x.strides[-1] != 4:
        x = np.ascontiguousarray(x)
    return x.view({32: u32, 16: np.uint16, 8: np.uint8}[bits])


def index_plan(flat: np.ndarray):
    """A function x (W, ...) -> x.reshape(W, -1)[:, flat] for a fixed index array `flat`;
    an axis permutation of a power-of-two factoring moves by one transpose copy."""
    flat = np.asarray(flat)
    n = flat.size
    found = _as_transpose(flat.ravel())
    if found is None:
        return lambda x: x.reshape(x.shape[0], n)[:, flat]
    dims, perm = found
    axes = (0,) + tuple(p + 1 for p in perm)
    if perm == tuple(range(len(dims))):
        return lambda x: x.reshape(x.shape[0], *flat.shape)
    return lambda x: x.reshape(x.shape[0], *dims).transpose(axes).reshape(x.shape[0], *flat.shape)


def _as_transpose(flat: np.ndarray):
    """(dims, perm) with arange(n).reshape(dims).transpose(perm).ravel() == flat, or None."""
    n = flat.size
    if n & (n - 1):
        return None
    bits = n.bit_length() - 1
    for i in range(bits + 1):
        for j in range(i, bits + 1):
            dims = tuple(d for d in (1 << i, 1 << (j - i), 1 << (bits - j)) if d > 1) or (1,)
            base = np.arange(n).reshape(dims)
            for perm in permutations(range(len(dims))):
                if np.array_equal(base.transpose(perm).ravel(), flat):
                    return dims, perm
    return None


def inverse(flat: np.ndarray) -> np.ndarray:
    inv = np.empty(flat.size, np.int64)
    inv[flat.ravel()] = np.arange(flat.size)
    return inv
