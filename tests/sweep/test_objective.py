"""The objective: validate before compile, prune with reasons, FAIL with error text, gate."""
from dataclasses import replace

import optuna
import pytest
from optuna.trial import TrialState

from wmma_gen.ops import registry
from wmma_gen.ops.compile_op import compile_op
from wmma_gen.tuner.space import params_of
from wmma_gen.device.select import get_device
from wmma_gen.errors import CompileError
from wmma_gen.ops.gemm.check import check_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import SPACE, Schedule
from wmma_gen.targets import get_target

SPEC = registry.get("gemm")
D, P = GemmDirective("f16"), GemmProblem(256, 256, 256)
FLOPS = 2 * 256 ** 3
ILLEGAL = Schedule(block_m=16, waves_m=2)          # 16 rows cannot feed two waves of 16


def Objective(d, p, arch, device, **hooks):
    """The sweep's objective for a GEMM study (the shared one over the GEMM's OpSpec)."""
    return SPEC.tuning.objective(d, p, arch, device, **hooks)


def gate_problem_list(d, s, key):
    return SPEC.gate_problems(d, s, key)


def _run(objective, schedule):
    study = optuna.create_study(direction="maximize")
    study.enqueue_trial(params_of(schedule, None, SPACE))
    study.optimize(objective, n_trials=1, catch=(Exception,))
    return study.trials[0]


def test_invalid_schedule_never_reaches_compile():
    assert ILLEGAL.problems(D, get_target("gfx1100"), P)
    calls = []

    def spy(spec, d, s, key, arch):
        calls.append(s)
        raise CompileError("spy: stop here")

    t = _run(Objective(D, P, "gfx1100", get_device("emu"), compile=spy), ILLEGAL)
    assert t.state == TrialState.PRUNED and t.user_attrs["stage"] == "validate"
    assert "block_m=16" in t.user_attrs["pruned_reason"]
    assert calls == []
    # the same spy does see a legal schedule (so the assertion above can fail)
    t = _run(Objective(D, P, "gfx1100", get_device("emu"), compile=spy), Schedule())
    assert calls == [Schedule()]
    assert t.state == TrialState.PRUNED and t.user_attrs["stage"] == "compile"
    assert "spy: stop here" in t.user_attrs["pruned_reason"]


def test_spilling_kernel_is_pruned_with_reason():
    real = compile_op(SPEC, D, Schedule(), SPEC.key_of(D, Schedule(), P), "gfx1100")
    (name, ck), = real.compiled
    spilled = replace(real, compiled=((name, replace(ck, metadata=replace(ck.metadata, vgpr_spill_count=7))),))
    t = _run(Objective(D, P, "gfx1100", get_device("emu"), compile=lambda *a: spilled), Schedule())
    assert t.state == TrialState.PRUNED and "spills: 7 VGPR" in t.user_attrs["pruned_reason"]


def test_unexpected_error_is_fail_with_text_not_inf():
    def broken_model(*a):
        raise RuntimeError("model exploded")

    t = _run(Objective(D, P, "gfx1100", get_device("emu"), estimate=broken_model), Schedule())
    assert t.state == TrialState.FAIL and t.value is None
    assert "RuntimeError: model exploded" in t.user_attrs["error"]
    assert t.user_attrs["validated"] is True            # it got past the gate first


def test_completed_trial_records_its_provenance():
    t = _run(Objective(D, P, "gfx1100", get_device("emu")), Schedule())
    assert t.state == TrialState.COMPLETE
    ua = t.user_attrs
    assert ua["source"] == "model" and ua["validated"] is True and ua["gate_source"] == "emulator"
    assert t.value == pytest.approx(FLOPS / ua["seconds"] / 1e12)
    assert ua["vgprs"] > 0 and ua["occupancy"] >= 1 and len(ua["isa_hash"]) >= 16
    assert ua["toolchain"]["mlir"] and ua["schedule"] == Schedule().to_dict()


def test_gate_problem_is_small_and_has_the_timed_objects_key():
    from wmma_gen.ops.gemm.signature import spec_key
    s = Schedule(block_m=128, block_n=64, block_k=32)
    d = GemmDirective("i8")
    key = spec_key(d, s, GemmProblem(4096, 4096, 4096).as_dict())
    (g,) = gate_problem_list(d, s, key)
    assert (g.m, g.n, g.k, g.batch) == (128, 128, 64, 1)
    ragged = GemmDirective("f16", layout="NT")
    rkey = spec_key(ragged, s, GemmProblem(1000, 999, 1001).as_dict())
    gates = gate_problem_list(ragged, s, rkey)
    assert len(gates) == 2 and gates[0] != gates[1]
    for g in gates:   # edges fall inside tiles, as in the real problem, and the key is identical
        assert spec_key(ragged, s, g.as_dict()) == rkey and g.m <= 2 * 128 and g.k <= 64


def test_gate_runs_the_timed_and_exported_object():
    t = _run(Objective(D, P, "gfx1100", get_device("emu")), Schedule())
    assert t.state == TrialState.COMPLETE
    assert t.user_attrs["gate_isa_hash"] == t.user_attrs["isa_hash"]
    assert (t.user_attrs["gate_m"], t.user_attrs["gate_n"]) != (P.m, P.n)     # a different, small problem
    # the recorded object hash is the sha256 of the bytes the compiler produced for this key
    import hashlib

    obj = compile_op(SPEC, D, Schedule(), SPEC.key_of(D, Schedule(), P), "gfx1100").kernel("gemm")
    assert obj.key == t.user_attrs["isa_hash"]
    assert t.user_attrs["object_sha256"] == hashlib.sha256(obj.hsaco).hexdigest()


def test_corrupt_hook_fails_the_gate_that_the_real_kernel_passes():
    from wmma_gen.ops.gemm.signature import spec_key
    s = Schedule()
    (g,) = gate_problem_list(D, s, spec_key(D, s, P.as_dict()))
    assert check_gemm(D, s, "gfx1100", g, "emu").passed
    t = _run(Objective(D, P, "gfx1100", get_device("emu"), corrupt=lambda x: x == s), s)
    assert t.state == TrialState.PRUNED and t.user_attrs["stage"] == "gate"
    assert t.user_attrs["gate_passed"] is False and t.user_attrs["gate_max_abs"] > 0


def test_on_a_hip_device_the_value_is_the_median_launch_time():
    from wmma_gen.device.base import Timing
    from wmma_gen.device.emu import EmuDevice

    class StubHip(EmuDevice):          # the emulator's results, timed with scripted "GPU" seconds
        name = "hip-stub"
        times = iter([9.0, 9.0, 9.0, 3e-3, 1e-3, 2e-3, 5e-3, 4e-3, 1e-3, 2e-3, 3e-3, 2e-3, 6e-3] + [1.0] * 10)

        def launch(self, kernel, grid, block, args):
            super().launch(kernel, grid, block, args)  # really run it (emulator), report a fake GPU time
            return Timing(next(self.times) if self.gated else 1.0, "hip")   # gate launches: 1.0
        gated = False

    dev = StubHip()
    obj = Objective(D, P, "gfx1100", dev, check=lambda *a: _mark(dev, SPEC.check(*a)))
    t = _run(obj, Schedule())
    assert t.state == TrialState.COMPLETE and t.user_attrs["source"] == "hip"
    assert t.user_attrs["seconds"] == pytest.approx(2.5e-3)       # median of the 10 after 3 warm-ups
    assert t.value == pytest.approx(FLOPS / 2.5e-3 / 1e12)


def _mark(dev, result):
    dev.gated = True
    return result
