"""Codegen fingerprints: the proof that a refactor of the kernel builders changed no machine code.

Compiles every default kernel -- GEMM (every WMMA dtype/accumulator of gfx1100 and gfx1201, the
four layouts, a tile-aligned and a guarded size, plus epilogue and split-K rows), attention
forward (head dims 64 and 128, f16/bf16, dense / causal / window / varlen / all three, bhsd,
split-KV decode and its combine kernel) and attention backward (the same masks; pre-pass, dK/dV
and dQ kernels), plus the paged-KV decode kernel where it exists -- and records per kernel the sha256 of the printed MLIR and of the code
object's .text section (the machine code; the ELF's other sections carry metadata only).

    python bench/codegen_fingerprint.py --record results/codegen_fingerprint_flydsl.json
    python bench/codegen_fingerprint.py --compare results/codegen_fingerprint_flydsl.json [--only gemm fwd bwd]
    python bench/codegen_fingerprint.py --only paged --match fp8_wmma --record results/codegen_fingerprint_flydsl.json --update
    WMMA_GEN_MLIR_PROVIDER=mlir python bench/codegen_fingerprint.py --compare results/codegen_fingerprint_mlir.json
    python bench/codegen_fingerprint.py --only fwd --compare results/codegen_fingerprint_flydsl.json --figures after.json

--figures FILE also writes, per kernel, what a changed .text is judged by (compiler output, static):
VGPRs, spills, main-loop issued instructions, v_wmma and density (model/isa_loop.find_main_loop),
the whole kernel's issued instructions (s_delay_alu/s_wait_alu hints not counted), its global stores
and its 64-bit address adds (v_add_co_u32 + v_add_nc_u64). Run it at two commits and join the files.

One file per MLIR provider: LLVM 23 (mlir-gml) and LLVM 24 (FlyDSL, the default) print different
machine code for the same MLIR, so a comparison is only meaningful under the provider a file was
recorded with (results/codegen_fingerprint_flydsl.json: FlyDSL 0.5.0, 2026-12-04, 299 kernels, 0
spills; results/codegen_fingerprint_mlir.json: mlir-gml 0.0.4).

Compiles go through compile_mlir's content-addressed cache (keyed on the MLIR text), so a step
that leaves the MLIR text unchanged costs only the builds; a changed text is recompiled and
only its .text hash decides. Exit status 1 when any .text hash differs (or a kernel is missing).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import struct
import sys
import time
from pathlib import Path

ARCHS = ("gfx1100", "gfx1201")
LAYOUTS = ("NN", "NT", "TN", "TT")
GEMM_SIZES = ((4096, 4096, 4096), (1000, 1000, 1000))    # aligned tiles; every axis guarded
HEAD_DIMS = (64, 128)
MASKS = {"dense": {}, "causal": {"causal": True}, "window": {"window": True}, "varlen": {"varlen": True},
         "all": {"causal": True, "window": True, "varlen": True}}


def text_section(elf: bytes) -> bytes:
    """The bytes of the ELF64 section named .text (System V gABI: e_shoff at 0x28, e_shentsize,
    e_shnum, e_shstrndx at 0x3a..0x3e; section header sh_name, sh_offset at +0x18, sh_size +0x20)."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3a)

    def header(i):
        base = shoff + i * shentsize
        name, = struct.unpack_from("<I", elf, base)
        off, size = struct.unpack_from("<QQ", elf, base + 0x18)
        return name, off, size
    _, str_off, _ = header(shstrndx)
    for i in range(shnum):
        name, off, size = header(i)
        end = elf.index(b"\0", str_off + name)
        if elf[str_off + name:end] == b".text":
            return elf[off:off + size]
    raise ValueError("code object has no .text section")


def gemm_cases():
    from wmma_gen.ops.gemm.defaults import fitted_default
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.kernel import build_gemm
    from wmma_gen.ops.gemm.problem import GemmProblem
    from wmma_gen.ops.gemm.signature import spec_key
    from wmma_gen.targets import get_target

    def case(arch, d, p, s=None):
        t = get_target(arch)
        s = s or fitted_default(d, t, p)
        return lambda: build_gemm(d, s, t, spec_key(d, s, p.as_dict())).mlir
    for arch in ARCHS:
        for dt, acc in get_target(arch).wmma:
            for lay in LAYOUTS:
                for m, n, k in GEMM_SIZES:
                    yield (f"gemm {arch} {dt}/{acc} {lay} {m}x{n}x{k}",
                           case(arch, GemmDirective(dt, acc=acc, layout=lay), GemmProblem(m, n, k)))
        epi = GemmDirective("f16", out_dtype="f16", beta=1.0, bias="n", activation="gelu")
        yield f"gemm {arch} f16 epilogue bias gelu beta batch2", case(arch, epi, GemmProblem(1000, 1000, 1000, batch=2))
        d, p = GemmDirective("bf16", layout="NT"), GemmProblem(256, 256, 4096)
        split = fitted_default(d, get_target(arch), p).replace(split_k=4)
        yield f"gemm {arch} bf16 NT split_k4", case(arch, d, p, split)


def fwd_cases():
    from wmma_gen.ops.attention.combine import build_attention_combine
    from wmma_gen.ops.attention.defaults import default_schedule
    from wmma_gen.attention_common.directive import AttentionDirective
    from wmma_gen.ops.attention.kernel import build_attention
    from wmma_gen.targets import get_target
    for arch in ARCHS:
        t = get_target(arch)
        for dt in ("f16", "bf16"):
            for hd in HEAD_DIMS:
                for mask, kw in MASKS.items():
                    d = AttentionDirective(dt, hd, return_lse=True, **kw)
                    yield f"fwd {arch} {dt} hd{hd} {mask}", lambda d=d: build_attention(d, default_schedule(t, d), t).mlir
        d = AttentionDirective("f16", 64, causal=True, layout="bhsd")
        yield f"fwd {arch} f16 hd64 causal bhsd", lambda d=d, t=t: build_attention(d, default_schedule(t, d), t).mlir
        d = AttentionDirective("bf16", 128, causal=True, return_lse=True)
        s = default_schedule(t, d, split_kv=8)
        yield f"fwd {arch} bf16 hd128 causal split_kv8", lambda d=d, s=s, t=t: build_attention(d, s, t).mlir
        yield f"fwd {arch} bf16 hd128 combine", lambda d=d, s=s, t=t: build_attention_combine(d, s, t).mlir


def bwd_cases():
    from wmma_gen.ops.attention_bwd import build_backward, default_schedule, make_spec
    for arch in ARCHS:
        for dt in ("f16", "bf16"):
            for hd in HEAD_DIMS:
                for mask, kw in MASKS.items():
                    spec = make_spec(arch, dt, hd, **kw)
                    for name in ("prepass", "dkdv", "dq"):
                        yield (f"bwd {arch} {dt} hd{hd} {mask} {name}",
                               lambda spec=spec, hd=hd, name=name, arch=arch: getattr(build_backward(spec, default_schedule(arch, hd)), name).mlir)
        spec = make_spec(arch, "f16", 64, causal=True, layout="bhsd", out="f32")
        for name in ("prepass", "dkdv", "dq"):
            yield (f"bwd {arch} f16 hd64 causal bhsd out_f32 {name}",
                   lambda spec=spec, name=name, arch=arch: getattr(build_backward(spec, default_schedule(arch, 64)), name).mlir)


def paged_cases():
    """The paged-KV decode kernel (ops/paged_attention, built on the forward's blocks); none at
    commits before it existed."""
    try:
        from wmma_gen.ops.paged_attention.defaults import default_schedule
        from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective
        from wmma_gen.ops.paged_attention.kernel import build_paged_attention
    except ImportError:
        return
    from wmma_gen.targets import get_target
    variants = {"f16 hd128 causal": dict(dtype="f16", head_dim=128),
                "bf16 hd64 window softcap": dict(dtype="bf16", head_dim=64, window=True, softcap=True),
                "f16 hd128 fp8e4m3": dict(dtype="f16", head_dim=128, kv_dtype="fp8e4m3"),
                "bf16 hd128 varlen lse": dict(dtype="bf16", head_dim=128, varlen=True, return_lse=True)}
    for arch in ARCHS:
        for label, kw in variants.items():
            d = PagedAttentionDirective(**kw)
            yield (f"paged {arch} {label}",
                   lambda d=d, arch=arch: build_paged_attention(d, default_schedule(d, arch, 16, 4096), get_target(arch)).mlir)
    # Native fp8 (fp8_wmma: Q and P quantised to E4M3, both products on fp8 WMMA; gfx12 only, the
    # fp8_wmma constraint refuses gfx11) for both cache formats, and dense fp8 attention's kernel
    # (Q given as E4M3 bytes, O bf16, LSE: what dense_fp8.attention_fp8 builds).
    fp8_wmma = {"f16 hd128 fp8e4m3 fp8_wmma": dict(dtype="f16", head_dim=128, kv_dtype="fp8e4m3", fp8_wmma=True),
                "f16 hd128 fp8e5m2 fp8_wmma": dict(dtype="f16", head_dim=128, kv_dtype="fp8e5m2", fp8_wmma=True),
                "bf16 hd128 fp8_wmma dense q_fp8e4m3 lse": dict(dtype="bf16", head_dim=128, kv_dtype="fp8e4m3",
                                                           causal=False, return_lse=True, fp8_wmma=True,
                                                           q_dtype="fp8e4m3")}
    for label, kw in fp8_wmma.items():
        d = PagedAttentionDirective(**kw)
        t = get_target("gfx1201")
        s = default_schedule(d, t.arch, 16, 4096)
        yield f"paged gfx1201 {label}", lambda d=d, s=s, t=t: build_paged_attention(d, s, t).mlir


FAMILIES = {"gemm": gemm_cases, "fwd": fwd_cases, "bwd": bwd_cases, "paged": paged_cases}


INSN = re.compile(r"^\s+([a-z][a-z_0-9]*)\b")
HINTS = ("s_delay_alu", "s_wait_alu")


def figures(k) -> dict:
    """Static figures of one compiled kernel (the --figures columns, module docstring)."""
    from wmma_gen.model.isa_loop import find_main_loop
    loop = find_main_loop(k.isa)
    ops = [m.group(1) for ln in k.isa.splitlines() if (m := INSN.match(ln))]
    ops = [o for o in ops if o not in HINTS]
    return {"vgprs": k.metadata.vgpr_count, "spills": k.metadata.spills, "loop_issued": loop.issued,
            "v_wmma": loop.wmma, "density": round(loop.wmma / loop.issued, 4) if loop.wmma else 0.0,
            "issued": len(ops), "global_stores": sum(o.startswith("global_store") for o in ops),
            "addr64_adds": sum(o.startswith(("v_add_co_u32", "v_add_nc_u64")) for o in ops)}


def fingerprints(only, match: str | None = None, stats: dict | None = None) -> dict:
    from wmma_gen.compiler import compile_mlir
    out = {}
    for fam in only:
        for name, build in FAMILIES[fam]():
            if match is not None and match not in name:
                continue
            arch = name.split()[1]
            t0 = time.perf_counter()
            mlir = build()
            k = compile_mlir(mlir, arch)
            out[name] = {"mlir": hashlib.sha256(mlir.encode()).hexdigest()[:16],
                         "text": hashlib.sha256(text_section(k.hsaco)).hexdigest()[:16],
                         "vgprs": k.metadata.vgpr_count, "spills": k.metadata.spills}
            if stats is not None:
                stats[name] = figures(k)
            print(f"{name:55s} {out[name]['text']} {k.cache:4s} {time.perf_counter() - t0:6.1f}s", file=sys.stderr, flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", type=Path, help="write the fingerprints to this JSON file")
    ap.add_argument("--compare", type=Path, help="compare against fingerprints recorded earlier")
    ap.add_argument("--only", nargs="+", choices=sorted(FAMILIES), default=list(FAMILIES))
    ap.add_argument("--match", help="only the kernels whose name contains this text (e.g. fp8_wmma)")
    ap.add_argument("--update", action="store_true",
                    help="with --record: rewrite only the kernels computed now, keep the file's other entries")
    ap.add_argument("--figures", type=Path, help="also write each kernel's static figures (VGPRs, spills, main-loop "
                    "issued/v_wmma/density, issued, global stores, 64-bit address adds) to this JSON file")
    a = ap.parse_args()
    if not (a.record or a.compare):
        ap.error("give --record FILE or --compare FILE")
    if a.update and not (a.record and a.record.exists()):
        ap.error(f"--update needs --record naming an existing file (got {a.record})")
    stats = {} if a.figures else None
    now = fingerprints(a.only, a.match, stats)
    if a.figures:
        a.figures.write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n")
    if a.record:
        kept = json.loads(a.record.read_text()) if a.update else {}
        a.record.write_text(json.dumps({**kept, **now}, indent=1, sort_keys=True) + "\n")
        print(f"{len(now)} kernels recorded in {a.record}" + (f" ({len(kept)} read back first)" if a.update else ""))
    if not a.compare:
        return 0
    ref = json.loads(a.compare.read_text())
    ref = {k: v for k, v in ref.items() if k.split()[0] in a.only and (a.match is None or a.match in k)}
    changed = [k for k in ref if k in now and ref[k]["text"] != now[k]["text"]]
    missing = sorted(set(ref) ^ set(now))
    same_mlir = sum(ref[k]["mlir"] == now[k]["mlir"] for k in ref if k in now)
    for k in changed:
        print(f"CHANGED {k}: text {ref[k]['text']} -> {now[k]['text']}, vgprs {ref[k]['vgprs']} -> "
              f"{now[k]['vgprs']}, spills {ref[k]['spills']} -> {now[k]['spills']}")
    for k in missing:
        print(f"MISSING {k} ({'recorded only' if k in ref else 'new'})")
    print(f"{len(ref)} kernels: {len(ref) - len(changed) - len(missing)} identical .text "
          f"({same_mlir} with identical MLIR), {len(changed)} changed, {len(missing)} missing")
    return 1 if changed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
