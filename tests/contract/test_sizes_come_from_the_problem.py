"""Issue 26 item 5: where does a size of `wmma-gen check --op X` come from?

The CLI builds the op's Problem from its axes' flags (OpSpec.problem_of_args) and hands it to
spec.check. From there the sizes should only be *read*: a function on the check path that
assigns an array's `.shape` to a size name (m, n, k, batch, heads, seq_q, B, H, Sq, D, ...)
recomputes a size the Problem already holds. This test walks each op's check path -- the entry
functions below and, inside each module, every function they call by name -- and compares
what it finds with KNOWN, both ways: a new recomputation fails, and so does a fixed one that is
still listed (shrink KNOWN then).

Findings today: nothing is recomputed (KNOWN is empty). GEMM's sizes travel as the GemmProblem
itself (no directive holds a size: test_no_directive_holds_a_size_of_its_problem); the attention check builds arrays from the Problem and run_set.forward /
backward hand that same Problem to inputs.forward_inputs_for / backward_inputs_for, which only
check the arrays' shapes against it (measuring a user's arrays stays at the API boundary,
inputs.forward_inputs, which is not on this path)."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIZE_NAMES = {"m", "n", "k", "batch", "heads", "kv_heads", "seq_q", "seq_k", "head_dim", "total_q", "total_k",
              "M", "N", "K", "B", "H", "Hkv", "Sq", "Sk", "S_q", "S_k", "D"}
CHECK_PATH = {   # op -> {module: entry functions}, in call order from spec.check to the launch
    "gemm": {"wmma_gen/ops/gemm/spec.py": ["check"], "wmma_gen/ops/gemm/check.py": ["check_gemm"],
             "wmma_gen/ops/gemm/api.py": ["run_gemm"], "wmma_gen/device/launcher.py": ["launch"]},
    "attention": {"wmma_gen/attention_common/spec_parts.py": ["check"],
                  "wmma_gen/attention_common/check.py": ["check_attention"],
                  "wmma_gen/attention_common/run_set.py": ["forward", "backward"],
                  "wmma_gen/attention_common/inputs.py": ["forward_inputs_for", "backward_inputs_for"],
                  "wmma_gen/device/launcher.py": ["launch"]},
}
KNOWN: dict = {}   # (module, function) -> why it is listed; each entry is a size recomputed from arrays


def _functions(module: str) -> dict[str, ast.FunctionDef]:
    tree = ast.parse((ROOT / module).read_text())
    return {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}


def _reached(funcs: dict, entries: list[str]) -> set[str]:
    """The entries and every module-level function they call by name, transitively."""
    seen, todo = set(), list(entries)
    while todo:
        name = todo.pop()
        if name in seen or name not in funcs:
            continue
        seen.add(name)
        todo += [c.func.id for c in ast.walk(funcs[name]) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)]
    return seen


def _recomputes(fn: ast.FunctionDef) -> list[str]:
    """Size names assigned from an expression that reads `.shape`."""
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and any(isinstance(x, ast.Attribute) and x.attr == "shape"
                                                for x in ast.walk(node.value)):
            out += sorted({x.id for t in node.targets for x in ast.walk(t) if isinstance(x, ast.Name)} & SIZE_NAMES)
    return out


def findings(op: str) -> dict:
    found = {}
    for module, entries in CHECK_PATH[op].items():
        funcs = _functions(module)
        missing = [e for e in entries if e not in funcs]
        assert not missing, f"{module} has no {missing}: update CHECK_PATH to the check path of today"
        for name in sorted(_reached(funcs, entries)):
            sizes = _recomputes(funcs[name])
            if sizes:
                found[(module, name)] = sizes
    return found


@pytest.mark.parametrize("op", sorted(CHECK_PATH))
def test_the_check_path_recomputes_only_the_known_sizes(op):
    found = findings(op)
    expected = {key for key in KNOWN if any(key[0] == m for m in CHECK_PATH[op])}
    assert set(found) == expected, {"new": sorted(set(found) - expected), "fixed": sorted(expected - set(found))}


def test_the_scan_sees_a_recomputation():
    fn = ast.parse("def f(a):\n    m, k = a.shape\n    rows = len(a)\n    return m * k\n").body[0]
    assert _recomputes(fn) == ["k", "m"]


def test_the_gemm_problem_reaches_the_kernel_unchanged(monkeypatch):
    """spec.check hands check_gemm the Problem itself (the directive holds no sizes)."""
    from wmma_gen.ops.gemm import check as gemm_check
    from wmma_gen.ops.gemm import spec
    from wmma_gen.ops.gemm.directive import GemmDirective
    seen = []
    monkeypatch.setattr(gemm_check, "check_gemm", lambda d, s, arch, p, *a, **kw: seen.append(p))
    cs = type("CS", (), {"schedule": None, "arch": "gfx1100", "key": None})()
    monkeypatch.setattr(spec, "kernel_of", lambda cs, d, p: None)
    spec.check(cs, GemmDirective("f16"), spec.GemmProblem(48, 40, 72, 2))
    assert seen == [spec.GemmProblem(48, 40, 72, 2)]


def test_the_gemm_default_schedule_follows_the_problem():
    """spec.default_schedule(d, arch, p) fits p, given as a GemmProblem or a study's stored mapping."""
    from wmma_gen.ops import registry
    from wmma_gen.ops.gemm.directive import GemmDirective
    spec, d = registry.get("gemm"), GemmDirective("f16")
    small = spec.default_schedule(d, "gfx1100", spec.problem(64, 64, 64))
    assert small == spec.default_schedule(d, "gfx1100", {"m": 64, "n": 64, "k": 64, "batch": 1})
    assert small != spec.default_schedule(d, "gfx1100", spec.problem(4096, 4096, 4096))


def test_the_user_call_parser_is_still_seen_measuring_arrays():
    """The scan still finds the API boundary's own measuring (inputs.forward_inputs reads the user's
    shapes): the empty attention finding above is the check path's, not a blind scan."""
    funcs = _functions("wmma_gen/attention_common/inputs.py")
    measured = {name for name in _reached(funcs, ["forward_inputs"]) if _recomputes(funcs[name])}
    assert {"_dense_shapes", "_problem"} <= measured


def test_the_check_arrays_are_held_against_the_problem():
    """run_set's inputs take the sizes from the Problem and refuse arrays of another shape, naming
    the array, its shape and the Problem's."""
    import numpy as np

    from wmma_gen.errors import ScheduleError
    from wmma_gen.attention_common.inputs import forward_inputs_for
    from wmma_gen.ops.attention.spec import AttentionProblem
    p = AttentionProblem(batch=1, heads=2, kv_heads=1, seq_q=3, seq_k=5)
    q, kv = np.zeros((1, 3, 2, 32), np.float16), np.zeros((1, 5, 1, 32), np.float16)
    inp = forward_inputs_for(p, 32, q, kv, kv)
    assert inp.problem.problem == p and inp.problem.sizes()["total_k"] == 5
    with pytest.raises(ScheduleError, match=r"k.shape.*\(1, 5, 1, 32\)"):
        forward_inputs_for(p, 32, q, np.zeros((1, 6, 1, 32), np.float16), kv)


def test_each_op_has_one_problem_class():
    """Issue 26 item 1: one frozen Problem per op -- no module under ops/<op>/ defines a second
    class named *Problem (the problems-file rows are *Row, the user call is AttentionCall)."""
    found: dict = {}
    for path in sorted((ROOT / "wmma_gen/ops").glob("*/*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and node.name.endswith("Problem"):
                found.setdefault(path.parent.name, []).append(f"{path.name}:{node.name}")
    assert found, "the scan found no Problem class at all"
    assert {op: where for op, where in found.items() if len(where) > 1} == {}


# --- every op: the directive is sizeless (issue 26) ---
def test_no_directive_holds_a_size_of_its_problem():
    """What a kernel is compiled from (the directive) and what a call is (the Problem) share no
    field, for every registered op: a size cannot be read off the directive, so it cannot be
    recomputed or disagree with the Problem anywhere (GemmDirective lost m, n, k, batch)."""
    import dataclasses

    from wmma_gen.ops import registry
    shared = {}
    for name in registry.names():
        spec = registry.get(name)
        both = {f.name for f in dataclasses.fields(spec.directive)} & {f.name for f in dataclasses.fields(spec.problem)}
        if both:
            shared[name] = sorted(both)
    assert len(registry.names()) >= 4 and shared == {}


def test_the_gemm_scan_sees_a_directive_size_read():
    """A guard beside the structural test above: no module under ops/gemm/ reads m, n, k or batch
    off a variable named like a directive (d, directive), and the scan does see such a read."""
    found = set()
    for path in sorted((ROOT / "wmma_gen/ops/gemm").glob("*.py")):
        for x in ast.walk(ast.parse(path.read_text())):
            if (isinstance(x, ast.Attribute) and x.attr in {"m", "n", "k", "batch"} and isinstance(x.value, ast.Name)
                    and x.value.id in {"d", "directive"}):
                found.add((path.name, x.lineno))
    assert found == set()
    fn = ast.parse("def f(d, p):\n    return d.m * p.n\n")
    assert [x.attr for x in ast.walk(fn) if isinstance(x, ast.Attribute) and x.value.id == "d"] == ["m"]


def test_gemm_legality_and_default_fit_read_the_problem():
    """The size rules (schedule.PROBLEM_CONSTRAINTS) and defaults.fitted_default take the GemmProblem."""
    from wmma_gen.ops.gemm.defaults import fitted_default
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.schedule import Schedule
    from wmma_gen.ops.gemm.spec import GemmProblem
    from wmma_gen.targets import get_target
    t, d = get_target("gfx1100"), GemmDirective("f16")
    deep = Schedule(block_k=32, split_k=8)
    assert deep.problems(d, t, GemmProblem(4096, 4096, 4096)) == []
    reasons = deep.problems(d, t, GemmProblem(64, 64, 48))
    assert len(reasons) == 1 and "K=48" in reasons[0]
    assert fitted_default(d, t, GemmProblem(64, 64, 48)) != fitted_default(d, t, GemmProblem(4096, 4096, 4096))


def test_gemm_traffic_and_tolerance_read_the_problem():
    """The model's traffic and the check's tolerance follow the GemmProblem they are given."""
    from wmma_gen.ops.gemm.check import tolerance
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.schedule import Schedule
    from wmma_gen.ops.gemm.spec import GemmProblem
    from wmma_gen.ops.gemm.traffic import traffic
    from wmma_gen.targets import get_target
    t, d = get_target("gfx1100"), GemmDirective("f16")
    small, big = GemmProblem(256, 128, 64, 2), GemmProblem(4096, 4096, 4096)
    assert traffic(d, Schedule(), t, 96, 6 << 20, problem=small) != traffic(d, Schedule(), t, 96, 6 << 20, problem=big)
    assert traffic(d, Schedule(), t, 96, 6 << 20, problem=small).workgroups == (256 // 64) * (128 // 64) * 2   # 64x64 tiles, batch 2
    assert tolerance(d, small) < tolerance(d, big)
