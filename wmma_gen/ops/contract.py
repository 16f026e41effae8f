"""The op contract (STYLE rule 16): what every op declares, typed and with one signature per field.

    d  = spec.directive(...)                     what is compiled (no sizes)
    p  = spec.problem(...)                       the sizes of one call (frozen, per op)
    ks = spec.build(d, s, target, key)           KernelSet: ordered name -> KernelSource
    cs = compile_op(spec, d, s, key, arch)       CompiledSet: the code objects (both in ops/compile_op.py)
    spec.check(cs, d, p, device, seed)           certifies *that* object on the problem
    spec.estimate(cs, d, s, p, arch)             ModelEstimate (source "model", never measured)
    spec.flops(d, p)                             the op's FLOP convention

Consumers (CLI, tuner, ladder, export, model bands) read these fields and never branch on an
op name; `Tuning` holds what the sweep needs beyond them. An op's folder builds its OpSpec in
its spec.py and registry.py names that module in one line.
"""
from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from ..errors import ScheduleError


@dataclass(frozen=True)
class Axis:
    """One size of an op's Problem: its field name, Python type, CLI flag, the value a
    `check`/`analyze` uses when the flag is not given, and the sweep's default values.
    bounds: (lo, hi) an int axis's flag accepts (argparse refuses others, naming the flag); () = any
    value of its type. compile_flag=False: `wmma-gen compile` refuses the flag -- a kernel argument
    no code object depends on (the op's key ignores it: one object serves every value)."""
    name: str
    type: type
    flag: str
    default: Any
    sweep: tuple = ()
    help: str = ""
    bounds: tuple = ()
    compile_flag: bool = True


I32_MAX = 2**31 - 1     # sizes that are i32 kernel arguments (Axis.bounds)


@dataclass(frozen=True)
class Flag:
    """The CLI flag of one directive field, declared on the field with `option(...)`: `check`,
    `compile` and `analyze` offer it for every op whose directive declares it (cli/op_options.py
    reads these; an op or a field adds its flag with no cli/ edit). flag: "" = --<field name>;
    value: how the text is read -- None (the field's type; a bool field is a switch), a callable
    (text -> value; ValueError refuses it) or a name of the CLI's shared readers ("f32_exact",
    "upper"); choices: the allowed values argparse checks; cli_default: the value when the flag
    is not given (MISSING: the field's default; a field with neither must be given); raw: the
    op's OpSpec.cli_values reads the flag's text, which is not this field's value (attention's
    --window LEFT,RIGHT sets window and the problem's sides). On the `dtype` field only `help` and
    `choices` count: they describe the common --dtype."""
    help: str
    flag: str = ""
    value: Any = None
    choices: tuple = ()
    cli_default: Any = field(default_factory=lambda: dataclasses.MISSING)   # MISSING as a value
    raw: bool = False


def option(default: Any = dataclasses.MISSING, help: str = "", **kw) -> Any:
    """A directive field with its CLI flag (Flag's fields as keywords): `acc: str = option("", "accumulator")`."""
    return dataclasses.field(default=default, metadata={"flag": Flag(help, **kw)})


def flags_of(directive: type) -> tuple:
    """((field, Flag), ...) of a directive class, in field order: the fields declared with `option`."""
    return tuple((f, f.metadata["flag"]) for f in dataclasses.fields(directive) if "flag" in f.metadata)


@dataclass(frozen=True)
class SweepAxis:
    """One axis of an op's sweep: `wmma-gen sweep` gets the flag (comma-separated values) and
    SweepConfig.axes[name] the tuple of values the op's Tuning.items crosses. An op declares
    its axes as SWEEP_AXES in its spec module (read by registry.sweep_axes_of without loading
    the builder or optuna, so `sweep --help` stays fast); the values without the flag are its
    Tuning's defaults / quick tables under `name`.

    value: how one item is read -- a callable (text -> value; ValueError refuses it) or a name
    of the CLI's shared readers ("int", "shape", "head_dim", "on_off"); file_flag: a second flag
    naming a file with one item per line (# comments), its values before the flag's."""
    name: str
    flag: str
    value: Any
    what: str
    help: str = ""
    file_flag: str = ""


@dataclass(frozen=True)
class ModelEstimate:
    """What every op's estimate returns (never a measurement)."""
    seconds: float
    tflops: float
    limiter: str
    source: str = "model"


@dataclass(frozen=True)
class Tuning:
    """What the sweep, ladder and export need of an op beyond the contract's fields.

    columns: the ladder's problem columns; extra_columns: optional ones with the value an older
    ladder implies. quick / defaults: the sweep's `--quick` and default study sets (dtypes,
    trials and the problem axes' values). The callables take a study's directive and Problem
    (or a ladder row / user attrs) and carry the op's naming and export conventions."""
    columns: tuple[str, ...]
    dtypes: tuple[str, ...]
    quick: Mapping[str, Any]
    defaults: Mapping[str, Any]
    size_label: str
    baselines: Callable            # (d, p, arch) -> [schedule]
    items: Callable                # (cfg) -> [(d, p)]
    study_name: Callable           # (cfg, d, p) -> str
    row: Callable                  # (d, p) -> {column: value}
    label: Callable                # (user attrs) -> str
    series: Callable               # (ladder row) -> plot line name
    size: Callable                 # (ladder row) -> float
    schedule_text: Callable        # (schedule dict) -> str
    documents: Callable            # (ladder frame, arch) -> {file name: schedule document}
    validate_document: Callable    # (document, path) -> None or ScheduleFileError
    objective: Callable            # (d, p, arch, device, *, domains, seed, gate_cache, **test hooks) -> objective(trial)
    extra_columns: Mapping[str, Any] = field(default_factory=dict)
    study_attrs: Optional[Callable] = None   # (cfg, d, p) -> study attrs beyond the shared ones
    module: str = ""                         # what the sweep's compile workers preload
    domains_of: Optional[Callable] = None    # (d) -> {knob: domain} a study of d searches (under --domains)


_TUNINGS: dict = {}   # op name -> Tuning loaded from its module


class Deferred:
    """An OpSpec callable named by module and attribute, imported on its first call: an op's
    host side (the numpy API, the reference, the device-call plan) stays out of what building
    and compiling its kernels imports (issue 36 item 5: a first compile's imports)."""
    __slots__ = ("module", "attr", "_fn")

    def __init__(self, module: str, attr: str):
        self.module, self.attr, self._fn = module, attr, None

    def resolve(self) -> Callable:
        if self._fn is None:
            self._fn = getattr(importlib.import_module(self.module), self.attr)
        return self._fn

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Deferred({self.module}.{self.attr})"


@dataclass(frozen=True)
class OpSpec:
    """Everything op-specific that shared code needs, with one signature per field."""
    name: str
    doc: str
    family: str                    # the model band the estimates of this op carry (model/calibration.py)
    directive: type                # frozen dataclass: *what* (sizes never compiled in)
    schedule: type                 # frozen dataclass: *how*
    space: tuple                   # the schedule's knob table (SPACE)
    problem: type                  # frozen dataclass: the sizes of one call
    problem_axes: tuple            # (Axis, ...): the Problem's fields with CLI flags and sweep defaults
    build: Callable                # (d, s, target, key) -> {name: KernelSource} in launch order
    key_of: Callable               # (d, s, p) -> specialization key (hashable; None = one object serves all)
    check: Callable                # (cs, d, p, device, seed) -> result with passed/max_abs/tol/source
    estimate: Callable             # (cs, d, s, p, arch) -> ModelEstimate
    flops: Callable                # (d, p) -> FLOPs of the problem
    bucket: Callable               # (p) -> {field: value} an exported schedule file matches
    default_schedule: Callable     # (d, arch, p) -> schedule (p: the Problem or its mapping)
    gate_problems: Callable        # (d, s, key) -> [Problem]: small problems with the same key
    tolerance: str
    api: Optional[Callable] = None         # the user function (numpy in, numpy out)
    reference: Optional[Callable] = None   # float64 / exact numpy reference
    selftest: Optional[Callable] = None    # (arch) -> [(directive, Problem)]: what `wmma-gen selftest` checks
                                           # (default schedule, compile_op, check); None: no generic row
    tuning_from: Any = None                # a Tuning, or the module whose tuning() builds it (loaded on
                                           # first use: the tuner imports optuna); None: not sweepable
    plan: Optional[Callable] = None        # (arch, **call) -> plans.Plan: the kernels a device-resident call
                                           # runs (ops/plans.cached_plan); None: no device call
    torch_baseline: Optional[Callable] = None   # (torch, ladder row) -> (fn, FLOPs, label) or None (no torch op
                                                # for that row): what `wmma-gen bench --vs torch` times
    signatures: Optional[Callable] = None  # (d, s, target, key, {kernel: symbol}) -> {kernel: Signature}: what
                                           # build declares, without MLIR (a cached kernel's first launch,
                                           # compile_op.CompiledSet.pairs); None: the MLIR is built for it
    # What the generic `check` / `analyze` commands (wmma_gen/cli/) ask of an op beyond the fields above.
    cli_values: Optional[Callable] = None  # (op name, {flag dest: value given}) -> ({directive field: value},
                                           # {problem field: value}): the op's flags whose value is not one field's
                                           # (attention: --window L,R -> window, window_left/right; --attn-layout)
    host_bytes: Optional[Callable] = None  # (d, p) -> bytes of host memory a check's inputs and float64
                                           # reference take (`check` refuses what would not fit); None: no bound
    report: Optional[Callable] = None      # (cs, d, s, p, arch) -> (text, data): `analyze`'s view of the code
                                           # objects (loop, occupancy, estimate; source=model); None: the estimate
    # What the sweep's objective (wmma_gen/tuner/objective.py SpecObjective) asks of an op beyond the
    # fields above; each is optional and None means the generic stage.
    schedule_problems: Optional[Callable] = None   # (d, s, p, target) -> [reason]: the schedule's named
                                                   # problems for this study (None: s.problems(d, target))
    admit: Optional[Callable] = None       # (cs, d, s, p, arch) -> (reason or "", {attr: value}): a compiled
                                           # candidate's extra check before its gate (GEMM: a workgroup fits a CU)
    gate_check: Optional[Callable] = None  # (cs, d, s, gate problem, study problem, device, seed) -> result: the
                                           # gate's check (attention: the study's window, varlen sequences);
                                           # None: check(cs, d, gate problem, device, seed)
    gate_error: str = "max_abs"            # the result's field `tol` bounds (the gate's worst row, its reason)
    gate_attrs: Optional[Callable] = None  # (gate problem, result) -> {name: value}: recorded as gate_<name>
    gpu_time: Optional[Callable] = None    # (device, cs, d, p) -> median GPU seconds of the whole set
                                           # (None: every kernel timed on the Problem's mapping, tuner/timing.py)

    FIELDS = ("family", "directive", "schedule", "space", "problem", "problem_axes", "build", "key_of",
              "check", "estimate", "flops", "bucket", "default_schedule", "gate_problems", "tolerance")

    def __post_init__(self):
        if not dataclasses.is_dataclass(self.problem):
            raise ValueError(f"OpSpec {self.name}: problem={self.problem!r} is not allowed: a frozen dataclass")
        names = {f.name for f in dataclasses.fields(self.problem)}
        axes = {a.name for a in self.problem_axes}
        if not axes <= names:
            raise ValueError(f"OpSpec {self.name}: problem_axes {sorted(axes - names)} are not fields of "
                             f"{self.problem.__name__} ({', '.join(sorted(names))})")

    @property
    def tuning(self) -> Optional[Tuning]:
        src = self.tuning_from
        if isinstance(src, str):
            if self.name not in _TUNINGS:
                import importlib
                _TUNINGS[self.name] = importlib.import_module(src).tuning()
            return _TUNINGS[self.name]
        return src

    def make_problem(self, values: Mapping[str, Any] | None = None, **kw):
        """The op's Problem from a mapping (a study's stored problem, a dict of CLI values);
        unknown keys raise naming them, missing ones take the Problem's defaults."""
        values = {**(values or {}), **kw}
        if isinstance(values, self.problem):
            return values
        names = [f.name for f in dataclasses.fields(self.problem)]
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise ScheduleError("problem", ", ".join(unknown), f"fields of {self.name}'s problem: {', '.join(names)}")
        try:
            return self.problem(**values)
        except TypeError as e:
            raise ScheduleError("problem", repr(dict(values)), f"{self.name}'s problem needs {', '.join(names)} "
                                f"({e})") from None

    def problem_from(self, values):
        """The Problem from a mapping that may carry more (a ladder row, a study's attrs)."""
        if isinstance(values, self.problem):
            return values
        names = {f.name for f in dataclasses.fields(self.problem)}
        return self.make_problem({k: v for k, v in values.items() if k in names})

    def problem_of_args(self, args) -> Any:
        """The Problem from parsed CLI flags: an axis's flag when given on the command line (another
        op's default for a shared flag does not count), else the axis default. Axes sharing one
        flag (GEMM's m, n, k: --shape MxNxK) read it as their values joined by "x" (one value:
        every axis); the flag's own default when it has one (analyze: 4096x4096x4096), and an
        empty one is refused naming the flag."""
        given = getattr(args, "given_flags", None) or {}
        vals, by_flag = {}, {}
        for a in self.problem_axes:
            by_flag.setdefault(a.flag, []).append(a)
        for flag, axes in by_flag.items():
            if len(axes) == 1:
                a = axes[0]
                vals[a.name] = getattr(args, a.name) if a.name in given else a.default
                continue
            dest = flag.lstrip("-").replace("-", "_")
            vals.update(zip((a.name for a in axes), joined_sizes(getattr(args, dest, "") or "", axes, flag, self.name)))
        return self.make_problem(vals)

    def estimate_of(self, d, s, p, arch: str) -> ModelEstimate:
        """Compile (cached) and estimate: what a caller holding no code object uses."""
        from .compile_op import compile_op
        p = self.problem_from(p)
        return self.estimate(compile_op(self, d, s, self.key_of(d, s, p), arch), d, s, p, arch)


def joined_sizes(text: str, axes: tuple, flag: str, op: str) -> tuple:
    """The values of `axes` from one flag's text "AxBxC" (one value: every axis), each >= 1."""
    names, example = "x".join(a.name.upper() for a in axes), "x".join(str(a.default) for a in axes)
    if not text:
        raise ScheduleError(flag, text, f"{names} (e.g. {flag} {example}) for --op {op}")
    try:
        vals = tuple(a.type(v) for a, v in zip(axes, text.lower().split("x"))) if "x" in text.lower() \
            else (axes[0].type(text),) * len(axes)
    except ValueError:
        vals = ()
    if len(vals) != len(axes) or len(text.lower().split("x")) not in (1, len(axes)) or min(vals) < 1:
        raise ScheduleError(flag.lstrip("-"), text, f"{names} with positive integers (or one size for all), "
                            f"e.g. {example}")
    return vals


def as_dict(p) -> dict:
    """A Problem as the plain mapping Signatures, launchers and study attrs take."""
    return dataclasses.asdict(p) if dataclasses.is_dataclass(p) else dict(p)
