"""#rocdl.target features per LLVM version of the loaded provider (kernels/module.FEATURES_BY_LLVM).

LLVM 24 (FlyDSL) gets "-real-true16": without it LLVM 24 writes the attention kernels' 16-bit
math with true16 half-register operands (`v5.l`, `v5.h`; RDNA4 ISA guide, 16-bit VGPR halves)
and the main loops lose density (bench/attention_provider_quality.py); with it the ISA uses
the full-register 16-bit forms, as LLVM 23 (mlir-gml) does by default. Run under either
provider: WMMA_GEN_MLIR_PROVIDER=flydsl|mlir."""
import re

import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.kernels import module
from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.kernel import build_attention
from wmma_gen.targets import get_target

HALF_REGISTER = re.compile(r"\bv\d+\.[lh]\b")


def test_target_attribute_carries_the_loaded_llvms_features():
    features = module.FEATURES_BY_LLVM.get(module.llvm_major(), "")
    attr = module.rocdl_target("gfx1201")
    assert attr.startswith('#rocdl.target<chip = "gfx1201"')
    assert (f'features = "{features}"' in attr) if features else ("features" not in attr)


def _forward_isa(monkeypatch, features: dict) -> tuple[str, int]:
    monkeypatch.setattr(module, "FEATURES_BY_LLVM", features)
    t, d = get_target("gfx1201"), AttentionDirective("bf16", 64)
    k = compile_mlir(build_attention(d, default_schedule(t, d), t).mlir, "gfx1201")
    return k.isa, k.metadata.spills


def test_without_real_true16_no_half_register_operands(monkeypatch):
    isa, spills = _forward_isa(monkeypatch, {module.llvm_major(): "-real-true16"})
    assert spills == 0 and not HALF_REGISTER.findall(isa)


def test_llvm24_needs_the_feature_to_avoid_true16(monkeypatch):
    if module.llvm_major() != 24:
        pytest.skip(f"measured under LLVM 24 only (loaded: LLVM {module.llvm_major()})")
    assert module.FEATURES_BY_LLVM.get(module.llvm_major()) == "-real-true16"
    isa, _ = _forward_isa(monkeypatch, {})
    assert HALF_REGISTER.findall(isa), "LLVM 24 no longer picks true16 forms: the feature may be dropped"
