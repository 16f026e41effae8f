"""Global-memory traffic of a GEMM launch: per workgroup, at L2, at DRAM; arithmetic
intensity and the target's roofline.

Per workgroup (macro tile BM x BN, K_wg = K / split_k):
    A: BM * K_wg, B: BN * K_wg input elements; C: BM * BN output elements (read too when
    beta != 0); bias: BN or BM values. Split-K writes f32/i32 partials and a second pass
    reads them back (split_k * M * N * 4 bytes each way).
L2 traffic: every workgroup's A and B tiles are requested from L2 once (the loop's waves share
them through L0/LDS), so L2 bytes = workgroups * per-workgroup bytes.
DRAM traffic, stated assumptions:
  1. Workgroups resident at the same time (`concurrent`) share tiles through L2: a batch of R
     workgroups in raster order touches R/tiles_n + 1 tile rows and min(R, tiles_n) tile
     columns (row raster; mirrored for col; grouped covers group_m rows), each read once.
  2. Across batches an operand is re-read from DRAM unless all of it fits in half the L2, in
     which case it is read once in total.
  3. Infinity Cache / MALL: bytes that miss L2 (`l2_miss_bytes`) are served by the MALL; an
     operand that fits in half the MALL comes from DRAM once, otherwise its L2 misses go to
     DRAM. Never below the compulsory bytes (each operand once).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ...dtype_bits import BITS
from ...targets import Target
from .directive import GemmDirective
from .problem import as_problem
from .schedule import Schedule


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Traffic:
    workgroups: int
    bytes_per_workgroup: float
    l2_bytes: float
    l2_miss_bytes: float           # served by the MALL when present, else equal to dram_bytes
    dram_bytes: float
    compulsory_bytes: float
    flops: float                   # useful flops (directive)
    arithmetic_intensity: float    # flops per DRAM byte (model's DRAM bytes)
    roofline_tflops: float         # target roofline: min(peak, flops/compulsory bytes * DRAM bandwidth)
    model_bound_tflops: float      # min(peak, arithmetic_intensity * DRAM bandwidth)

    def to_dict(self) -> dict:
        return asdict(self)


def _bytes(n_elems: float, dtype: str) -> float:
    return n_elems * BITS[dtype] / 8


def workgroups(d: GemmDirective, s: Schedule, problem) -> int:
    p = as_problem(problem)
    return _cdiv(p.m, s.block_m) * _cdiv(p.n, s.block_n) * p.batch * s.split_k


def traffic(d: GemmDirective, s: Schedule, t: Target, concurrent: int, l2_bytes: int,
            mall_bytes: int = 0, *, problem) -> Traffic:
    """Bytes moved by `d` with `s` on `problem` (a GemmProblem)."""
    p = as_problem(problem)
    flops = 2 * p.m * p.n * p.k * p.batch
    tiles_m, tiles_n = _cdiv(p.m, s.block_m), _cdiv(p.n, s.block_n)
    k_wg = _cdiv(p.k, s.split_k)
    a_tile, b_tile = _bytes(s.block_m * k_wg, d.dtype), _bytes(s.block_n * k_wg, d.dtype)
    out_dt = "f32" if s.split_k > 1 else d.out_dtype
    c_tile = _bytes(s.block_m * s.block_n, out_dt if out_dt in BITS else "f32")
    c_read = c_tile if d.beta else 0.0
    bias = _bytes(s.block_n if d.bias == "n" else s.block_m, d.out_dtype) if d.bias else 0.0
    per_wg = a_tile + b_tile + c_tile + c_read + bias
    n_wg = workgroups(d, s, p)
    reduce = 2 * _bytes(s.split_k * p.m * p.n * p.batch, "f32") if s.split_k > 1 else 0.0
    l2 = n_wg * per_wg + reduce

    # DRAM: concurrent batches share tiles (assumption 1), whole operands may stay in L2 (2)
    r = max(1, min(concurrent, n_wg))
    if s.raster == "row":
        rows, cols = min(tiles_m, r / tiles_n + 1), min(r, tiles_n)
    elif s.raster == "col":
        rows, cols = min(r, tiles_m), min(tiles_n, r / tiles_m + 1)
    else:
        rows, cols = min(r, s.group_m, tiles_m), min(tiles_n, r / min(s.group_m, tiles_m) + 1)
    batches = n_wg / r
    a_all = _bytes(p.m * p.k, d.dtype) * p.batch
    b_all = _bytes(p.k * p.n, d.dtype) * p.batch
    a_miss = min(n_wg * a_tile, a_all if a_all <= l2_bytes / 2 else batches * rows * a_tile)
    b_miss = min(n_wg * b_tile, b_all if b_all <= l2_bytes / 2 else batches * cols * b_tile)
    c_all = n_wg * (c_tile + c_read + bias) + reduce
    compulsory = a_all + b_all + _bytes(p.m * p.n * p.batch, d.out_dtype) * (2 if d.beta else 1)
    l2_miss = max(compulsory, a_miss + b_miss + c_all)
    a_dram = a_all if a_all <= mall_bytes / 2 else a_miss
    b_dram = b_all if b_all <= mall_bytes / 2 else b_miss
    dram = max(compulsory, a_dram + b_dram + c_all)
    ai = flops / dram
    peak = t.peak_tflops(d.dtype)
    bw_tb = t.mem_bw_gbs * 1e9 / 1e12
    roof = min(peak, flops / compulsory * bw_tb)
    return Traffic(n_wg, per_wg, l2, l2_miss, dram, compulsory, flops, ai, roof, min(peak, ai * bw_tb))
