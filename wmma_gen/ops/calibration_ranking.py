"""Does the model rank GEMM tiles as the measurements did? (issue 38 item 1)

Some published points name the tile the measured library picked (its tuned configuration); each of
those carries 4x4 WMMA fragments per wave, 4 or 8 waves and both operands staged through LDS.
`ranking` sets the model's estimate of our analogue of that tile (same block and waves, our default
schedule's other knobs) beside tiles with fewer fragments per wave (SMALLER) and tiles whose waves read
A and B straight from global memory without LDS (NO_LDS: the model's exhaustive best at gfx1100 4096^3
was one of these before it counted L0 lines, ops/gemm/l0_lines.py), at the point's problem
(source=model; compiled kernels, no GPU). Any of them estimated at least as fast as the published pick
is a misrank: nothing measured says it wins, and every tuned library chose the pick.

`fit_lds_exposed` fits the model's one ranking parameter (params.ModelParams.lds_exposed: the share
of the CU's LDS clocks a SIMD's WMMAs do not hide) on the FIT points only: the smallest value on a
grid that ranks each fit point's published tile first. The held-out points' tiles check it
(bench/calibrate.py reports both; tests/compile/test_calibration_ranking.py asserts it).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..model import params
from . import registry

# point id -> (block_m, block_n, waves_m, waves_n) of the measured library's kernel, and its source
PUBLISHED_TILE: dict[str, tuple[tuple[int, int, int, int], str]] = {
    "lib-1100-torch-f16": ((128, 128, 2, 2), "rocBLAS/Tensile Cijk_Ailk_Bljk_HHS_BH_MT128x128x16_MI16x16x16x1 ... "
                           "WG32_4_1 (4 wave32 waves), the 4096^3 f16 kernel on a 7900 XTX (tinygrad issue #5569)"),
    "lib-1151-rwg-8192": ((128, 256, 2, 4), "rocm_wmma_gemm config/gemm_config_gfx1151_f16.json, 8192^3 A col B row: "
                          "warps 2x4, warp tile 4x4"),
    "lib-1151-rwg-4096-ccol": ((128, 128, 2, 2), "rocm_wmma_gemm config/gemm_config_gfx1151_f16.json, 4096^3 A col "
                               "B row C col: warps 2x2, warp tile 4x4"),
    "lib-1151-rwg-4096-crow": ((256, 128, 4, 2), "rocm_wmma_gemm config/gemm_config_gfx1151_f16.json, 4096^3 A col "
                               "B row C row: warps 4x2, warp tile 4x4"),
    "lib-1201-hipblaslt-8192": ((128, 128, 2, 2), "hipBLASLt HHS MT128x128x32 MIWT4_4 WG32_4_1 (ROCm/rocm-libraries "
                                "issue #10861)"),
}
# tiles with fewer WMMA fragments per wave (8 or 4; the published picks have 16)
SMALLER: tuple[tuple[int, int, int, int], ...] = (
    (256, 64, 4, 2), (64, 256, 2, 4), (128, 64, 2, 2), (64, 128, 2, 2), (128, 128, 4, 2), (128, 128, 2, 4),
    (64, 64, 2, 2))
# tiles without LDS (block_m, block_n, waves_m, waves_n, "none"): the per-wave 128x32 (8x2 fragments) the
# model ranked first at gfx1100 f16 4096^3 with one, two or four waves (results/tuner_efficiency.csv: 106.3
# TFLOP/s, 1.13x the default, source=model, before ops/gemm/l0_lines.py), and the small-problem gather default
NO_LDS: tuple[tuple, ...] = ((128, 32, 1, 1, "none"), (256, 32, 2, 1, "none"), (128, 64, 1, 2, "none"),
                             (64, 64, 2, 2, "none"))
# the four smaller tiles the model rates nearest to every published pick (results/model_calibration.md:
# the 64-row ones stay >= 1.8% below the pick everywhere): what tests/compile/test_calibration_ranking.py compiles
NEAREST: tuple[tuple[int, int, int, int], ...] = ((256, 64, 4, 2), (128, 128, 4, 2), (128, 128, 2, 4), (128, 64, 2, 2))
GRID = tuple(round(0.05 * i, 2) for i in range(21))      # lds_exposed candidates 0 .. 1


@dataclass(frozen=True)
class Ranked:
    tile: tuple                 # (block_m, block_n, waves_m, waves_n[, "none": no LDS])
    fragments_per_wave: int
    tflops: float               # source=model
    schedule: object

    @property
    def label(self) -> str:
        bm, bn, wm, wn = self.tile[:4]
        return f"{bm}x{bn} {wm}x{wn} waves" + (", no LDS" if no_lds(self.tile) else "")


def fragments(tile) -> int:
    bm, bn, wm, wn = tile[:4]
    return (bm // wm // 16) * (bn // wn // 16)


def no_lds(tile) -> bool:
    return len(tile) > 4 and tile[4] == "none"


def _schedule(spec, base: dict, tile):
    s = {**base, **dict(zip(("block_m", "block_n", "waves_m", "waves_n"), tile[:4]))}
    if no_lds(tile):   # as defaults.fitted_default does for an operand read straight from global memory
        s.update(lds="none", buffers=1, lds_pad=0)
    return spec.schedule.from_dict(s)


def ranking(point, lds_exposed: float | None = None, tiles=SMALLER + NO_LDS) -> list[Ranked]:
    """[published pick, *tiles] with the model's TFLOP/s at `point`'s problem (lds_exposed: the stored
    value, or this one in this call only)."""
    spec = registry.get("gemm")
    d, problem = point.directive(), point.problem()
    base = spec.default_schedule(d, point.arch, problem).to_dict()
    out = []
    for tile in (PUBLISHED_TILE[point.id][0], *tiles):
        s = _schedule(spec, base, tile)
        if lds_exposed is None:
            tf = spec.estimate_of(d, s, problem, point.arch).tflops
        else:
            with params.changed(point.arch, lds_exposed=lds_exposed):
                tf = spec.estimate_of(d, s, problem, point.arch).tflops
        out.append(Ranked(tile, fragments(tile), tf, s))
    return out


def misranked(ranked: list[Ranked]) -> list[Ranked]:
    """The other tiles (smaller per wave, or without LDS) the model puts at or above the published pick
    (ranked[0])."""
    return [r for r in ranked[1:] if r.tflops >= ranked[0].tflops]


def ranked_points(points) -> list:
    """The points with a published tile, in table order."""
    return [p for p in points if p.id in PUBLISHED_TILE]


def fit_lds_exposed(points, tiles=SMALLER + NO_LDS) -> tuple[float, list[str]]:
    """(smallest GRID value that ranks every FIT point's published tile first, those point ids).
    ValueError when no grid value does."""
    fit = [p for p in ranked_points(points) if p.fit]
    for x in GRID:
        if all(not misranked(ranking(p, x, tiles)) for p in fit):
            return x, [p.id for p in fit]
    raise ValueError(f"no lds_exposed in {GRID[0]}..{GRID[-1]} ranks the published tiles of "
                     f"{', '.join(p.id for p in fit)} first")
