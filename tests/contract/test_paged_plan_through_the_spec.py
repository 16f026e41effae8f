"""Issue 26 item 1: the paged op's device-call plan is its OpSpec.plan, reached through
ops/plans.cached_plan like every other op's: the call is hashable (operand shapes and dtypes,
options, CPU-read query offsets), the plan lands in the one bounded LRU, observers see it, and
paged_attention_into asks for it that way."""
import numpy as np
import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.ops import plans, registry

ARCH = "gfx1100"
OPTIONS = dict(causal=True, scale=None, window=None, softcap=None, kv_dtype=None, return_lse=False)


def _operands(batch=2, sq=1, heads=4, kv_heads=2, d=32, blocks=6, bs=16, max_blocks=3, dtype="f16", o=None):
    return (("q", (batch, sq, heads, d), dtype), ("k_cache", (blocks, bs, kv_heads, d), dtype),
            ("v_cache", (blocks, bs, kv_heads, d), dtype), ("block_table", (batch, max_blocks), "i32"),
            ("seq_lens", (batch,), "i32"), ("o", o or (batch, sq, heads, d), dtype))


def test_the_paged_plan_is_the_specs_and_lives_in_the_shared_lru():
    from wmma_gen.ops.paged_attention.plan import paged_plan
    assert registry.get("paged_attention").plan.resolve() is paged_plan      # contract.Deferred: imported on use
    seen = []
    plans.observers.append(lambda op, arch, call, plan: seen.append((op, call["operands"][0])))
    try:
        plan = plans.cached_plan("paged_attention", ARCH, operands=_operands(), **OPTIONS)
        again = plans.cached_plan("paged_attention", ARCH, operands=_operands(), **OPTIONS)
    finally:
        plans.observers.pop()
    assert again is plan and len(plan.steps) == 2                       # paged kernel, then combine
    assert {k: plan.problem[k] for k in ("batch", "heads", "kv_heads", "seq_q", "max_blocks", "block_size")} == \
        dict(batch=2, heads=4, kv_heads=2, seq_q=1, max_blocks=3, block_size=16)
    assert seen == [("paged_attention", ("q", (2, 1, 4, 32), "f16"))] * 2
    assert any(key[0] == "paged_attention" for key in plans.plan_keys())


@pytest.mark.parametrize("change, where", [
    (dict(o=(2, 1, 4, 64)), "o"),
    (dict(kv_heads=3), "k_cache.shape[2]"),
    (dict(dtype="f32"), "q.dtype"),
])
def test_a_bad_call_is_refused_naming_the_operand(change, where):
    with pytest.raises(ScheduleError) as e:
        plans.cached_plan("paged_attention", ARCH, operands=_operands(**change), **OPTIONS)
    assert where in str(e.value)


def test_paged_attention_into_asks_cached_plan_for_its_plan():
    from wmma_gen.ops.paged_attention.device import paged_attention_into
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 1, 2, 32)).astype(np.float16)
    k, v = (rng.standard_normal((2, 16, 1, 32)).astype(np.float16) for _ in range(2))
    table, lens, o = np.array([[1, 0]], np.int32), np.array([21], np.int32), np.zeros_like(q)
    calls = []
    plans.observers.append(lambda op, arch, call, plan: calls.append((op, call["operands"][0])))
    try:
        paged_attention_into(q, k, v, table, lens, o, arch=ARCH)
    finally:
        plans.observers.pop()
    assert calls == [("paged_attention", ("q", (1, 1, 2, 32), "f16"))]
    from wmma_gen.ops.paged_attention.reference import paged_attention_reference
    ref = paged_attention_reference(q, k, v, table, lens)
    ref = ref[0] if isinstance(ref, tuple) else ref
    assert np.abs(o.astype(np.float64) - ref).max() <= 3 * 2.0 ** -11 * np.abs(v).max()
