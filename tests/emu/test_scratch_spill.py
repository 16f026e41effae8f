"""Scratch: kernels that spill VGPRs to the private segment run from their code object and
match numpy.

A 64x64 macro tile computed by one wave without LDS staging needs more than 256 VGPRs on
gfx1100 (16 f32 accumulator fragments of 8 VGPRs plus the A/B fragments), so LLVM spills ~155
VGPRs with scratch_store / scratch_load (architected flat scratch, `.amdhsa_enable_private_segment
1`). Tolerance: f16 inputs are exact in f32 products; the f32 sums over K=64 differ from the
float64 reference by at most K * 2**-24 * sum|a*b| (checked with a 4x margin)."""
from __future__ import annotations

import numpy as np
import pytest

from wmma_gen.device.emu import EmuDevice
from wmma_gen.emu import GlobalMemory, Program, run_kernel
from wmma_gen.errors import EmulatorFault
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.schedule import Schedule

SPILLING = Schedule(block_m=64, block_n=64, block_k=32, waves_m=1, waves_n=1)


def _gemm(arch, m, n, k, seed=0):
    from wmma_gen.ops.gemm.api import gemm
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = gemm(a, b, schedule=SPILLING, arch=arch, device=EmuDevice())
    ref = a.astype(np.float64) @ b.astype(np.float64)
    bound = 4 * k * 2.0 ** -24 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    return np.asarray(c, np.float64), ref, bound


def test_spilling_gemm_kernel_uses_scratch():
    k = compile_gemm(GemmDirective("f16", 64, 64, 64), SPILLING, "gfx1100").compiled
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
    k = compile_gemm(GemmDirective("f16", 64, 64, 64), SPILLING, "gfx1100").compiled
    prog = Program.from_code_object(k.hsaco, k.name)
    prog.descriptor["private_segment_fixed_size"] = 16      # shrink the segment: spills overflow it
    mem = GlobalMemory()
    a, b, c = mem.alloc(64 * 64 * 2), mem.alloc(64 * 64 * 2), mem.alloc(64 * 64 * 4)
    from wmma_gen.ops.gemm.build import compile_gemm as cg
    g = cg(GemmDirective("f16", 64, 64, 64), SPILLING, "gfx1100")
    with pytest.raises(EmulatorFault, match="private segment"):
        run_kernel(prog, mem, g.grid, g.block, prog.pack_kernarg([a, b, c] + g.scalars(), g.grid, g.block))
