"""wmma_gen.torch.flash_mla_with_kvcache (FlashMLA's call) on CPU tensors (the emulator runs the MLA
kernel) against the float64 reference (ops/mla/reference.py, from the math): bf16 with causal
speculative decode (Sq = 3), an fp8 latent cache with descale_k, torch.compile through the custom
op's fake implementation, and arguments it refuses. Tolerance |O - O_ref| <= 3u max|V|."""
import numpy as np
import pytest
import torch

from wmma_gen.ops.mla.reference import mla_decode_reference
from wmma_gen.torch import flash_mla_with_kvcache

UNIT = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def _inputs(dtype, B=2, Sq=3, H=5, D=576, bs=64, lens=(83, 20)):
    nb = 2 * B + 1                                  # two table entries per sequence, one spare block
    table = torch.randperm(nb)[:B * 2].reshape(B, 2).to(torch.int32)
    q = torch.randn(B, Sq, H, D).to(dtype)
    cache = torch.randn(nb, bs, 1, D)
    return q, cache, table, torch.tensor(lens, dtype=torch.int32)


def _check(out, lse, q, values, table, lens, causal, scale=1.0):
    ro, rl = mla_decode_reference(q.to(torch.float64).numpy(), values.to(torch.float64).numpy(), table.numpy(),
                                  lens.numpy(), head_dim_v=512, causal=causal, kv_scale=scale)
    tol = 3 * UNIT[q.dtype] * float(values.abs().max()) * scale
    assert out.dtype == q.dtype and out.shape == (*q.shape[:3], 512) and lse.shape == (q.shape[0], q.shape[2], q.shape[1])
    assert np.abs(out.to(torch.float64).numpy() - ro).max() <= tol
    np.testing.assert_allclose(lse.numpy(), rl, rtol=0, atol=1e-5 * (1 + np.abs(rl).max()))


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_bf16_causal_speculative_decode(arch, monkeypatch):
    monkeypatch.setenv("WMMA_GEN_ARCH", arch)
    q, cache, table, lens = _inputs(torch.bfloat16)
    cache = cache.to(torch.bfloat16)
    out, lse = flash_mla_with_kvcache(q, cache, table, lens, 512, causal=True)
    _check(out, lse, q, cache, table, lens, True)


def test_fp8_latent_cache_with_descale(monkeypatch):
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1100")
    q, cache, table, lens = _inputs(torch.float16, Sq=1, H=4, lens=(70, 9))
    cache8 = (cache * 4).to(torch.float8_e4m3fn)
    out, lse = flash_mla_with_kvcache(q=q, k_cache=cache8, block_table=table, cache_seqlens=lens, head_dim_v=512,
                                      descale_k=0.25, is_fp8_kvcache=True)     # vLLM FlashMLA backend's keywords
    _check(out, lse, q, cache8.to(torch.float64), table, lens, False, scale=0.25)


def test_compiles_as_one_opaque_op(monkeypatch):
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1100")
    q, cache, table, lens = _inputs(torch.float16, Sq=1, H=2, lens=(30, 5))
    cache = cache.half()
    f = torch.compile(lambda *a: flash_mla_with_kvcache(*a, head_dim_v=512), fullgraph=True, backend="eager")
    out, lse = f(q, cache, table, lens)
    _check(out, lse, q, cache, table, lens, False)


@pytest.mark.parametrize("kw,match", [
    (dict(descale_q=1.0), "descale_q"),
    (dict(descale_k=2.0), "descale_k"),
    (dict(softmax_scale=-1.0), "softmax_scale"),
    (dict(head_dim_v=640), "head_dim_v"),
    (dict(is_fp8_kvcache=True), "is_fp8_kvcache"),
    (dict(k_cache=torch.zeros(1)), "once"),
])
def test_refused_arguments_name_themselves(kw, match):
    q, cache, table, lens = _inputs(torch.float16, Sq=1, H=2, lens=(30, 5))
    with pytest.raises((ValueError, NotImplementedError), match=match):
        flash_mla_with_kvcache(q, cache.half(), table, lens, **kw)


def test_record_problems_writes_a_row_the_sweep_reads(monkeypatch, tmp_path):
    """record_problems keeps the call's problem (block table capacity as the context) and the
    problems file reads back as the mla op's directive and problem."""
    from autotune.problems import load
    from wmma_gen.ops.mla.directive import MLADirective
    from wmma_gen.torch import record_problems
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1100")
    q, cache, table, lens = _inputs(torch.bfloat16, Sq=2, H=3, lens=(30, 5))
    with record_problems() as rec:
        flash_mla_with_kvcache(q, cache.to(torch.bfloat16), table, lens, causal=True)
    assert rec.problems == [{"op": "mla", "dtype": "bf16", "head_dim": 576, "head_dim_v": 512, "block_size": 64,
                             "kv_dtype": "bf16", "causal": True, "batch": 2, "heads": 3, "seq_q": 2, "seq_len": 128}]
    path = rec.save(tmp_path / "mla.yaml")
    (row,) = load(path)
    assert row.directive() == MLADirective("bf16", 576, 512, 64, "bf16", True)
    assert row.sizes() == {"batch": 2, "heads": 3, "seq_q": 2, "seq_len": 128}
