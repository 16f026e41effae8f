"""Plans for the device-resident calls (device_calls.py): which compiled kernels run, in what
order, on what problem -- chosen once per distinct call shape and kept in a bounded LRU, so a
repeated call (every training step) only binds pointers and enqueues.

    cached_plan(op, arch, **call) -> Plan(steps=(Step(compiled, signature), ...), problem)

`call` holds everything the choice depends on (shapes, strides that change the GEMM's
specialization key, dtypes, flags); it must be hashable. Schedules come from the same lookup
the numpy API uses (exported tuned file for the arch, else the default). Each op's builder is
its OpSpec.plan (ops/gemm/plan.py, ops/attention/plans.py, ops/attention_bwd/plan.py): nothing here names an op.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from ..errors import ScheduleError

MAX_PLANS = 512


@dataclass(frozen=True)
class Step:
    compiled: object
    sig: object
    templates: dict = field(default_factory=dict, compare=False)   # device/template.py, per layout


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    problem: dict


_plans: "OrderedDict[tuple, Plan]" = OrderedDict()
observers: list = []   # f(op, arch, call, plan) on every plan request (wmma_gen.torch.record_problems)


def plan_keys() -> frozenset:
    """The call shapes that have a plan (compiled kernels chosen); warm-up reports the new ones."""
    return frozenset(_plans)


def cached_plan(op: str, arch: str, **call) -> Plan:
    key = (op, arch, tuple(sorted(call.items())))
    plan = _plans.get(key)
    if plan is None:
        plan = _builder(op)(arch, **call)
        _plans[key] = plan
        if len(_plans) > MAX_PLANS:
            _plans.popitem(last=False)
    else:
        _plans.move_to_end(key)
    for f in observers:
        f(op, arch, call, plan)
    return plan


def _builder(op: str):
    """The op's plan builder (OpSpec.plan); ScheduleError naming the ops that have one."""
    from . import registry
    spec = registry.get(op)
    if spec.plan is None:
        have = [n for n in registry.names() if registry.get(n).plan is not None]
        raise ScheduleError("op", op, f"one of {', '.join(have)} (ops with a device-resident call plan)")
    return spec.plan
