"""Bad input to wmma_gen.torch: a clear error naming the argument, raised before any launch;
the SDPA fallback is the caller's explicit choice; a likely (B, H, S, D) mix-up warns."""
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from wmma_gen.errors import DeviceError
from wmma_gen.torch import flash_attn_func, flash_attn_varlen_func, linear, matmul, scaled_dot_product_attention


def _qkv(shape=(1, 16, 2, 32), dtype=torch.float16):
    return [torch.randn(shape).to(dtype) for _ in range(3)]


@pytest.mark.parametrize("kw,name", [({"dropout_p": 0.1}, "dropout_p"),
                                     ({"alibi_slopes": torch.ones(2)}, "alibi_slopes")])
def test_flash_attn_unsupported_features_name_the_argument(kw, name):
    with pytest.raises(NotImplementedError, match=name):
        flash_attn_func(*_qkv(), **kw)


def test_varlen_refuses_packed_kv_with_a_block_table_and_non_int32_offsets():
    q, k, v = _qkv((16, 2, 32))
    cu = torch.tensor([0, 16], dtype=torch.int32)
    with pytest.raises(ValueError, match=r"k.shape=\(16, 2, 32\) is not allowed with block_table: a paged cache"):
        flash_attn_varlen_func(q, k, v, cu, cu, 16, 16, block_table=torch.zeros(1, 1, dtype=torch.int32))
    with pytest.raises(ValueError, match="cu_seqlens_q"):
        flash_attn_varlen_func(q, k, v, cu.long(), cu, 16, 16)


@pytest.mark.parametrize("dtype,shape,match", [(torch.float32, (1, 16, 2, 32), "q.dtype"),
                                               (torch.float16, (1, 16, 2, 40), "head_dim=40"),
                                               (torch.float16, (16, 2, 32), "q.shape")])
def test_unsupported_dtype_head_dim_rank(dtype, shape, match):
    with pytest.raises(ValueError, match=match):
        flash_attn_func(*_qkv(shape, dtype))


def test_bhsd_passed_to_flash_attn_func_warns():
    q, k, v = _qkv((1, 2, 32, 32))              # (B, H, S, D): reads as 2 tokens of 32 heads
    with pytest.warns(UserWarning, match="batch, nheads, seqlen, headdim"):
        flash_attn_func(q, k, v)


@pytest.mark.parametrize("sq,sk", [(1, 5), (1, 1), (3, 40)])
def test_correct_decode_and_cached_prefill_do_not_warn(sq, sk):
    """Sq=1 decode against a short or long cache, and a 3-token chunk against a 40-token cache,
    all with 8 query heads over 2 kv heads (Sq < H): correct flash-attn layouts, no warning."""
    import warnings
    q = torch.randn(1, sq, 8, 32).half()
    k, v = torch.randn(1, sk, 2, 32).half(), torch.randn(1, sk, 2, 32).half()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = flash_attn_func(q, k, v, causal=True)
    assert out.shape == (1, sq, 8, 32)


def test_sdpa_mask_and_dropout_refused_unless_fallback():
    q, k, v = _qkv((1, 2, 16, 32))
    mask = torch.ones(16, 16, dtype=torch.bool).tril()
    with pytest.raises(NotImplementedError, match="attn_mask"):
        scaled_dot_product_attention(q, k, v, attn_mask=mask)
    with pytest.raises(NotImplementedError, match="dropout_p"):
        scaled_dot_product_attention(q, k, v, dropout_p=0.1)
    got = scaled_dot_product_attention(q, k, v, attn_mask=mask, fallback=True)
    assert torch.equal(got, torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask))


def test_sdpa_gqa_needs_enable_gqa():
    q, k = torch.randn(1, 4, 16, 32).half(), torch.randn(1, 2, 16, 32).half()
    with pytest.raises(ValueError, match="enable_gqa"):
        scaled_dot_product_attention(q, k, k)


def test_nvidia_cuda_tensors_are_refused():
    with FakeTensorMode():        # a "cuda" tensor without a GPU; torch.version.hip is None on this build
        q = torch.empty(1, 16, 2, 32, device="cuda", dtype=torch.float16)
    if torch.version.hip is not None:
        pytest.skip("a ROCm build of torch: 'cuda' is an AMD GPU here")
    with pytest.raises(DeviceError, match="NVIDIA"):
        flash_attn_func(q, q, q)


def test_tensors_on_different_devices_are_refused(monkeypatch):
    monkeypatch.setattr(torch.version, "hip", "6.2.0", raising=False)    # as on ROCm torch
    with FakeTensorMode():
        w = torch.empty(48, 64, device="cuda", dtype=torch.float16)
    with pytest.raises(DeviceError, match="x on cpu, weight on cuda:0"):
        linear(torch.randn(8, 64).half(), w)


def test_meta_device_is_refused():
    with pytest.raises(DeviceError, match="a.device=meta"):
        matmul(torch.empty(16, 32, device="meta", dtype=torch.float16), torch.randn(32, 16).half())


@pytest.mark.parametrize("kw,match", [({"activation": "tanh"}, "activation='tanh'"),
                                      ({"weight": torch.randn(48, 32).half()}, "weight.shape"),
                                      ({"weight": torch.randn(48, 64).bfloat16()}, "weight.dtype"),
                                      ({"bias": torch.randn(47)}, "bias")])
def test_linear_bad_arguments(kw, match):
    args = {"x": torch.randn(8, 64).half(), "weight": torch.randn(48, 64).half(), **kw}
    with pytest.raises(ValueError, match=match):
        linear(**args)


def test_integer_linear_takes_no_bias_or_activation():
    x, w = torch.ones(8, 64, dtype=torch.int8), torch.ones(48, 64, dtype=torch.int8)
    with pytest.raises(ValueError, match="bias/activation"):
        linear(x, w, activation="relu")
