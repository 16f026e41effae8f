"""Does a model-ranked win survive the model's own guesses? (issue 25 item 3)

The GPU-less model (ops/*/model.py) rests on parameters no document here confirms: the rows of
params.SOURCES marked "assumption" (latencies, L0 bandwidth, DRAM efficiency, ...; L2 and MALL bandwidth
on every product but the ones measured, params.MEASURED). A
tuned schedule that beats the default only because one of those guesses happens to favour it is
not evidence: gfx1100 f16 4096^3 ranked a one-wave 128x32 tile without LDS 1.13x above the default
purely on `l2_bytes_per_clk` (2407, scaled from the RX 7600's measured L2; below ~1490 the default won;
source=model, issue 38) until the model counted the 128-byte L0 lines its fragment loads touch
(ops/gemm/l0_lines.py, [RDNA]: one line per clock): now 73.8 vs the default's 94.1 TFLOP/s, and only
`l0_bytes_per_clk` x2 (an assumption: two lines per clock) puts it back above (107.1). Published tuned
configurations measured on a real RX 7900 XTX never pick fewer than 8 WMMA tiles per wave
(adelj88/rocm_wmma_gemm's tuned configs; rocBLAS's 4096^3 kernel is MT128x128, tinygrad #5569).

`flips` varies each assumption by FACTORS, one at a time (the others stay at their values), and
returns every variation under which the ranking reverses. Export keeps a model-ranked entry over
the default only when there is none; a GPU measurement (source=hip) needs no such check.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import params

# fields that are a guess on at least one arch; flips() varies those that are one on its arch
ASSUMPTIONS = tuple(k for k in params.SOURCES if any(params.is_assumption(a, k) for a in params.PARAMS))
FACTORS = (0.5, 2.0)


@dataclass(frozen=True)
class Flip:
    parameter: str
    factor: float
    mine: float       # the tuned schedule's figure under the variation
    base: float       # the default's

    def __str__(self) -> str:
        return f"{self.parameter} x{self.factor:g}: {self.mine:.2f} < default {self.base:.2f}"


def flips(arch: str, figures: Callable[[], tuple[float, float]]) -> list[Flip]:
    """The one-at-a-time variations of the model's assumptions under which `figures()` --
    (tuned, default) TFLOP/s from the model, computed inside the call -- gives tuned < default."""
    base = params.params_for(arch)
    out = []
    for name in (n for n in ASSUMPTIONS if params.is_assumption(arch, n)):
        value = getattr(base, name)
        for f in FACTORS:
            with params.changed(arch, **{name: type(value)(value * f)}):
                mine, dflt = figures()
            if mine < dflt * (1 - 1e-9):
                out.append(Flip(name, f, mine, dflt))
    return out
