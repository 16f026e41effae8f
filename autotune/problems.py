"""Problem files: the exact problems a sweep tunes (`wmma-gen sweep --problems FILE`).

A YAML or JSON list (JSON for a .json file, YAML otherwise); one item per problem, with the
op's fields (default in brackets):

    - {op: gemm, dtype: f16, m: 4096, n: 4096, k: 1024, layout: NT [NN], batch: 8 [1],
       epilogue: {bias: true [false], activation: gelu [null]}, out_dtype: f16 [the accumulator's]}
    - {op: attention | attention_bwd, dtype: f16, head_dim: 128, heads: 32, seq_q: 1024,
       seq_k: 4096, batch: 2 [1], kv_heads: 8 [heads], causal: true [false],
       window: [256, 0] [null], varlen: false [false], layout: bshd [bshd]}

Each item becomes one study tuned on exactly that problem (the op's Tuning `items`, ops/<op>/tuning.py); a
problem listed twice is tuned once. Legality is the op's own: GemmDirective and AttentionDirective
(layouts, activations, head dims, out dtypes), the sizes the kernels can index, the dtypes the
target's WMMA takes, kv_heads dividing heads, a window as attention() takes it. A refused file
is one ProblemFileError line naming the item, field, value and what is allowed:

    problems.yaml: problems[2].layout = 'XY' is not allowed: one of NN, NT, TN, TT

`wmma_gen.torch.record_problems()` writes this format (`dump`) from a model's calls.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from wmma_gen.errors import ScheduleError

MAX_BYTES = 1 << 20
MAX_ITEMS = 10_000
MAX_SEQ = 1 << 20          # as `wmma-gen sweep --seqs`
NONE = (None, "", "none")  # an activation given as null, "" or "none": no activation


class ProblemFileError(ScheduleError):
    """A problem file was refused: names the file, the item, the field, the value and what is allowed."""

    def __init__(self, path, index: Optional[int], field: str, value: object, allowed: str):
        where = field if index is None else f"problems[{index}].{field}" if field else f"problems[{index}]"
        super().__init__(where, value, allowed)
        text = repr(value) if len(repr(value)) <= 120 else repr(value)[:120] + "..."
        self.args = (f"{path}: {where} = {text} is not allowed: {allowed}",)

    def __str__(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class GemmProblem:
    """C = act(op(A) @ op(B) + bias) per batch, op(X) = X or X^T as `layout` says."""
    dtype: str
    m: int
    n: int
    k: int
    layout: str = "NN"
    batch: int = 1
    bias: bool = False        # one f32 value per output column (nn.Linear's)
    activation: str = ""
    out_dtype: str = ""       # "" -> the accumulator's
    op: str = "gemm"

    def directive(self):
        from wmma_gen.ops.gemm.directive import GemmDirective
        return GemmDirective(self.dtype, self.m, self.n, self.k, layout=self.layout, batch=self.batch,
                             bias="n" if self.bias else "", activation=self.activation, out_dtype=self.out_dtype)

    def sizes(self) -> dict:
        return {"m": self.m, "n": self.n, "k": self.k, "batch": self.batch}

    def to_dict(self) -> dict:
        out = {"op": self.op, "dtype": self.dtype, "layout": self.layout, "batch": self.batch, "m": self.m,
               "n": self.n, "k": self.k, "epilogue": {"bias": self.bias, "activation": self.activation or None}}
        return {**out, "out_dtype": self.out_dtype} if self.out_dtype else out


@dataclass(frozen=True)
class AttentionProblem:
    """Flash attention (forward, or its backward) on B x H x Sq x Sk x D, Hkv key/value heads."""
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

    def __post_init__(self):
        if not self.kv_heads:
            object.__setattr__(self, "kv_heads", self.heads)

    def directive(self):
        """The kernel the torch lane and flash-attn's training forward run (the forward writes LSE)."""
        from wmma_gen.ops.attention.directive import AttentionDirective
        return AttentionDirective(self.dtype, self.head_dim, causal=self.causal, window=self.window is not None,
                                  varlen=self.varlen, return_lse=self.op == "attention", layout=self.layout,
                                  op=self.op)

    def sizes(self) -> dict:
        p = {"batch": self.batch, "heads": self.heads, "kv_heads": self.kv_heads, "seq_q": self.seq_q,
             "seq_k": self.seq_k}
        if self.window is not None:
            p.update(window_left=self.window[0], window_right=self.window[1])
        if self.varlen:   # every sequence of the batch at the longest length
            p.update(total_q=self.batch * self.seq_q, total_k=self.batch * self.seq_k)
        return p

    def to_dict(self) -> dict:
        return {"op": self.op, "dtype": self.dtype, "head_dim": self.head_dim, "batch": self.batch,
                "heads": self.heads, "kv_heads": self.kv_heads, "seq_q": self.seq_q, "seq_k": self.seq_k,
                "causal": self.causal, "window": None if self.window is None else list(self.window),
                "varlen": self.varlen, "layout": self.layout}


Problem = Union[GemmProblem, AttentionProblem]
GEMM_FIELDS = ("op", "dtype", "layout", "batch", "m", "n", "k", "epilogue", "out_dtype")
ATTENTION_FIELDS = ("op", "dtype", "head_dim", "batch", "heads", "kv_heads", "seq_q", "seq_k", "causal", "window",
                    "varlen", "layout")
REQUIRED = {"gemm": ("dtype", "m", "n", "k"),
            "attention": ("dtype", "head_dim", "heads", "seq_q", "seq_k")}


def from_fields(fields_: dict) -> Problem:
    """A problem from its dataclass fields (dataclasses.asdict: sweep worker processes)."""
    if fields_["op"] == "gemm":
        return GemmProblem(**fields_)
    window = fields_.get("window")
    return AttentionProblem(**{**fields_, "window": None if window is None else tuple(window)})


# ---- reading and checking -------------------------------------------------------------------
def load(path: str | Path, arch: Optional[str] = None) -> tuple[Problem, ...]:
    """The problems of a file (duplicates dropped, file order kept); with `arch`, each dtype is
    checked against the target. Raises ProblemFileError."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ProblemFileError(path, None, "<file>", f"{size} bytes", f"at most {MAX_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ProblemFileError(path, None, "<file>", e.reason, "UTF-8 YAML or JSON text") from None
    except OSError as e:
        raise ProblemFileError(path, None, "<file>", e.strerror or type(e).__name__, "a readable file") from None
    return parse(loads(text, path), path, arch)


def loads(text: str, path="<memory>"):
    if str(path).endswith(".json"):
        try:
            return json.loads(text)
        except (json.JSONDecodeError, RecursionError) as e:
            raise ProblemFileError(path, None, "<json>", str(e).splitlines()[0], "a JSON list of problems") from None
    import yaml
    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as e:
        raise ProblemFileError(path, None, "<yaml>", " ".join(str(e).split())[:200],
                               "a YAML list of problems") from None


def parse(doc: object, path="<memory>", arch: Optional[str] = None) -> tuple[Problem, ...]:
    if not isinstance(doc, list) or not doc:
        raise ProblemFileError(path, None, "<root>", doc if not isinstance(doc, (dict, list)) else type(doc).__name__,
                               "a non-empty list of problems (one mapping per problem)")
    if len(doc) > MAX_ITEMS:
        raise ProblemFileError(path, None, "<root>", f"{len(doc)} problems", f"at most {MAX_ITEMS}")
    out = [_item(item, i, path, arch) for i, item in enumerate(doc)]
    return tuple(dict.fromkeys(out))


def _item(item: object, i: int, path, arch: Optional[str]) -> Problem:
    from wmma_gen.ops.registry import tunable
    TUNABLE = tunable()

    def bad(field, value, allowed):
        raise ProblemFileError(path, i, field, value, allowed)

    if not isinstance(item, dict):
        bad("", type(item).__name__, "a mapping of fields (op, dtype, ...)")
    op = item.get("op")
    if op not in TUNABLE:
        bad("op", op, f"one of {', '.join(TUNABLE)} (ops the tuner can sweep)")
    names = GEMM_FIELDS if op == "gemm" else ATTENTION_FIELDS
    for name in item:
        if name not in names:
            bad(str(name), item[name], f"a field of {op}: one of {', '.join(names)}")
    for name in REQUIRED["gemm" if op == "gemm" else "attention"]:
        if name not in item:
            bad(name, None, f"given: {op} needs {', '.join(REQUIRED['gemm' if op == 'gemm' else 'attention'])}")
    try:
        p = _gemm(item, bad) if op == "gemm" else _attention(item, op, bad)
    except ProblemFileError:
        raise
    except ScheduleError as e:          # the op's own directive refused it
        bad({"bias": "epilogue.bias", "activation": "epilogue.activation"}.get(e.field, e.field), e.value, e.allowed)
    if arch is not None:
        _on_target(p, arch, bad)
    return p


def _int(item: dict, name: str, bad, default=None, lo: int = 1, hi: Optional[int] = None) -> int:
    v = item.get(name, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < lo or (hi is not None and v > hi):
        bad(name, v, f"an integer >= {lo}" + (f" and <= {hi}" if hi is not None else ""))
    return v


def _bool(value, field: str, bad) -> bool:
    if not isinstance(value, bool):
        bad(field, value, "true or false")
    return value


def _gemm(item: dict, bad) -> GemmProblem:
    from wmma_gen.ops.gemm.schedule import Schedule, operand_size
    epi = item.get("epilogue", {})
    if epi is None:
        epi = {}
    if not isinstance(epi, dict):
        bad("epilogue", epi, "a mapping with bias (true/false) and activation")
    for name in epi:
        if name not in ("bias", "activation"):
            bad(f"epilogue.{name}", epi[name], "bias or activation")
    act = epi.get("activation")
    p = GemmProblem(item["dtype"], *(_int(item, x, bad) for x in ("m", "n", "k")), layout=item.get("layout", "NN"),
                    batch=_int(item, "batch", bad, 1), bias=_bool(epi.get("bias", False), "epilogue.bias", bad),
                    activation="" if act in NONE else act, out_dtype=item.get("out_dtype", "") or "")
    d = p.directive()       # the op's own checks: dtype, layout, activation, out_dtype, integer epilogue
    why = operand_size(Schedule(), d, None)
    if why:
        bad("m/n/k", [p.m, p.n, p.k], f"a problem the kernels can index: {why}")
    return p


def _attention(item: dict, op: str, bad) -> AttentionProblem:
    from wmma_gen.ops.attention.inputs import _window
    heads = _int(item, "heads", bad)
    kv = _int(item, "kv_heads", bad, heads)
    if heads % kv:
        bad("kv_heads", kv, f"a divisor of heads={heads} (grouped-query attention)")
    window = item.get("window")
    try:
        left, right = _window(tuple(window) if isinstance(window, list) else window)
    except ScheduleError as e:
        bad("window", window, e.allowed)
    p = AttentionProblem(op, item["dtype"], item["head_dim"], heads, _int(item, "seq_q", bad, hi=MAX_SEQ),
                         _int(item, "seq_k", bad, hi=MAX_SEQ), batch=_int(item, "batch", bad, 1), kv_heads=kv,
                         causal=_bool(item.get("causal", False), "causal", bad),
                         window=None if (left, right) == (-1, -1) else (left, right),
                         varlen=_bool(item.get("varlen", False), "varlen", bad), layout=item.get("layout", "bshd"))
    p.directive()           # the op's own checks: dtype, head_dim, layout (bshd with varlen)
    return p


def _on_target(p: Problem, arch: str, bad) -> None:
    from wmma_gen.targets import get_target

    from wmma_gen.ops.registry import tuning
    allowed = tuple(dt for dt in tuning(p.op).dtypes if dt in get_target(arch).dtypes)
    if p.dtype not in allowed:
        bad("dtype", p.dtype, f"{p.op} on {arch} takes {', '.join(allowed)}")


# ---- writing ---------------------------------------------------------------------------------
HEADER = ("# wmma_gen problems: `wmma-gen sweep --problems FILE` tunes one study per item\n"
          "# (format: autotune/problems.py)\n")


def dumps(problems, path="problems.yaml") -> str:
    items = [p.to_dict() if hasattr(p, "to_dict") else dict(p) for p in problems]
    if str(path).endswith(".json"):
        return json.dumps(items, indent=1) + "\n"
    import yaml
    return HEADER + "".join(f"- {yaml.safe_dump(i, sort_keys=False, default_flow_style=True, width=1 << 16)}"
                            for i in items)


def dump(problems, path: str | Path) -> Path:
    """Write problems (Problem objects or their dicts) as YAML, or JSON for a .json path."""
    path = Path(path)
    path.write_text(dumps(problems, path), encoding="utf-8")
    return path
