"""The dummy op's OpSpec: every field of the contract, nothing of its own in shared code."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from wmma_gen.ops.contract import Axis, ModelEstimate, OpSpec

from .kernel import SPACE, AxpySchedule, build_axpy
from .sweep_axes import SWEEP_AXES  # noqa: F401  (light: registry.sweep_axes_of)

LIGHT_MODULES = {"recorded": ".recorded", "calibration_point": ".calibration_point"}

DTYPES = ("f16",)


@dataclass(frozen=True)
class AxpyDirective:
    dtype: str = "f16"

    def __post_init__(self):
        if self.dtype not in DTYPES:
            from wmma_gen.errors import ScheduleError
            raise ScheduleError("dtype", self.dtype, f"one of {', '.join(DTYPES)}")

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return f'{{"dtype": "{self.dtype}"}}'

    @classmethod
    def from_dict(cls, d: dict) -> "AxpyDirective":
        return cls(**d)


@dataclass(frozen=True)
class AxpyProblem:
    n: int


AXES = (Axis("n", int, "--length", 100, (4096,), "vector length"),)


@dataclass(frozen=True)
class AxpyCheck:
    passed: bool
    max_abs: float
    tol: float
    source: str

    def to_dict(self) -> dict:
        return asdict(self)


def check(cs, d, p, device=None, seed: int = 0) -> AxpyCheck:
    from wmma_gen.device.launcher import launch
    from wmma_gen.device.select import get_device
    src, ck = cs.pairs()["axpy"]
    x = np.random.default_rng(seed).standard_normal(p.n).astype(np.float16)
    outs, timing = launch(ck, src.signature, {"n": p.n}, get_device(device), {"X": x})
    # 2x is exact and one f16 addition rounds once: the f16 rounding of the exact 2x + 1
    ref = (2.0 * x.astype(np.float64) + 1.0).astype(np.float16)
    err = float(np.abs(outs["Y"].astype(np.float64) - ref.astype(np.float64)).max(initial=0.0))
    return AxpyCheck(err == 0.0, err, 0.0, timing.source)


def estimate(cs, d, s, p, arch: str) -> ModelEstimate:
    seconds = 4.0 * p.n / 500e9 + 2e-6          # a toy model: bytes over a fixed bandwidth + launch
    return ModelEstimate(seconds, flops(d, p) / seconds / 1e12, "dram")


def flops(d, p) -> int:
    return 2 * p.n


def plan(arch: str, *, n: int, dtype: str):
    """The device-call plan (ops/plans.cached_plan): the one axpy kernel for vectors of n."""
    from wmma_gen.ops import registry
    from wmma_gen.ops.compile_op import compile_op
    from wmma_gen.ops.plans import Plan, Step
    d, s = AxpyDirective(dtype), AxpySchedule()
    cs = compile_op(registry.get("dummy"), d, s, None, arch)
    return Plan(tuple(Step(ck, src.signature) for src, ck in cs.pairs().values()), {"n": n})


def torch_baseline(torch, r):
    """`bench --vs torch`: 2 * x + 1 in torch on the ladder row's length."""
    x = torch.ones(int(r["n"]))
    return (lambda: 2 * x + 1), flops(AxpyDirective(), AxpyProblem(int(r["n"]))), "torch 2*x+1"


def spec() -> OpSpec:
    return OpSpec(
        "dummy", "y = 2 x + 1 in f16 (the contract's test op)", "loop", AxpyDirective, AxpySchedule, SPACE,
        AxpyProblem, AXES, build=lambda d, s, t, key: {"axpy": build_axpy(d, s, t)}, key_of=lambda d, s, p: None,
        check=check, estimate=estimate, flops=flops, bucket=lambda p: {"n": p.n},
        default_schedule=lambda d, arch, p=None: AxpySchedule(),
        gate_problems=lambda d, s, key: [AxpyProblem(s.block + 5), AxpyProblem(1)],
        tolerance="exact (one f16 rounding of the exact 2x + 1)", tuning_from="dummy_op.tuning",
        selftest=lambda arch: [(AxpyDirective(), AxpyProblem(77))], plan=plan, torch_baseline=torch_baseline)
