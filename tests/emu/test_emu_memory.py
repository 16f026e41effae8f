"""GlobalMemory: allocation layout, host copies, bounds-checked device access."""
from __future__ import annotations

import numpy as np
import pytest

from wmma_gen.emu import GlobalMemory
from wmma_gen.emu.isa.table import Fault


def test_alloc_alignment_and_guard_gaps():
    mem = GlobalMemory()
    a, b = mem.alloc(1000), mem.alloc(10)
    assert a % 256 == 0 and b % 256 == 0 and a != 0
    assert b >= a + 1000 + 4096  # never adjacent
    mem.write(a, np.arange(250, dtype=np.int32))
    assert np.frombuffer(mem.read(a + 8, 8), np.int32).tolist() == [2, 3]


def test_freed_space_is_reused_and_freed_buffers_fault():
    mem = GlobalMemory()
    a = mem.alloc(64)
    mem.alloc(64)
    mem.free(a)
    with pytest.raises(ValueError, match="outside every allocation"):
        mem.read(a, 4)
    assert mem.alloc(32) == a
    with pytest.raises(ValueError, match="not the start of a live allocation"):
        mem.free(a + 4)


def test_device_access_is_checked_per_lane():
    mem = GlobalMemory()
    a = mem.alloc(128)
    addr = (a + 4 * np.arange(32, dtype=np.uint64))[None, :]
    act = np.ones((1, 32), bool)
    mem.scatter(addr, np.arange(32, dtype=np.uint32).view(np.uint8).reshape(1, 32, 4), act)
    got = mem.gather(addr, 4, act).view("<u4")[..., 0]
    assert got.tolist() == [list(range(32))]
    with pytest.raises(Fault) as e:
        mem.gather(addr + 4, 4, act)  # lane 31 reads 4 bytes past the end
    assert e.value.lane == 31 and e.value.address == a + 128
    act[0, 31] = False
    assert mem.gather(addr + 4, 4, act).view("<u4")[0, 31, 0] == 0  # inactive lanes are not checked


def test_host_write_outside_allocation_is_rejected():
    mem = GlobalMemory()
    a = mem.alloc(16)
    with pytest.raises(ValueError, match="outside every allocation"):
        mem.write(a + 8, b"\1" * 16)
