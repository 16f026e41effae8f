"""The field checks the paged-cache directives share (ops/paged_attention/directive.py,
ops/mla/directive.py): the query dtype, the cache dtype ("" = the query dtype, else an fp8 format),
the head dim and the page size, each refused with a ScheduleError naming the field."""
from __future__ import annotations

from ..errors import ScheduleError

DTYPES = ("f16", "bf16")
KV_DTYPES = ("f16", "bf16", "fp8e4m3", "fp8e5m2")
BLOCK_SIZES = (16, 32, 64, 128)


def check_one_of(name: str, value, allowed: tuple) -> None:
    """An int field that is one of `allowed` (never a bool)."""
    if isinstance(value, bool) or value not in allowed:
        raise ScheduleError(name, value, f"one of {', '.join(map(str, allowed))}")


def check_cache(d, head_dims: tuple, head_dims_text: str | None = None) -> None:
    """d.dtype, d.kv_dtype (filled in: "" means d.dtype) and d.head_dim of a frozen directive;
    `head_dims_text` says what is allowed when listing `head_dims` would not read well."""
    if d.dtype not in DTYPES:
        raise ScheduleError("dtype", d.dtype, f"one of {', '.join(DTYPES)}")
    if d.kv_dtype == "":
        object.__setattr__(d, "kv_dtype", d.dtype)
    if d.kv_dtype not in KV_DTYPES or d.kv_dtype in DTYPES and d.kv_dtype != d.dtype:
        raise ScheduleError("kv_dtype", d.kv_dtype, f"{d.dtype!r} (the query dtype) or fp8e4m3 / fp8e5m2")
    if head_dims_text is None:
        check_one_of("head_dim", d.head_dim, head_dims)
    elif isinstance(d.head_dim, bool) or d.head_dim not in head_dims:
        raise ScheduleError("head_dim", d.head_dim, head_dims_text)


def check_flags(d, names: tuple) -> None:
    for name in names:
        if not isinstance(getattr(d, name), bool):
            raise ScheduleError(name, getattr(d, name), "True or False")
