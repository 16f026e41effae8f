"""The shipped paged-attention schedules (schedules/<arch>-paged_attention-<f16|bf16>.json, model-ranked
sweeps recorded in results/paged_sweeps.md): each file reads back through lookup.py's
validators, a user's wmma_gen.paged_attention() call in one of its buckets runs the entry's
schedule (no user file in the search path: tests/conftest.py), and that kernel agrees with the
float64 reference on the emulator for one small problem per file."""
import numpy as np
import pytest

import wmma_gen
from wmma_gen.ops.paged_attention import api, lookup
from wmma_gen.ops.paged_attention.check import UNIT, random_paged
from wmma_gen.ops.paged_attention.reference import paged_attention_reference

# (arch, dtype, kv dtype, bucket context length): one entry per f16 file and one bf16 entry, an fp8
# cache on gfx12
CASES = [("gfx1100", "f16", "f16", 1024), ("gfx1201", "f16", "fp8e4m3", 8192), ("gfx1201", "bf16", "bf16", 1024)]
FILES = [("gfx1100", "f16"), ("gfx1100", "bf16"), ("gfx1201", "f16"), ("gfx1201", "bf16")]


def _shipped(arch: str, dtype: str = "f16") -> list[dict]:
    return lookup.load_file(lookup.DEFAULT_DIR / lookup.file_name(arch, dtype))


@pytest.mark.parametrize("arch, dtype", FILES)
def test_the_shipped_file_is_valid_and_model_ranked(arch, dtype):
    entries = _shipped(arch, dtype)
    assert entries and all(e["source"] == "model" and e["tflops"] > 0 for e in entries)
    assert {e["q_dtype"] for e in entries} == {dtype}                # Q tuned in the file's dtype
    assert {e["seq_q"] for e in entries} == {1, 16}                  # decode and chunked-prefill studies
    assert len({(e["head_dim"], e["kv_dtype"], e["seq"], e["batch"], e["seq_q"]) for e in entries}) == len(entries)


@pytest.mark.parametrize("arch,dtype,kv,seq", CASES)
def test_a_call_runs_the_shipped_entry_and_matches_the_reference(arch, dtype, kv, seq, monkeypatch):
    want = [e for e in _shipped(arch, dtype) if (e["head_dim"], e["kv_dtype"], e["seq"], e["batch"], e["seq_q"],
                                                 e["softcap"], e["window"]) == (64, kv, seq, 1, 1, False, False)]
    assert len(want) == 1
    used = []
    real = api.compile_paged
    monkeypatch.setattr(api, "compile_paged", lambda d, s, a: used.append(s) or real(d, s, a))
    fp8 = None if kv == dtype else kv
    problem = dict(batch=1, heads=4, kv_heads=1, seq_q=1, head_dim=64, seq_lens=[37], kv_dtype=fp8)
    q, ((k, k64), (v, v64)), table, lens = random_paged(problem, dtype, seed=3)
    table = np.pad(table, ((0, 0), (0, seq // 16 - table.shape[1])))    # the table holds `seq` keys: the bucket
    o = wmma_gen.paged_attention(q, k, v, table, lens, causal=True, kv_dtype=fp8, dtype=dtype, arch=arch, device="emu")
    assert used == [want[0]["schedule"]]
    ro, _ = paged_attention_reference(q, k64, v64, table, lens, causal=True)
    err = np.abs(o.astype(np.float64) - ro).max()
    assert err <= 3 * UNIT[dtype] * max(np.abs(v64).max(), 1.0), err


def test_a_native_fp8_call_keeps_its_default():
    """The shipped E4M3 entries were tuned on the dequantising path: an fp8_wmma call (another
    numerical contract and cost) does not take them and runs the default table's entry."""
    from wmma_gen.ops.paged_attention.defaults import default_schedule
    from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective
    p = dict(batch=1, heads=32, kv_heads=8, seq_q=1, max_blocks=64)
    dequant = PagedAttentionDirective("f16", 64, kv_dtype="fp8e4m3")
    native = PagedAttentionDirective("f16", 64, kv_dtype="fp8e4m3", fp8_wmma=True)
    assert lookup.lookup("gfx1201", dequant, p) is not None
    assert lookup.lookup("gfx1201", native, p) is None
    assert lookup.choose_schedule(native, p, "gfx1201") == default_schedule(native, "gfx1201", 4, 1024, batch=1,
                                                                            kv_heads=8)
