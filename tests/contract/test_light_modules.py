"""An op's optional light modules are declared, not found by place (cleanup6 item 1): its spec
module's LIGHT_MODULES names the module of each role (problem-file rows, recorded rows,
calibration points) and SWEEP_AXES its sweep axes; the two attention ops share attention_common's
problem-file row with no re-export module in their folders."""
import types

import pytest

from wmma_gen.attention_common import problem_file, sweep_axes
from wmma_gen.ops import registry


def test_the_attention_ops_declare_the_shared_problem_file_row():
    for op in ("attention", "attention_bwd"):
        assert registry.light_module(op, "problem_file") is problem_file
    assert registry.sweep_axes_of("attention_bwd") == sweep_axes.SHARED
    assert registry.sweep_axes_of("attention") == sweep_axes.SHARED + (sweep_axes.SOFTCAP,)


def test_a_role_the_spec_does_not_declare_is_none():
    assert registry.light_module("mla", "problem_file") is None
    assert registry.light_module("mla", "recorded").__name__ == "wmma_gen.ops.mla.recorded"


def test_an_unknown_role_is_refused_naming_the_roles(monkeypatch):
    with pytest.raises(ValueError, match=r"role='sweep' is not allowed: one of problem_file, recorded, "):
        registry.light_module("gemm", "sweep")
    spec = types.ModuleType("bad_spec")
    spec.LIGHT_MODULES = {"recorded": "wmma_gen.ops.mla.recorded", "problems": ".problem_file"}
    monkeypatch.setitem(__import__("sys").modules, "bad_spec", spec)
    registry.register("bad", "bad_spec")
    try:
        with pytest.raises(ValueError, match=r"op='bad': LIGHT_MODULES role\(s\) problems are not allowed"):
            registry.light_module("bad", "recorded")
    finally:
        registry.unregister("bad")
