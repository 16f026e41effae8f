"""Emulated device global memory: one growable byte arena, allocations with guard gaps,
every access bounds-checked against the allocation table (vectorised with searchsorted).

Device address = BASE + arena offset. Allocations are 256-byte aligned and separated by
at least GUARD bytes that belong to no allocation, so an access that runs off the end of
one buffer faults instead of landing in its neighbour.
"""
from __future__ import annotations

import bisect

import numpy as np

from ..isa.table import Fault

BASE = 0x1_0000_0000  # above 4 GiB, so a truncated 32-bit pointer never aliases a buffer
ALIGN = 256
GUARD = 4096


class GlobalMemory:
    base = BASE                     # device address of arena offset 0
    regions = "every allocation"    # what an access must lie in (fault messages)
    idle = 0                        # arena offset check() gives inactive lanes: gather reads it

    def __init__(self, capacity: int = 1 << 20):
        self.arena = np.zeros(capacity, dtype=np.uint8)
        self._starts: list[int] = []      # sorted arena offsets of live allocations
        self._ends: list[int] = []
        self._np_starts = np.zeros(0, np.int64)
        self._np_ends = np.zeros(0, np.int64)

    # ---- host API --------------------------------------------------------------------
    def alloc(self, nbytes: int) -> int:
        """Reserve `nbytes` (zero-filled) and return its device address."""
        if nbytes < 0:
            raise ValueError(f"nbytes={nbytes} is not allowed: must be >= 0")
        size = max(int(nbytes), 1)
        off = GUARD  # first fit in the gaps between live allocations
        for s, e in zip(self._starts, self._ends):
            if off + size + GUARD <= s:
                break
            off = _round_up(e + GUARD, ALIGN)
        end = off + size
        if end + GUARD > self.arena.size:
            new = np.zeros(max(self.arena.size * 2, _round_up(end + GUARD, 1 << 20)), np.uint8)
            new[: self.arena.size] = self.arena
            self.arena = new
        self.arena[off:end] = 0
        i = bisect.bisect(self._starts, off)
        self._starts.insert(i, off)
        self._ends.insert(i, end)
        self._sync()
        return self.base + off

    def free(self, addr: int) -> None:
        off = addr - self.base
        i = bisect.bisect_left(self._starts, off)
        if i == len(self._starts) or self._starts[i] != off:
            raise ValueError(f"addr={addr:#x} is not allowed: not the start of a live allocation")
        del self._starts[i], self._ends[i]
        self._sync()

    def write(self, addr: int, data) -> None:
        raw = np.frombuffer(bytes(data), np.uint8) if not isinstance(data, np.ndarray) else \
            np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        off = self._host_range(addr, raw.size)
        self.arena[off:off + raw.size] = raw

    def read(self, addr: int, nbytes: int) -> bytes:
        off = self._host_range(addr, nbytes)
        return self.arena[off:off + nbytes].tobytes()

    def size_of(self, addr: int) -> int:
        off = addr - self.base
        i = bisect.bisect_left(self._starts, off)
        if i == len(self._starts) or self._starts[i] != off:
            raise ValueError(f"addr={addr:#x} is not allowed: not the start of a live allocation")
        return self._ends[i] - off

    # ---- device-side access (vectorised) ------------------------------------------------
    def check(self, addr: np.ndarray, nbytes: int, active: np.ndarray) -> np.ndarray:
        """Arena offsets for device addresses `addr` (uint64, any shape) accessed with
        `nbytes` each; raises Fault naming the first bad active lane."""
        off = addr.astype(np.int64) - self.base
        every = active.all()
        sel = off if every else off[active]
        if sel.size == 0:
            return np.full_like(off, self.idle)
        lo, hi = int(sel.min()), int(sel.max())
        i = bisect.bisect_right(self._starts, lo) - 1     # fast path: one allocation holds them all
        if i >= 0 and lo >= self._starts[i] and hi + nbytes <= self._ends[i]:
            return off if every else np.where(active, off, self.idle)
        i = np.searchsorted(self._np_starts, off, side="right") - 1
        ok = i >= 0
        ic = np.where(ok, i, 0)
        if self._np_starts.size:
            ok &= (off >= self._np_starts[ic]) & (off + nbytes <= self._np_ends[ic])
        else:
            ok[...] = False
        bad = active & ~ok
        if bad.any():
            pos = tuple(int(x) for x in np.argwhere(bad)[0])
            raise Fault(f"global access of {nbytes} bytes outside {self.regions}",
                        wave=pos[0], lane=pos[1] if len(pos) > 1 else None, address=int(addr[pos]))
        return np.where(active, off, self.idle)

    def window(self, base, lanes: np.ndarray, nbytes: int, dtype) -> tuple[np.ndarray, np.ndarray] | None:
        """check's fast path for every lane active, reading words: the addresses are base + lanes
        (base: the wave's 64-bit address as int64, (W,) or a python int for all waves; lanes: the
        zero-extended uint32 (W, 32) offsets), each accessed with `nbytes`. When every access lies
        in one allocation and every arena offset is a multiple of dtype's size (a power of two):
        (words, idx), the arena as `dtype` words and the intp index of each lane's first word.
        None otherwise; the caller then runs check, which faults naming the lane."""
        off = lanes.astype(np.intp)   # as in check: (lanes + base) - self.base, wrapping like int64
        if isinstance(base, int):
            off += (base - self.base + (1 << 63)) % (1 << 64) - (1 << 63)
        else:
            off += (base - self.base)[:, None]
        lo, hi = int(off.min()), int(off.max())
        unit = np.dtype(dtype).itemsize
        if not self._one(lo, hi + nbytes) or np.bitwise_or.reduce(off, axis=None) & (unit - 1):
            return None
        if unit > 1:
            off >>= unit.bit_length() - 1
        return self.arena[:self.arena.size // unit * unit].view(dtype), off

    def gather(self, addr: np.ndarray, nbytes: int, active: np.ndarray) -> np.ndarray:
        """Bytes at each address: uint8 array addr.shape + (nbytes,); inactive lanes read 0."""
        off = self.check(addr, nbytes, active)
        out = gather_bytes(self.arena, off, nbytes)
        if not active.all():
            out[~active] = 0
        return out

    def scatter(self, addr: np.ndarray, data: np.ndarray, active: np.ndarray) -> None:
        """Store uint8 data (addr.shape + (nbytes,)) at each active address, lane order."""
        off = self.check(addr, data.shape[-1], active)
        if active.all():    # every lane stores: flatten (lane order kept) instead of masking bytes
            scatter_bytes(self.arena, off.reshape(-1), data.reshape(-1, data.shape[-1]))
        else:
            scatter_bytes(self.arena, off[active], data[active])

    # ---- internals --------------------------------------------------------------------------
    def _sync(self) -> None:
        self._np_starts = np.array(self._starts, np.int64)
        self._np_ends = np.array(self._ends, np.int64)

    def _one(self, lo: int, end: int) -> bool:
        """Do arena offsets [lo, end) lie in one allocation?"""
        i = bisect.bisect_right(self._starts, lo) - 1
        return i >= 0 and lo >= self._starts[i] and end <= self._ends[i]

    def _host_range(self, addr: int, nbytes: int) -> int:
        off = addr - self.base
        i = bisect.bisect_right(self._starts, off) - 1
        if i < 0 or off + nbytes > self._ends[i] or off < self._starts[i]:
            raise ValueError(f"host access addr={addr:#x} nbytes={nbytes} is not allowed: "
                             f"outside {self.regions}")
        return off


# Word sizes to move memory in: 16 and 8 bytes as opaque (void) words, then 4 and 2.
_UNITS = tuple((u, np.dtype(f"V{u}") if u > 8 else np.dtype(f"<u{u}")) for u in (16, 8, 4, 2))


def _unit(off: np.ndarray, nbytes: int):
    """The widest word (16, 8, 4, 2 or 1 bytes) that divides nbytes and every offset: move
    words, not bytes (the result is the same byte for byte)."""
    low = np.bitwise_or.reduce(off, axis=None) if off.size else 0
    for u, dt in _UNITS:
        if nbytes % u == 0 and not low & (u - 1):
            return u, dt
    return 1, np.dtype(np.uint8)


def gather_bytes(buf: np.ndarray, off: np.ndarray, nbytes: int) -> np.ndarray:
    """uint8 (off.shape + (nbytes,)): the bytes of uint8 `buf` at each offset."""
    u, dt = _unit(off, nbytes)
    q = off >> (u.bit_length() - 1)
    words = buf.view(dt)[q if nbytes == u else q[..., None] + np.arange(nbytes // u)]
    return words.view(np.uint8).reshape(*off.shape, nbytes)


def scatter_bytes(buf: np.ndarray, off: np.ndarray, data: np.ndarray) -> None:
    """Store uint8 data (n, nbytes) at offsets off (n,) of uint8 `buf`, later rows last."""
    nbytes = data.shape[-1]
    u, dt = _unit(off, nbytes)
    q = off >> (u.bit_length() - 1)
    words = np.ascontiguousarray(data).view(dt)
    if nbytes == u:
        buf.view(dt)[q] = words[:, 0]
    else:
        buf.view(dt)[q[:, None] + np.arange(nbytes // u)] = words


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a
