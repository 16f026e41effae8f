"""One compiled object serves every shape of its specialization key (issue #10).

Random problems -- M, N, K from 1 up to a few tiles (tile multiples, one less, one more),
batch 1-3, operands passed as slices of larger arrays (row stride > row length) or as a 2-D
operand broadcast over the batch -- run through wmma_gen.gemm on the emulator with a fixed
schedule on gfx1100, gfx1151 and gfx1201. Each result must match numpy, and the code object
used must be the one already built for that key (no recompile per shape)."""
import collections

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import wmma_gen
import wmma_gen.ops.gemm.api as api
from wmma_gen.ops.gemm.schedule import Schedule

SCHEDULE = Schedule(block_m=32, block_n=32, block_k=32, waves_m=2, waves_n=1, lds="ab", buffers=2)
OBJECTS: dict = {}                         # (arch, key) -> code object hash
SHAPES = collections.defaultdict(set)      # (arch, key) -> shapes it served


def _size(tile: int):
    return st.one_of(st.integers(1, 3 * tile), st.sampled_from([tile, tile - 1, tile + 1, 2 * tile]))


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1151", "gfx1201"])
@settings(max_examples=18, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(m=_size(32), n=_size(32), k=_size(32), batch=st.integers(1, 3), pad=st.sampled_from([0, 8, 24]),
       broadcast_a=st.booleans())
def test_one_object_many_shapes(arch, m, n, k, batch, pad, broadcast_a):
    rng = np.random.default_rng(m * 10007 + n * 101 + k)
    big_a = rng.uniform(-1, 1, (batch, m, k + pad)).astype(np.float16)
    big_b = rng.uniform(-1, 1, (batch, k, n + pad)).astype(np.float16)
    a = big_a[0, :, :k] if broadcast_a else big_a[:, :, :k]       # a view: row stride k + pad
    b = big_b[:, :, :n]
    used = []
    real = api.compile_gemm

    def spy(*args, **kw):
        kern = real(*args, **kw)
        used.append(kern)
        return kern
    api.compile_gemm = spy
    try:
        c = wmma_gen.gemm(a, b, schedule=SCHEDULE, arch=arch, device="emu")
    finally:
        api.compile_gemm = real
    ref = np.broadcast_to(a.astype(np.float64), (batch, m, k)) @ b.astype(np.float64)
    assert np.abs(c - ref).max() <= 1e-3 * max(1.0, np.abs(ref).max())
    (kern,) = used
    key = (arch, kern.key)
    assert OBJECTS.setdefault(key, kern.compiled.key) == kern.compiled.key
    SHAPES[key].add((m, n, k, batch, pad, broadcast_a))


def test_objects_were_shared_across_shapes():
    # runs after the parametrised cases (file order): some object served several shapes
    assert SHAPES and max(len(v) for v in SHAPES.values()) >= 3, {k: len(v) for k, v in SHAPES.items()}
