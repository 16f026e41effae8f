"""The attention `sinks` directive flag through the typed contract like the other flags: it
round-trips through JSON, keys its own compiled set (kernel name and code differ, the sink
vector is an argument of the kernel that finishes a row: the forward with split_kv = 1, the
combine with split_kv > 1), the gate checks it against the sink-including reference and fails
a set built without it, and the paged directive hands it to its combine alone (the paged
kernel's code is the same with and without)."""
from dataclasses import replace

from wmma_gen.ops import compile_op as co
from wmma_gen.ops import registry
from wmma_gen.attention_common.check import check_attention
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.attention_common.problem import AttentionProblem
from wmma_gen.attention_common.spec_parts import gate_sinks
from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective

P = AttentionProblem(batch=1, heads=2, kv_heads=1, seq_q=19, seq_k=37)


def _arg_names(src):
    return [a.name for a in src.signature.args]


def test_sinks_keys_its_own_set_and_the_gate_checks_it():
    spec = registry.get("attention")
    d = AttentionDirective("f16", 16, causal=True, return_lse=True, sinks=True)
    assert AttentionDirective.from_dict(d.to_dict()) == d and "sinks" in d.to_json()
    plain = replace(d, sinks=False)
    s = spec.default_schedule(d, "gfx1100")
    cs, cs_plain = co.compile_op(spec, d, s, None, "gfx1100"), co.compile_op(spec, plain, s, None, "gfx1100")
    (src, ck), (psrc, pck) = cs.pairs()["attention"], cs_plain.pairs()["attention"]
    assert src.name != psrc.name and ck.hsaco != pck.hsaco
    assert "sinks" in _arg_names(src) and "sinks" not in _arg_names(psrc)
    assert spec.check(cs, d, P, "emu", 0).passed
    sizes = {**vars(P), "head_dim": 16}
    wrong = check_attention(sizes, causal=True, kernels=cs_plain, s_aux=gate_sinks(P.heads))
    assert not wrong.passed and wrong.worst in ("o", "lse")      # a kernel that ignores the sink is caught


def test_split_kv_puts_the_sinks_on_the_combine():
    spec = registry.get("attention")
    d = AttentionDirective("f16", 16, return_lse=True, sinks=True)
    s = replace(spec.default_schedule(d, "gfx1100"), split_kv=2)
    cs = co.compile_op(spec, d, s, None, "gfx1100")
    pairs = cs.pairs()
    assert "sinks" not in _arg_names(pairs["attention"][0]) and "sinks" in _arg_names(pairs["combine"][0])
    assert spec.check(cs, d, P, "emu", 0).passed


def test_paged_sinks_change_only_the_combine():
    spec = registry.get("paged_attention")
    d = PagedAttentionDirective("f16", 32, sinks=True)
    plain = replace(d, sinks=False)
    s = spec.default_schedule(d, "gfx1201")
    a, b = co.compile_op(spec, d, s, None, "gfx1201").pairs(), co.compile_op(spec, plain, s, None, "gfx1201").pairs()
    assert a["paged"][1].hsaco == b["paged"][1].hsaco
    assert "sinks" in _arg_names(a["combine"][0]) and "sinks" not in _arg_names(b["combine"][0])
