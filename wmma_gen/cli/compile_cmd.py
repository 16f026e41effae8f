"""`wmma-gen compile`: build and compile one kernel, write its artifacts to --out. An op whose
kernel set has several kernels (mla: the decode kernel, then its split-KV combine) writes the first
as kernel.* and each later one as ROLE.{mlir,hsaco,s}; kernel.json lists them under "then", in
launch order."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from ..errors import WmmaGenError
from .op_options import add_op_options, op_spec
from .options import add_json, add_target, emit, out_dir, plain_json


def register(sub) -> None:
    p = sub.add_parser("compile", help="compile one kernel; writes kernel.mlir, kernel.hsaco, "
                                       "kernel.s (decoded from kernel.hsaco), kernel.json (an op of several "
                                       "kernels, e.g. mla: the later ones as ROLE.mlir/.hsaco/.s too)")
    add_target(p)
    from ..ops.registry import one_kernel
    add_op_options(p, ops=one_kernel(), joined_default="256x256x256", compile_cmd=True)
    p.add_argument("--out", required=True, type=out_dir,
                   help="output directory (created; kernel.* files in it are replaced)")
    p.add_argument("--print-mlir", action="store_true", help="also print the generated MLIR")
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    spec = op_spec(args)
    from . import op_generic
    d, p, s, cs = op_generic.compiled(args, spec)      # raises before anything is written
    pd = {**dataclasses.asdict(p)}                     # sizes are kernel arguments: the grids of this problem
    (name, c), *rest = cs.compiled           # launch order: the first is the op's main kernel
    src = cs.sources[name]
    d_dict = d.to_dict() if hasattr(d, "to_dict") else dataclasses.asdict(d)
    s_dict, grid, block, mlir = s.to_dict(), src.signature.grid(pd), src.signature.block, src.mlir
    later = {n: (k, cs.sources[n].signature.grid(pd), cs.sources[n].signature.block, cs.sources[n].mlir)
             for n, k in rest}
    info = {"arch": args.arch, "op": args.op, "directive": d_dict, "schedule": s_dict, "problem": pd,
            **_facts(c, grid, block), "key": c.key, "toolchain": c.toolchain}
    files = {"kernel.mlir": mlir,            # the source's text (an index hit holds none)
             "kernel.hsaco": c.hsaco,        # the object the emulator / a GPU runs
             "kernel.s": c.isa}              # its listing, decoded from those bytes
    if later:               # e.g. mla's split-KV combine: ROLE.{mlir,hsaco,s}, launched after kernel.* in this order
        info["then"] = {n: _facts(k, g, b) for n, (k, g, b, _) in later.items()}
        for n, (k, _, _, text) in later.items():
            files |= {f"{n}.mlir": text, f"{n}.hsaco": k.hsaco, f"{n}.s": k.isa}
    files["kernel.json"] = json.dumps(plain_json(info), indent=2, default=str)
    out = Path(args.out)
    try:
        _write(out, files)
    except OSError as e:    # the disk filled up, or --out changed since it was checked
        raise WmmaGenError(f"--out {args.out}: cannot write the artifacts ({e.strerror or e}); nothing was "
                           "written") from None
    if args.print_mlir:
        print(mlir)
    m = c.metadata
    lines = [f"{c.name} for {args.arch}: {info['v_wmma']} v_wmma, {m.vgpr_count} VGPRs, {m.sgpr_count} SGPRs, "
             f"{m.spills} spills, LDS {m.lds_bytes} B, grid {grid} block {block} "
             f"({c.cache}, {c.compile_seconds * 1000:.0f} ms)", f"wrote {out}/kernel.{{mlir,s,hsaco,json}}"]
    for n, (k, g, b, _) in later.items():
        lines.append(f"then {k.name}: {k.metadata.vgpr_count} VGPRs, {k.metadata.spills} spills, grid {g} block {b}; "
                     f"wrote {out}/{n}.{{mlir,s,hsaco}}")
    emit(args, info, "\n".join(lines))
    return 0


def _facts(c, grid, block) -> dict:
    """kernel.json's facts of one compiled kernel."""
    return {"grid": grid, "block": block, "kernel": c.name, "hsaco_sha256": hashlib.sha256(c.hsaco).hexdigest(),
            "metadata": c.metadata.to_dict(), "cache": c.cache, "compile_seconds": round(c.compile_seconds, 4),
            "v_wmma": len(re.findall(r"^\s*v_wmma_", c.isa, re.M))}


def _write(out: Path, files: dict) -> None:
    """Write every file into a sibling temp dir, then move them in: no partial output."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".wmma_gen_", dir=out.parent))
    try:
        for name, body in files.items():
            (tmp / name).write_bytes(body if isinstance(body, bytes) else body.encode())
        out.mkdir(exist_ok=True)
        for name in files:
            os.replace(tmp / name, out / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
