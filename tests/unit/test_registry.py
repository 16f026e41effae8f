"""Every registered op declares every field, and the registry refuses unknown names."""
import pytest

from wmma_gen.ops import registry


@pytest.mark.parametrize("name", registry.NAMES)
def test_every_entry_has_every_field(name):
    spec = registry.get(name)
    assert spec.name == name
    for field in registry.OpSpec.FIELDS:
        value = getattr(spec, field)
        assert value is not None and value != "" and value != (), f"{name}.{field} is empty"
    assert isinstance(spec.directive, type) and isinstance(spec.schedule, type)
    assert all(hasattr(k, "name") and k.domain for k in spec.space)
    for f in ("build", "api", "reference", "flops", "default_schedule", "gate_problems", "check"):
        assert callable(getattr(spec, f)), f


def test_flop_conventions():
    from wmma_gen.attention_common.directive import AttentionDirective
    from wmma_gen.ops.gemm.directive import GemmDirective
    assert registry.get("gemm").flops(GemmDirective("f16"), {"m": 8, "n": 4, "k": 2, "batch": 3}) == 384
    d = AttentionDirective("f16", 64)
    p = dict(batch=2, heads=4, kv_heads=2, seq_q=16, seq_k=32)
    fwd = registry.get("attention").flops(d, p)
    assert fwd == 4 * 2 * 4 * 16 * 32 * 64
    assert registry.get("attention_bwd").flops(d, p) == 2.5 * fwd


def test_default_schedules_are_legal_for_every_registered_op():
    from wmma_gen.attention_common.directive import AttentionDirective
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.targets import get_target
    g, p = GemmDirective("f16"), registry.get("gemm").problem(256, 256, 256)
    registry.get("gemm").default_schedule(g, "gfx1100", p).validate(g, get_target("gfx1100"), p)
    for arch in ("gfx1100", "gfx1201"):
        a = AttentionDirective("f16", 128, causal=True)
        assert registry.get("attention").default_schedule(a, arch).block_m >= 16
        assert registry.get("attention_bwd").default_schedule(a, arch) is not None


def test_unknown_op_is_a_clear_error():
    with pytest.raises(ValueError, match="op='conv'.*gemm, attention, attention_bwd"):
        registry.get("conv")


@pytest.mark.parametrize("name,arch", [("gemm", "gfx1100"), ("attention", "gfx1201"), ("attention_bwd", "gfx1151")])
def test_every_op_has_a_model_estimate_labelled_model(name, arch):
    from wmma_gen.attention_common.directive import AttentionDirective
    from wmma_gen.ops.gemm.directive import GemmDirective
    spec = registry.get(name)
    if name == "gemm":
        d, p = GemmDirective("f16"), {"m": 1024, "n": 1024, "k": 1024, "batch": 1}
    else:
        d = AttentionDirective("f16", 64, causal=True, op=name)
        p = dict(batch=1, heads=8, kv_heads=8, seq_q=1024, seq_k=1024)
    e = spec.estimate_of(d, spec.default_schedule(d, arch, p), p, arch)
    from wmma_gen.targets import get_target
    assert e.source == "model" and e.seconds > 0
    assert 0 < e.tflops <= get_target(arch).peak_tflops("f16") * 1.0001   # never above the dense peak
    assert abs(e.tflops - spec.flops(d, p) / e.seconds / 1e12) < 1e-6 * e.tflops
