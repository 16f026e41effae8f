"""GEMM's row of a problems file (`wmma-gen sweep --problems FILE`, autotune/problems.py):

    - {op: gemm, dtype: f16, m: 4096, n: 4096, k: 1024, layout: NT [NN], batch: 8 [1],
       epilogue: {bias: true [false], activation: gelu [null]}, out_dtype: f16 [the accumulator's]}

Legality is the op's own (GemmDirective; the sizes the kernels can index)."""
from __future__ import annotations

import functools
from dataclasses import asdict, dataclass

NONE = (None, "", "none")  # an activation given as null, "" or "none": no activation
FIELDS = ("op", "dtype", "layout", "batch", "m", "n", "k", "epilogue", "out_dtype")
REQUIRED = ("dtype", "m", "n", "k")
RENAMED = {"bias": "epilogue.bias", "activation": "epilogue.activation"}   # directive field -> file field


@functools.lru_cache(maxsize=256)
def _directive(dtype: str, layout: str, bias: bool, activation: str, out_dtype: str):
    """A row's directive: it depends on no size, so a 10,000-row file builds a handful (frozen)."""
    from .directive import GemmDirective
    return GemmDirective(dtype, layout=layout, bias="n" if bias else "", activation=activation,
                         out_dtype=out_dtype)


@functools.lru_cache(maxsize=1)
def _default_schedule():
    """The schedule whose split_k the operand-size check reads (built once, frozen)."""
    from .schedule import Schedule
    return Schedule()


@dataclass(frozen=True)
class GemmRow:
    """One row: C = act(op(A) @ op(B) + bias) per batch, op(X) = X or X^T as `layout` says -- the
    directive's fields plus the sizes of the op's one Problem (`problem`, spec.GemmProblem),
    kept flat so a row is its file mapping (to_dict, from_fields)."""
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
        return _directive(self.dtype, self.layout, self.bias, self.activation, self.out_dtype)

    @property
    def problem(self):
        """The row's sizes as the op's Problem (ops/gemm/spec.py)."""
        from .problem import GemmProblem
        return GemmProblem(self.m, self.n, self.k, self.batch)

    def sizes(self) -> dict:
        return asdict(self.problem)

    def to_dict(self) -> dict:
        out = {"op": self.op, "dtype": self.dtype, "layout": self.layout, "batch": self.batch, "m": self.m,
               "n": self.n, "k": self.k, "epilogue": {"bias": self.bias, "activation": self.activation or None}}
        return {**out, "out_dtype": self.out_dtype} if self.out_dtype else out


def from_fields(fields_: dict) -> GemmRow:
    """The problem from its dataclass fields (dataclasses.asdict: sweep worker processes)."""
    return GemmRow(**fields_)


def read(item: dict, op: str, bad, number, flag) -> GemmRow:
    """One checked row; `bad(field, value, allowed)` raises, `number`/`flag` read an int/bool field."""
    from .schedule import operand_size
    from .problem import GemmProblem
    epi = item.get("epilogue", {})
    if epi is None:
        epi = {}
    if not isinstance(epi, dict):
        bad("epilogue", epi, "a mapping with bias (true/false) and activation")
    for name in epi:
        if name not in ("bias", "activation"):
            bad(f"epilogue.{name}", epi[name], "bias or activation")
    act = epi.get("activation")
    p = GemmRow(item["dtype"], *(number(x) for x in ("m", "n", "k")), layout=item.get("layout", "NN"),
                    batch=number("batch", 1), bias=flag(epi.get("bias", False), "epilogue.bias"),
                    activation="" if act in NONE else act, out_dtype=item.get("out_dtype", "") or "")
    d = p.directive()       # the op's own checks: dtype, layout, activation, out_dtype, integer epilogue
    why = operand_size(_default_schedule(), d, None, GemmProblem(p.m, p.n, p.k, p.batch))
    if why:
        bad("m/n/k", [p.m, p.n, p.k], f"a problem the kernels can index: {why}")
    return p
