"""Schedules: *how* a GEMM is computed, declared once as a knob table (STYLE rule 6).

`SPACE` lists every knob with its domain, doc and the condition under which it matters.
From it come the Optuna suggest calls (autotune/), the CLI flags (wmma_gen/cli), the JSON
schema and hypothesis strategies. Legality is a list of named predicates over
(Schedule, GemmDirective, Target) returning None or a reason; the same predicates prune
tuner trials and reject user JSON.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ...knobs import Knob, KnobSchedule
from ...dtype_bits import BITS
from ...targets import Target
from .directive import GemmDirective
from .problem import as_problem

SPACE: tuple[Knob, ...] = (
    Knob("block_m", (16, 32, 64, 128, 256), "macro tile rows (BM) per workgroup"),
    Knob("block_n", (16, 32, 64, 128, 256), "macro tile columns (BN) per workgroup"),
    Knob("block_k", (16, 32, 64), "K depth of one main-loop tile (BK)"),
    Knob("waves_m", (1, 2, 4, 8), "waves along M (WM); each owns BM/WM rows"),
    Knob("waves_n", (1, 2, 4, 8), "waves along N (WN); each owns BN/WN columns"),
    Knob("lds", ("none", "a", "b", "ab"), "operands staged through LDS (others load straight into fragments)"),
    Knob("buffers", (1, 2), "LDS buffers: 2 = ping-pong, prefetching tile k+1 while computing tile k",
         lambda s: s.lds != "none"),
    Knob("lds_pad", (0, 8), "LDS row padding in elements against bank conflicts",
         lambda s: s.lds != "none"),
    Knob("lds_store_bits", (16, 32, 64), "width of the LDS stores that transpose an operand into LDS\n"
         "(16: one 16-bit element each; wider packs consecutive K values)", lambda s: s.lds != "none"),
    Knob("load_bits", (32, 64, 128), "maximum width of each global load per lane, in bits\n"
         "(capped by the contiguous run a lane needs)"),
    Knob("k_unroll", (1, 2), "main-loop K tiles per iteration (2: LDS buffer offsets become immediates)"),
    Knob("raster", ("row", "col", "grouped"), "workgroup order: row-major, column-major, grouped for L2 reuse"),
    Knob("group_m", (2, 4, 8), "rows of workgroups per group", lambda s: s.raster == "grouped"),
    Knob("split_k", (1, 2, 4, 8), "K split across workgroups; the last one to finish sums the partials "
         "in a fixed order (deterministic)"),
)
KNOBS = {k.name: k for k in SPACE}


@dataclass(frozen=True)
class Schedule(KnobSchedule):
    block_m: int = 64
    block_n: int = 64
    block_k: int = 32
    waves_m: int = 2
    waves_n: int = 2
    lds: str = "none"
    buffers: int = 1
    lds_pad: int = 0
    lds_store_bits: int = 16
    load_bits: int = 128
    k_unroll: int = 1
    raster: str = "row"
    group_m: int = 4
    split_k: int = 1

    # --- derived sizes -------------------------------------------------------------
    @property
    def threads(self) -> int:
        return 32 * self.waves_m * self.waves_n

    @property
    def frags_m(self) -> int:
        """WMMA 16x16 fragments per wave along M (FM)."""
        return self.block_m // (16 * self.waves_m)

    @property
    def frags_n(self) -> int:
        return self.block_n // (16 * self.waves_n)

    def lds_bytes(self, d: GemmDirective) -> int:
        bits = BITS[d.dtype]
        a = (self.block_m * (self.block_k + self.lds_pad)) if "a" in self.lds else 0
        b = (self.block_n * (self.block_k + self.lds_pad)) if "b" in self.lds else 0
        return self.buffers * (a + b) * bits // 8 if self.lds != "none" else 0

    # --- legality (problems/validate: every check, KnobSchedule) ------------------------
    def validate_kernel(self, d: GemmDirective, t: Target) -> "Schedule":
        """The checks that do not depend on the problem size (what a code object needs)."""
        return self.check(KERNEL_CONSTRAINTS, d, t)

    # The size checks read the GemmProblem (a mapping of its fields is accepted), never the
    # directive: it holds no sizes (issue 26).
    def problems(self, d: GemmDirective, t: Target, p) -> list[str]:
        p = as_problem(p)
        return ([r for c in KERNEL_CONSTRAINTS if (r := c(self, d, t)) is not None]
                + [r for c in PROBLEM_CONSTRAINTS if (r := c(self, d, t, p)) is not None])

    def validate(self, d: GemmDirective, t: Target, p) -> "Schedule":
        self.check(KERNEL_CONSTRAINTS, d, t)
        return self.check(PROBLEM_CONSTRAINTS, d, t, as_problem(p))


# --- constraints: (Schedule, GemmDirective, Target) -> None | reason -------------------

def dtype_supported(s: Schedule, d: GemmDirective, t: Target) -> str | None:
    if (d.dtype, d.acc) not in t.wmma:
        allowed = ", ".join(f"{a}/{b}" for a, b in t.wmma)
        return f"dtype/acc {d.dtype}/{d.acc} has no WMMA on {t.arch}; allowed: {allowed}"
    return None


def tile_multiple_of_instruction(s: Schedule, d: GemmDirective, t: Target) -> str | None:
    if s.block_m % (16 * s.waves_m):
        return f"block_m={s.block_m} must be a multiple of 16*waves_m={16 * s.waves_m} (WMMA tile 16)"
    if s.block_n % (16 * s.waves_n):
        return f"block_n={s.block_n} must be a multiple of 16*waves_n={16 * s.waves_n} (WMMA tile 16)"
    if (d.dtype, d.acc) in t.wmma and s.block_k % t.instr(d.dtype, d.acc).k:
        return f"block_k={s.block_k} must be a multiple of the instruction K={t.instr(d.dtype, d.acc).k}"
    return None


def workgroup_size(s: Schedule, d: GemmDirective, t: Target) -> str | None:
    if s.threads > t.max_workgroup_threads:
        return f"waves_m*waves_n*32={s.threads} threads exceeds {t.max_workgroup_threads}"
    return None


def lds_budget(s: Schedule, d: GemmDirective, t: Target) -> str | None:
    if s.lds_bytes(d) > t.lds_bytes:
        return f"LDS {s.lds_bytes(d)} bytes exceeds {t.arch}'s {t.lds_bytes} per workgroup"
    return None


def vgpr_estimate(s: Schedule, d: GemmDirective, t: Target) -> int:
    """Lower bound on VGPRs per lane the schedule needs: accumulators, one K step of A and B
    fragments, and the global->LDS staging registers of one tile."""
    if (d.dtype, d.acc) not in t.wmma:
        return 0
    ins = t.instr(d.dtype, d.acc)
    acc = s.frags_m * s.frags_n * 8  # 8 VGPRs per 16x16 accumulator (both acc widths)
    frag = ins.a_elems * BITS[d.dtype] // 32
    ab = (s.frags_m + s.frags_n) * frag
    staged = 0
    if s.lds != "none":
        tile_bits = (("a" in s.lds) * s.block_m + ("b" in s.lds) * s.block_n) * s.block_k * BITS[d.dtype]
        staged = -(-tile_bits // (32 * s.threads))
    return acc + ab + staged + 8  # + addresses and indices


def vgpr_budget(s: Schedule, d: GemmDirective, t: Target) -> str | None:
    need = vgpr_estimate(s, d, t)
    if need > t.max_vgprs_per_wave:
        return f"needs at least {need} VGPRs per lane (accumulators + fragments + staging); max {t.max_vgprs_per_wave}"
    return None


def operand_size(s: Schedule, d: GemmDirective, t: Target, p) -> str | None:
    # kernels compute addresses with 32-bit index math (compiler/pipeline.py)
    biggest = p.batch * max(p.m * p.k, p.k * p.n, p.m * p.n * s.split_k)
    if biggest >= 2**31:
        return f"operands of {biggest} elements; at most 2**31-1 elements per operand (32-bit indexing)"
    return None


def output_offsets(s: Schedule, d: GemmDirective, t: Target, p) -> str | None:
    # C is written in the FLAT-global SADDR form (kernels/globalmem.py): tile origin in the
    # SGPR base, the lane's place inside the macro tile as an unsigned 32-bit byte offset
    # (RDNA3 ISA guide ch. 10, SADDR). Launcher-allocated C has row stride N.
    span = BITS[d.out_dtype] // 8 * ((s.block_m - 1) * p.n + s.block_n)
    if span >= 2**32:
        return (f"C rows of N={p.n} {d.out_dtype} make byte offsets of {span} inside a {s.block_m}-row tile; "
                f"at most 2**32-1 (32-bit VGPR offsets): use a smaller block_m or N")
    return None


def lds_i4_k_contiguous(s: Schedule, d: GemmDirective, t: Target) -> str | None:
    # Staging transposes operands whose K is not the stored contiguous axis; two i4 values
    # share a byte, so that transpose would need read-modify-write of LDS bytes.
    for which, trans in (("a", d.trans_a), ("b", not d.trans_b)):
        if d.dtype == "i4" and which in s.lds and trans:
            return (f"lds={s.lds!r} stages {which.upper()} but packed i4 {which.upper()} in layout {d.layout} "
                    f"is not K-contiguous; stage only K-contiguous i4 operands (A in N, B in T layout)")
    return None


def split_k_depth(s: Schedule, d: GemmDirective, t: Target, p) -> str | None:
    tiles = -(-p.k // s.block_k)
    if s.split_k > 1 and tiles < s.split_k:
        return f"split_k={s.split_k} needs at least split_k K tiles; K={p.k} has {tiles} tiles of block_k={s.block_k}"
    return None


KERNEL_CONSTRAINTS: tuple[Callable[[Schedule, GemmDirective, Target], Optional[str]], ...] = (
    dtype_supported, tile_multiple_of_instruction, workgroup_size, lds_budget, vgpr_budget,
    lds_i4_k_contiguous,
)
# checks on the problem size: (Schedule, GemmDirective, Target, GemmProblem) -> None | reason
PROBLEM_CONSTRAINTS = (operand_size, output_offsets, split_k_depth)
CONSTRAINTS = KERNEL_CONSTRAINTS + PROBLEM_CONSTRAINTS
Schedule.bind(SPACE, CONSTRAINTS)
