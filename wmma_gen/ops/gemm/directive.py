"""Directives: *what* to compute. `GemmDirective` is C[M,N] = A[M,K] @ B[K,N] (+ epilogue).

The directive is sizeless (issue 26): M, N, K and batch are a call's GemmProblem (problem.py),
kernel arguments the code object never sees at compile time."""
from __future__ import annotations

import json
import math
import numbers
import struct
from dataclasses import asdict, dataclass

from ...errors import ScheduleError
from ..contract import option

IN_DTYPES = ("f16", "bf16", "i8", "i4", "fp8", "bf8")
ACC_DTYPES = ("f32", "f16", "bf16", "i32")
INT_DTYPES = ("i8", "i4")
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")  # torch's meanings: gelu = erf, gelu_tanh = tanh form
LAYOUTS = ("NN", "NT", "TN", "TT")  # first letter A, second B; T = stored transposed
SIZE_FIELDS = ("m", "n", "k", "batch")   # the GemmProblem's, in dicts stored before issue 26


def _f32(x: float) -> float:
    """`x` rounded to f32 (RNE; past the f32 range: +-inf)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def default_acc(dtype: str) -> str:
    return "i32" if dtype in INT_DTYPES else "f32"


@dataclass(frozen=True)
class GemmDirective:
    """C = act(alpha * A @ B + beta * C0 + bias), per batch.

    A is M x K (stored K x M when layout[0] == 'T'), B is K x N (stored N x K when
    layout[1] == 'T'). Integer inputs are signed unless `unsigned` is set.
    """
    # each option(...) is the field's CLI flag (contract.Flag; check/compile/analyze --op gemm)
    dtype: str = option(help="input dtype", choices=IN_DTYPES)
    acc: str = option("", "accumulator: f32 (default for floats), f16/bf16 (gfx11), i32")   # "" -> default_acc(dtype)
    layout: str = option("NN", f"{'|'.join(LAYOUTS)}: first letter A, second B; T = transposed", value="upper")
    out_dtype: str = option("", "output dtype (default: the accumulator)")                   # "" -> acc
    alpha: float = option(1.0, "scale of A@B (exact in f32)", value="f32_exact")
    beta: float = option(0.0, "scale of C0 (exact in f32)", value="f32_exact")
    bias: str = option("", "bias along N (per column) or M (per row)", choices=("", "n", "m"))
    activation: str = option("", "as torch: gelu = exact erf (nn.GELU()), gelu_tanh = GELU(approximate='tanh')",
                             choices=("",) + ACTIVATIONS)
    unsigned: bool = option(False, "integer inputs are unsigned")
    op: str = "gemm"

    def __post_init__(self):
        if not isinstance(self.acc, str) or not isinstance(self.layout, str):
            raise ScheduleError("GemmDirective(acc, layout)", (self.acc, self.layout),
                                "strings: the directive holds no sizes (M, N, K, batch are a GemmProblem)")
        for name in ("alpha", "beta"):   # the epilogue computes in f32: no silent rounding
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise ScheduleError(name, v, "a real number (int or float)")
            f32 = _f32(float(v))
            if f32 != float(v) and not math.isnan(float(v)):
                raise ScheduleError(name, v, f"a value f32 holds exactly (nearest f32: {f32!r})")
        if not isinstance(self.unsigned, bool):
            raise ScheduleError("unsigned", self.unsigned, "True or False")
        if self.dtype not in IN_DTYPES:
            raise ScheduleError("dtype", self.dtype, f"one of {', '.join(IN_DTYPES)}")
        if not self.acc:
            object.__setattr__(self, "acc", default_acc(self.dtype))
        if self.acc not in ACC_DTYPES:
            raise ScheduleError("acc", self.acc, f"one of {', '.join(ACC_DTYPES)}")
        if (self.dtype in INT_DTYPES) != (self.acc == "i32"):
            raise ScheduleError("acc", self.acc, "i32 for integer inputs (i8, i4), a float type otherwise")
        if self.acc in ("f16", "bf16") and self.acc != self.dtype:
            raise ScheduleError("acc", self.acc, f"f32 or {self.dtype} (same-type accumulate) for {self.dtype}")
        if not self.out_dtype:
            object.__setattr__(self, "out_dtype", self.acc)
        allowed_out = ("i32",) if self.acc == "i32" else ("f32", "f16", "bf16")
        if self.out_dtype not in allowed_out:
            raise ScheduleError("out_dtype", self.out_dtype, f"one of {', '.join(allowed_out)}")
        if self.layout not in LAYOUTS:
            raise ScheduleError("layout", self.layout, f"one of {', '.join(LAYOUTS)}")
        if self.bias not in ("", "n", "m"):
            raise ScheduleError("bias", self.bias, "'', 'n' (one value per column) or 'm' (per row)")
        if self.activation not in ("",) + ACTIVATIONS:
            raise ScheduleError("activation", self.activation, f"'' or one of {', '.join(ACTIVATIONS)}")
        if self.unsigned and self.dtype not in INT_DTYPES:
            raise ScheduleError("unsigned", self.unsigned, "only integer dtypes (i8, i4) can be unsigned")
        if self.acc == "i32" and (self.activation or self.alpha != 1.0 or self.beta != 0.0):
            raise ScheduleError("activation/alpha/beta", (self.activation, self.alpha, self.beta),
                                "integer GEMM takes no activation and alpha=1, beta=0")

    @property
    def trans_a(self) -> bool:
        return self.layout[0] == "T"

    @property
    def trans_b(self) -> bool:
        return self.layout[1] == "T"

    @property
    def is_int(self) -> bool:
        return self.acc == "i32"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "GemmDirective":
        """Also reads what studies and files stored before the directive lost its sizes: their
        m, n, k, batch belong to the problem (problem.as_problem reads them from the same dict)."""
        return cls(**{k: v for k, v in d.items() if k not in SIZE_FIELDS})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)
