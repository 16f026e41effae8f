"""A check certifies the object it is handed (issue 26 item 1): the attention forward and
backward checks launch exactly the code objects of the CompiledSet they receive and compile
nothing themselves (compile_op is not consulted during the check)."""
from dataclasses import replace

import pytest

from wmma_gen.ops import compile_op as co
from wmma_gen.ops import registry
from wmma_gen.attention_common import run_set
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.spec import AttentionProblem


@pytest.mark.parametrize("op,split,names", [("attention", 2, ("attention", "combine")),
                                            ("attention_bwd", 1, ("prepass", "dkdv", "dq"))])
def test_check_launches_the_sets_objects(op, split, names, monkeypatch):
    spec = registry.get(op)
    d = AttentionDirective("f16", 16, causal=True, op=op)
    s = spec.default_schedule(d, "gfx1100")
    if split > 1:
        s = replace(s, split_kv=split)
    cs = co.compile_op(spec, d, s, None, "gfx1100")
    launched = []
    real = run_set.launch
    monkeypatch.setattr(run_set, "launch", lambda ck, *a: launched.append(ck.hsaco) or real(ck, *a))
    before = dict(co.STATS)
    r = spec.check(cs, d, AttentionProblem(batch=1, heads=2, kv_heads=1, seq_q=19, seq_k=37), "emu", 0)
    assert r.passed, r
    assert cs.names == names
    assert launched == [ck.hsaco for _, ck in cs.compiled]            # every kernel of the set, in order
    if op == "attention":       # (the backward's check runs its forward through the API, which compiles)
        assert co.STATS == before
