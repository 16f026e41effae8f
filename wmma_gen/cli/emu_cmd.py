"""`wmma-gen emu run FILE.hsaco`: run any gfx11 / gfx12 code object on the emulator.

    wmma-gen emu run k.hsaco --kernel saxpy --grid 4 --block 256 \\
        --args "f32[1024]=rand, f32[1024]=zeros, 1024:i32, 2.0:f32" --out results/

--args is one item per explicit kernel argument, in the metadata `.args` order:
  DTYPE[N]=INIT   a global buffer of N elements; INIT is zeros (default), ones, rand (uniform
                  [-1, 1), seeded), range (0, 1, 2, ...), or @file.npy (loaded; N is checked)
  VALUE:DTYPE     a by-value scalar (i32, u32, i64, u64, f16, f32, f64)
--out DIR writes each buffer after the run as DIR/argK.npy. The summary lists each buffer's
checksum (sum, min, max) and the run statistics; --disassemble prints the decoded kernel.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from ..errors import ScheduleError

_DT = {"i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32", "u32": "uint32",
       "i64": "int64", "u64": "uint64", "f16": "float16", "f32": "float32", "f64": "float64"}
_BUF = re.compile(r"^(\w+)\[(\d+)\](?:=(\S+))?$")
_SCALAR = re.compile(r"^(\S+):(\w+)$")


def register(sub) -> None:
    p = sub.add_parser("emu", help="run a code object (hsaco) on the wave emulator")
    esub = p.add_subparsers(dest="emu_command", required=True)
    r = esub.add_parser("run", help="launch one kernel of FILE on numpy buffers")
    r.add_argument("file", help="code object (.hsaco / .co)")
    r.add_argument("--kernel", default=None, help="kernel name (default: the only kernel)")
    r.add_argument("--grid", default="1", help="workgroups X[,Y[,Z]] (default 1)")
    r.add_argument("--block", default="32", help="work-items per workgroup X[,Y[,Z]] (default 32)")
    r.add_argument("--lds-dynamic", type=int, default=0, help="dynamic LDS bytes (default 0)")
    r.add_argument("--args", default="", help="argument SPEC (see `wmma-gen emu run --help`)")
    r.add_argument("--seed", type=int, default=0, help="seed of rand buffers")
    r.add_argument("--out", default=None, help="directory for argK.npy of every buffer")
    r.add_argument("--mode", choices=("batched", "per_wave"), default="batched")
    r.add_argument("--disassemble", action="store_true", help="print the decoded instructions")
    r.add_argument("--json", action="store_true", help="print the summary as JSON")
    r.set_defaults(func=run)


def dims(text: str, name: str) -> tuple[int, int, int]:
    try:
        d = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise ScheduleError(f"--{name}", text, "1 to 3 comma-separated positive integers") from None
    if not 1 <= len(d) <= 3 or min(d) < 1:
        raise ScheduleError(f"--{name}", text, "1 to 3 comma-separated positive integers")
    return d + (1,) * (3 - len(d))


def parse_args_spec(spec: str, seed: int = 0) -> list:
    """The argument values of a --args SPEC (numpy arrays for buffers, numpy scalars)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    out = []
    for i, item in enumerate(x.strip() for x in spec.split(",") if x.strip()):
        m = _BUF.match(item)
        if m:
            dt, n, init = m.group(1), int(m.group(2)), m.group(3) or "zeros"
            if dt not in _DT:
                raise ScheduleError(f"--args item {i}", item, f"a dtype among {', '.join(_DT)}")
            out.append(_buffer(np.dtype(_DT[dt]), n, init, rng, i))
            continue
        m = _SCALAR.match(item)
        if m and m.group(2) in _DT:
            try:
                value = float(m.group(1)) if m.group(2).startswith("f") else int(m.group(1), 0)
            except ValueError:
                raise ScheduleError(f"--args item {i}", item, "VALUE:DTYPE with a number VALUE") from None
            out.append(np.dtype(_DT[m.group(2)]).type(value))
            continue
        raise ScheduleError(f"--args item {i}", item, "DTYPE[N][=INIT] or VALUE:DTYPE")
    return out


def _buffer(dt, n, init, rng, i):
    import numpy as np
    if init == "zeros":
        return np.zeros(n, dt)
    if init == "ones":
        return np.ones(n, dt)
    if init == "range":
        return np.arange(n).astype(dt)
    if init == "rand":
        if dt.kind == "f":
            return rng.uniform(-1, 1, n).astype(dt)
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dt)
    if init.startswith("@"):
        arr = np.load(init[1:]).astype(dt).reshape(-1)
        if arr.size != n:
            raise ScheduleError(f"--args item {i}", init, f"a file of {n} elements (it holds {arr.size})")
        return arr
    raise ScheduleError(f"--args item {i} init", init, "zeros, ones, rand, range or @file.npy")


def run(args) -> int:
    import numpy as np
    from ..emu.api import load_program, run_code_object
    prog = load_program(args.file, args.kernel)
    if args.disassemble:
        for ins in prog.instrs:
            print(f"  {ins.pc:#07x}  {ins.text}")
    values = parse_args_spec(args.args, args.seed)
    res = run_code_object(prog, grid=dims(args.grid, "grid"), block=dims(args.block, "block"), args=values,
                          dynamic_lds=args.lds_dynamic, mode=args.mode)
    rows = []
    for i, v in enumerate(res.buffers):
        if isinstance(v, np.ndarray):
            f = v.astype(np.float64)
            rows.append({"arg": i, "dtype": str(v.dtype), "elements": int(v.size), "sum": float(f.sum()),
                         "min": float(f.min()) if v.size else 0.0, "max": float(f.max()) if v.size else 0.0})
            if args.out:
                Path(args.out).mkdir(parents=True, exist_ok=True)
                np.save(Path(args.out) / f"arg{i}.npy", v)
    st = res.stats
    summary = {"kernel": prog.name, "arch": prog.arch, "instructions": len(prog.instrs),
               "waves": st.waves, "workgroups": st.workgroups, "wave_instructions": st.wave_instructions,
               "seconds": round(st.seconds, 4), "source": "emulator", "buffers": rows}
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"{prog.name} ({prog.arch}): {st.workgroups} workgroups, {st.waves} waves, "
          f"{st.wave_instructions} wave-instructions in {st.seconds:.3f} s (emulator wall time)")
    for r in rows:
        print(f"  arg{r['arg']} {r['dtype']}[{r['elements']}]: sum={r['sum']:.6g} min={r['min']:.6g} max={r['max']:.6g}")
    sys.stdout.flush()
    return 0
