"""The shared objective on the attention forward: its OpSpec's gate_check runs a varlen study's
code objects on packed sequences of unequal lengths (varlen_gate.check_varlen), a windowed
study's with the study's window capped for the small gate problems, and records the gate_*
attributes the forward's OpSpec names."""
import optuna
from optuna.trial import TrialState

from wmma_gen.device.select import get_device
from wmma_gen.ops import registry
from wmma_gen.ops.attention import varlen_gate
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.schedule import AttentionSchedule
from wmma_gen.tuner.space import params_of

SPEC = registry.get("attention")
P = dict(batch=1, heads=16, kv_heads=16, seq_q=1024, seq_k=1024)
S = AttentionSchedule(block_m=32, block_n=32, waves=2)


def _trial(d, p):
    study = optuna.create_study(direction="maximize")
    study.enqueue_trial(params_of(S, None, SPEC.space))
    study.optimize(SPEC.tuning.objective(d, p, "gfx1100", get_device("emu")), n_trials=1, catch=(Exception,))
    return study.trials[0]


def test_a_varlen_study_is_gated_on_packed_sequences(monkeypatch):
    seen = []

    def spy(gp, d, **kw):
        seen.append((gp["batch"], gp["seq_q"], gp["seq_k"], kw["window"]))
        return real(gp, d, **kw)
    real = varlen_gate.check_varlen
    monkeypatch.setattr(varlen_gate, "check_varlen", spy)
    t = _trial(AttentionDirective("f16", 16, causal=True, varlen=True), P)
    assert t.state == TrialState.COMPLETE, t.user_attrs
    assert seen and all(w is None for *_, w in seen)
    ua = t.user_attrs
    assert ua["gate_passed"] is True and ua["gate_source"] == "emulator" and ua["gate_isa_hash"] == ua["isa_hash"]
    assert (ua["gate_seq_q"], ua["gate_seq_k"]) in {(q, k) for _, q, k, _ in seen}


def test_a_windowed_study_is_gated_with_its_window_capped(monkeypatch):
    import wmma_gen.attention_common.tune_parts as spec_module
    seen = []

    def spy(cs, d, gp, device, seed, backward=False):
        seen.append((gp.window_left, gp.window_right))
        return real(cs, d, gp, device, seed, backward=backward)
    real = spec_module.check
    monkeypatch.setattr(spec_module, "check", spy)
    t = _trial(AttentionDirective("f16", 16, window=True), {**P, "window_left": 100, "window_right": 3})
    assert t.state == TrialState.COMPLETE, t.user_attrs
    assert seen and set(seen) == {(24, 3)}
    assert t.user_attrs["gate_passed"] is True
