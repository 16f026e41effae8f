"""wmma_gemm kernel builder: GemmDirective + Schedule + Target -> MLIR GPU-dialect module.

The kernel, for one workgroup (tile_m, tile_n) of batch b:

    acc[FM][FN] = 0                                   # per wave: FM x FN WMMA tiles
    for k0 in range(0, K, BLOCK_K):                   # main loop, scf.for, iter_args = acc
        for kk in range(0, BLOCK_K, INSTR_K):         # unrolled
            a[i] = load_a_fragment(row0 + 16 i, k0 + kk)
            b[j] = load_b_fragment(col0 + 16 j, k0 + kk)
            acc[i][j] += a[i] @ b[j]                  # amdgpu.wmma
    store_epilogue(acc)                               # cast, write C

Phases are functions below (`tile_origin`, `main_loop`, `store_epilogue`); fragment
lane layouts live in fragments.py / layouts.py. The Schedule is passed explicitly.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import _gpu_ops_gen as gpu
from mlir.dialects import arith, memref, scf

from ..directive import GemmDirective
from ..errors import ScheduleError
from ..schedule import Schedule
from ..targets import Target
from . import irb
from .fragments import Operand, acc_coords, acc_values, load_fragment, wmma


@dataclass(frozen=True)
class KernelSource:
    """A built kernel: MLIR text plus how to launch it."""
    name: str
    mlir: str
    arch: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    arg_names: tuple[str, ...]


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def stored_shape(d: GemmDirective, which: str) -> tuple[int, int, int]:
    """(batch, rows, cols) of the stored operand; i4 cols are bytes (two values each)."""
    rows, cols = {"a": (d.m, d.k), "b": (d.k, d.n)}[which]
    if (which == "a" and d.trans_a) or (which == "b" and d.trans_b):
        rows, cols = cols, rows
    if d.dtype == "i4":
        if cols % 2:
            raise ScheduleError(f"{which}.cols", cols, "an even stored row length for packed i4")
        cols //= 2
    return d.batch, rows, cols


def grid_of(d: GemmDirective, s: Schedule) -> tuple[int, int, int]:
    return _cdiv(d.m, s.block_m) * _cdiv(d.n, s.block_n), 1, d.batch


def build_gemm(d: GemmDirective, s: Schedule, t: Target, name: str = "wmma_gemm") -> KernelSource:
    s.validate(d, t)
    if d.m % s.block_m or d.n % s.block_n or d.k % s.block_k:
        raise ScheduleError("shape", (d.m, d.n, d.k),
                            f"multiples of the macro tile ({s.block_m}, {s.block_n}, {s.block_k}) for this kernel")
    if s.lds != "none" or s.split_k != 1 or d.beta or d.bias or d.activation or d.alpha != 1.0:
        raise ScheduleError("schedule", s.to_dict(), "LDS staging, split-K and fused epilogues are not built yet")
    with ir.Context(), ir.Location.name(f"wmma_gemm {d.dtype}/{d.acc} {t.arch}"):
        module = ir.Module.create()
        module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
        with ir.InsertionPoint(module.body):
            gm = gpu.GPUModuleOp(f"{name}_module", targets=ir.ArrayAttr.get(
                [ir.Attribute.parse(f'#rocdl.target<chip = "{t.arch}">')]))
            gm.bodyRegion.blocks.append()
            with ir.InsertionPoint(gm.bodyRegion.blocks[0]):
                _kernel(d, s, t, name)
        if not module.operation.verify():
            raise ScheduleError("kernel", name, "a module that verifies (builder bug)")
        text = str(module)
    return KernelSource(name, text, t.arch, grid_of(d, s), (s.threads, 1, 1), ("A", "B", "C"))


def _kernel(d: GemmDirective, s: Schedule, t: Target, name: str) -> None:
    ta = ir.MemRefType.get(list(stored_shape(d, "a")), irb.storage_type(d.dtype))
    tb = ir.MemRefType.get(list(stored_shape(d, "b")), irb.storage_type(d.dtype))
    tc = ir.MemRefType.get([d.batch, d.m, d.n], irb.storage_type(d.out_dtype))
    f = gpu.GPUFuncOp(ir.TypeAttr.get(ir.FunctionType.get([ta, tb, tc], [])),
                      known_block_size=ir.DenseI32ArrayAttr.get([s.threads, 1, 1]))
    f.attributes["sym_name"] = ir.StringAttr.get(name)
    f.attributes["gpu.kernel"] = ir.UnitAttr.get()
    block = f.body.blocks.append(ta, tb, tc)
    with ir.InsertionPoint(block):
        A = Operand(block.arguments[0], d.dtype, k_contiguous=not d.trans_a)
        B = Operand(block.arguments[1], d.dtype, k_contiguous=d.trans_b)
        C = block.arguments[2]
        tid = gpu.ThreadIdOp(ir.Attribute.parse("#gpu<dim x>")).result
        lane, wave = irb.rem(tid, 32), irb.div(tid, 32)
        batch = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim z>")).result
        row0, col0 = tile_origin(d, s, wave)
        acc = main_loop(d, s, t, A, B, batch, row0, col0, lane)
        store_epilogue(d, s, t, C, batch, row0, col0, lane, acc)
        gpu.ReturnOp([])


def tile_origin(d: GemmDirective, s: Schedule, wave):
    """First row/column owned by this wave, from the workgroup id in raster order."""
    tiles_m, tiles_n = _cdiv(d.m, s.block_m), _cdiv(d.n, s.block_n)
    pid = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    if s.raster == "row":
        tm, tn = irb.div(pid, tiles_n), irb.rem(pid, tiles_n)
    elif s.raster == "col":
        tm, tn = irb.rem(pid, tiles_m), irb.div(pid, tiles_m)
    else:  # grouped: group_m rows of tiles walked column by column, for L2 reuse
        per_group = s.group_m * tiles_n
        first_m = irb.mul(irb.div(pid, per_group), s.group_m)
        size = irb.minu(irb.sub(irb.c(tiles_m), first_m), s.group_m)
        in_group = irb.rem(pid, per_group)
        tm, tn = irb.add(first_m, irb.rem(in_group, size)), irb.div(in_group, size)
    wave_m, wave_n = irb.rem(wave, s.waves_m), irb.div(wave, s.waves_m)
    row0 = irb.add(irb.mul(tm, s.block_m), irb.mul(wave_m, 16 * s.frags_m))
    col0 = irb.add(irb.mul(tn, s.block_n), irb.mul(wave_n, 16 * s.frags_n))
    return row0, col0


def main_loop(d: GemmDirective, s: Schedule, t: Target, A: Operand, B: Operand, batch, row0, col0, lane):
    """K loop over BLOCK_K tiles; returns the FM*FN accumulator vectors (row-major)."""
    ins = t.instr(d.dtype, d.acc)
    acc_t = irb.vec(ins.c_elems, irb.storage_type(d.acc))
    init = [irb.zeros(acc_t) for _ in range(s.frags_m * s.frags_n)]
    loop = scf.ForOp(irb.c(0), irb.c(d.k), irb.c(s.block_k), init)
    with ir.InsertionPoint(loop.body):
        k0 = loop.induction_variable
        acc = list(loop.inner_iter_args)
        for kk in range(0, s.block_k, ins.k):
            k = irb.add(k0, kk)
            a = [load_fragment(A, t.family, batch, irb.add(row0, 16 * i), k, lane, s.load_bits)
                 for i in range(s.frags_m)]
            b = [load_fragment(B, t.family, batch, irb.add(col0, 16 * j), k, lane, s.load_bits)
                 for j in range(s.frags_n)]
            acc = [wmma(a[i], b[j], acc[i * s.frags_n + j], ins.k, d.unsigned)
                   for i in range(s.frags_m) for j in range(s.frags_n)]
        scf.YieldOp(acc)
    return list(loop.results)


def _convert(v, src: str, dst: str):
    if src == dst:
        return v
    t = irb.storage_type(dst)
    return arith.truncf(t, v) if src == "f32" else arith.extf(t, v)


def store_epilogue(d: GemmDirective, s: Schedule, t: Target, C, batch, row0, col0, lane, acc) -> None:
    """Write each accumulator value to C[batch, row, col], converted to out_dtype."""
    acc_bits = 16 if d.acc in ("f16", "bf16") else 32
    for i in range(s.frags_m):
        for j in range(s.frags_n):
            vals = acc_values(t.family, acc_bits, acc[i * s.frags_n + j])
            for v, val in enumerate(vals):
                r, cc = acc_coords(t.family, lane, v)
                row, col = irb.add(row0, irb.add(r, 16 * i)), irb.add(col0, irb.add(cc, 16 * j))
                memref.store(_convert(val, d.acc, d.out_dtype), C, [batch, row, col])
