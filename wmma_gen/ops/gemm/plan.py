"""The GEMM's device-call plan (OpSpec.plan, read by ops/plans.cached_plan): operand shapes and
strides -> the directive, the API's schedule and the one compiled kernel."""
from __future__ import annotations

import numpy as np

from ...errors import ScheduleError
from ..plans import Plan, Step


def gemm_plan(arch, *, dtype, layout, a, b, c, out, bias, beta, alpha, activation, unsigned, c0, offsets=()) -> Plan:
    """The one GEMM kernel of a device-resident call: a, b, c, c0 are (shape, strides) or shapes
    (batch first), checked here against the layout; the strides enter the specialization key."""
    from .api import default_schedule
    from .build import compile_gemm
    from .directive import LAYOUTS, GemmDirective
    from .signature import spec_key
    from .problem import GemmProblem
    if layout not in LAYOUTS:
        raise ScheduleError("layout", layout, f"one of {', '.join(LAYOUTS)}: first letter a, second b; T = stored transposed")
    (sa, ta), (sb, tb) = a, b
    m, ka = sa[1:][::-1] if layout[0] == "T" else sa[1:]
    kb, n = sb[1:][::-1] if layout[1] == "T" else sb[1:]
    if ka != kb:
        raise ScheduleError("b.shape", sb, f"K={ka} to match a.shape={sa} with layout {layout}")
    batch = c[0]
    for name, shp in (("a", sa), ("b", sb)) + ((("c0", c0),) if c0 is not None else ()):
        if shp[0] not in (1, batch):
            raise ScheduleError(f"{name}.shape", shp, f"batch {batch} (c's) or 1 (broadcast)")
    if c[1:] != (m, n):
        raise ScheduleError("c.shape", c, f"({m}, {n}) or (batch, {m}, {n}) for this a and b")
    if c0 is not None and c0[1:] != (m, n):
        raise ScheduleError("c0.shape", c0, f"({m}, {n}) or (batch, {m}, {n})")
    if beta != 0.0 and c0 is None:
        raise ScheduleError("c0", None, f"an (M, N) operand when beta={beta} != 0")
    if bias is not None and bias != (n,):
        raise ScheduleError("bias.shape", bias, f"({n},): one f32 value per output column")
    f32 = lambda x: float(np.float32(x))   # the epilogue computes in f32
    d = GemmDirective(dtype, layout=layout, out_dtype=out, alpha=f32(alpha), beta=f32(beta),
                      bias="n" if bias is not None else "", activation=activation, unsigned=unsigned)
    p = GemmProblem(int(m), int(n), int(ka), int(batch))   # the operands' sizes
    problem = p.as_dict()
    s = default_schedule(d, arch, p)
    strides = {"A": (ta[0] if sa[0] > 1 else 0, ta[1]), "B": (tb[0] if sb[0] > 1 else 0, tb[1])}
    kern = compile_gemm(d, s, arch, p, key=spec_key(d, s, problem, strides, dict(offsets)))
    return Plan((Step(kern.compiled, kern.signature),), problem)
