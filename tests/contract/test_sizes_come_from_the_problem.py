"""Issue 26 item 5: where does a size of `wmma-gen check --op X` come from?

The CLI builds the op's Problem from its axes' flags (OpSpec.problem_of_args) and hands it to
spec.check. From there the sizes should only be *read*: a function on the check path that
assigns an array's `.shape` to a size name (m, n, k, batch, heads, seq_q, B, H, Sq, D, ...)
recomputes a size the Problem already holds. This test walks each op's check path -- the entry
functions below and, inside each module, every function they call by name -- and compares
what it finds with KNOWN, both ways: a new recomputation fails, and so does a fixed one that is
still listed (shrink KNOWN then).

Findings today (see KNOWN): GEMM recomputes nothing (its sizes travel on the sized directive,
spec.sized); the attention check builds arrays from the Problem and then run_set.forward /
backward re-derive B, H, Hkv, Sq, Sk, D from those arrays through attention/inputs.py (the
numpy API's input parsing, which has its own AttentionProblem class)."""
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
                  "wmma_gen/ops/attention/inputs.py": ["forward_inputs", "backward_inputs"],
                  "wmma_gen/device/launcher.py": ["launch"]},
}
KNOWN = {   # (module, function) -> why it is listed; each entry is a size recomputed from arrays
    ("wmma_gen/ops/attention/inputs.py", "_dense_shapes"):
        "B, Sq, H, D from q.shape and Sk, Hkv from k.shape (run_set -> forward_inputs -> _problem)",
    ("wmma_gen/ops/attention/inputs.py", "_problem"):
        "varlen: H, D, Hkv, total_q, total_k from q.shape / k.shape",
}


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
