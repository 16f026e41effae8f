"""The archs users run (issue #27 item 4): gfx1103, gfx1152, gfx1153 (RDNA3/3.5, GFX11 WMMA,
1024 VGPRs/SIMD) and gfx1170/gfx1171 ("RDNA 4m": GFX11 encodings, GFX12 WMMA). Each compiles a
small GEMM to a code object whose ELF mach and WMMA operand sizes match targets.py; an arch the
loaded provider's LLVM does not know is refused with an error naming it (not an LLVM abort);
the default schedules compile without spills; unknown product facts raise instead of guessing."""
import re

import pytest

from wmma_gen.compiler import compile_mlir, toolchain
from wmma_gen.compiler.mlir_api import provider
from wmma_gen.codeobj.codeobject import load_code_object
from wmma_gen.errors import CompileError, ScheduleError
from wmma_gen.model.params import params_for
from wmma_gen.ops.attention.defaults import default_schedule as fwd_default
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.kernel import build_attention
from wmma_gen.ops.attention_bwd import build_backward, make_spec
from wmma_gen.ops.attention_bwd import default_schedule as bwd_default
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.defaults import fitted_default
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule
from wmma_gen.targets import get_target

NEW = ("gfx1103", "gfx1152", "gfx1153", "gfx1170", "gfx1171")
# A/B VGPRs of one f16 WMMA operand: 16 halves per lane on GFX11 WMMA, 8 on GFX12 WMMA.
A_VGPRS = {"gfx11": 8, "gfx12": 4}


def _needs_chip(arch):
    why = toolchain.chip_problem(arch)
    if why:
        pytest.skip(f"MLIR provider '{provider().name}' does not know {arch} ({why}); "
                    "test_unknown_chip_is_refused_naming_arch_and_provider covers it")


def _small(arch, dtype="f16"):
    d = GemmDirective(dtype, acc="f32" if dtype == "f16" else "i32")
    return compile_gemm(d, Schedule(block_m=64, block_n=64, block_k=32), arch, GemmProblem(64, 64, 64), cache=False)


@pytest.mark.parametrize("arch", NEW)
def test_code_object_mach_and_wmma_operands_follow_the_table(arch):
    _needs_chip(arch)
    t = get_target(arch)
    k = _small(arch).compiled
    co = load_code_object(k.hsaco)
    assert co.arch == arch and co.mach == t.elf_mach
    wmma = re.findall(r"^\s*v_wmma_f32_16x16x16_f16 v\[(\d+):(\d+)\], v\[(\d+):(\d+)\]", k.isa, re.M)
    assert wmma, k.isa[:2000]
    assert {int(hi) - int(lo) + 1 for _, _, lo, hi in wmma} == {A_VGPRS[t.family]}


@pytest.mark.parametrize("arch", ("gfx1170", "gfx1171"))
def test_rdna4m_is_gfx11_encoded_with_gfx12_wmma(arch):
    t = get_target(arch)
    assert (t.family, t.encoding) == ("gfx12", "gfx11")
    _needs_chip(arch)
    isa = _small(arch, "i8").compiled.isa
    assert "s_waitcnt" in isa and "s_wait_loadcnt" not in isa          # GFX11 counters, not GFX12's
    assert re.search(r"v_wmma_i32_16x16x16_iu8 v\[\d+:\d+\], v\[(\d+):(\d+)\]", isa)
    lo, hi = map(int, re.search(r"v_wmma_i32_16x16x16_iu8 v\[\d+:\d+\], v\[(\d+):(\d+)\]", isa).groups())
    assert hi - lo + 1 == 2                                          # 8 bytes per lane: GFX12 iu8


def test_unknown_chip_is_refused_naming_arch_and_provider():
    unknown = [a for a in NEW if toolchain.chip_problem(a)]
    if not unknown:
        pytest.skip(f"provider '{provider().name}' knows every new arch")
    arch = unknown[0]
    with pytest.raises(CompileError, match=rf"arch={arch} is not supported by MLIR provider '{provider().name}'"):
        _small(arch)


@pytest.mark.parametrize("arch", ("gfx1153", "gfx1170", "gfx1171"))
def test_unknown_product_facts_raise_instead_of_guessing(arch):
    t = get_target(arch)
    assert "cus" in t.unknown and not t.peak_known("f16")
    with pytest.raises(ScheduleError, match=rf"{arch}\.(cus|rate\[f16\])"):
        t.peak_tflops("f16")
    with pytest.raises(ScheduleError, match="cannot estimate"):
        params_for(arch)


@pytest.mark.parametrize("arch", NEW)
def test_unknown_cache_size_refuses_the_gpu_timers_default(arch):
    """The GPU timer rotates operand sets larger than L2 + Infinity Cache; an unknown size must not
    read as 0 (every launch could then hit a warm cache)."""
    with pytest.raises(ScheduleError, match=rf"{arch}\.l2_bytes.*pass cache_bytes"):
        get_target(arch).cache_bytes


def test_known_product_peaks_are_rate_times_cus_times_clock():
    assert get_target("gfx1103").peak_tflops("f16") == pytest.approx(512 * 12 * 2.8e9 / 1e12)
    assert get_target("gfx1152").peak_tflops("i4") == pytest.approx(1024 * 8 * 3.0e9 / 1e12)
    assert params_for("gfx1103").mall_bytes == 0


@pytest.mark.parametrize("arch", NEW)
@pytest.mark.parametrize("dtype, layout", [("f16", "NN"), ("f16", "TN"), ("i8", "TT")])
def test_gemm_default_does_not_spill(arch, dtype, layout):
    _needs_chip(arch)
    d = GemmDirective(dtype, acc="f32" if dtype == "f16" else "i32", layout=layout)
    p = GemmProblem(4096, 4096, 4096)
    md = compile_gemm(d, fitted_default(d, get_target(arch), p), arch, p).compiled.metadata
    assert md.spills == 0 and md.scratch_bytes == 0, md


@pytest.mark.parametrize("arch", NEW)
@pytest.mark.parametrize("head_dim", [64, 128])
def test_attention_defaults_do_not_spill(arch, head_dim):
    """Forward and the three backward kernels (causal: the bigger masks) at their defaults; the
    1024-VGPR gfx1152/gfx1153 take their own hd128 dQ tile (attention_bwd/defaults._ARCH), and under
    LLVM 24 gfx1102/gfx1103 their own hd64 forward (attention/defaults._LLVM_DEFAULTS)."""
    _needs_chip(arch)
    t = get_target(arch)
    d = AttentionDirective("f16", head_dim, causal=True, return_lse=True)
    kernels = {"forward": build_attention(d, fwd_default(t, d), t)}
    kernels.update(build_backward(make_spec(arch, "f16", head_dim, causal=True), bwd_default(arch, head_dim)).items())
    for name, src in kernels.items():
        md = compile_mlir(src.mlir, arch).metadata
        assert md.spills == 0 and md.scratch_bytes == 0, (arch, head_dim, name, md)


@pytest.mark.parametrize("arch", ("gfx1100",) + NEW)
def test_vgpr_file_matches_llvms_occupancy_cap(arch):
    """targets [VGPRPROBE]: asked for 6 waves per SIMD, LLVM caps a kernel that wants ~220 VGPRs at
    the file / 6 rounded down to the allocation granule (1024 -> 160) or leaves it (1536 -> 256)."""
    _needs_chip(arch)
    t = get_target(arch)
    d = AttentionDirective("f16", 128)
    ref = get_target("gfx1100" if t.family == "gfx11" else "gfx1201")    # its hd128 tile wants > 160 VGPRs
    src = build_attention(d, fwd_default(ref, d), t).mlir
    text = src.replace("kernel attributes {known_block_size",
                       'kernel attributes {llvm.passthrough = [["amdgpu-waves-per-eu", "6,6"]], known_block_size', 1)
    assert text != src
    cap = min(t.max_vgprs_per_wave, t.vgprs_per_simd // 6 // t.vgpr_granule * t.vgpr_granule)
    md = compile_mlir(text, arch, cache=False).metadata
    assert md.vgpr_count <= cap
    assert (md.spills > 0) == (cap < 200), (md.vgpr_count, md.spills, cap)   # the uncapped kernel needs > 200
