"""One LLM.generate run of a tiny checkpoint in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0),
printed as one JSON line: the lane's tests start it once per (model, backend) so each run selects
its backend afresh (vLLM caches its selection per process).

    python serve_tiny.py MODEL_DIR wmma_gen|cpu [--kv-cache-dtype fp8]

wmma_gen: WMMA_GEN_VLLM_CPU=1 makes the plugin replace CPU_ATTN; the float64 checker wraps every
attention call (float64_check.py) and wmma_gen.torch.record_problems counts the kernels' problems.
"""
from __future__ import annotations

import argparse
import json
import os
import sys


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("backend", choices=("wmma_gen", "cpu"))
    ap.add_argument("--kv-cache-dtype", default="auto")
    a = ap.parse_args()
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ["WMMA_GEN_VLLM_CPU"] = "1" if a.backend == "wmma_gen" else "0"
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import contextlib

    from tiny_models import prompts
    from vllm import LLM, SamplingParams

    records: list = []
    rec = None
    ctx = contextlib.nullcontext()
    if a.backend == "wmma_gen":
        import float64_check
        from wmma_gen.torch import record_problems
        float64_check.install(records)
        ctx = record_problems()
    llm = LLM(model=a.model, dtype="float16", enforce_eager=True, max_model_len=64, max_num_seqs=4, block_size=32,
              max_num_batched_tokens=16, kv_cache_memory_bytes=1 << 20, kv_cache_dtype=a.kv_cache_dtype, seed=0,
              enable_prefix_caching=False)
    impls = sorted({(type(layer.impl).__name__, getattr(layer.impl, "sliding_window", None))
                    for layer in _attention_layers(llm)}, key=str)
    with ctx as rec:
        outs = llm.generate(prompts(), SamplingParams(max_tokens=5, temperature=0.0, ignore_eos=True))
    print("RESULT " + json.dumps({
        "tokens": [list(o.outputs[0].token_ids) for o in outs], "impls": impls, "calls": records,
        "problems": None if rec is None else len(rec) + rec.skipped,
        "archs": None if rec is None else sorted(rec.archs)}), flush=True)


def _attention_layers(llm):
    from vllm.model_executor.layers.attention import Attention
    runner = llm.llm_engine.model_executor.driver_worker.worker.model_runner
    return [m for m in runner.model.modules() if isinstance(m, Attention)]


if __name__ == "__main__":
    main()
