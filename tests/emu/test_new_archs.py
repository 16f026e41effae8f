"""The archs users run (issue #27 item 4) on the emulator: a small GEMM (f16 and i8) and a small
attention forward compiled for gfx1103, gfx1152, gfx1153, gfx1170 and gfx1171 run their machine
code and match numpy. gfx1170/gfx1171 decode with the GFX11 tables but execute the GFX12 WMMA
rows (emu.isa.table.WMMA12_ON_GFX11); gfx1171 needs a provider whose LLVM knows it (FlyDSL's).
The backward runs where a default differs from its family's: gfx1152/gfx1153 hd128 (dq_block_n=32,
attention_bwd/defaults._ARCH) and gfx1170 (GFX12 tables on a GFX11-encoded part)."""
import pickle

import numpy as np
import pytest
from attention_bwd_cases import check as check_bwd
from attention_fwd_helpers import check

from wmma_gen.compiler import toolchain
from wmma_gen.compiler.mlir_api import provider
from wmma_gen.emu.isa.table import family, wmma_family
from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.gemm import fit_schedule
from wmma_gen.ops.gemm.check import check_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.targets import get_target

NEW = ("gfx1103", "gfx1152", "gfx1153", "gfx1170", "gfx1171")


def _needs_chip(arch):
    why = toolchain.chip_problem(arch)
    if why:
        pytest.skip(f"MLIR provider '{provider().name}' does not know {arch} ({why}): "
                    f"run with WMMA_GEN_MLIR_PROVIDER=flydsl")


@pytest.mark.parametrize("arch", NEW)
def test_emulator_family_follows_the_target_table(arch):
    fam = family(arch)
    assert fam == get_target(arch).encoding and fam.wmma == get_target(arch).family == wmma_family(arch)
    back = pickle.loads(pickle.dumps(fam))
    assert (back, back.wmma) == (fam, fam.wmma)


@pytest.mark.parametrize("arch", NEW)
@pytest.mark.parametrize("dtype", ["f16", "i8"])
def test_small_gemm_matches_numpy(arch, dtype):
    _needs_chip(arch)
    d, p = GemmDirective(dtype, layout="NT"), GemmProblem(48, 40, 72)
    r = check_gemm(d, fit_schedule(d, arch, p), arch, p, "emu")
    assert r.source == "emulator" and r.passed, r
    if d.is_int:
        assert r.max_abs == 0.0


@pytest.mark.parametrize("arch", NEW)
def test_small_attention_forward_matches_reference(arch):
    _needs_chip(arch)
    d = AttentionDirective("f16", 64, return_lse=True)
    check(arch, d, default_schedule(get_target(arch), d), heads=1, kv_heads=1, seq_q=40, seq_k=72)


@pytest.mark.parametrize("arch, head_dim", [("gfx1152", 128), ("gfx1153", 128), ("gfx1170", 64), ("gfx1171", 64)])
def test_small_attention_backward_matches_reference(arch, head_dim):
    _needs_chip(arch)
    check_bwd(arch, np.random.default_rng(head_dim), heads=1, kv_heads=1, sq=40, sk=50, d=head_dim, causal=True)
