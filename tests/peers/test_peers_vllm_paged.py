"""bench/peers_vllm_paged.py: vLLM's Triton unified-attention kernel, read at bench time from a vLLM
distribution the user downloaded (never from this repository), compiled offline for RDNA3. Without
WMMA_GEN_VLLM_DIST the loader must say so (None) and leave sys.modules alone; with it, the decode
launch must compile and its main loop must be counted per key as ours is (issue 38 item 3)."""
import os
import sys

import pytest

from bench_import import bench_module

pytest.importorskip("triton")


@pytest.fixture(scope="module")
def pv():
    with bench_module("peers_vllm_paged") as module:
        yield module


def test_absent_or_incomplete_distribution_is_none(pv, tmp_path, monkeypatch):
    monkeypatch.delenv(pv.ENV, raising=False)
    before = dict(sys.modules)
    assert pv.load() is None
    assert pv.load(str(tmp_path / "missing.whl")) is None
    (tmp_path / pv.OPS).mkdir(parents=True)          # a tree without the kernel's files
    assert pv.load(str(tmp_path)) is None
    assert {k for k in sys.modules if k.startswith("vllm")} == {k for k in before if k.startswith("vllm")}


@pytest.mark.skipif(not os.environ.get("WMMA_GEN_VLLM_DIST"), reason="no vLLM distribution named "
                    "(WMMA_GEN_VLLM_DIST: a vllm wheel or sdist)")
def test_vllm_decode_compiles_for_gfx1100_and_costs_more_per_key_than_ours(pv, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    before = {k for k in sys.modules if k == "vllm" or k.startswith("vllm.")}
    kernel = pv.load()
    assert kernel is not None
    assert {k for k in sys.modules if k == "vllm" or k.startswith("vllm.")} == before   # stubs removed
    from wmma_gen.model.isa_loop import find_main_loop
    from wmma_gen.ops.paged_attention.api import compile_paged
    from wmma_gen.ops.paged_attention.defaults import default_schedule
    from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective
    for kv in ("f16", "fp8e4m3"):
        ck = pv.compile_decode(kernel, "gfx1100", kv)
        loop = find_main_loop(ck.asm["amdgcn"])
        assert loop.found and loop.wmma >= 2, kv      # both products on WMMA in the loop
        theirs = loop.issued * ck.metadata.num_warps / pv.TILE_SIZE
        d = PagedAttentionDirective("f16", 128, 16, kv, True)
        s = default_schedule(d, "gfx1100", 4, 32768, batch=1, kv_heads=8)
        (_, mine), _ = compile_paged(d, s, "gfx1100")
        ours = find_main_loop(mine.isa).issued * s.waves / s.block_n
        assert theirs > ours, (kv, theirs, ours)      # the table's ratio column, same definition
