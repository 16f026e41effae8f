"""Every shipped schedule entry names the toolchain it was tuned with, and the GEMM / attention /
attention-backward files were tuned under the default MLIR provider: tests/compile/
test_shipped_beat_default.py compares an entry only under its own toolchain, so an entry tuned
with another provider would be skipped there, never checked (results/shipped_sweeps.md)."""
import json

import pytest

from wmma_gen import schedule_files as sf
from wmma_gen.compiler import mlir_api
from wmma_gen.compiler.provider_id import DISTRIBUTIONS

RESWEPT = ("gfx1100-gemm-f16", "gfx1100-gemm-i8", "gfx1100-attention-f16", "gfx1100-attention_bwd-f16")


def _entries(stem: str):
    doc = json.loads((sf.SHIPPED_DIR / f"{stem}.json").read_text())
    return doc["entries"]


@pytest.mark.parametrize("path", sorted(sf.SHIPPED_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_every_shipped_entry_names_its_toolchain(path):
    for i, e in enumerate(json.loads(path.read_text())["entries"]):
        tc = e.get("toolchain", {})
        assert tc.get("mlir") and tc.get("lld"), f"{path.name} entry {i} ({e.get('study')}): toolchain {tc}"


@pytest.mark.parametrize("stem", RESWEPT)
def test_reswept_files_were_tuned_under_the_default_provider(stem):
    default = mlir_api.PROVIDERS[0]                      # the provider `auto` loads first
    allowed = DISTRIBUTIONS[default]
    for e in _entries(stem):
        dist = e["toolchain"]["mlir"].split("==")[0]     # "flydsl==0.5.0 (flydsl._mlir, LLVM 24...)" -> "flydsl"
        assert dist in allowed, f"{stem} {e['study']}: tuned with {dist}, the default provider is {default}"


@pytest.mark.parametrize("stem", RESWEPT)
def test_reswept_files_state_their_entries_toolchain(stem):
    doc = json.loads((sf.SHIPPED_DIR / f"{stem}.json").read_text())
    assert {(e["toolchain"]["mlir"], e["toolchain"]["lld"]) for e in doc["entries"]} == \
        {(doc["toolchain"]["mlir"], doc["toolchain"]["lld"])}


def test_an_attention_file_of_mixed_toolchains_lists_them():
    from wmma_gen.ops.attention.tuning import file_toolchain
    a, b = {"mlir": "flydsl==0.5.0", "lld": "LLD 22"}, {"mlir": "mlir-gml==0.0.4", "lld": "LLD 22"}
    assert file_toolchain([{"toolchain": a}, {"toolchain": a}]) == a
    assert file_toolchain([{"toolchain": b}, {"toolchain": a}]) == {"mixed": [a, b]}
