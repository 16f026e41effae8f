"""The GEMM kernel's arguments (its Signature) and its specialization key.

Problem: {"m", "n", "k", "batch"}. Arguments, in kernel order:

  A, B          in         stored operands (batch, rows, cols); i4 cols are bytes
  C             out        (batch, M, N) in out_dtype
  C0            in         (batch, M, N), only when beta != 0
  bias          in         (N,) or (M,) f32, only with a bias
  workspace     workspace  split-K partials (split_k, batch, M, N) f32/i32
  counters      workspace  split-K arrival counters (batch, tiles), zeroed; the kernel
                           resets them, so repeated launches stay valid
  M N K batch   scalar     sizes
  a_sb a_sr ... scalar     element strides (batch, row) of A, B, C, C0 -- taken from the
                           host arrays by the launcher, so strided views need no copy

The key holds what the code depends on besides directive and schedule: whether M, N, K fill
whole tiles (mask-free loads/stores) and the alignment of each operand's rows.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Mapping

from ...errors import ScheduleError
from ...kernels.signature import KArg, Signature
from ...dtype_bits import BITS
from .directive import GemmDirective
from .schedule import Schedule

MAX_ALIGN_BITS = 128   # widest global access (global_load_b128)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def stored_shape(d: GemmDirective, which: str, p: Mapping[str, int]) -> tuple[int, int, int]:
    """(batch, rows, cols) of stored operand `which` ("a" | "b"); i4 cols are bytes."""
    rows, cols = {"a": (p["m"], p["k"]), "b": (p["k"], p["n"])}[which]
    if (which == "a" and d.trans_a) or (which == "b" and d.trans_b):
        rows, cols = cols, rows
    if d.dtype == "i4":
        if cols % 2:
            raise ScheduleError(f"{which}.stored_row_length", cols, "an even number for packed i4 (two per byte)")
        cols //= 2
    return p["batch"], rows, cols


def tiles(s: Schedule, p: Mapping[str, int]) -> int:
    return _cdiv(p["m"], s.block_m) * _cdiv(p["n"], s.block_n)


def grid(s: Schedule, p: Mapping[str, int]) -> tuple[int, int, int]:
    """(tiles, split_k, batch) workgroups."""
    return tiles(s, p), s.split_k, p["batch"]


def buffer_args(d: GemmDirective, s: Schedule) -> list[tuple[str, str]]:
    """(name, storage dtype) of every buffer argument, in kernel order."""
    out = [("A", d.dtype), ("B", d.dtype), ("C", d.out_dtype)]
    if d.beta:
        out.append(("C0", d.out_dtype))
    if d.bias:
        out.append(("bias", "f32"))
    if s.split_k > 1:
        out += [("workspace", "i32" if d.is_int else "f32"), ("counters", "i32")]
    return out


def scalar_args(d: GemmDirective) -> tuple[str, ...]:
    return ("M", "N", "K", "batch", "a_sb", "a_sr", "b_sb", "b_sr", "c_sb", "c_sr") + \
        (("c0_sb", "c0_sr") if d.beta else ())


def gemm_signature(d: GemmDirective, s: Schedule, name: str = "wmma_gemm") -> Signature:
    size = {"M": lambda p: p["m"], "N": lambda p: p["n"], "K": lambda p: p["k"], "batch": lambda p: p["batch"]}
    shape = {
        "A": lambda p: stored_shape(d, "a", p), "B": lambda p: stored_shape(d, "b", p),
        "C": lambda p: (p["batch"], p["m"], p["n"]), "C0": lambda p: (p["batch"], p["m"], p["n"]),
        "bias": lambda p: (p["n"] if d.bias == "n" else p["m"],),
        "workspace": lambda p: (s.split_k, p["batch"], p["m"], p["n"]),
        "counters": lambda p: (p["batch"], tiles(s, p)),
    }
    role = {"A": "in", "B": "in", "C": "out", "C0": "in", "bias": "in", "workspace": "workspace",
            "counters": "workspace"}
    strides = {"A": ("a_sb", "a_sr"), "B": ("b_sb", "b_sr"), "C": ("c_sb", "c_sr"), "C0": ("c0_sb", "c0_sr")}
    args = [KArg(n, role[n], dt, shape=shape[n], strides=strides.get(n, ()),
                 init="zero" if n == "counters" else "poison") for n, dt in buffer_args(d, s)]
    args += [KArg(n, "scalar", "i32", value=size.get(n)) for n in scalar_args(d)]
    return Signature(name, tuple(args), lambda p: grid(s, p), (s.threads, 1, 1))


@dataclass(frozen=True)
class GemmKey:
    """Compile-time facts about a problem (the specialization key). One code object per
    (directive without sizes, schedule, key) serves every problem with this key."""
    m_full: bool      # M % block_m == 0: no row guards
    n_full: bool      # N % block_n == 0: no column guards
    k_full: bool      # K % block_k == 0 and the K tiles split evenly: no depth guards
    align_a: int      # power of two (elements) dividing A's row length and strides
    align_b: int
    k_tiles_odd: bool = False  # K tiles per workgroup odd; only for schedules whose loop
    #                            shape depends on it (k_unroll 2 or LDS double buffering),
    #                            so unroll remainders and the last LDS buffer are static

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        full = "".join(x for x, ok in zip("MNK", (self.m_full, self.n_full, self.k_full)) if ok)
        return (f"full={full or '-'} align_a={self.align_a} align_b={self.align_b}"
                f"{' k_tiles_odd' if self.k_tiles_odd else ''}")


def _align(values: tuple[int, ...], cap: int) -> int:
    a = cap
    while a > 1 and any(v % a for v in values):
        a //= 2
    return a


def spec_key(d: GemmDirective, s: Schedule, p: Mapping[str, int],
             strides: Mapping[str, tuple[int, int]] | None = None,
             offsets: Mapping[str, int] | None = None) -> GemmKey:
    """The key of problem `p`; `strides` maps "A"/"B" to the (batch, row) element strides of
    the host views (default: contiguous); `offsets` to the element offset of each base address
    from a 16-byte boundary (device-resident operands such as big[:, 1:]; uploads start aligned),
    so a vector width never assumes an alignment the address does not have."""
    strides, offsets = dict(strides or {}), dict(offsets or {})
    aligns = []
    for which in ("a", "b"):
        _, rows, cols = stored_shape(d, which, p)
        sb, sr = strides.get(which.upper(), (rows * cols, cols))
        cap = max(1, MAX_ALIGN_BITS // (8 if d.dtype == "i4" else BITS[d.dtype]))
        aligns.append(_align((cols, sr if rows > 1 else 0, sb if p["batch"] > 1 else 0,
                              offsets.get(which.upper(), 0)), cap))
    nk = _cdiv(p["k"], s.block_k)
    parity_matters = s.k_unroll == 2 or (s.lds != "none" and s.buffers == 2)
    return GemmKey(p["m"] % s.block_m == 0, p["n"] % s.block_n == 0,
                   p["k"] % s.block_k == 0 and nk % s.split_k == 0, *aligns,
                   k_tiles_odd=parity_matters and _cdiv(nk, s.split_k) % 2 == 1)


def gate_problems(d: GemmDirective, s: Schedule, key: GemmKey) -> list[dict[str, int]]:
    """Small problems with exactly `key` (so the gate runs the very code object that is timed
    and exported): at most 2 macro tiles per side, two K tiles per split, batch 1 -- plus,
    when the key has partial tiles, a second problem whose edges fall elsewhere."""
    base = {"m": (2 if s.block_m <= 64 else 1) * s.block_m, "n": (2 if s.block_n <= 64 else 1) * s.block_n,
            "k": 2 * s.block_k * s.split_k}
    blocks = {"m": s.block_m, "n": s.block_n, "k": s.block_k * s.split_k}
    if key.k_tiles_odd:   # an odd number of K tiles per split
        base["k"] = (3 if key.k_full else 2) * s.block_k * s.split_k
    full = {"m": key.m_full, "n": key.n_full, "k": key.k_full}

    def candidates(axis: str) -> list[int]:
        if full[axis]:
            return [base[axis]]
        return [base[axis] - dlt for dlt in range(1, blocks[axis]) if base[axis] - dlt > 0]
    out: list[dict[str, int]] = []
    for m in candidates("m")[:24]:
        for n in candidates("n")[:24]:
            for k in candidates("k")[:24]:
                p = {"m": m, "n": n, "k": k, "batch": 1}
                if spec_key(d, s, p) == key and all(p[a] != q[a] for q in out for a in "mnk" if not full[a]):
                    out.append(p)
                    if len(out) == (1 if all(full.values()) else 2):
                        return out
    if not out:
        raise ScheduleError("gate problem", str(key), "a small problem with this specialization key; none found")
    return out
