"""GEMM epilogue activations with torch's meanings, run on the emulator: gelu = exact erf GELU
(nn.GELU()), gelu_tanh = GELU(approximate="tanh"), on gfx11 (gfx1100) and gfx12 (gfx1201),
f16 and bf16 inputs, against the float64 reference.

test_f16_bf16_gelu_*: the gate's own tolerances (check.tolerance). Those are normwise
sqrt(K)*eps(in) (~5e-3 for f16, K=32) and cannot tell erf from tanh (they differ by <= 4.7e-4
absolute), so test_gelu_kinds_are_distinct also runs f32 outputs, where the pre-activation is
exact up to f32 summation (f16/bf16 products are exact in f32; K=32: ~1e-6) and the epilogue's
own error is ~1e-6 (erf.py): 2e-5 absolute accepts the right activation and rejects the other
one by > 10x."""
import numpy as np
import pytest

from wmma_gen.ops.gemm import fit_schedule
from wmma_gen.ops.gemm.api import run_gemm
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.check import check_gemm, random_operands
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.reference import gemm_reference
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.device.select import get_device

ARCHS = ("gfx1100", "gfx1201")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("act", ["gelu", "gelu_tanh"])
def test_f16_bf16_gelu_at_gate_tolerance(arch, dtype, act):
    """Edge tiles (40x24 over the macro tile), a bias and alpha: every store path of the epilogue."""
    d = GemmDirective(dtype, layout="NT", activation=act, alpha=0.75, bias="n", out_dtype=dtype)
    p = GemmProblem(40, 24, 48)
    r = check_gemm(d, fit_schedule(d, arch, p), arch, p, "emu")
    assert r.source == "emulator"
    assert r.passed, r


def _run(d: GemmDirective, p: GemmProblem, arch: str):
    k = compile_gemm(d, fit_schedule(d, arch, p), arch, p)
    stored, values = random_operands(d, p, seed=3)
    out, _ = run_gemm(k, get_device("emu"), stored, problem=p)
    return np.asarray(out, dtype=np.float64), values


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_gelu_kinds_are_distinct(arch, dtype):
    """alpha=4 spreads the pre-activations over about [-8, 8], so the erf/tanh difference, the
    negative tail (1 + erf -> 0) and large positive inputs are all exercised."""
    for act, other in (("gelu", "gelu_tanh"), ("gelu_tanh", "gelu")):
        d = GemmDirective(dtype, activation=act, alpha=4.0, out_dtype="f32")
        out, v = _run(d, GemmProblem(32, 32, 32), arch)
        ref = gemm_reference(d, v["a"], v["b"])
        wrong = gemm_reference(GemmDirective(dtype, activation=other, alpha=4.0), v["a"], v["b"])
        pre = gemm_reference(GemmDirective(dtype, alpha=4.0), v["a"], v["b"])
        assert pre.min() < -4 and pre.max() > 4
        assert np.abs(out - ref).max() < 2e-5
        assert np.abs(out - wrong).max() > 2e-4
