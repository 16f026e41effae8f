"""The GEMM's OpSpec (ops/contract.py): Problem, build, check on the object, estimate, bucket.

registry.py names this module; `spec()` imports the heavy parts (MLIR builder) lazily."""
from __future__ import annotations

from ..contract import I32_MAX, Axis, Deferred, ModelEstimate, OpSpec
from .directive import GemmDirective as DIRECTIVE  # noqa: F401  (light: registry.directive_of)
from .problem import GemmProblem, as_problem
from .schedule import SPACE  # noqa: F401  (light: registry.space_of)
from .sweep_axes import SWEEP_AXES  # noqa: F401  (light: registry.sweep_axes_of)

LIGHT_MODULES = {"problem_file": ".problem_file", "recorded": ".recorded",   # registry.light_module
                 "calibration_point": ".calibration_point"}


AXES = (Axis("m", int, "--shape", 256, (1024, 2048, 4096), "rows of A and C"),
        Axis("n", int, "--shape", 256, (1024, 2048, 4096), "columns of B and C"),
        Axis("k", int, "--shape", 256, (1024, 2048, 4096), "reduction length"),
        Axis("batch", int, "--batch", 1, (1,), "independent products", (1, I32_MAX)))


def build(d, s, target, key):
    from .kernel import build_gemm
    return {"gemm": build_gemm(d, s, target, key)}


def signatures(d, s, target, key, symbols) -> dict:
    """What build declares, without MLIR (OpSpec.signatures: a cached launch)."""
    from .signature import gemm_signature
    return {"gemm": gemm_signature(d, s, symbols["gemm"])}


def key_of(d, s, p: GemmProblem):
    from .signature import spec_key
    return spec_key(d, s, p.as_dict())


def kernel_of(cs, d, p: GemmProblem):
    """The build.GemmKernel view of a CompiledSet (what check_gemm and the model take)."""
    from .build import GemmKernel
    return GemmKernel(d, cs.schedule, cs.key, cs, as_problem(p))


def check(cs, d, p: GemmProblem, device=None, seed: int = 0):
    from .check import check_gemm
    return check_gemm(d, cs.schedule, cs.arch, as_problem(p), device, seed=seed, kernel=kernel_of(cs, d, p))


def estimate(cs, d, s, p: GemmProblem, arch: str) -> ModelEstimate:
    from .model import estimate as gemm_estimate
    e = gemm_estimate(cs.kernel("gemm"), d, s, arch, as_problem(p))
    return ModelEstimate(e.seconds, e.tflops, e.limiter)


def flops(d, p) -> int:
    p = p if isinstance(p, GemmProblem) else GemmProblem(**p)
    return 2 * p.m * p.n * p.k * p.batch


def bucket(p: GemmProblem) -> dict:
    """What an exported schedule file matches (lookup.py): shape; batch when not 1."""
    b = {"m": p.m, "n": p.n, "k": p.k}
    return {**b, "batch": p.batch} if p.batch != 1 else b


def gate_problems(d, s, key) -> list[GemmProblem]:
    from .signature import gate_problems as gate
    return [GemmProblem(**g) for g in gate(d, s, key)]


def default_schedule(d, arch: str, p):
    """The API's choice for the problem p (a GemmProblem or a study's stored mapping)."""
    from .defaults import default_schedule as default
    return default(d, arch, as_problem(p))


def host_bytes(d, p) -> int:
    """Host memory of `wmma-gen check`: A, B as float64 and their converted copies, C and the
    float64 reference (OpSpec.host_bytes)."""
    p = as_problem(p)
    return 8 * p.batch * (2 * (p.m * p.k + p.k * p.n) + 4 * p.m * p.n)


def report(cs, d, s, p, arch: str):
    from .report import report as analyze_report
    return analyze_report(kernel_of(cs, d, p), d, s, as_problem(p), arch)


def schedule_problems(d, s, p, target) -> list[str]:
    """The tuner's validate stage: what makes s illegal for d on this problem (schedule.py)."""
    return s.problems(d, target, as_problem(p))


def admit(cs, d, s, p, arch: str):
    """The tuner's admit stage: the model's occupancy of the compiled kernel; a candidate of
    which no workgroup fits on a CU is pruned before its gate."""
    from ...model.occupancy import occupancy
    from ...model.params import params_for
    from ...targets import get_target
    t, md = get_target(arch), cs.kernel("gemm").metadata
    occ = occupancy(md.vgpr_count, md.lds_bytes, s.threads, t, params_for(t.arch))
    why = "" if occ.workgroups_per_cu >= 1 else f"no workgroup fits on a CU: {occ.limits}"
    return why, {"occupancy": occ.waves_per_simd, "workgroups_per_cu": occ.workgroups_per_cu}


def gate_attrs(gp: GemmProblem, r) -> dict:
    """What the tuner's gate records beyond the shared fields (as gate_<name>): the gate
    problem's shape, the relative error the tolerance bounds, the check's kernel time."""
    return {"max_rel": float(r.max_rel), "seconds": round(float(r.seconds), 3), "m": gp.m, "n": gp.n, "k": gp.k}


SELFTEST_DTYPES = ("f16", "bf16", "i8", "fp8")   # each where the target has a WMMA for it
SELFTEST_PROBLEM = GemmProblem(48, 40, 72)       # partial macro tiles on every axis, K not a tile multiple


def selftest(arch: str) -> list:
    """`wmma-gen selftest`'s rows: NN, f32 accumulate, on a small shape with edges everywhere."""
    from ...targets import get_target
    from .directive import GemmDirective
    have = get_target(arch).dtypes
    p = SELFTEST_PROBLEM
    return [(GemmDirective(dt), p) for dt in SELFTEST_DTYPES if dt in have]


def spec() -> OpSpec:
    from .directive import GemmDirective
    from .schedule import SPACE, Schedule
    # the host side (numpy), imported on its first call
    gemm, gemm_plan = Deferred(f"{__package__}.api", "gemm"), Deferred(f"{__package__}.plan", "gemm_plan")
    gemm_reference = Deferred(f"{__package__}.reference", "gemm_reference")
    torch_matmul = Deferred(f"{__package__}.torch_baseline", "torch_matmul")
    return OpSpec(
        "gemm", "C = act(alpha * A @ B + beta * C0 + bias) on WMMA", "gemm", GemmDirective, Schedule, SPACE,
        GemmProblem, AXES, build, key_of, check, estimate, flops, bucket, default_schedule, gate_problems,
        tolerance="normwise: sqrt(K)*eps(in) + eps(out) for float inputs, exact for integers (check.py)",
        api=gemm, reference=gemm_reference, host_bytes=host_bytes, report=report,
        tuning_from="wmma_gen.ops.gemm.tuning", selftest=selftest, plan=gemm_plan, torch_baseline=torch_matmul,
        signatures=signatures, schedule_problems=schedule_problems, admit=admit, gate_error="max_rel",
        gate_attrs=gate_attrs)
