"""LDS bank-conflict degree of the loop's DS accesses, derived from the schedule's LDS layout.

Bank model (params: `lds_banks` banks of `lds_bank_bytes`): an instruction's lanes request
dwords; identical dwords are broadcast; each bank serves one distinct dword per clock. The
instruction takes max-over-banks(distinct dwords) clocks, the ideal is
ceil(distinct dwords / banks); the degree is their ratio (1 = conflict-free).

Layout assumption (the builder's LDS staging is being written; the model follows
Schedule.lds_bytes): each staged operand is a row-major tile of rows of BLOCK_K + lds_pad
elements, one row per M (for A) or N (for B) index, K contiguous. Fragment reads: lane l reads
row l%16 starting at K offset 0 (gfx11; lanes 16-31 repeat rows 0-15) or 8*(l//16) (gfx12),
`width` bits per instruction. Staging writes: thread t writes `load_bits` contiguous bits at
element t*load_bits/elem_bits of the tile (row-major), i.e. the global tile copied as is.
"""
from __future__ import annotations

from collections import defaultdict

from ...dtype_bits import BITS
from ...targets import Target
from .directive import GemmDirective
from .schedule import Schedule


def conflict_cycles(lane_addrs: list[int], width_bytes: int, banks: int, bank_bytes: int) -> tuple[int, int]:
    """(clocks, ideal clocks) for one DS instruction whose lane l accesses `width_bytes`
    starting at byte address lane_addrs[l]."""
    per_bank: dict[int, set[int]] = defaultdict(set)
    words = set()
    for a in lane_addrs:
        for w in range(a // bank_bytes, (a + max(width_bytes, 1) - 1) // bank_bytes + 1):
            words.add(w)
            per_bank[w % banks].add(w)
    clocks = max((len(v) for v in per_bank.values()), default=0)
    ideal = max(1, -(-len(words) // banks))
    return clocks, ideal


def degree(lane_addrs: list[int], width_bytes: int, banks: int, bank_bytes: int) -> float:
    c, i = conflict_cycles(lane_addrs, width_bytes, banks, bank_bytes)
    return c / i


def fragment_read_addrs(s: Schedule, d: GemmDirective, t: Target, width_bits: int) -> list[int]:
    eb = BITS[d.dtype] / 8
    row = (s.block_k + s.lds_pad) * eb
    k0 = (lambda l: 0) if t.family == "gfx11" else (lambda l: 8 * (l // 16))
    return [int((l % 16) * row + k0(l) * eb) for l in range(32)]


def staging_write_addrs(s: Schedule, d: GemmDirective, width_bits: int) -> list[int]:
    eb = BITS[d.dtype] / 8
    per = max(1, int(width_bits / BITS[d.dtype]))
    row = (s.block_k + s.lds_pad) * eb
    out = []
    for l in range(32):
        e = l * per
        out.append(int((e // s.block_k) * row + (e % s.block_k) * eb))
    return out


def loop_degrees(s: Schedule, d: GemmDirective, t: Target, read_widths: dict[int, int],
                 write_widths: dict[int, int], banks: int, bank_bytes: int) -> dict:
    """Per-kind weighted conflict degree and clocks of one wave's DS instructions per
    iteration, under the layout assumption above."""
    out = {}
    for kind, widths, addrs in (("ds_read", read_widths, lambda w: fragment_read_addrs(s, d, t, w)),
                                ("ds_write", write_widths, lambda w: staging_write_addrs(s, d, w))):
        clocks = ideal = 0
        for w, n in widths.items():
            c, i = conflict_cycles(addrs(w), w // 8, banks, bank_bytes)
            clocks, ideal = clocks + n * c, ideal + n * i
        out[kind] = {"clocks": clocks, "ideal_clocks": ideal, "degree": (clocks / ideal) if ideal else 1.0}
    return out
