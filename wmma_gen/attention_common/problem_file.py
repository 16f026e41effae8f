"""Attention's row of a problems file (`wmma-gen sweep --problems FILE`, autotune/problems.py),
the forward's and the backward's (op: attention | attention_bwd):

    - {op: attention, dtype: f16, head_dim: 128, heads: 32, seq_q: 1024, seq_k: 4096, batch: 2 [1],
       kv_heads: 8 [heads], causal: true [false], window: [256, 0] [null], varlen: false [false],
       layout: bshd [bshd], softcap: true [false]}

Legality is the op's own (AttentionDirective; kv_heads dividing heads; a window as attention() takes it)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

MAX_SEQ = 1 << 20          # as `wmma-gen sweep --seqs`
FIELDS = ("op", "dtype", "head_dim", "batch", "heads", "kv_heads", "seq_q", "seq_k", "causal", "window", "varlen",
          "layout", "softcap")
REQUIRED = ("dtype", "head_dim", "heads", "seq_q", "seq_k")
RENAMED: dict = {}


@dataclass(frozen=True)
class AttentionRow:
    """One row: flash attention (forward, or its backward) on B x H x Sq x Sk x D, Hkv key/value
    heads -- the directive's fields plus the sizes of the op's one Problem (`problem`,
    spec.AttentionProblem), kept flat so a row is its file mapping (to_dict, from_fields)."""
    op: str                   # attention | attention_bwd
    dtype: str
    head_dim: int
    heads: int
    seq_q: int
    seq_k: int
    batch: int = 1
    kv_heads: int = 0         # 0 -> heads
    causal: bool = False
    window: Optional[tuple] = None     # (left, right), -1 = unbounded side; None = no window
    varlen: bool = False
    layout: str = "bshd"
    softcap: bool = False     # logit softcap on (its cap is a runtime argument)

    def __post_init__(self):
        if not self.kv_heads:
            object.__setattr__(self, "kv_heads", self.heads)

    def directive(self):
        """The kernel the torch lane and flash-attn's training forward run (the forward writes LSE)."""
        from .directive import AttentionDirective
        return AttentionDirective(self.dtype, self.head_dim, causal=self.causal, window=self.window is not None,
                                  varlen=self.varlen, return_lse=self.op == "attention", layout=self.layout,
                                  op=self.op, softcap=self.softcap)

    @property
    def problem(self):
        """The row's sizes as the op's Problem (ops/attention/spec.py)."""
        from .problem import AttentionProblem
        left, right = self.window if self.window is not None else (-1, -1)
        return AttentionProblem(batch=self.batch, heads=self.heads, kv_heads=self.kv_heads, seq_q=self.seq_q,
                                seq_k=self.seq_k, window_left=left, window_right=right)

    def sizes(self) -> dict:
        p = asdict(self.problem)
        if self.window is None:
            p.pop("window_left"), p.pop("window_right")
        if self.varlen:   # every sequence of the batch at the longest length
            p.update(total_q=self.batch * self.seq_q, total_k=self.batch * self.seq_k)
        return p

    def to_dict(self) -> dict:
        return {"op": self.op, "dtype": self.dtype, "head_dim": self.head_dim, "batch": self.batch,
                "heads": self.heads, "kv_heads": self.kv_heads, "seq_q": self.seq_q, "seq_k": self.seq_k,
                "causal": self.causal, "window": None if self.window is None else list(self.window),
                "varlen": self.varlen, "layout": self.layout, **({"softcap": True} if self.softcap else {})}


def from_fields(fields_: dict) -> AttentionRow:
    """The problem from its dataclass fields (dataclasses.asdict: sweep worker processes)."""
    window = fields_.get("window")
    return AttentionRow(**{**fields_, "window": None if window is None else tuple(window)})


def read(item: dict, op: str, bad, number, flag) -> AttentionRow:
    """One checked row; `bad(field, value, allowed)` raises, `number`/`flag` read an int/bool field."""
    from ..errors import ScheduleError
    from .inputs import _window
    heads = number("heads")
    kv = number("kv_heads", heads)
    if heads % kv:
        bad("kv_heads", kv, f"a divisor of heads={heads} (grouped-query attention)")
    window = item.get("window")
    try:
        left, right = _window(tuple(window) if isinstance(window, list) else window)
    except ScheduleError as e:
        bad("window", window, e.allowed)
    p = AttentionRow(op, item["dtype"], item["head_dim"], heads, number("seq_q", hi=MAX_SEQ),
                         number("seq_k", hi=MAX_SEQ), batch=number("batch", 1), kv_heads=kv,
                         causal=flag(item.get("causal", False), "causal"),
                         window=None if (left, right) == (-1, -1) else (left, right),
                         varlen=flag(item.get("varlen", False), "varlen"), layout=item.get("layout", "bshd"),
                         softcap=flag(item.get("softcap", False), "softcap"))
    p.directive()           # the op's own checks: dtype, head_dim, layout (bshd with varlen)
    return p
