"""Host-visible global memory: device address == host address, as on an APU whose GPU
dereferences host pointers (XNACK). Kernels run zero-copy on caller memory (numpy arrays,
torch CPU tensors) that the caller registers with `map`.

    mem = HostMemory()
    with mem.mapped((x.ctypes.data, x.nbytes), (y.ctypes.data, y.nbytes)):
        run_kernel(prog, mem, grid, block, pack([x.ctypes.data, y.ctypes.data]))   # y written in place

HostMemory is a GlobalMemory whose arena is a uint8 view of the whole address space (arena
offset = address - base), so check/window/gather/scatter and the atomics run unchanged. The
bytes of the view are never touched unless the table of live allocations and mapped regions
says so: every access is checked first, so a wild pointer is a Fault naming lane and address,
never a segfault. Allocations are private mmaps with a PROT_NONE page on each side: zeroed,
page-aligned (>= ALIGN), never adjacent to another allocation or merged into another mapping.
"""
from __future__ import annotations

import ctypes
import functools
import mmap
import os
from contextlib import contextmanager

import numpy as np

from .device_memory import ALIGN, GlobalMemory

PAGE = mmap.PAGESIZE
HOST_BASE = 1 << 16     # Linux's default vm.mmap_min_addr: nothing below is ever mapped
HOST_TOP = 1 << 57      # above every user address (x86-64 5-level paging, arm64 52-bit VA)
assert PAGE % ALIGN == 0 and HOST_BASE % PAGE == 0


class _AddressSpace:
    """Numpy's array protocol over [HOST_BASE, HOST_TOP): a view, no bytes behind it are read."""
    __array_interface__ = {"shape": (HOST_TOP - HOST_BASE,), "typestr": "|u1",
                           "data": (HOST_BASE, False), "version": 3}


@functools.cache
def _libc():
    if os.name != "posix":
        raise OSError(f"HostMemory is not allowed on os.name={os.name!r}: it needs POSIX mmap/mprotect")
    libc = ctypes.CDLL(None, use_errno=True)
    ptr, size, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    libc.mmap.restype = ptr
    libc.mmap.argtypes = (ptr, size, i, i, i, ctypes.c_long)
    libc.mprotect.argtypes = (ptr, size, i)
    libc.munmap.argtypes = (ptr, size)
    return libc


@functools.cache
def _zero_page() -> int:
    """One read-only zero page per process: where check() points inactive lanes, which
    gather reads (and then zeroes) though they access nothing."""
    page = _libc().mmap(None, PAGE, mmap.PROT_READ, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if page in (None, ctypes.c_void_p(-1).value):
        raise MemoryError(f"HostMemory: mmap of one page failed: {os.strerror(ctypes.get_errno())}")
    return page


class HostMemory(GlobalMemory):
    base = HOST_BASE
    regions = "every allocation and mapped host region"

    def __init__(self):
        self._c = _libc()
        self.arena = np.asarray(_AddressSpace())
        self.idle = _zero_page() - self.base
        self._allocs: dict[int, tuple[int, int]] = {}   # address -> (nbytes, reserved bytes incl. guards)
        self._maps: dict[int, list[int]] = {}           # address -> sizes mapped there (a stack)
        self._starts, self._ends = [], []
        self._sync()

    # ---- host API ------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> int:
        """Zeroed host memory of `nbytes`, page-aligned, between two PROT_NONE guard pages."""
        if nbytes < 0:
            raise ValueError(f"nbytes={nbytes} is not allowed: must be >= 0")
        size = max(int(nbytes), 1)
        reserved = -(-size // PAGE) * PAGE + 2 * PAGE
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0)
        block = self._c.mmap(None, reserved, 0, flags, -1, 0)        # PROT_NONE, then open the middle
        if block in (None, ctypes.c_void_p(-1).value):
            raise MemoryError(f"alloc(nbytes={nbytes}): mmap of {reserved} bytes failed: "
                              f"{os.strerror(ctypes.get_errno())}")
        if self._c.mprotect(block + PAGE, reserved - 2 * PAGE, mmap.PROT_READ | mmap.PROT_WRITE):
            err = ctypes.get_errno()
            self._c.munmap(block, reserved)
            raise MemoryError(f"alloc(nbytes={nbytes}): mprotect failed: {os.strerror(err)}")
        addr = block + PAGE
        self._allocs[addr] = (size, reserved)
        self._sync()
        return addr

    def free(self, addr: int) -> None:
        size, reserved = self._alloc_at(addr)
        del self._allocs[addr]
        self._sync()
        self._c.munmap(addr - PAGE, reserved)

    def size_of(self, addr: int) -> int:
        return self._alloc_at(addr)[0]

    def owner(self, addr: int) -> int | None:
        """The allocation whose reserved pages (guards included) hold `addr`, else None: such an
        address is this memory's own, never host memory to map."""
        for a, (_, reserved) in self._allocs.items():
            if a - PAGE <= addr < a - PAGE + reserved:
                return a
        return None

    def map(self, addr: int, nbytes: int) -> None:
        """Make caller memory [addr, addr + nbytes) accessible to kernels until `unmap(addr)`.
        The caller vouches that it is readable and writable for that long: this class checks
        accesses against the regions it is told about, it cannot check the process's pages."""
        addr, nbytes = int(addr), int(nbytes)
        if nbytes < 0:
            raise ValueError(f"nbytes={nbytes} is not allowed: must be >= 0")
        if not HOST_BASE <= addr <= addr + nbytes <= HOST_TOP:
            raise ValueError(f"map addr={addr:#x} nbytes={nbytes} is not allowed: the region must lie in "
                             f"[{HOST_BASE:#x}, {HOST_TOP:#x})")
        self._maps.setdefault(addr, []).append(nbytes)
        self._sync()

    def unmap(self, addr: int) -> None:
        """Undo the latest map(addr, ...)."""
        sizes = self._maps.get(int(addr))
        if not sizes:
            raise ValueError(f"unmap addr={int(addr):#x} is not allowed: not the start of a mapped region "
                             f"({len(self._maps)} mapped)")
        sizes.pop()
        if not sizes:
            del self._maps[int(addr)]
        self._sync()

    @contextmanager
    def mapped(self, *regions: tuple[int, int]):
        """map every (addr, nbytes) for the duration of the block."""
        done = []
        try:
            for addr, nbytes in regions:
                self.map(addr, nbytes)
                done.append(addr)
            yield self
        finally:
            for addr in reversed(done):
                self.unmap(addr)

    def close(self) -> None:
        """Release every allocation (mapped regions belong to their owners)."""
        allocs, self._allocs = self._allocs, {}
        self._sync()
        for addr, (_, reserved) in allocs.items():
            self._c.munmap(addr - PAGE, reserved)

    def __del__(self):
        if getattr(self, "_allocs", None):
            self.close()

    # ---- internals --------------------------------------------------------------------------
    def _alloc_at(self, addr: int) -> tuple[int, int]:
        hit = self._allocs.get(addr)
        if hit is None:
            raise ValueError(f"addr={addr:#x} is not allowed: not the start of a live allocation")
        return hit

    def _sync(self) -> None:
        """The table check() reads: allocations and mapped regions as sorted arena offsets;
        overlapping regions are merged (an access may span them), touching ones are not (an
        access running from one buffer into the next faults)."""
        spans = sorted([(a, a + n) for a, (n, _) in self._allocs.items()] +
                       [(a, a + max(ns)) for a, ns in self._maps.items() if max(ns)])
        starts, ends = [], []
        for lo, hi in spans:
            if ends and lo < ends[-1]:
                ends[-1] = max(ends[-1], hi)
            else:
                starts.append(lo)
                ends.append(hi)
        self._starts = [s - self.base for s in starts]
        self._ends = [e - self.base for e in ends]
        super()._sync()
