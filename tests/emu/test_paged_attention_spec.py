"""The op through the op contract (ops/contract.py): registered the way registry.py would
(one `register` line), compiled by compile_op, its gate problems checked on exactly those code
objects, its model estimate (source "model") and FLOPs -- what the CLI and tuner will call."""
import pytest

from wmma_gen.ops import registry
from wmma_gen.ops.compile_op import compile_op
from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective
from wmma_gen.ops.paged_attention.spec import PagedProblem, lengths


@pytest.fixture
def spec():
    registered = "paged_attention" in registry.names()
    if not registered:
        registry.register("paged_attention", "wmma_gen.ops.paged_attention.spec")
    yield registry.get("paged_attention")
    if not registered:
        registry.unregister("paged_attention")


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_gate_problems_pass_on_the_compiled_set(spec, arch):
    d = PagedAttentionDirective("bf16", 64, 16, "bf16", True, True, True, False)
    s = spec.default_schedule(d, arch, PagedProblem(3, 4, 2, 2, 37))
    cs = compile_op(spec, d, s, None, arch)
    assert cs.names == ("paged", "combine")
    for p in spec.gate_problems(d, s, None):
        p = PagedProblem(p.batch, p.heads, p.kv_heads, p.seq_q, p.seq_len, window_left=20, window_right=0)
        r = spec.check(cs, d, p, "emu", 3)
        assert r.passed, r
    assert lengths(spec.gate_problems(d, s, None)[1]) == [8, 1, 0]


def test_estimate_and_flops(spec):
    d = PagedAttentionDirective("f16", 128)
    p = PagedProblem(batch=4, heads=32, kv_heads=8, seq_q=1, seq_len=2048)
    s = spec.default_schedule(d, "gfx1201", p)
    e = spec.estimate(compile_op(spec, d, s, None, "gfx1201"), d, s, p, "gfx1201")
    assert e.source == "model" and e.seconds > 0 and e.limiter
    # 4 * D per visible (query, key) pair and head: decode causal sees every cached key
    assert spec.flops(d, p) == 4 * 128 * 32 * sum(lengths(p))
    assert spec.bucket(p) == {"seq": 2048, "batch": 4}


def test_a_problem_whose_kv_heads_do_not_divide_heads_is_refused_by_name():
    from wmma_gen.errors import ScheduleError
    from wmma_gen.ops import registry
    spec = registry.get("paged_attention")
    with pytest.raises(ScheduleError, match="kv_heads"):
        spec.make_problem(batch=1, heads=8, kv_heads=3, seq_q=1, seq_len=64)
    assert spec.make_problem(batch=1, heads=8, kv_heads=2, seq_q=1, seq_len=64).kv_heads == 2
