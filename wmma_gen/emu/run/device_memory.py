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
        return BASE + off

    def free(self, addr: int) -> None:
        off = addr - BASE
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
        off = addr - BASE
        i = bisect.bisect_left(self._starts, off)
        if i == len(self._starts) or self._starts[i] != off:
            raise ValueError(f"addr={addr:#x} is not allowed: not the start of a live allocation")
        return self._ends[i] - off

    # ---- device-side access (vectorised) ------------------------------------------------
    def check(self, addr: np.ndarray, nbytes: int, active: np.ndarray) -> np.ndarray:
        """Arena offsets for device addresses `addr` (uint64, any shape) accessed with
        `nbytes` each; raises Fault naming the first bad active lane."""
        off = addr.astype(np.int64) - BASE
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
            raise Fault(f"global access of {nbytes} bytes outside every allocation",
                        wave=pos[0], lane=pos[1] if len(pos) > 1 else None, address=int(addr[pos]))
        return np.where(active, off, 0)

    def gather(self, addr: np.ndarray, nbytes: int, active: np.ndarray) -> np.ndarray:
        """Bytes at each address: uint8 array addr.shape + (nbytes,); inactive lanes read 0."""
        off = self.check(addr, nbytes, active)
        if nbytes % 4 == 0 and not (off & 3).any():  # dword-aligned: gather words
            out = self.arena.view("<u4")[(off >> 2)[..., None] + np.arange(nbytes // 4)].view(np.uint8)
        else:
            out = self.arena[off[..., None] + np.arange(nbytes)]
        out[~active] = 0
        return out

    def scatter(self, addr: np.ndarray, data: np.ndarray, active: np.ndarray) -> None:
        """Store uint8 data (addr.shape + (nbytes,)) at each active address, lane order."""
        nbytes = data.shape[-1]
        off = self.check(addr, nbytes, active)
        sel = off[active]
        if nbytes % 4 == 0 and not (sel & 3).any():
            self.arena.view("<u4")[(sel >> 2)[:, None] + np.arange(nbytes // 4)] = \
                np.ascontiguousarray(data[active]).view("<u4")
        else:
            self.arena[sel[:, None] + np.arange(nbytes)] = data[active]

    # ---- internals --------------------------------------------------------------------------
    def _sync(self) -> None:
        self._np_starts = np.array(self._starts, np.int64)
        self._np_ends = np.array(self._ends, np.int64)

    def _host_range(self, addr: int, nbytes: int) -> int:
        off = addr - BASE
        i = bisect.bisect_right(self._starts, off) - 1
        if i < 0 or off + nbytes > self._ends[i] or off < self._starts[i]:
            raise ValueError(f"host access addr={addr:#x} nbytes={nbytes} is not allowed: "
                             "outside every allocation")
        return off


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a
