"""Determinism: the backward kernels use no atomics and every dq/dk/dv element is written by
exactly one workgroup with a fixed summation order, so the results must be bit-identical
whatever order the workgroups run in.

The emulator's run_kernel has no dispatch-order option (it runs workgroup ids in ascending
order, in batches). The test reverses the order in-process without changing the emulator:
it runs one workgroup per batch (max_batch_waves = waves per workgroup) and maps the id of
the i-th batch to n - 1 - i, so the last workgroup runs first."""
import functools

import numpy as np
import pytest

import wmma_gen.emu as emu
import wmma_gen.emu.run.launch as emu_launch
from attention_bwd_cases import make_problem, run_case
from wmma_gen.device.emu import EmuDevice


def _one_by_one(monkeypatch, reverse: bool):
    real_run, real_state = emu_launch.run_kernel, emu_launch._initial_state

    def run(prog, mem, grid, block, kernarg=b"", **kw):
        wpw = -(-int(np.prod(block)) // 32)
        return real_run(prog, mem, grid, block, kernarg, max_batch_waves=wpw, **kw)

    def state(prog, grid, block, ids, *rest):
        n = int(np.prod(grid))
        return real_state(prog, grid, block, (n - 1 - ids) if reverse else ids, *rest)
    monkeypatch.setattr(emu, "run_kernel", run)
    monkeypatch.setattr(emu_launch, "_initial_state", state)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_bit_identical_when_dispatch_order_is_reversed(arch, monkeypatch):
    arrays, kw = make_problem(np.random.default_rng(21), heads=4, kv_heads=2, d=64, causal=True,
                              seqlens=[(40, 37), (18, 50)])
    runs = []
    for reverse in (False, True):
        _one_by_one(monkeypatch, reverse)
        _, outs = run_case(arch, arrays, kw, out_dtype="f32", device=EmuDevice())
        runs.append(outs)
    for name, a, b in zip(("dq", "dk", "dv"), *runs, strict=True):
        assert a.tobytes() == b.tobytes(), f"{arch}: {name} differs between dispatch orders"
    assert functools.reduce(lambda x, y: x + y, (np.abs(x).sum() for x in runs[0])) > 0
