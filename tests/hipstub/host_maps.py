"""The process's readable+writable mappings, for the stub's APU semantics: a kernel pointer
argument outside every hipMalloc allocation is host memory the GPU can see, and the mapping
that holds it is what the emulator may touch during the launch.

The answer must be current at each launch: memory freed and mapped again at the same address
(allocators munmap and mmap) would leave a stale range, whose overrun would segfault instead of
faulting in the emulator (stale too large) or fault on a legal access (stale too small). Two
exact sources, asked per executed launch:
  PROCMAP_QUERY  ioctl on /proc/self/maps (Linux >= 6.11, include/uapi/linux/fs.h): the VMA
                 covering an address, about 3 us;
  the maps text  read whole otherwise (0.3 ms for 200 mappings, 4.5 ms for the 2000 of a
                 process with torch loaded) and parsed again only when it changed.
Adjacent readable+writable mappings are joined: the kernel splits one buffer's range for its
own reasons (merging rules, madvise), and every byte of the join is accessible.
"""
from __future__ import annotations

import bisect
import errno
import fcntl
import os
import struct

MAPS = "/proc/self/maps"
PROCMAP_QUERY = 0xC0686611      # _IOWR('f', 17, struct procmap_query), 104 bytes
_QUERY = struct.Struct("<9Q4I2Q")  # size, query_flags, query_addr, vma_start, vma_end, vma_flags, ...
_RW = 0x1 | 0x2                 # PROCMAP_QUERY_VMA_READABLE | _WRITABLE: only such VMAs match


class HostMappings:
    def __init__(self, path: str = MAPS):
        self.path = path
        self.reads = self.parses = self.queries = 0
        self._raw: bytes | None = None
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._fd: int | None = None
        self._ioctl = True      # until the kernel says otherwise

    # ---- one pointer --------------------------------------------------------------------------
    def find(self, addr: int) -> tuple[int, int] | None:
        """(lo, hi) of the readable+writable mapping holding `addr` now, else None."""
        if self._ioctl:
            span = self._query(addr)
            if self._ioctl:         # the kernel answered (None: no rw VMA covers addr)
                return None if span is None else self._joined(*span)
        self.refresh()
        i = bisect.bisect_right(self._starts, addr) - 1
        return (self._starts[i], self._ends[i]) if i >= 0 and addr < self._ends[i] else None

    def _joined(self, lo: int, hi: int) -> tuple[int, int]:
        while (nxt := self._query(hi)) is not None and nxt[0] == hi:
            hi = nxt[1]
        while lo > 0 and (prev := self._query(lo - 1)) is not None and prev[1] == lo:
            lo = prev[0]
        return lo, hi

    def holding(self, kernel: str, pointers) -> tuple[tuple[int, int], ...]:
        """The mappings holding `pointers` ((argument index, name, address) each); ValueError
        naming the argument when one is in no readable+writable mapping."""
        spans = set()
        for i, name, p in pointers:
            try:
                span = self.find(p)
            except OSError as e:
                raise ValueError(f"kernel {kernel} argument {i} ({name}) = {p:#x}: host memory "
                                 f"cannot be looked up: {e}") from None
            if span is None:
                raise ValueError(f"kernel {kernel} argument {i} ({name}) = {p:#x} is not allowed: a pointer "
                                 "must be in a hipMalloc allocation or a readable+writable host mapping "
                                 f"({self.path})")
            spans.add(span)
        return tuple(sorted(spans))

    # ---- sources -----------------------------------------------------------------------------
    def _query(self, addr: int) -> tuple[int, int] | None:
        """PROCMAP_QUERY for the rw VMA covering addr; None if none. Switches to reading the
        text for good when the kernel lacks the ioctl."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        buf = bytearray(_QUERY.pack(_QUERY.size, _RW, addr, *([0] * 12)))
        try:
            fcntl.ioctl(self._fd, PROCMAP_QUERY, buf, True)
        except OSError as e:
            if e.errno == errno.ENOENT:
                return None
            if e.errno in (errno.ENOTTY, errno.EINVAL, errno.EOPNOTSUPP):
                self._ioctl = False
                return None
            raise
        self.queries += 1
        return _QUERY.unpack(buf)[3:5]

    def refresh(self) -> None:
        """Read the maps text; parse it when it changed."""
        with open(self.path, "rb") as f:     # OSError without procfs: holding() reports it
            raw = f.read()
        self.reads += 1
        if raw == self._raw:
            return
        self._raw, self.parses = raw, self.parses + 1
        starts, ends = [], []
        for line in raw.splitlines():
            span, perms = line.split(maxsplit=2)[:2]
            if perms[:2] != b"rw":
                continue
            lo, hi = (int(x, 16) for x in span.split(b"-"))
            if ends and ends[-1] == lo:
                ends[-1] = hi
            else:
                starts.append(lo)
                ends.append(hi)
        self._starts, self._ends = starts, ends

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self):
        self.close()
