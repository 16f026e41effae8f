"""`wmma-gen emu run FILE.hsaco`: run any gfx11 / gfx12 code object on the emulator.

Every argument is checked before the run (issue 24 item 5), each refusal one line, exit 2:
the ELF's EF_AMDGPU_MACH must name the target its metadata names (and --arch when given), the
block must fit 1024 work-items and the kernel's .reqd_workgroup_size / .max_flat_workgroup_size,
static + --lds-dynamic LDS must fit the target's LDS, and --args must match the kernel's
explicit .args in count and kind (buffer / by-value scalar of that size), with @file.npy
buffers of exactly the declared dtype and length and scalars in their dtype's range.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import ScheduleError, WmmaGenError
from .options import int_at_least, out_dir

GRAMMAR = """\
--args gives one item per explicit kernel argument, comma-separated, in the order of the
kernel's metadata .args (kernel.json of `wmma-gen compile` lists them):
  DTYPE[N]          a global buffer of N elements, zeros
  DTYPE[N]=INIT     INIT: zeros | ones | range (0, 1, 2, ...) | rand (uniform [-1, 1) for floats,
                    integers in [-100, 100]; seeded by --seed) | @FILE.npy (a .npy of exactly
                    DTYPE and N elements; no conversion)
  VALUE:DTYPE       a by-value scalar; its DTYPE size must be the argument's size
DTYPE is one of i8 u8 i16 u16 i32 u32 i64 u64 f16 f32 f64. --out DIR writes every buffer after the
run as DIR/argK.npy (K = the argument's position).

example (a 16x16x16 f16 GEMM, C = A @ B in f32; A, B, C row-major, then M N K batch and the
batch/row strides of A, B, C in elements):
  wmma-gen compile --arch gfx1100 --dtype f16 --shape 16 --block-m 16 --block-n 16 --block-k 16 \\
      --waves-m 1 --waves-n 1 --out k16
  wmma-gen emu run k16/kernel.hsaco --grid 1 --block 32 --out out \\
      --args "f16[256]=rand, f16[256]=rand, f32[256], 16:i32, 16:i32, 16:i32, 1:i32, 256:i32, 16:i32, 256:i32, 16:i32, 256:i32, 16:i32"
"""

_DT = {"i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32", "u32": "uint32",
       "i64": "int64", "u64": "uint64", "f16": "float16", "f32": "float32", "f64": "float64"}
_BUF = re.compile(r"^(\w+)\[(\d+)\](?:=(\S+))?$")
_SCALAR = re.compile(r"^(\S+):(\w+)$")
MAX_BLOCK = 1024                 # work-items per workgroup, every gfx11/gfx12 target
BUFFER_BUDGET = 4 << 30          # bytes of all buffers together (host memory of the emulator)
# EF_AMDGPU_MACH of common targets the emulator does not run (LLVM BinaryFormat/ELF.h), for messages
OTHER_MACH = {0x2f: "gfx906", 0x30: "gfx908", 0x36: "gfx1030", 0x3f: "gfx90a", 0x4c: "gfx942"}
# .type_name of a HIP/OpenCL pointer argument -> the buffer dtype it implies
POINTEE = {"float": "f32", "double": "f64", "half": "f16", "_Float16": "f16", "__half": "f16", "int": "i32",
           "unsigned int": "u32", "uint": "u32", "short": "i16", "unsigned short": "u16", "char": "i8",
           "signed char": "i8", "unsigned char": "u8", "uchar": "u8", "long": "i64", "unsigned long": "u64",
           "int32_t": "i32", "uint32_t": "u32", "int64_t": "i64", "uint64_t": "u64", "int8_t": "i8", "uint8_t": "u8"}


def register(sub) -> None:
    p = sub.add_parser("emu", help="run a code object (hsaco) on the wave emulator")
    esub = p.add_subparsers(dest="emu_command", required=True)
    r = esub.add_parser("run", help="launch one kernel of FILE on numpy buffers", description=GRAMMAR,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("file", help="code object (.hsaco / .co)")
    r.add_argument("--arch", default=None, help="the target FILE must be built for (default: the one it names)")
    r.add_argument("--kernel", default=None, help="kernel name (default: the only kernel)")
    r.add_argument("--grid", default="1", help="workgroups X[,Y[,Z]] (default 1)")
    r.add_argument("--block", default="32",
                   help=f"work-items per workgroup X[,Y[,Z]], at most {MAX_BLOCK} in all (default 32)")
    r.add_argument("--lds-dynamic", type=int_at_least(0, 2**31 - 1), default=0,
                   help="dynamic LDS bytes (default 0); static + dynamic within the target's LDS")
    r.add_argument("--args", default="", help="argument SPEC: see the grammar above")
    r.add_argument("--seed", type=int_at_least(0, 2**32 - 1), default=0, help="seed of rand buffers")
    r.add_argument("--out", default=None, type=out_dir, help="directory for argK.npy of every buffer")
    r.add_argument("--mode", choices=("batched", "per_wave"), default="batched")
    r.add_argument("--disassemble", action="store_true", help="print the decoded instructions")
    r.add_argument("--json", action="store_true", help="print the summary as JSON")
    r.set_defaults(func=run)


def dims(text: str, name: str, limit: int) -> tuple[int, int, int]:
    """--grid / --block: 1 to 3 comma-separated positive integers whose product is at most `limit`."""
    try:
        d = tuple(int(x) for x in str(text).split(","))
    except ValueError:
        d = ()
    if not 1 <= len(d) <= 3 or min(d) < 1:
        raise ScheduleError(f"--{name}", text, "1 to 3 comma-separated positive integers")
    if math.prod(d) > limit:
        raise ScheduleError(f"--{name}", text, f"at most {limit} {'work-items' if name == 'block' else 'workgroups'} "
                            f"in all (got {math.prod(d)})")
    return d + (1,) * (3 - len(d))


def check_launch(prog, data: bytes, args, grid, block) -> None:
    """The ELF's target vs --arch and the metadata, the block vs the kernel, LDS vs the target."""
    from ..codeobj.codeobject import MACH
    from ..targets import TARGETS
    mach = struct.unpack_from("<I", data, 48)[0] & 0xFF
    if mach and MACH.get(mach) != prog.arch:
        named = MACH.get(mach) or OTHER_MACH.get(mach, "a target the emulator does not run")
        raise ScheduleError(f"{args.file} ELF e_flags", f"EF_AMDGPU_MACH {mach:#x} ({named})",
                            f"the target its metadata names, {prog.arch}: the code object contradicts itself; "
                            f"the emulator runs {', '.join(sorted(set(MACH.values())))}")
    if args.arch is not None and args.arch != prog.arch:
        raise ScheduleError("--arch", args.arch, f"{prog.arch}, the target {args.file} is built for "
                                                 "(a code object runs only on its own target)")
    md = prog.metadata
    reqd = tuple(int(x) for x in md.get(".reqd_workgroup_size", ()) or ())
    if reqd and block != reqd:
        raise ScheduleError("--block", args.block,
                            f"{','.join(map(str, reqd))}: kernel {prog.name} requires that workgroup size "
                            "(.reqd_workgroup_size)")
    most = int(md.get(".max_flat_workgroup_size", MAX_BLOCK))
    if math.prod(block) > most:
        raise ScheduleError("--block", args.block,
                            f"at most {most} work-items: kernel {prog.name}'s .max_flat_workgroup_size")
    for axis, (g, b) in enumerate(zip(grid, block)):
        if g * b > 2**32 - 1:
            raise ScheduleError("--grid", args.grid, f"grid x block <= 2^32-1 work-items "
                                f"along each axis (axis {axis}: {g} x {b})")
    lds = TARGETS[prog.arch].lds_bytes if prog.arch in TARGETS else 65536
    static = prog.group_segment_size
    if static + args.lds_dynamic > lds:
        raise ScheduleError("--lds-dynamic", args.lds_dynamic, f"at most {lds - static} bytes: {prog.arch} has "
                            f"{lds} bytes of LDS per workgroup and kernel {prog.name} uses {static} statically")


def parse_args_spec(spec: str, seed: int = 0, kernel_args=None) -> list:
    """The argument values of a --args SPEC (numpy arrays for buffers, numpy scalars), checked
    against `kernel_args` (the program's explicit .args) when given."""
    import numpy as np
    items = [x.strip() for x in spec.split(",") if x.strip()]
    if kernel_args is not None and len(items) != len(kernel_args):
        raise ScheduleError("--args", spec, f"{len(kernel_args)} items, one per explicit kernel argument "
                            f"({_describe(kernel_args)}); got {len(items)}")
    rng = np.random.default_rng(seed)
    out, total = [], 0
    for i, item in enumerate(items):
        meta = kernel_args[i] if kernel_args is not None else None
        m = _BUF.match(item)
        if m:
            dt, n, init = m.group(1), int(m.group(2)), m.group(3) or "zeros"
            if dt not in _DT:
                raise ScheduleError(f"--args item {i}", item, f"a dtype among {', '.join(_DT)}")
            _expect(meta, i, item, "global_buffer", dt)
            total += n * np.dtype(_DT[dt]).itemsize
            if total > BUFFER_BUDGET:
                raise ScheduleError(f"--args item {i}", item, f"buffers of at most {BUFFER_BUDGET >> 30} GiB in all")
            out.append(_buffer(np.dtype(_DT[dt]), dt, n, init, rng, i))
            continue
        m = _SCALAR.match(item)
        if m and m.group(2) in _DT:
            _expect(meta, i, item, "by_value", m.group(2))
            out.append(_scalar(m.group(1), m.group(2), i, item))
            continue
        raise ScheduleError(f"--args item {i}", item, "DTYPE[N][=INIT] or VALUE:DTYPE (see --help)")
    return out


@dataclass(frozen=True)
class ExplicitArg:
    kind: str          # .value_kind: global_buffer, by_value, ...
    size: int
    type_name: str     # .type_name when the compiler wrote one (HIP: "float*"), else ""


def explicit_args(prog) -> list[ExplicitArg]:
    """The kernel's explicit arguments (metadata .args without the hidden_* ones), in order."""
    return [ExplicitArg(str(a.get(".value_kind", "")), int(a.get(".size", 0)), str(a.get(".type_name", "") or ""))
            for a in prog.metadata.get(".args", []) if not str(a.get(".value_kind", "")).startswith("hidden_")]


def _describe(kernel_args) -> str:
    return ", ".join(f"{i}: {'buffer' if a.kind == 'global_buffer' else f'{a.size}-byte scalar'}"
                     for i, a in enumerate(kernel_args))


def _expect(meta, i: int, item: str, kind: str, dt: str) -> None:
    """Item `i` against the kernel's argument `meta` (None: unchecked)."""
    import numpy as np
    if meta is None:
        return
    if meta.kind != kind:
        want = "a buffer DTYPE[N][=INIT]" if meta.kind == "global_buffer" else (
            f"a {meta.size}-byte scalar VALUE:DTYPE" if meta.kind == "by_value" else f"a {meta.kind} argument, "
            "which emu run cannot pass")
        raise ScheduleError(f"--args item {i}", item, f"{want}: kernel argument {i} is {meta.kind}")
    if kind == "by_value" and np.dtype(_DT[dt]).itemsize != meta.size:
        raise ScheduleError(f"--args item {i}", item, f"a {meta.size}-byte scalar (kernel argument {i}); "
                            f"{dt} is {np.dtype(_DT[dt]).itemsize} bytes")
    pointee = POINTEE.get(meta.type_name.replace("const ", "").rstrip("* ").strip())
    if kind == "global_buffer" and pointee and pointee != dt:
        raise ScheduleError(f"--args item {i}", item, f"a {pointee} buffer: kernel argument {i} is {meta.type_name!r}")


def _buffer(dt, name: str, n: int, init: str, rng, i: int):
    import numpy as np
    if init == "zeros":
        return np.zeros(n, dt)
    if init == "ones":
        return np.ones(n, dt)
    if init == "range":
        if n and dt.kind in "iu" and n - 1 > np.iinfo(dt).max:
            raise ScheduleError(f"--args item {i}", f"{name}[{n}]=range", f"at most {np.iinfo(dt).max + 1} elements")
        return np.arange(n).astype(dt)
    if init == "rand":
        if dt.kind == "f":
            return rng.uniform(-1, 1, n).astype(dt)
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dt)
    if init.startswith("@"):
        try:
            arr = np.load(init[1:], allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise ScheduleError(f"--args item {i}", init, f"a readable .npy file ({getattr(e, 'strerror', None) or e})"
                                ) from None
        if arr.dtype != dt:
            raise ScheduleError(f"--args item {i}", init, f"a .npy of dtype {dt} ({name}); it holds {arr.dtype} "
                                "(convert it yourself: emu run never converts)")
        if arr.size != n:
            raise ScheduleError(f"--args item {i}", init, f"a file of {n} elements (it holds {arr.size})")
        return np.ascontiguousarray(arr).reshape(-1)
    raise ScheduleError(f"--args item {i} init", init, "zeros, ones, rand, range or @file.npy")


def _scalar(text: str, name: str, i: int, item: str):
    import numpy as np
    dt = np.dtype(_DT[name])
    try:
        value = float(text) if dt.kind == "f" else int(text, 0)
    except ValueError:
        raise ScheduleError(f"--args item {i}", item, "VALUE:DTYPE with a number VALUE") from None
    if dt.kind == "f":
        top = float(np.finfo(dt).max)
        if math.isfinite(value) and abs(value) > top:
            raise ScheduleError(f"--args item {i}", item, f"|VALUE| <= {top:g} for {name}")
    else:
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:
            raise ScheduleError(f"--args item {i}", item, f"VALUE in [{info.min}, {info.max}] for {name}")
    return dt.type(value)


def run(args) -> int:
    import numpy as np
    from ..emu.api import load_program, run_code_object
    try:
        data = Path(args.file).read_bytes()
    except OSError as e:
        raise ScheduleError("file", args.file, f"a readable code object ({e.strerror})") from None
    grid, block = dims(args.grid, "grid", 2**32 - 1), dims(args.block, "block", MAX_BLOCK)
    prog = load_program(data, args.kernel)
    check_launch(prog, data, args, grid, block)
    values = parse_args_spec(args.args, args.seed, explicit_args(prog))
    if args.disassemble:
        for ins in prog.instrs:
            print(f"  {ins.pc:#07x}  {ins.text}")
    try:
        res = run_code_object(prog, grid=grid, block=block, args=values,
                              dynamic_lds=args.lds_dynamic, mode=args.mode)
    except WmmaGenError:
        raise
    except ValueError as e:          # an argument the checks above did not foresee
        raise WmmaGenError(f"--args: {e}") from None
    rows = []
    for i, v in enumerate(res.buffers):
        if isinstance(v, np.ndarray):
            f = v.astype(np.float64)
            rows.append({"arg": i, "dtype": str(v.dtype), "elements": int(v.size), "sum": float(f.sum()),
                         "min": float(f.min()) if v.size else 0.0, "max": float(f.max()) if v.size else 0.0})
            if args.out:
                try:
                    Path(args.out).mkdir(parents=True, exist_ok=True)
                    np.save(Path(args.out) / f"arg{i}.npy", v)
                except OSError as e:
                    raise WmmaGenError(f"--out {args.out}: cannot write arg{i}.npy ({e.strerror or e})") from None
    st = res.stats
    summary = {"kernel": prog.name, "arch": prog.arch, "instructions": len(prog.instrs),
               "waves": st.waves, "workgroups": st.workgroups, "wave_instructions": st.wave_instructions,
               "seconds": round(st.seconds, 4), "source": "emulator", "buffers": rows}
    if args.json:
        from .options import plain_json
        print(json.dumps(plain_json(summary), indent=2, allow_nan=False))
        return 0
    print(f"{prog.name} ({prog.arch}): {st.workgroups} workgroups, {st.waves} waves, "
          f"{st.wave_instructions} wave-instructions in {st.seconds:.3f} s (emulator wall time)")
    for r in rows:
        print(f"  arg{r['arg']} {r['dtype']}[{r['elements']}]: sum={r['sum']:.6g} min={r['min']:.6g} max={r['max']:.6g}")
    sys.stdout.flush()
    return 0
