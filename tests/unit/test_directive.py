import numpy as np
import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem, as_problem
from wmma_gen.ops.registry import get


def test_defaults():
    d = GemmDirective("f16")
    assert (d.acc, d.out_dtype, d.layout) == ("f32", "f32", "NN")
    assert GemmDirective("i8").acc == "i32"
    assert get("gemm").flops(d, GemmProblem(4, 5, 6)) == 2 * 4 * 5 * 6


@pytest.mark.parametrize("kw,field", [
    (dict(dtype="f64"), "dtype"), (dict(acc="i32"), "acc"), (dict(dtype="bf16", acc="f16"), "acc"),
    (dict(layout="XN"), "layout"), (dict(bias="k"), "bias"), (dict(activation="tanh"), "activation"),
    (dict(unsigned=True), "unsigned"), (dict(out_dtype="i32"), "out_dtype"),
])
def test_bad_values_name_field(kw, field):
    base = dict(dtype="f16")
    base.update(kw)
    with pytest.raises(ScheduleError) as e:
        GemmDirective(**base)
    assert str(e.value).startswith(f"{field}=")


@pytest.mark.parametrize("kw,field", [(dict(m=0), "m"), (dict(k=-3), "k"), (dict(batch=0), "batch"),
                                      (dict(n=2.0), "n"), (dict(m=True), "m")])
def test_bad_sizes_name_field(kw, field):
    base = dict(m=8, n=8, k=8)
    base.update(kw)
    with pytest.raises(ScheduleError) as e:
        GemmProblem(**base)
    assert str(e.value).startswith(f"{field}=")


def test_numpy_sizes_become_ints():
    p = GemmProblem(np.int64(8), 8, np.int32(16))
    assert p == GemmProblem(8, 8, 16) and type(p.m) is int and type(p.k) is int


def test_sizes_given_to_the_directive_are_refused_by_name():
    """The old positional form GemmDirective(dtype, M, N, K) fails loudly, pointing at GemmProblem."""
    with pytest.raises(ScheduleError, match="GemmProblem"):
        GemmDirective("f16", 64, 64, 64)


def test_round_trip():
    d = GemmDirective("bf16", layout="TN", bias="n", activation="gelu")
    assert GemmDirective.from_dict(d.to_dict()) == d
    assert not {"m", "n", "k", "batch"} & set(d.to_dict())


def test_a_dict_stored_before_issue_26_reads_as_directive_and_problem():
    old = {"dtype": "f16", "m": 96, "n": 64, "k": 48, "batch": 2, "acc": "f32", "layout": "NT", "out_dtype": "f32",
           "alpha": 1.0, "beta": 0.0, "bias": "", "activation": "", "unsigned": False, "op": "gemm"}
    assert GemmDirective.from_dict(old) == GemmDirective("f16", layout="NT")
    assert as_problem(old) == GemmProblem(96, 64, 48, 2)
