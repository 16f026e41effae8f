"""wmma_gen.torch.warmup names its problems by torch entry points (attention, linear, matmul) and
declares the registry ops each prepares: those are registered ops with a device plan, and warming
one entry point adds plans of its declared ops only (issue 26: the torch vocabulary maps onto
the registry instead of standing for op names)."""
import pytest

torch = pytest.importorskip("torch")

import importlib  # noqa: E402

from wmma_gen.ops import plans, registry  # noqa: E402

wt = importlib.import_module("wmma_gen.torch.warmup")   # the module (the package re-exports its function)


@pytest.mark.parametrize("name", list(wt.ENTRY_POINTS))
def test_each_entry_point_prepares_registered_ops_with_a_plan(name):
    ops = wt.ENTRY_POINTS[name].ops
    assert ops and set(ops) <= set(registry.names())
    assert all(registry.get(op).plan is not None for op in ops)


# sizes no other test uses, so the plans they need are new in this process
PROBLEMS = {"attention": {"op": "attention", "q": (1, 19, 2, 32), "k": (1, 27, 1, 32), "causal": True},
            "linear": {"op": "linear", "x": (19, 32), "weight": (24, 32), "dtype": torch.float16},
            "matmul": {"op": "matmul", "a": (19, 32), "b": (32, 24), "dtype": torch.float16}}


@pytest.mark.parametrize("name", list(wt.ENTRY_POINTS))
def test_warming_an_entry_point_plans_only_its_declared_ops(name):
    before = plans.plan_keys()
    assert wt.warmup([PROBLEMS[name]]) > 0
    new_ops = {key[0] for key in plans.plan_keys() - before}
    assert new_ops and new_ops <= set(wt.ENTRY_POINTS[name].ops), (name, new_ops)


def test_an_unknown_entry_point_is_refused_naming_the_known_ones_and_their_ops():
    with pytest.raises(ValueError) as e:
        wt.warmup([{"op": "conv2d", "x": (1, 1)}])
    msg = str(e.value)
    assert "conv2d" in msg and all(n in msg for n in wt.ENTRY_POINTS) and "gemm kernels" in msg
