"""The process's readable+writable mappings (/proc/self/maps), for the stub's APU semantics:
a kernel pointer argument outside every hipMalloc allocation is host memory the GPU can see,
and the mapping that holds it is what the emulator may touch during the launch.

`refresh()` re-reads the file (about 0.3 ms for 200 mappings) and re-parses it only when its
text changed. The runtime refreshes once per executed launch that has host pointers instead of
trusting an older table: memory freed and mapped again at the same address (allocators munmap
and mmap) would leave a stale, larger range, and an overrun into it would segfault instead of
faulting in the emulator.
"""
from __future__ import annotations

import bisect

MAPS = "/proc/self/maps"


class HostMappings:
    def __init__(self, path: str = MAPS):
        self.path = path
        self.reads = self.parses = 0
        self._raw: bytes | None = None
        self._starts: list[int] = []
        self._ends: list[int] = []

    def refresh(self) -> None:
        with open(self.path, "rb") as f:     # OSError without procfs: the caller reports it
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
            if ends and ends[-1] == lo:     # the kernel splits one buffer's range for its own reasons
                ends[-1] = hi
            else:
                starts.append(lo)
                ends.append(hi)
        self._starts, self._ends = starts, ends

    def find(self, addr: int) -> tuple[int, int] | None:
        """(lo, hi) of the readable+writable mapping holding `addr`, by the last refresh."""
        i = bisect.bisect_right(self._starts, addr) - 1
        return (self._starts[i], self._ends[i]) if i >= 0 and addr < self._ends[i] else None

    def holding(self, kernel: str, pointers) -> tuple[tuple[int, int], ...]:
        """The mappings holding `pointers` ((argument index, name, address) each), refreshed
        once; ValueError naming the argument when one is in no readable+writable mapping."""
        spans = set()
        for k, (i, name, p) in enumerate(pointers):
            if k == 0:
                try:
                    self.refresh()
                except OSError as e:
                    raise ValueError(f"kernel {kernel} argument {i} ({name}) = {p:#x}: host memory "
                                     f"cannot be looked up: {e}") from None
            span = self.find(p)
            if span is None:
                raise ValueError(f"kernel {kernel} argument {i} ({name}) = {p:#x} is not allowed: a pointer "
                                 "must be in a hipMalloc allocation or a readable+writable host mapping "
                                 f"({self.path})")
            spans.add(span)
        return tuple(sorted(spans))
