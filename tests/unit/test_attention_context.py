"""kernels/attention/context: the dense forward's Ctx and the paged decode's PagedCtx extend one base,
AttentionCtx, which the shared bounds/operands helpers read; neither re-declares a base field."""
import dataclasses

import pytest

from wmma_gen.kernels.attention.context import AttentionCtx, Ctx
from wmma_gen.ops.paged_attention.kernel import PagedCtx

SHARED = ("d", "s", "fam", "ptr", "sc", "lds_k", "lds_v", "lds_q", "tid", "lane", "wave", "split")


@pytest.mark.parametrize("cls", [Ctx, PagedCtx])
def test_kernel_contexts_extend_the_base_without_redeclaring(cls):
    assert issubclass(cls, AttentionCtx)
    base = {f.name for f in dataclasses.fields(AttentionCtx)}
    assert set(SHARED) <= base
    assert not base & set(cls.__annotations__), f"{cls.__name__} re-declares {sorted(base & set(cls.__annotations__))}"


def test_base_query_is_left_to_the_kernel():
    c = AttentionCtx(**{f.name: None for f in dataclasses.fields(AttentionCtx)})
    with pytest.raises(NotImplementedError, match="AttentionCtx.query"):
        c.query(0)
