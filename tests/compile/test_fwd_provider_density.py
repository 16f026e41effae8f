"""The attention-forward defaults under either MLIR provider reach mlir-gml's main-loop density
(issue 28: FlyDSL becomes the default only if it loses nothing): per (arch, dtype, head dim,
causal) the main loop issues the schedule's v_wmma in at most as many instructions as mlir-gml's
build does. Two MLIR native libraries cannot share a process, so the bar is mlir-gml's count,
recorded from compiler output (static analysis, no GPU) with the directive
bench/attention_provider_quality.py uses:

    WMMA_GEN_MLIR_PROVIDER=mlir python bench/attention_provider_quality.py --arch gfx1100 gfx1201
    (mlir-gml, LLVM 23; 2026-12-04; forward rows: loop_issued)

Under mlir-gml this guards its own figures (no builder change may lower them); under FlyDSL
(LLVM 24) it is the issue's bar (its defaults: ops/attention/defaults._LLVM_DEFAULTS)."""
import pytest

from wmma_gen.compiler import compile_mlir, mlir_api
from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.kernel import build_attention
from wmma_gen.targets import get_target

# (arch, dtype, head_dim, causal) -> mlir-gml's main-loop issued instructions (64 v_wmma in each).
MLIR_GML_ISSUED = {
    ("gfx1100", "f16", 64, False): 679, ("gfx1100", "f16", 64, True): 680,
    ("gfx1100", "f16", 128, False): 559, ("gfx1100", "f16", 128, True): 560,
    ("gfx1100", "bf16", 64, False): 741, ("gfx1100", "bf16", 64, True): 746,
    ("gfx1100", "bf16", 128, False): 590, ("gfx1100", "bf16", 128, True): 591,
    ("gfx1201", "f16", 64, False): 540, ("gfx1201", "f16", 64, True): 542,
    ("gfx1201", "f16", 128, False): 445, ("gfx1201", "f16", 128, True): 443,
    ("gfx1201", "bf16", 64, False): 587, ("gfx1201", "bf16", 64, True): 594,
    ("gfx1201", "bf16", 128, False): 475, ("gfx1201", "bf16", 128, True): 476,
}
@pytest.mark.parametrize("case", sorted(MLIR_GML_ISSUED), ids=lambda c: "-".join(map(str, c)))
def test_forward_default_density_reaches_mlir_gml(case):
    arch, dtype, head_dim, causal = case
    t = get_target(arch)
    d = AttentionDirective(dtype, head_dim, causal=causal)
    s = default_schedule(t, d)
    k = compile_mlir(build_attention(d, s, t).mlir, arch)
    loop = find_main_loop(k.isa)
    assert k.metadata.vgpr_spill_count == 0, k.metadata
    assert loop.wmma == 2 * s.frags_q * (s.block_n // 16) * (head_dim // 16) == 64
    assert loop.issued <= MLIR_GML_ISSUED[case], (mlir_api.NAME, loop.issued, MLIR_GML_ISSUED[case])
