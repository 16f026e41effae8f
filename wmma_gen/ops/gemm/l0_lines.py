"""L0 cache lines a GEMM kernel's global loads touch, and the L0 clocks that costs (issue 38 item 1).

[RDNA] (AMD "RDNA Architecture" whitepaper, 2019, "Vector caches"): a CU's address logic takes the 32
lane addresses of a wave32 load and coalesces those that fall in the same 128-byte cache line; the L0
vector cache has 128-byte lines and delivers one line -- a full wave32 of dwords -- per clock; on a hit
it reads out a 128-byte line and returns it over the response bus. AMD's "RDNA Architecture" slides
(GPUOpen, 2019) give the RX 5700 XT 9.76 TB/s of L0 bandwidth: 128 B per clock per CU (40 CUs, 1.905 GHz).
So a load whose lanes touch L distinct lines holds the L0 path for L clocks however few bytes each lane
reads. model/estimate.vmem_clocks charges max(vmem_min_clk, lane bytes / L0 B per clock): right for a
coalesced load (L = bytes / 128), low for a load whose lanes each read another row -- a WMMA fragment
read straight from global memory (16 rows of A per load, lanes 16-31 the same rows on gfx11: 16 lines,
4 clocks charged) and the thread-major staged loads of kernels/staging/tile_order (a thread's chunks run
along one row, so a wave's lanes span rows). `extra_clocks` is what the line count adds per wave and K
tile. RDNA3/RDNA4 keep the rate in the model as l0_bytes_per_clk / l0_line_bytes lines per clock (params.py:
an assumption row; the RDNA3 L0 doubled in size, 32 KiB per CU, no document here gives its rate).

Addresses are the kernel's own: staged chunks from tile_order.group_index (the function the kernel
builder uses), fragment lanes as kernels/fragments.load_fragment_global reads them; matrices contiguous
(row stride = stored row length), their base 128-byte aligned, the tile at the origin, averaged over the
K tiles of one line period.
"""
from __future__ import annotations

import functools
import math

from ...dtype_bits import BITS
from ...kernels.staging.tile_order import IntOps, chunk_width, group_index, row_group
from ...layouts import ab_elements
from ...targets import Target
from .directive import GemmDirective
from .problem import GemmProblem
from .schedule import Schedule
from .signature import spec_key, stored_shape

def _k_contiguous(d: GemmDirective, which: str) -> bool:
    return not d.trans_a if which == "a" else d.trans_b   # as ops/gemm/kernel.k_contiguous


def _lines(ranges, line: int) -> int:
    """Distinct `line`-byte lines covered by (first byte, byte count) ranges."""
    return len({ln for start, size in ranges for ln in range(start // line, (start + size - 1) // line + 1)})


def _staged(d, s, which, stride, ebits, align, tile, line):
    """(lane bits, lines) of each staged load of K tile `tile`, all waves of the workgroup."""
    kc = _k_contiguous(d, which)
    outer = s.block_m if which == "a" else s.block_n
    kst = s.block_k // 2 if d.dtype == "i4" else s.block_k
    rows, cols = (outer, kst) if kc else (s.block_k, outer)
    w = chunk_width(cols, align, s.load_bits, ebits)
    g = row_group(not kc, rows, cols, w, s.threads, ebits, s.lds_store_bits)
    groups = rows * cols // (w * g)
    per_thread = -(-groups // s.threads)
    row0, col0 = (0, tile * kst) if kc else (tile * s.block_k, 0)
    out = []
    for wave in range(s.threads // 32):
        for i in range(per_thread):
            for e in range(g):
                ranges = []
                for tid in range(32 * wave, 32 * wave + 32):
                    r, c, dc = group_index(cols, w, g, s.threads, groups, per_thread, tid, i, IntOps)
                    ranges.append(((row0 + r + e) * stride + (col0 + c + dc) * ebits // 8, w * ebits // 8))
                out.append((w * ebits, _lines(ranges, line)))
    return out


def _direct(d, s, family, which, stride, ebits, align, tile, k_step, line):
    """(lane bits, lines) of each fragment load straight from global memory, all waves."""
    kc = _k_contiguous(d, which)
    frags = s.frags_m if which == "a" else s.frags_n
    n = ab_elements(family)
    i4 = d.dtype == "i4"
    out = []
    for wave in range(s.waves_m * s.waves_n):
        wave0 = (wave % s.waves_m) * 16 * s.frags_m if which == "a" else (wave // s.waves_m) * 16 * s.frags_n
        for f in range(frags):
            for kk in range(0, s.block_k, k_step):
                def k_of(lane):   # the lane's first K (gfx12: half-waves hold the other K half)
                    return tile * s.block_k + kk + (8 * (lane // 16) if family == "gfx12" else 0)
                if kc:   # each lane a run along its stored row (outer): 16 rows per load
                    run = n // 2 if i4 else n
                    w = chunk_width(run, align, s.load_bits, ebits)
                    for off in range(0, run, w):
                        ranges = [((wave0 + 16 * f + ln % 16) * stride
                                   + ((k_of(ln) // 2 if i4 else k_of(ln)) + off) * ebits // 8, w * ebits // 8)
                                  for ln in range(32)]
                        out.append((w * ebits, _lines(ranges, line)))
                else:    # one stored row (K) per load, 16 outer elements side by side
                    for i in range(n):
                        ranges = [((k_of(ln) + i) * stride + ((wave0 + 16 * f + ln % 16) // (2 if i4 else 1))
                                   * ebits // 8, ebits // 8) for ln in range(32)]
                        out.append((ebits, _lines(ranges, line)))
    return out


@functools.lru_cache(maxsize=256)
def loads(d: GemmDirective, s: Schedule, family: str, k_step: int, problem: GemmProblem, line: int) -> tuple:
    """(lane bits, lines) of every global load of A and B in one line period of K tiles, all waves
    of a workgroup, and the period (K tiles): what `extra_clocks` costs."""
    key = spec_key(d, s, problem.as_dict())
    ebits = 8 if d.dtype == "i4" else BITS[d.dtype]
    rows_bytes = {w: stored_shape(d, w, problem.as_dict())[2] * ebits // 8 for w in ("a", "b")}
    kst_bytes = (s.block_k // 2 if d.dtype == "i4" else s.block_k) * ebits // 8
    period = line // math.gcd(line, kst_bytes)
    out = []
    for tile in range(period):
        for which in ("a", "b"):
            align = key.align_a if which == "a" else key.align_b
            if s.lds != "none" and which in s.lds:
                out += _staged(d, s, which, rows_bytes[which], ebits, align, tile, line)
            else:
                out += _direct(d, s, family, which, rows_bytes[which], ebits, align, tile, k_step, line)
    return tuple(out), period


def extra_clocks(d: GemmDirective, s: Schedule, t: Target, problem: GemmProblem, p) -> dict:
    """Per wave and K tile: L0 clocks of the A/B loads by line count, what vmem_clocks charges for
    them, and the difference the GEMM model adds (source=model)."""
    ops, period = loads(d, s, t.family, t.instr(d.dtype, d.acc).k, problem, p.l0_line_bytes)
    per_line = p.l0_line_bytes / p.l0_bytes_per_clk
    charged = sum(max(p.vmem_min_clk, 32 * bits / 8 / p.l0_bytes_per_clk) for bits, _ in ops)
    by_lines = sum(max(p.vmem_min_clk, 32 * bits / 8 / p.l0_bytes_per_clk, lines * per_line) for bits, lines in ops)
    per = period * (s.threads // 32)
    return {"loads": len(ops) / per, "lines": sum(n for _, n in ops) / per, "charged": charged / per,
            "by_lines": by_lines / per, "extra": (by_lines - charged) / per}
