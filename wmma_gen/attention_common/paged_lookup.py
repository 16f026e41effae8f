"""What the paged-cache ops' schedule files share (ops/paged_attention/lookup.py, ops/mla/lookup.py):
the named checks of an entry's key and bucket fields (schedule_files.need: file and field named),
the parse loop (each entry's directive and schedule read back through the same validators as user
input), and the log-distance the nearest bucket is ranked by."""
from __future__ import annotations

import math
from typing import Callable

from .. import schedule_files as sf
from ..errors import ScheduleError
from ..schedule_files import ScheduleFileError


def positive_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def need_one_of(e: dict, name: str, allowed: tuple, where: str, path) -> None:
    """e[name] is one of `allowed` (ints: never a bool)."""
    v = e.get(name)
    sf.need(v in allowed and not isinstance(v, bool), path, f"{where}.{name}", v,
            f"one of {', '.join(map(str, allowed))}")


def need_kv_dtype(kv, dtype: str, dtypes: tuple, kv_dtypes: tuple, where: str, path) -> None:
    """A cache of the file's dtype or an fp8 format."""
    sf.need(kv in kv_dtypes and (kv == dtype or kv not in dtypes), path, f"{where}.kv_dtype", kv,
            f"{dtype!r} (the file's dtype) or fp8e4m3 / fp8e5m2")


def need_bucket(b, names: tuple, where: str, path) -> None:
    """An object with exactly `names`, each a positive integer."""
    sf.need(isinstance(b, dict) and set(b) == set(names), path, f"{where}.bucket", b,
            f"an object with exactly {', '.join(names)}")
    for n in names:
        sf.need(positive_int(b[n]), path, f"{where}.bucket.{n}", b[n], "a positive integer")


def parse_entries(doc, path, op: str, dtypes: tuple, key: Callable, directive: Callable, schedule_cls) -> list[dict]:
    """The validated entries of a document: key(e, where, path, dtype) -> the entry's key fields,
    directive(dtype, key) -> its directive; the schedule must be legal for it on the file's target
    (ScheduleFileError naming file and field otherwise)."""
    h = sf.header(doc, path, op, dtypes)
    out = []
    for where, e in h.entries:
        k = key(e, where, path, h.dtype)
        try:
            d = directive(h.dtype, k)
            s = schedule_cls.from_dict(e["schedule"])
        except (ScheduleError, TypeError) as err:
            raise ScheduleFileError(path, f"{where}.schedule", e["schedule"], f"a legal schedule ({err})") from None
        bad = s.problems(d, h.target)
        sf.need(not bad, path, f"{where}.schedule", s.to_dict(), "; ".join(bad) or "legal")
        out.append({**k, "schedule": s, "tflops": float(e["tflops"]), "source": e["source"]})
    return out


def far(a: int, b: int) -> float:
    """|log2 a/b| (a call's size against a bucket's; a of 0 counts as 1)."""
    return abs(math.log2(max(a, 1) / b))
