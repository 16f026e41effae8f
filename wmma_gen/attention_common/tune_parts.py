"""What the generic CLI and the sweep's objective ask of both dense attention ops beyond the
contract's required fields (ops/contract.py's optional OpSpec fields; each op's spec.py names them):
the flags whose value is not one field (cli_values), check's host-memory bound (host_bytes), the
tuner's gate (gate_check: the study's window capped, varlen packed sequences), its extra gate_*
attributes (gate_attrs) and the GPU timing of a set (gpu_time_of)."""
from __future__ import annotations

from dataclasses import asdict, replace

from ..errors import ScheduleError
from .problem import as_problem
from .spec_parts import check

INT32_MAX = 2**31 - 1     # window sides are i32 kernel arguments


def cli_values(op: str, given: dict) -> tuple[dict, dict]:
    """OpSpec.cli_values: --window LEFT,RIGHT (the directive's raw option) -> the directive's window
    and the problem's sides, and the op (attention or attention_bwd) the directive is of."""
    d = {"op": op}
    text = given.get("window") or ""
    if not text:
        return {**d, "window": False}, {}
    try:
        left, right = (int(x) for x in text.split(","))
    except ValueError:
        raise ScheduleError("--window", text, "LEFT,RIGHT integers >= -1 (e.g. 128,0)") from None
    if min(left, right) < -1 or max(left, right) > INT32_MAX:
        raise ScheduleError("--window", text, f"LEFT,RIGHT integers in [-1, {INT32_MAX}] (-1 = unbounded)")
    return {**d, "window": True}, {"window_left": left, "window_right": right}


def host_bytes(d, p, *, backward: bool = False) -> int:
    """Host memory of `wmma-gen check`: float64 scores, mask and exponentials per (query, key) pair
    (+ dP, dS backward) and the float64 operands (OpSpec.host_bytes)."""
    p = as_problem(p)
    per_pair = 80 if backward else 32
    return (per_pair * p.seq_q * p.seq_k
            + 48 * p.batch * d.head_dim * (p.seq_q * p.heads + 2 * p.seq_k * p.kv_heads) * (2 if backward else 1))


def gate_window(d, p):
    """The window the tuner's gate runs a windowed kernel with: the study problem's sides capped at
    24 keys, so the small gate problems see both edges; None without a window."""
    if not d.window:
        return None
    p = as_problem(p)
    return tuple(-1 if x < 0 else min(x, 24) for x in (p.window_left, p.window_right))


def gate_check_of(varlen_gate, *, backward: bool = False):
    """OpSpec.gate_check: the set on gate problem gp with the study's window (gate_window); a varlen
    directive packs gp's batch as sequences of unequal lengths (`varlen_gate()`: the forward's
    varlen_gate module, through the API: the same compiled objects from compile_op's LRU)."""
    def gate_check(cs, d, s, gp, p, device, seed: int = 0):
        window = gate_window(d, p)
        if d.varlen:
            return varlen_gate().check_varlen(asdict(gp) | {"head_dim": d.head_dim}, d, window=window, arch=cs.arch,
                                              device=device, seed=seed, schedule=s)
        if window:
            gp = replace(gp, window_left=window[0], window_right=window[1])
        return check(cs, d, gp, device, seed, backward=backward)
    return gate_check


def gate_attrs(gp, r) -> dict:
    """What the tuner's gate records beyond the shared fields: the worst output and the gate
    problem's lengths."""
    return {"worst": r.worst, "seq_q": gp.seq_q, "seq_k": gp.seq_k}


def gpu_time_of(timing_sizes, varlen_gate):
    """OpSpec.gpu_time over `timing_sizes(d, p) -> {argument: value}`: the set's kernels timed one
    after the other (varlen: valid offsets of batch sequences of Sq and Sk, varlen_gate().time_varlen)."""
    def gpu_time(device, cs, d, p) -> float:
        from ..tuner.timing import time_signature
        sizes, timer = timing_sizes(d, p), varlen_gate().time_varlen if d.varlen else time_signature
        return sum(timer(device, ck, src.signature, sizes) for src, ck in cs.pairs().values())
    return gpu_time
