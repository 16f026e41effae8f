"""Kernels compiled by LLVM run on the emulator and match numpy: launch ABI, LDS exchange
across barriers, divergent branches and loops, and each fault kind."""
from __future__ import annotations

import numpy as np
import pytest

import kernels_mlir as K
from emu_helpers import asm_kernel, compile_isa
from wmma_gen.emu import GlobalMemory, Program, run_kernel
from wmma_gen.errors import EmulatorFault


def _launch(src, grid, block, arrays, out_nbytes, scalars=(), mode="batched", max_steps=1_000_000,
            max_batch_waves=None):
    prog = Program.from_isa(compile_isa(src))
    mem = GlobalMemory()
    ptrs = []
    for a in arrays:
        p = mem.alloc(a.nbytes)
        mem.write(p, a)
        ptrs.append(p)
    out = mem.alloc(out_nbytes)
    stats = run_kernel(prog, mem, grid, block, prog.pack_kernarg(ptrs + [out] + list(scalars), grid, block),
                       max_steps=max_steps, mode=mode, max_batch_waves=max_batch_waves)
    return mem.read(out, out_nbytes), stats


def ring_reference(x, n):
    y = x.reshape(-1, 128).astype(np.int64)
    for i in range(n):
        y = (3 * y + (np.roll(y, -32, axis=1) ^ i)) & 0xFFFFFFFF
    return y.reshape(-1).astype(np.uint32)


@pytest.mark.parametrize("mode,batch", [("batched", None), ("batched", 8), ("per_wave", None)])
def test_lds_exchange_across_barriers(rng, mode, batch):
    x = rng.integers(0, 1 << 31, 1024).astype(np.int32)
    raw, stats = _launch(K.LDS_RING, (8, 1, 1), (128, 1, 1), [x], 4096, scalars=[5], mode=mode,
                         max_batch_waves=batch)
    np.testing.assert_array_equal(np.frombuffer(raw, np.uint32), ring_reference(x.view(np.uint32), 5))
    assert stats.waves == 32 and stats.workgroups == 8


def diverge_reference(x, nblocks=8):
    x = x.astype(np.int64)
    m = x % 3
    a = np.where(m == 0, x * 7, np.where(m == 1, x + 7, x - 1))
    steps = np.zeros_like(x)
    for k, v in enumerate(x):
        v, c = int(v), 0
        while v > 1:
            v = (3 * v + 1) & 0xFFFFFFFF if v & 1 else v >> 1
            c += 1
        steps[k] = c
    b = np.arange(len(x)) // 64
    w = np.where(b % 2 == 1, a * (3 ** b), a ^ 7)
    return ((w + steps) & 0xFFFFFFFF).astype(np.uint32)


def test_divergent_branches_and_loops(rng):
    x = rng.integers(1, 5000, 512).astype(np.int32)
    raw, _ = _launch(K.DIVERGE, (8, 1, 1), (64, 1, 1), [x], 2048)
    np.testing.assert_array_equal(np.frombuffer(raw, np.uint32), diverge_reference(x))


def test_batched_and_per_wave_paths_agree(rng):
    x = rng.integers(1, 5000, 512).astype(np.int32)
    fast, s1 = _launch(K.DIVERGE, (8, 1, 1), (64, 1, 1), [x], 2048, mode="batched")
    ref, s2 = _launch(K.DIVERGE, (8, 1, 1), (64, 1, 1), [x], 2048, mode="per_wave")
    assert fast == ref
    assert s1.wave_instructions == s2.wave_instructions  # the same instructions ran per wave


def test_workgroup_and_workitem_ids_follow_the_descriptor():
    grid, block = (3, 2, 2), (8, 4, 2)
    raw, stats = _launch(K.IDS, grid, block, [], 4608 * 4)
    got = np.frombuffer(raw, np.int32).reshape(12, 64, 6)
    tz, ty, tx = np.meshgrid(range(2), range(4), range(8), indexing="ij")
    bz, by, bx = np.meshgrid(range(2), range(2), range(3), indexing="ij")
    for b in range(12):
        np.testing.assert_array_equal(got[b, :, 0], tx.reshape(-1))
        np.testing.assert_array_equal(got[b, :, 1], ty.reshape(-1))
        np.testing.assert_array_equal(got[b, :, 2], tz.reshape(-1))
        assert (got[b, :, 3] == bx.reshape(-1)[b]).all()
        assert (got[b, :, 4] == by.reshape(-1)[b]).all()
        assert (got[b, :, 5] == bz.reshape(-1)[b]).all()
    assert stats.waves == 24


# ---- faults ------------------------------------------------------------------------------------------
def test_out_of_allocation_store_faults_with_lane_and_address():
    prog = Program.from_isa(compile_isa(K.OOB_GLOBAL))
    mem = GlobalMemory()
    y = mem.alloc(64)
    with pytest.raises(EmulatorFault) as e:
        run_kernel(prog, mem, (1, 1, 1), (64, 1, 1), prog.pack_kernarg([y], (1, 1, 1), (64, 1, 1)))
    f = e.value
    assert f.kernel == "oob_global" and f.lane == 16 and f.address == y + 64 and f.wave == 0
    assert "outside every allocation" in str(f) and "global_store" in f.instruction
    assert mem.read(y, 64) == b"\0" * 64  # the faulting store wrote nothing


def test_out_of_lds_access_faults():
    prog = Program.from_isa(compile_isa(K.OOB_LDS))
    mem = GlobalMemory()
    y = mem.alloc(256)
    with pytest.raises(EmulatorFault, match=r"LDS access of 4 bytes outside the 64-byte group segment") as e:
        run_kernel(prog, mem, (1, 1, 1), (64, 1, 1), prog.pack_kernarg([y], (1, 1, 1), (64, 1, 1)))
    assert e.value.lane == 16 and e.value.address == 64 and e.value.instruction.startswith("ds_store")


def _run_asm(body, max_steps=10_000, **kw):
    prog = Program.from_isa(asm_kernel(body, **kw))
    mem = GlobalMemory()
    a, b = mem.alloc(128), mem.alloc(128)
    return run_kernel(prog, mem, (1, 1, 1), (32, 1, 1), prog.pack_kernarg([a, b], (1, 1, 1), (32, 1, 1)),
                      max_steps=max_steps)


def test_unimplemented_instruction_faults_naming_it_only_when_executed():
    stats = _run_asm("\ts_branch .LBB0_1\n\tv_frobnicate_b32 v1, v2\n.LBB0_1:\n\ts_endpgm")
    assert stats.wave_instructions == 2
    with pytest.raises(EmulatorFault, match=r"unimplemented instruction v_frobnicate_b32") as e:
        _run_asm("\tv_mov_b32_e32 v1, 0\n\tv_frobnicate_b32 v1, v2\n\ts_endpgm")
    assert e.value.pc == 1 and e.value.instruction == "v_frobnicate_b32 v1, v2"


def test_step_limit_faults():
    with pytest.raises(EmulatorFault, match=r"step limit exceeded.*500"):
        _run_asm(".LBB0_1:\n\ts_add_u32 s8, s8, 1\n\ts_branch .LBB0_1\n\ts_endpgm", max_steps=500)


def test_wmma_with_partial_exec_faults():
    with pytest.raises(EmulatorFault, match=r"EXEC all ones") as e:
        _run_asm("\ts_mov_b32 exec_lo, 0xffff\n"
                 "\tv_wmma_f32_16x16x16_f16 v[20:27], v[0:7], v[8:15], v[20:27]\n\ts_endpgm")
    assert e.value.pc == 1


def test_running_past_the_end_faults():
    with pytest.raises(EmulatorFault, match=r"ran past the last instruction"):
        _run_asm("\ts_nop 0")


def test_kernarg_too_short_is_rejected():
    prog = Program.from_isa(asm_kernel("\ts_endpgm"))
    with pytest.raises(ValueError, match=r"kernarg_segment_size=16"):
        run_kernel(prog, GlobalMemory(), (1, 1, 1), (32, 1, 1), b"\0" * 8)
