"""kernels/signature: a buffer the kernel reaches with unsigned 32-bit byte offsets (KArg.offset_bits,
the saddr form of kernels/global_tensor.py) is refused by Signature.shapes when the problem makes it
larger than 2**32 bytes -- naming the kernel, the argument, its shape and bytes, and the limit --
and the attention backward declares that bound on its saddr tensors (pure Python: no MLIR built)."""
import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.kernels.signature import KArg, Signature
from wmma_gen.ops.attention_bwd.args import SADDR_TENSORS, kernel_args
from wmma_gen.ops.attention_bwd.build import make_spec


def row_vector_signature():
    lse = KArg("lse", "in", "f32", shape=lambda p: (p["batch"], p["heads"], p["seq_q"]), offset_bits=32)
    return Signature("k", (lse,), grid=lambda p: (1, 1, 1), block=(32, 1, 1))


def test_f32_row_vector_at_the_limit_passes_one_more_row_is_refused():
    sig = row_vector_signature()
    assert sig.shapes({"batch": 1, "heads": 64, "seq_q": 2 ** 24}) == {"lse": (1, 64, 2 ** 24)}   # 2**32 bytes
    with pytest.raises(ScheduleError, match=r"k argument lse=.*\(1, 64, 16777217\) f32 = 4294967552 bytes.*"
                                            r"at most 2\*\*32 = 4294967296 bytes.*32-bit byte offsets"):
        sig.shapes({"batch": 1, "heads": 64, "seq_q": 2 ** 24 + 1})


def test_offset_bits_only_on_buffers():
    with pytest.raises(ValueError, match=r"KArg n: offset_bits=32: None, or 32 / 64 on a buffer"):
        KArg("n", "scalar", "i32", offset_bits=32)


def test_backward_f32_gradients_beyond_32_bit_offsets_are_refused():
    # out_dtype f32: q (f16) of 2**30 + 64 elements fits the launcher's 2**31-element span, but dq
    # (f32, same elements) needs byte offsets past 2**32 in its saddr stores (operands.store_transposed_acc)
    spec = make_spec("gfx1100", "f16", 64, out="f32")
    args = kernel_args(spec, "dq")
    assert {a.name for a in args if a.offset_bits == 32} == {a.name for a in args if a.name in SADDR_TENSORS}
    sig = Signature("dq", args, grid=lambda p: (1, 1, 1), block=(128, 1, 1))
    p = {"batch": 1, "heads": 1, "kv_heads": 1, "seq_q": 2 ** 24 + 1, "seq_k": 16, "head_dim": 64, "scale": 1.0}
    with pytest.raises(ScheduleError, match=r"dq argument dq=.*f32 = 4294967552 bytes.*at most 2\*\*32"):
        sig.shapes(p)
    assert sig.shapes({**p, "seq_q": 2 ** 24})["dq"] == (1, 2 ** 24, 1, 64)
