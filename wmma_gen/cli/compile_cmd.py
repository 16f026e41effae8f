"""`wmma-gen compile`: build and compile one kernel, write its artifacts to --out."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from .options import (add_attention, add_directive, add_json, add_schedule, add_target, directive_from, emit,
                      schedule_from)


def register(sub) -> None:
    p = sub.add_parser("compile", help="compile one kernel; writes kernel.mlir, kernel.hsaco, "
                                       "kernel.s (decoded from kernel.hsaco), kernel.json")
    add_target(p)
    add_directive(p, shape_default="256x256x256")
    add_schedule(p)
    add_attention(p)
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--print-mlir", action="store_true", help="also print the generated MLIR")
    add_json(p)
    p.set_defaults(func=run)


def _attention_kernel(args):
    """--op attention: the forward kernel of the flags given (default schedule); sizes are
    kernel arguments, so the artifacts serve every batch, head count and sequence length."""
    from ..ops.attention.api import compile_attention
    from ..ops.attention.defaults import default_schedule
    from ..ops.attention.directive import AttentionDirective
    from ..targets import get_target
    from .check_cmd import _window
    d = AttentionDirective(args.dtype, args.head_dim, causal=args.causal, window=bool(_window(args.window)),
                           layout=args.attn_layout)
    s = default_schedule(get_target(args.arch), d)
    src, c = compile_attention(d, s, args.arch)
    return d.to_dict(), s.to_dict(), c, "(ceil(seq_q/BLOCK_M) * split_kv, heads, batch)", src.signature.block


def run(args) -> int:
    if args.op == "attention":
        d_dict, s_dict, c, grid, block = _attention_kernel(args)   # raises before anything is written
    elif args.op == "gemm":
        from ..ops.gemm import default_schedule
        from ..ops.gemm.build import compile_gemm
        d = directive_from(args)
        s = schedule_from(args, base=default_schedule(d, args.arch))
        k = compile_gemm(d, s, args.arch)  # raises before anything is written
        d_dict, s_dict, c, grid, block = d.to_dict(), s.to_dict(), k.compiled, k.grid, k.block
    else:
        from ..errors import ScheduleError
        raise ScheduleError("op", args.op, "gemm or attention for compile (attention_bwd builds three kernels: "
                                           "use check/analyze --op attention_bwd)")
    info = {"arch": args.arch, "op": args.op, "directive": d_dict, "schedule": s_dict,
            "grid": grid, "block": block, "kernel": c.name, "key": c.key,
            "hsaco_sha256": hashlib.sha256(c.hsaco).hexdigest(),
            "metadata": c.metadata.to_dict(), "toolchain": c.toolchain, "cache": c.cache,
            "compile_seconds": round(c.compile_seconds, 4),
            "v_wmma": len(re.findall(r"^\s*v_wmma_", c.isa, re.M))}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # write everything into a sibling temp dir, then move the files in: no partial output
    tmp = Path(tempfile.mkdtemp(prefix=".wmma_gen_", dir=out.parent))
    try:
        (tmp / "kernel.mlir").write_text(c.mlir)
        (tmp / "kernel.hsaco").write_bytes(c.hsaco)   # the object the emulator / a GPU runs
        (tmp / "kernel.s").write_text(c.isa)          # its listing, decoded from those bytes
        (tmp / "kernel.json").write_text(json.dumps(info, indent=2, default=str))
        out.mkdir(exist_ok=True)
        for f in tmp.iterdir():
            os.replace(f, out / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.print_mlir:
        print(c.mlir)
    m = c.metadata
    emit(args, info, f"{c.name} for {args.arch}: {info['v_wmma']} v_wmma, {m.vgpr_count} VGPRs, {m.sgpr_count} SGPRs, "
                     f"{m.spills} spills, LDS {m.lds_bytes} B, grid {grid} block {block} "
                     f"({c.cache}, {c.compile_seconds * 1000:.0f} ms)\nwrote {out}/kernel.{{mlir,s,hsaco,json}}")
    return 0
