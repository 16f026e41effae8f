"""HostMemory (wmma_gen/emu/run/host_memory.py): compiled kernels run zero-copy on numpy arrays
mapped into the emulator (device address == host address), write their outputs in place, and
every access outside an allocation or mapped region is a Fault naming lane and address."""
from __future__ import annotations

import numpy as np
import pytest

import kernels_mlir as K
from emu_helpers import compile_isa
from wmma_gen.device.emu import host_mapping
from wmma_gen.device.kernargs import pack_kernargs
from wmma_gen.emu import GlobalMemory, Program, run_kernel
from wmma_gen.emu.isa.table import Fault
from wmma_gen.emu.run.device_memory import GUARD
from wmma_gen.emu.run.host_memory import HOST_BASE, PAGE, HostMemory
from wmma_gen.errors import EmulatorFault
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule

ALL = np.ones((1, 32), bool)


@pytest.fixture
def mem():
    m = HostMemory()
    yield m
    m.close()


def _gemm_in_place(mem, d: GemmDirective, p: GemmProblem, s: Schedule, map_c: bool = True):
    """Run a GEMM on numpy operands mapped into `mem`; returns (A, B, C, every buffer)."""
    k = compile_gemm(d, s, "gfx1100", p)
    rng = np.random.default_rng(7)
    shapes = k.signature.shapes(k.sizes)
    arrays = {}
    for a in k.signature.buffers:
        dt = {"f16": np.float16, "f32": np.float32, "i32": np.int32}[a.dtype]
        arrays[a.name] = rng.uniform(-1, 1, shapes[a.name]).astype(dt) if a.role == "in" else \
            np.zeros(shapes[a.name], dt)
    ptrs = [arrays[a.name].ctypes.data for a in k.signature.buffers]
    regions = [(x.ctypes.data, x.nbytes) for name, x in arrays.items() if map_c or name != "C"]
    kernarg = pack_kernargs(k.compiled.metadata, ptrs + k.scalars(), k.grid, k.block)
    prog = Program.from_code_object(k.compiled.hsaco, k.compiled.name)
    with mem.mapped(*regions):
        run_kernel(prog, mem, k.grid, k.block, kernarg)
    return arrays


# ---- kernels on caller memory ------------------------------------------------------------------
def test_gemm_writes_its_output_into_the_numpy_array_in_place(mem):
    got = _gemm_in_place(mem, GemmDirective("f16", layout="NN"), GemmProblem(48, 40, 72), Schedule())
    ref = got["A"][0].astype(np.float64) @ got["B"][0].astype(np.float64)
    # f16 products are exact in f32; f32 sums of 72 terms of size <= 1 err < 72 * 72 * 2^-24
    assert np.abs(got["C"][0] - ref).max() <= 72 * 72 * 2.0 ** -24
    assert mem._starts == [] and not mem._maps             # mapped only for the launch


def test_split_k_atomics_run_on_host_memory(mem):
    """Split-K reduces through global_atomic_add_u32 on the counters (bind_mem reads .arena)."""
    d, p = GemmDirective("f16"), GemmProblem(32, 32, 512)
    got = _gemm_in_place(mem, d, p, Schedule(block_m=32, block_n=32, block_k=32, waves_m=1, waves_n=1, split_k=8))
    ref = got["A"][0].astype(np.float64) @ got["B"][0].astype(np.float64)
    assert np.abs(got["C"][0] - ref).max() < 1e-3
    assert not got["counters"].any()                        # reset by the last workgroup of the tile


def test_an_unmapped_output_faults_and_is_not_written(mem):
    d, p = GemmDirective("f16"), GemmProblem(32, 32, 32)
    with pytest.raises(EmulatorFault, match="outside every allocation and mapped host region") as e:
        _gemm_in_place(mem, d, p, Schedule(block_m=32, block_n=32), map_c=False)
    assert e.value.lane is not None and e.value.address is not None and "global_store" in e.value.instruction


# ---- faults ------------------------------------------------------------------------------------
def _oob_store(mem, y_addr: int):
    """oob_global stores 1.0 from 64 lanes into Y[t] (Y is declared as 16 floats)."""
    prog = Program.from_isa(compile_isa(K.OOB_GLOBAL))
    run_kernel(prog, mem, (1, 1, 1), (64, 1, 1), prog.pack_kernarg([y_addr], (1, 1, 1), (64, 1, 1)))


def test_an_access_past_a_mapped_region_faults_with_lane_and_address(mem):
    y = np.zeros(64, np.float32)                            # the process owns 256 bytes; 64 are mapped
    with mem.mapped((y.ctypes.data, 64)), pytest.raises(EmulatorFault) as e:
        _oob_store(mem, y.ctypes.data)
    f = e.value
    assert (f.lane, f.wave, f.address) == (16, 0, y.ctypes.data + 64)
    assert "global access of 4 bytes outside every allocation and mapped host region" in str(f)
    assert not y.any()                                      # the faulting store wrote nothing


@pytest.mark.parametrize("wild", [0, 8, HOST_BASE - 4, 0xDEAD_0000_0000, 1 << 60, (1 << 64) - 64])
def test_wild_pointers_fault_and_never_touch_memory(mem, wild):
    with pytest.raises(EmulatorFault, match="outside every allocation and mapped host region") as e:
        _oob_store(mem, wild)
    assert e.value.lane == 0 and e.value.address == wild


def test_a_live_allocation_is_not_reachable_from_a_neighbour(mem):
    a, b = mem.alloc(64), mem.alloc(64)
    gap = abs(b - a) - 64
    assert gap >= GUARD and min(a, b) % PAGE == 0
    addr = np.full((1, 32), a, np.uint64) + np.arange(32, dtype=np.uint64) * 4
    with pytest.raises(Fault) as e:
        mem.gather(addr, 4, ALL)                            # lanes 16..31 read past a's 64 bytes
    assert (e.value.lane, e.value.address) == (16, a + 64)


# ---- the GlobalMemory contract -----------------------------------------------------------------
@pytest.mark.parametrize("cls", [GlobalMemory, HostMemory])
def test_alloc_free_read_write_like_global_memory(cls):
    mem = cls()
    a, b = mem.alloc(1000), mem.alloc(10)
    assert a % 256 == 0 and b % 256 == 0 and mem.size_of(a) == 1000
    assert mem.read(a, 1000) == bytes(1000)                 # zeroed
    mem.write(a, np.arange(250, dtype=np.int32))
    assert np.frombuffer(mem.read(a + 8, 8), np.int32).tolist() == [2, 3]
    with pytest.raises(ValueError, match="outside every allocation"):
        mem.write(b + 8, b"\1" * 16)
    with pytest.raises(ValueError, match="not the start of a live allocation"):
        mem.free(a + 4)
    mem.free(a)
    with pytest.raises(ValueError, match="outside every allocation"):
        mem.read(a, 4)
    with pytest.raises(ValueError, match="nbytes=-1 is not allowed"):
        mem.alloc(-1)
    addr = np.full((1, 32), b, np.uint64) + np.arange(32, dtype=np.uint64) * 4
    act = np.zeros((1, 32), bool)
    act[0, :2] = True                                       # 8 bytes: lanes 0, 1 of the 10
    mem.scatter(addr, np.arange(32, dtype=np.uint32).view(np.uint8).reshape(1, 32, 4), act)
    got = mem.gather(addr, 4, act).view("<u4")[..., 0]
    assert got[0, :3].tolist() == [0, 1, 0]                 # inactive lanes read 0, unchecked
    with pytest.raises(Fault) as e:
        mem.gather(addr, 4, ALL)
    assert e.value.lane == 2 and e.value.address == b + 8
    if cls is HostMemory:
        mem.close()


def test_map_unmap_stack_merge_and_misuse(mem):
    x = np.arange(64, dtype=np.uint32)
    p = x.ctypes.data
    addr = np.full((1, 32), p, np.uint64) + np.arange(32, dtype=np.uint64) * 8
    mem.map(p, 128)
    mem.map(p, 128)                                         # mapped twice: one unmap keeps it
    mem.unmap(p)
    assert mem.gather(addr[:, :16], 4, ALL[:, :16]).view("<u4")[0, :, 0].tolist() == list(range(0, 32, 2))
    mem.map(p + 64, 192)                                    # overlaps: one region [p, p + 256)
    assert mem.gather(addr, 8, ALL).view("<u4")[0, 31].tolist() == [62, 63]
    mem.unmap(p + 64)
    mem.map(p + 128, 128)                                   # touches: an access across the seam faults
    with pytest.raises(Fault) as e:
        mem.gather(np.array([[p + 124]], np.uint64), 8, np.ones((1, 1), bool))
    assert e.value.address == p + 124
    mem.unmap(p + 128)
    mem.unmap(p)
    with pytest.raises(ValueError, match=r"unmap addr=0x[0-9a-f]+ is not allowed: not the start of a mapped"):
        mem.unmap(p)
    with pytest.raises(ValueError, match="map addr=0x8 nbytes=4 is not allowed: the region must lie in"):
        mem.map(8, 4)
    with pytest.raises(ValueError, match="nbytes=-4 is not allowed"):
        mem.map(p, -4)
    with pytest.raises(Fault):
        mem.gather(addr, 4, ALL)


def test_host_write_read_reach_mapped_memory_and_owner_names_allocations(mem):
    x = np.zeros(16, np.float32)
    with mem.mapped((x.ctypes.data, x.nbytes)):
        mem.write(x.ctypes.data + 4, np.float32([2.5]))
        assert mem.read(x.ctypes.data, 8) == np.float32([0, 2.5]).tobytes()
    assert x[1] == 2.5
    a = mem.alloc(100)
    assert mem.owner(a) == mem.owner(a + 4095) == mem.owner(a - 1) == a   # guard pages are the allocation's
    assert mem.owner(x.ctypes.data) is None


def test_emu_device_host_mapping_maps_instead_of_copying(mem):
    """device/emu.host_mapping: with HostMemory the kernel sees the caller's own address."""
    x = np.zeros(8, np.float32)
    with host_mapping(mem, [(x.ctypes.data, x.ctypes.data + 16), (x.ctypes.data + 8, x.ctypes.data + 32)]) as tr:
        assert tr(x.ctypes.data + 4) == x.ctypes.data + 4 and not mem._allocs
        assert mem._starts == [x.ctypes.data - mem.base] and mem._ends == [x.ctypes.data + 32 - mem.base]
    assert not mem._maps and mem._starts == []
