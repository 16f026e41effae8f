"""What the paged-cache schedules share (ops/paged_attention/schedule.py, ops/mla/schedule.py): the
split-KV knob (its partials merged by a deterministic combine kernel) and the dtype check."""
from __future__ import annotations

from ..knobs import Knob
from ..targets import Target


def split_kv(owner: str, combine: str, values: tuple[int, ...] = (1, 2, 4, 8, 16)) -> Knob:
    """The split_kv knob: workgroups per `owner` over disjoint key ranges, merged by `combine`."""
    return Knob("split_kv", values, f"workgroups per {owner} over disjoint key ranges; partial\n"
                f"O and LSE are merged by {combine}")


def dtype_supported(s, d, t: Target) -> str | None:
    if (d.dtype, "f32") not in t.wmma:
        return f"dtype {d.dtype} has no f32-accumulating WMMA on {t.arch}"
    return None
