"""Launch any gfx11 / gfx12 code object on numpy buffers (the Python side of `wmma-gen emu run`).

    res = run_code_object("k.hsaco", "my_kernel", grid=(4, 1, 1), block=(128, 1, 1),
                          args=[a, b, np.zeros(n, np.float32), np.int32(n), 0.5])
    res.buffers[2]     # the third argument after the kernel ran
    res.stats          # RunStats (wave-instructions, waves, seconds)

Explicit arguments are matched to the metadata `.args` in order: a numpy array goes to a
`global_buffer` argument (copied in, copied back out after the run), a number to a `by_value`
argument (`float` -> f16/f32/f64 by the argument size). Hidden arguments of code object V5
(AMDGPUUsage "Code Object V5 Metadata": block counts, group sizes, remainders, grid dims, dynamic
LDS size, ...) are filled as the HIP runtime fills them, for a grid of whole workgroups.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..errors import EmulatorFault
from .decode.program import Program
from .run.device_memory import GlobalMemory
from .run.launch import RunStats, run_kernel


@dataclass
class LaunchResult:
    buffers: list            # per explicit argument: the array after the run, or the scalar given
    stats: RunStats
    program: Program


def load_program(code, kernel: str | None = None) -> Program:
    """Program from a path, bytes or an existing Program."""
    if isinstance(code, Program):
        return code
    if isinstance(code, (str, os.PathLike)):
        try:
            with open(code, "rb") as f:
                code = f.read()
        except OSError as e:
            raise EmulatorFault(f"cannot read code object {code!s}: {e.strerror}") from None
    return Program.from_code_object(bytes(code), kernel)


def run_code_object(code, kernel: str | None = None, *, grid, block, args, dynamic_lds: int = 0,
                    mode: str = "batched", max_steps: int | None = None) -> LaunchResult:
    prog = load_program(code, kernel)
    explicit = [a for a in prog.args if not a.kind.startswith("hidden_")]
    if len(args) != len(explicit):
        raise ValueError(f"args has {len(args)} values, kernel {prog.name} takes {len(explicit)} explicit "
                         f"arguments: {', '.join(f'{a.name or i}:{a.kind}' for i, a in enumerate(explicit))}")
    mem = GlobalMemory()
    values, addrs = [], {}
    for i, (meta, value) in enumerate(zip(explicit, args)):
        if meta.kind == "global_buffer":
            if not isinstance(value, np.ndarray):
                raise ValueError(f"argument {i} ({meta.name or meta.kind}) is a global_buffer: pass a numpy "
                                 f"array, got {type(value).__name__}")
            arr = np.ascontiguousarray(value)
            addrs[i] = mem.alloc(arr.nbytes)
            mem.write(addrs[i], arr)
            values.append(addrs[i])
        elif meta.kind == "by_value":
            if isinstance(value, np.ndarray) and value.ndim:
                raise ValueError(f"argument {i} ({meta.name or meta.kind}) is by_value ({meta.size} bytes): pass a "
                                 "number")
            values.append(_scalar(value, meta.size, i))
        else:
            raise ValueError(f"argument {i} has value kind {meta.kind!r}, which the emulator does not provide")
    grid3, block3 = _dims(grid), _dims(block)
    kernarg = prog.pack_kernarg(values, grid3, block3, dynamic_lds=dynamic_lds)
    kw = {} if max_steps is None else {"max_steps": max_steps}
    stats = run_kernel(prog, mem, grid3, block3, kernarg, mode=mode, dynamic_lds=dynamic_lds, **kw)
    out = []
    for i, value in enumerate(args):
        if i in addrs:
            arr = np.ascontiguousarray(value)
            out.append(np.frombuffer(mem.read(addrs[i], arr.nbytes), arr.dtype).reshape(arr.shape).copy())
        else:
            out.append(value)
    return LaunchResult(out, stats, prog)


def _scalar(value, size: int, i: int):
    if isinstance(value, (float, np.floating)):
        if size == 2:
            return int(np.array(value, np.float16).view(np.uint16))
        return float(value)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"argument {i}={value!r} is not allowed: a number for a {size}-byte by_value "
                         "argument") from None


def _dims(d) -> tuple[int, int, int]:
    d = tuple(int(x) for x in (d if isinstance(d, (tuple, list)) else (d,)))
    return d + (1,) * (3 - len(d))
