import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.ops.gemm.directive import GemmDirective


def test_defaults():
    d = GemmDirective("f16", 4, 5, 6)
    assert (d.acc, d.out_dtype, d.layout) == ("f32", "f32", "NN")
    assert GemmDirective("i8", 1, 1, 1).acc == "i32"
    assert d.flops == 2 * 4 * 5 * 6


@pytest.mark.parametrize("kw,field", [
    (dict(dtype="f64"), "dtype"), (dict(m=0), "m"), (dict(k=-3), "k"), (dict(batch=0), "batch"),
    (dict(acc="i32"), "acc"), (dict(dtype="bf16", acc="f16"), "acc"), (dict(layout="XN"), "layout"),
    (dict(bias="k"), "bias"), (dict(activation="tanh"), "activation"), (dict(unsigned=True), "unsigned"),
    (dict(out_dtype="i32"), "out_dtype"),
])
def test_bad_values_name_field(kw, field):
    base = dict(dtype="f16", m=8, n=8, k=8)
    base.update(kw)
    with pytest.raises(ScheduleError) as e:
        GemmDirective(**base)
    assert str(e.value).startswith(f"{field}=")


def test_round_trip():
    d = GemmDirective("bf16", 3, 4, 5, layout="TN", bias="n", activation="gelu")
    assert GemmDirective.from_dict(d.to_dict()) == d
