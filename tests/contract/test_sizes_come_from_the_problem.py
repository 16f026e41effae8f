"""Issue 26 item 5: where does a size of `wmma-gen check --op X` come from?

The CLI builds the op's Problem from its axes' flags (OpSpec.problem_of_args) and hands it to
spec.check. From there the sizes should only be *read*: a function on the check path that
assigns an array's `.shape` to a size name (m, n, k, batch, heads, seq_q, B, H, Sq, D, ...)
recomputes a size the Problem already holds. This test walks each op's check path -- the entry
functions below and, inside each module, every function they call by name -- and compares
what it finds with KNOWN, both ways: a new recomputation fails, and so does a fixed one that is
still listed (shrink KNOWN then).

Findings today: nothing is recomputed (KNOWN is empty). GEMM's sizes travel on the sized
directive (spec.sized); the attention check builds arrays from the Problem and run_set.forward /
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
    "attention": {"wmma_gen/ops/attention/spec.py": ["check"],
                  "wmma_gen/ops/attention/check.py": ["check_attention"],
                  "wmma_gen/ops/attention/run_set.py": ["forward", "backward"],
                  "wmma_gen/ops/attention/inputs.py": ["forward_inputs_for", "backward_inputs_for"],
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
    """The GEMM check's sizes come from the Problem alone: the directive check_gemm sees is the
    Problem's sizes (spec.sized), whatever the directive carried before."""
    from dataclasses import replace

    from wmma_gen.ops.gemm import check as gemm_check
    from wmma_gen.ops.gemm import spec
    from wmma_gen.ops.gemm.directive import GemmDirective
    seen = []
    monkeypatch.setattr(gemm_check, "check_gemm", lambda d, *a, **kw: seen.append((d.m, d.n, d.k, d.batch)))
    cs = type("CS", (), {"schedule": None, "arch": "gfx1100", "key": None})()
    monkeypatch.setattr(spec, "kernel_of", lambda cs, d, p: None)
    spec.check(cs, replace(GemmDirective("f16", 8, 8, 8)), spec.GemmProblem(48, 40, 72, 2))
    assert seen == [(48, 40, 72, 2)]


def test_the_gemm_default_schedule_follows_the_problem_not_the_directive():
    """spec.default_schedule(d, arch, p) fits p (a GemmProblem or a study's stored mapping); the
    directive's own sizes count only when no Problem is given."""
    from wmma_gen.ops import registry
    from wmma_gen.ops.gemm.directive import GemmDirective
    spec = registry.get("gemm")
    big, small = GemmDirective("f16", 4096, 4096, 4096), GemmDirective("f16", 64, 64, 64)
    from_problem = spec.default_schedule(big, "gfx1100", spec.problem(64, 64, 64))
    assert from_problem == spec.default_schedule(small, "gfx1100")
    assert from_problem == spec.default_schedule(big, "gfx1100", {"m": 64, "n": 64, "k": 64, "batch": 1})
    assert from_problem != spec.default_schedule(big, "gfx1100")


def test_the_user_call_parser_is_still_seen_measuring_arrays():
    """The scan still finds the API boundary's own measuring (inputs.forward_inputs reads the user's
    shapes): the empty attention finding above is the check path's, not a blind scan."""
    funcs = _functions("wmma_gen/ops/attention/inputs.py")
    measured = {name for name in _reached(funcs, ["forward_inputs"]) if _recomputes(funcs[name])}
    assert {"_dense_shapes", "_problem"} <= measured


def test_the_check_arrays_are_held_against_the_problem():
    """run_set's inputs take the sizes from the Problem and refuse arrays of another shape, naming
    the array, its shape and the Problem's."""
    import numpy as np

    from wmma_gen.errors import ScheduleError
    from wmma_gen.ops.attention.inputs import forward_inputs_for
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


# --- GEMM: sizes read off the directive (issue 26: GemmDirective is to lose m, n, k, batch) ---
GEMM_DIRECTIVE_NAMES = {"d", "directive", "b"}   # how ops/gemm names a GemmDirective (lookup's bucket: b)
# (module, function) still reading d.m / d.n / d.k / d.batch: the GemmDirective still carries
# sizes there. Each fixed one must leave this list (the test fails both ways).
GEMM_KNOWN_READS = {
    ("api.py", "gemm"), ("lookup.py", "Entry.problem"),
    ("lookup.py", "_bucket"), ("schedule.py", "_problem"),
    ("signature.py", "problem_of"), ("tuning.py", "_tags"), ("tuning.py", "items"), ("tuning.py", "label"),
    ("tuning.py", "row"), ("tuning.py", "study_name"),
}


def gemm_directive_size_reads() -> set:
    """(module, function) under ops/gemm/ reading m, n, k or batch off a directive-named variable."""
    found = set()
    for path in sorted((ROOT / "wmma_gen/ops/gemm").glob("*.py")):
        tree = ast.parse(path.read_text())
        scopes = [(f.name, f) for f in tree.body if isinstance(f, ast.FunctionDef)]
        scopes += [(f"{c.name}.{f.name}", f) for c in tree.body if isinstance(c, ast.ClassDef)
                   for f in c.body if isinstance(f, ast.FunctionDef)]
        for name, fn in scopes:
            if any(isinstance(x, ast.Attribute) and x.attr in {"m", "n", "k", "batch"}
                   and isinstance(x.value, ast.Name) and x.value.id in GEMM_DIRECTIVE_NAMES for x in ast.walk(fn)):
                found.add((path.name, name))
    return found


def test_gemm_reads_directive_sizes_only_where_known():
    found = gemm_directive_size_reads()
    assert found == GEMM_KNOWN_READS, {"new": sorted(found - GEMM_KNOWN_READS),
                                       "fixed": sorted(GEMM_KNOWN_READS - found)}


def test_gemm_legality_and_default_fit_read_the_problem():
    """The size rules (schedule.PROBLEM_CONSTRAINTS) and defaults.fitted_default take the
    GemmProblem: a directive carrying other sizes changes nothing."""
    from wmma_gen.ops.gemm.defaults import fitted_default
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.schedule import Schedule
    from wmma_gen.ops.gemm.spec import GemmProblem
    from wmma_gen.targets import get_target
    t = get_target("gfx1100")
    big, small = GemmDirective("f16", 4096, 4096, 4096), GemmDirective("f16", 64, 64, 48)
    deep = Schedule(block_k=32, split_k=8)
    assert deep.problems(small, t, GemmProblem(4096, 4096, 4096)) == []
    reasons = deep.problems(big, t, GemmProblem(64, 64, 48))
    assert len(reasons) == 1 and "K=48" in reasons[0]
    assert fitted_default(big, t, problem=GemmProblem(64, 64, 48)) == fitted_default(small, t)
    assert fitted_default(big, t, problem=GemmProblem(64, 64, 48)) != fitted_default(big, t)


def test_the_gemm_scan_sees_a_directive_size_read(tmp_path):
    fn = ast.parse("def f(d, p):\n    return d.m * p.n\n").body[0]
    assert any(isinstance(x, ast.Attribute) and x.attr == "m" and x.value.id in GEMM_DIRECTIVE_NAMES
               for x in ast.walk(fn) if isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name))


def test_gemm_traffic_and_tolerance_read_the_problem():
    """The model's traffic and the check's tolerance take the GemmProblem: a directive carrying
    other sizes gives the figures of the problem, not its own."""
    from wmma_gen.ops.gemm.check import tolerance
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.schedule import Schedule
    from wmma_gen.ops.gemm.spec import GemmProblem
    from wmma_gen.ops.gemm.traffic import traffic
    from wmma_gen.targets import get_target
    t = get_target("gfx1100")
    big, small = GemmDirective("f16", 4096, 4096, 4096), GemmDirective("f16", 256, 128, 64, batch=2)
    p = GemmProblem(256, 128, 64, 2)
    assert traffic(big, Schedule(), t, 96, 6 << 20, problem=p) == traffic(small, Schedule(), t, 96, 6 << 20)
    assert traffic(big, Schedule(), t, 96, 6 << 20, problem=p) != traffic(big, Schedule(), t, 96, 6 << 20)
    assert tolerance(big, p) == tolerance(small) < tolerance(big)
