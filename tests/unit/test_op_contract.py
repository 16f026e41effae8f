"""The op contract (ops/contract.py) and compile_op (ops/compile_op.py): typed Problems that
refuse unknown fields, a bounded in-memory LRU, and a disk index that finds cached code objects
without building MLIR (the sources are built only when asked for)."""
from collections import OrderedDict
from dataclasses import dataclass, replace

import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.ops import compile_op as co
from wmma_gen.ops import registry
from wmma_gen.ops.contract import Axis, OpSpec
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.schedule import Schedule
from wmma_gen.ops.gemm.spec import GemmProblem

SMALL = Schedule(block_m=16, block_n=16, block_k=16, waves_m=1, waves_n=1)


@pytest.fixture
def counting(tmp_path, monkeypatch):
    """The GEMM spec with a build that counts its calls, a fresh cache dir and an empty LRU."""
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(co, "_LRU", OrderedDict())
    calls = []
    gemm = registry.get("gemm")

    def build(d, s, t, key):
        calls.append(s)
        return gemm.build(d, s, t, key)
    return replace(gemm, build=build), calls


def test_every_registered_op_declares_a_typed_problem():
    for name in registry.names():
        spec = registry.get(name)
        assert spec.family in ("gemm", "loop")
        fields = set(spec.problem.__dataclass_fields__)
        assert {a.name for a in spec.problem_axes} <= fields and all(a.flag.startswith("--") for a in spec.problem_axes)


def test_problem_refuses_unknown_fields_naming_them():
    gemm = registry.get("gemm")
    assert gemm.make_problem({"m": 8, "n": 4, "k": 2}) == GemmProblem(8, 4, 2, 1)
    with pytest.raises(ScheduleError, match="seq_q.*fields of gemm's problem: m, n, k, batch"):
        gemm.make_problem({"m": 8, "n": 4, "k": 2, "seq_q": 3})
    assert gemm.problem_from({"m": 8, "n": 4, "k": 2, "dtype": "f16"}) == GemmProblem(8, 4, 2, 1)


def test_spec_refuses_axes_that_are_not_problem_fields():
    @dataclass(frozen=True)
    class P:
        n: int
    gemm = registry.get("gemm")
    with pytest.raises(ValueError, match=r"problem_axes \['m'\] are not fields of P"):
        replace(gemm, problem=P, problem_axes=(Axis("m", int, "--m", 1), Axis("n", int, "--n", 1)))
    with pytest.raises(ValueError, match="problem=.*a frozen dataclass"):
        replace(gemm, problem=dict)


def test_lru_returns_the_same_set_and_is_bounded(counting, monkeypatch):
    spec, calls = counting
    d = GemmDirective("f16")
    key = spec.key_of(d, SMALL, GemmProblem(32, 32, 32))
    first = co.compile_op(spec, d, SMALL, key, "gfx1100")
    assert co.compile_op(spec, d, SMALL, key, "gfx1100") is first and len(calls) == 1
    monkeypatch.setattr(co, "MEMORY", 1)
    other = replace(SMALL, block_k=32)
    co.compile_op(spec, d, other, spec.key_of(d, other, GemmProblem(32, 32, 32)), "gfx1100")
    assert len(co._LRU) == 1 and co.memory_key(spec, d, SMALL, key, "gfx1100") not in co._LRU


def test_disk_index_finds_the_objects_without_building_mlir(counting):
    spec, calls = counting
    d = GemmDirective("f16")
    key = spec.key_of(d, SMALL, GemmProblem(32, 32, 32))
    built = co.compile_op(spec, d, SMALL, key, "gfx1100")
    co.clear_memory()
    found = co.compile_op(spec, d, SMALL, key, "gfx1100")
    assert len(calls) == 1                                  # the index answered: no MLIR was built
    assert found is not built and found.isa_hash == built.isa_hash
    assert found.kernel("gemm").hsaco == built.kernel("gemm").hsaco and found.kernel("gemm").cache == "hit"
    assert found.sources["gemm"].mlir == built.sources["gemm"].mlir and len(calls) == 2   # built on demand


def test_a_set_names_its_kernels_and_refuses_others(counting):
    spec, _ = counting
    d = GemmDirective("f16")
    cs = co.compile_op(spec, d, SMALL, spec.key_of(d, SMALL, GemmProblem(32, 32, 32)), "gfx1100")
    assert cs.names == ("gemm",) and cs.schedule == SMALL
    with pytest.raises(ScheduleError, match="kernel.*'dq'.*one of gemm"):
        cs.kernel("dq")
