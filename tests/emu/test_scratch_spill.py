"""Scratch: kernels that spill VGPRs to the private segment run from their code object and
match numpy.

Our GEMM schedules no longer spill within their legality checks (SGPR-base addressing, b3324db),
so the spilling kernel is a legal 64x64 one-wave GEMM (~190 VGPRs) recompiled with LLVM's
"amdgpu-num-vgpr"="96" function attribute, given as `llvm.passthrough` (compile.lower hands it to
llvm.func under either MLIR provider; a bare `passthrough` on gpu.func reaches LLVM 23 only):
LLVM then spills ~390 VGPRs with scratch_store / scratch_load (architected flat scratch,
`.amdhsa_enable_private_segment 1`). Tolerance: f16
inputs are exact in f32 products; the f32 sums over K differ from the float64 reference by at
most K * 2**-24 * sum|a*b| (checked with a 4x margin)."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from wmma_gen import hostdata
from wmma_gen.compiler import compile_mlir
from wmma_gen.device.emu import EmuDevice
from wmma_gen.emu import GlobalMemory, Program, run_kernel
from wmma_gen.errors import EmulatorFault
from wmma_gen.ops.gemm.api import run_gemm
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule

SPILLING = Schedule(block_m=64, block_n=64, block_k=32, waves_m=1, waves_n=1)
VGPR_CAP = 96


def _spilling(d: GemmDirective, p: GemmProblem, arch: str = "gfx1100"):
    """compile_gemm's kernel for `d` on `p`, recompiled with at most VGPR_CAP VGPRs (forces spills)."""
    g = compile_gemm(d, SPILLING, arch, p)
    head = re.search(r"gpu\.func @\w+\(.*?\) kernel attributes \{", g.source.mlir, re.S).group(0)
    text = g.source.mlir.replace(head, head + f'llvm.passthrough = [["amdgpu-num-vgpr", "{VGPR_CAP}"]], ', 1)
    return dataclasses.replace(g, compiled=compile_mlir(text, arch, cache=False))


def _gemm(arch, m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    g = _spilling(GemmDirective("f16"), GemmProblem(m, n, k), arch)
    assert g.compiled.metadata.vgpr_spill_count > 0
    stored = {"A": hostdata.encode(a, "f16")[None], "B": hostdata.encode(b, "f16")[None]}
    c, _ = run_gemm(g, EmuDevice(), stored)
    c = c[0]
    ref = a.astype(np.float64) @ b.astype(np.float64)
    bound = 4 * k * 2.0 ** -24 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    return np.asarray(c, np.float64), ref, bound


def test_spilling_gemm_kernel_uses_scratch():
    k = _spilling(GemmDirective("f16"), GemmProblem(64, 64, 64)).compiled
    assert k.metadata.vgpr_count <= VGPR_CAP
    assert k.metadata.vgpr_spill_count > 100 and k.metadata.scratch_bytes > 0
    prog = Program.from_code_object(k.hsaco, k.name)
    assert prog.private_segment_size == k.metadata.scratch_bytes
    kinds = {i.mnemonic.split("_")[0] + "_" + i.mnemonic.split("_")[1] for i in prog.instrs
             if i.mnemonic.startswith("scratch_")}
    assert kinds == {"scratch_store", "scratch_load"}


@pytest.mark.parametrize("shape", [(64, 64, 64), (128, 64, 96)])
def test_spilling_gemm_matches_numpy(shape):
    c, ref, bound = _gemm("gfx1100", *shape)
    assert np.all(np.abs(c - ref) <= bound + 1e-30)


def test_scratch_out_of_bounds_faults():
    """A scratch access past private_segment_fixed_size faults naming the offset."""
    g = _spilling(GemmDirective("f16"), GemmProblem(64, 64, 64))
    k = g.compiled
    prog = Program.from_code_object(k.hsaco, k.name)
    prog.descriptor["private_segment_fixed_size"] = 16      # shrink the segment: spills overflow it
    mem = GlobalMemory()
    a, b, c = mem.alloc(64 * 64 * 2), mem.alloc(64 * 64 * 2), mem.alloc(64 * 64 * 4)
    with pytest.raises(EmulatorFault, match="private segment"):
        run_kernel(prog, mem, g.grid, g.block, prog.pack_kernarg([a, b, c] + g.scalars(), g.grid, g.block))
