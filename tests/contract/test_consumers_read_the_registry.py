"""Issue 26 item 1: selftest, `bench --vs torch`, the device-call plans, the model calibration and
the torch recorder / warm-up reach an op only through its OpSpec or its folder (selftest,
torch_baseline, plan; calibration_point.py, recorded.py). The dummy op (dummy_op/, one register
line) gets a plan that runs on the emulator, a bench baseline, a selftest row, a recorded
problem and a calibration point with no edit to those modules, and an AST scan fails if any of
them branches on an op name again."""
import ast
import inspect
from types import SimpleNamespace

import numpy as np
import pytest

import importlib

from wmma_gen.cli import bench_cmd, selftest_cmd
from wmma_gen.ops import calibration_points, plans, registry
try:
    from wmma_gen.torch import record
except ImportError as e:          # the torch extra is not installed: the recorder's tests skip, saying so
    record, NO_TORCH = None, f"wmma_gen.torch needs torch ({e}): pip install 'wmma-gen[torch]'"
else:
    NO_TORCH = ""
needs_torch = pytest.mark.skipif(record is None, reason=NO_TORCH)

ARCH = "gfx1100"
CONSUMERS = tuple(m for m in (selftest_cmd, bench_cmd, plans, calibration_points, record) if m is not None)
try:
    CONSUMERS += (importlib.import_module("wmma_gen.torch.warmup"),)    # imports torch
except ImportError:
    pass


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


@needs_torch
def test_record_problems_reads_the_dummy_call_through_its_folder():
    with record.record_problems() as rec:
        plans.cached_plan("dummy", ARCH, n=70, dtype="f16")
        plans.cached_plan("dummy", ARCH, n=70, dtype="f16")     # same problem: kept once
        plans.cached_plan("dummy", ARCH, n=33, dtype="f16")
    assert rec.problems == [{"op": "dummy", "dtype": "f16", "n": 70}, {"op": "dummy", "dtype": "f16", "n": 33}]
    assert rec.archs == {ARCH} and rec.skipped == 0


@needs_torch
def test_a_call_of_an_op_without_a_recorded_reader_is_skipped():
    registry.register("unrecorded", lambda: _without(registry.get("dummy"), "unrecorded"))
    try:
        with record.record_problems() as rec:
            plans.cached_plan("unrecorded", ARCH, n=12, dtype="f16")
    finally:
        registry.unregister("unrecorded")
    assert (len(rec), rec.skipped) == (0, 1)


def _points_csv(tmp_path, op: str, config: str, role: str):
    import csv
    row = dict(id="dummy-1", arch=ARCH, kind="library_gemm", op=op, implementation="axpy", dtype="f16",
               config=config, tflops="1.5", measured_note="", assumed="", role=role, source_title="a test",
               source_link="https://example.invalid", origin="tests/contract")
    path = tmp_path / "points.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=calibration_points.COLUMNS)
        w.writeheader()
        w.writerow(row)
    return path


def test_a_dummy_calibration_point_reads_through_its_folder_and_spec(tmp_path):
    from dummy_op.spec import AxpyDirective
    (p,) = calibration_points.load_points(_points_csv(tmp_path, "dummy", "n=4096", "fit:loop"))
    assert p.config == {"n": 4096} and p.problem() == {"n": 4096}
    assert p.family == registry.get("dummy").family and p.directive() == AxpyDirective("f16")
    assert calibration_points.family_of("dummy") == registry.get("dummy").family


@pytest.mark.parametrize("op, config, role, match", [
    ("dummy", "n=4096 m=3", "fit:loop", r"config keys \['m', 'n'\] for op dummy: expected \['n'\]"),
    ("dummy", "n=many", "fit:loop", "config 'n=many' for op dummy"),
    ("dummy", "n=4096", "fit:gemm", "role fit:gemm does not fit op dummy"),
    ("paged_attention", "seq=1", "held_out", "op='paged_attention', one of peak, gemm, .*dummy"),
])
def test_a_bad_dummy_point_is_refused_naming_what(tmp_path, op, config, role, match):
    with pytest.raises(ValueError, match=match):
        calibration_points.load_points(_points_csv(tmp_path, op, config, role))


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
