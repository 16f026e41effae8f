"""Issue 26 item 1: selftest, `bench --vs torch` and the device-call plans reach an op only
through its OpSpec (selftest, torch_baseline, plan). The dummy op (dummy_op/, one register line)
gets a plan that runs on the emulator, a bench baseline and a selftest row with no edit to
those modules, and an AST scan fails if any of them branches on an op name again."""
import ast
import inspect
from types import SimpleNamespace

import numpy as np
import pytest

from wmma_gen.cli import bench_cmd, selftest_cmd
from wmma_gen.ops import plans, registry

ARCH = "gfx1100"
CONSUMERS = (selftest_cmd, bench_cmd, plans)


@pytest.fixture(autouse=True)
def dummy(tmp_path, monkeypatch):
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path / "cache"))
    registry.register("dummy", "dummy_op.spec")
    yield
    registry.unregister("dummy")


def test_the_dummy_plan_is_cached_observed_and_runs_on_the_emulator():
    from wmma_gen.device.launcher import launch
    from wmma_gen.device.select import get_device
    seen = []
    plans.observers.append(lambda op, arch, call, plan: seen.append((op, call["n"])))
    try:
        plan = plans.cached_plan("dummy", ARCH, n=70, dtype="f16")
        assert plans.cached_plan("dummy", ARCH, n=70, dtype="f16") is plan      # LRU hit
    finally:
        plans.observers.pop()
    assert seen == [("dummy", 70), ("dummy", 70)] and plan.problem == {"n": 70}
    (step,) = plan.steps
    x = np.linspace(-3, 3, 70).astype(np.float16)
    outs, _ = launch(step.compiled, step.sig, plan.problem, get_device("emu"), {"X": x})
    assert np.array_equal(outs["Y"], (2.0 * x.astype(np.float64) + 1.0).astype(np.float16))


def test_an_op_without_a_plan_is_refused_naming_those_with_one():
    from wmma_gen.errors import ScheduleError
    registry.register("planless", lambda: _without(registry.get("dummy"), "planless", plan=None))
    try:
        with pytest.raises(ScheduleError) as e:
            plans.cached_plan("planless", ARCH, n=1, dtype="f16")
    finally:
        registry.unregister("planless")
    assert "op" in str(e.value) and "planless" in str(e.value) and "dummy" in str(e.value)


def _without(spec, name, **fields):
    from dataclasses import replace
    return replace(spec, name=name, **fields)


def test_bench_takes_the_dummy_baseline_and_refuses_an_op_without_one(capsys):
    fake_torch = SimpleNamespace(ones=np.ones)            # the hook's own calls only: no GPU needed
    fn, flops, label = bench_cmd.torch_call(fake_torch, "dummy", {"n": 5, "dtype": "f16"})
    assert np.array_equal(fn(), np.full(5, 3.0)) and flops == 10 and label == "torch 2*x+1"
    assert "dummy" in bench_cmd.with_baseline() and "paged_attention" not in bench_cmd.with_baseline()
    from wmma_gen.cli.main import main
    assert main(["bench", "--vs", "torch", "--op", "paged_attention"]) == 2
    err = capsys.readouterr().err
    assert "--op paged_attention is not allowed: one of " in err and "dummy" in err and "gemm" in err


def test_selftest_rows_come_from_the_spec_alone():
    rows = selftest_cmd.cases("dummy")(ARCH, None)
    assert [(op, dt, problem) for op, dt, problem, _ in rows] == [("dummy", "f16", "n=77")]


def _op_name_branches(module) -> list[str]:
    """String constants naming a registered op used as a comparison operand or a dict key."""
    names = set(registry.names()) - {"dummy"}
    found = []
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.Compare):
            consts = [node.left, *node.comparators]
        elif isinstance(node, ast.Dict):
            consts = [k for k in node.keys if k is not None]
        else:
            continue
        found += [f"{module.__name__}:{c.lineno} {c.value!r}" for c in consts
                  if isinstance(c, ast.Constant) and c.value in names]
    return found


@pytest.mark.parametrize("module", CONSUMERS, ids=[m.__name__ for m in CONSUMERS])
def test_no_consumer_branches_on_an_op_name(module):
    assert _op_name_branches(module) == []


def test_the_scan_sees_a_branch():
    fake = SimpleNamespace(__name__="fake")
    src = 'def f(op):\n    return {"gemm": 1}[op] if op == "attention" else 0\n'
    import unittest.mock
    with unittest.mock.patch.object(inspect, "getsource", lambda m: src):
        assert len(_op_name_branches(fake)) == 2
