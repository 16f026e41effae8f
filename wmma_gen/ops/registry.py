"""The op registry: op name -> its OpSpec (ops/contract.py; STYLE rule 16).

autotune, check, analyze, export and the CLI look an op up here instead of branching on its
name. Adding an op is a folder under wmma_gen/ops/ whose spec.py has `spec() -> OpSpec`, and
one `register` line below. Entries are loaded lazily (the module is imported on first `get`),
so `wmma-gen --help` does not load MLIR. `register` also takes an OpSpec or a loader directly
(a test's op outside the package registers the same way).

An op's spec module declares, as light top-level names read without loading its builder:
DIRECTIVE, AXES, SPACE (or its schedule module's), KERNELS, SWEEP_AXES (sweep flags) and
LIGHT_MODULES, {role: module} naming the module that plays each optional role (an op without a
role simply lacks that use; a name starting with "." is relative to the spec's package):
"problem_file" (problems-file rows), "recorded" (`problem_row(call, problem)`:
wmma_gen.torch.record_problems), "calibration_point" (KEYS, `problem(config)`,
`directive(dtype, config)`: ops/calibration_points.py's published points). `light_module` reads it.
"""
from __future__ import annotations

import importlib
import importlib.util
from typing import Callable, Union

from .contract import ModelEstimate, OpSpec  # noqa: F401  (re-exported: the contract's types)

_LOADERS: dict[str, Callable[[], OpSpec]] = {}
_MODULES: dict[str, str] = {}      # op -> its spec module (light: AXES and SPACE without the builder)
_cache: dict[str, OpSpec] = {}
NAMES: tuple[str, ...] = ()


def register(name: str, spec: Union[str, OpSpec, Callable[[], OpSpec]]) -> None:
    """Register op `name`: a module path whose `spec()` builds the OpSpec, an OpSpec, or a loader."""
    global NAMES
    if isinstance(spec, str):
        module = spec
        _MODULES[name] = module
        loader = lambda: importlib.import_module(module).spec()  # noqa: E731
    elif isinstance(spec, OpSpec):
        loader = lambda: spec  # noqa: E731
    else:
        loader = spec
    _LOADERS[name] = loader
    _cache.pop(name, None)
    NAMES = tuple(_LOADERS)


def unregister(name: str) -> None:
    """Forget op `name` (tests that register a dummy op clean up with this)."""
    global NAMES
    _LOADERS.pop(name, None)
    _MODULES.pop(name, None)
    _cache.pop(name, None)
    NAMES = tuple(_LOADERS)


def _light(name: str, attr: str, field: str):
    """A spec module's top-level `attr` (no MLIR imported), else the same name in the op folder's
    schedule module (where SPACE lives by convention), else the loaded OpSpec's `field`."""
    module = _MODULES.get(name)
    if module is not None:
        for where in (module, module.rsplit(".", 1)[0] + ".schedule"):
            try:
                value = getattr(importlib.import_module(where), attr, None)
            except ImportError:
                value = None
            if value is not None:
                return value
    return getattr(get(name), field)


def space_of(name: str) -> tuple:
    """The op's knob table (what CLI flags are made from) without loading its builder."""
    return _light(name, "SPACE", "space")


def axes_of(name: str) -> tuple:
    """The op's problem axes (CLI flags) without loading its builder."""
    return _light(name, "AXES", "problem_axes")


def directive_of(name: str) -> type:
    """The op's directive class (its fields' `option`s are CLI flags) without loading its builder."""
    return _light(name, "DIRECTIVE", "directive")


LIGHT_ROLES = ("problem_file", "recorded", "calibration_point")


def light_module(name: str, role: str):
    """The module the op's spec module declares for `role` (its LIGHT_MODULES), imported; None when
    it declares none (or the op was registered as an object, without a spec module)."""
    if role not in LIGHT_ROLES:
        raise ValueError(f"role={role!r} is not allowed: one of {', '.join(LIGHT_ROLES)}")
    declared = _light_opt(name, "LIGHT_MODULES") or {}
    unknown = sorted(set(declared) - set(LIGHT_ROLES))
    if unknown:
        raise ValueError(f"op={name!r}: LIGHT_MODULES role(s) {', '.join(unknown)} are not allowed: "
                         f"one of {', '.join(LIGHT_ROLES)}")
    where = declared.get(role)
    return None if where is None else importlib.import_module(where, _MODULES[name].rsplit(".", 1)[0])


def sibling(name: str, module: str):
    """Another op's module `module`, beside its spec module (a call-time lookup from one op folder
    into another: tests/unit/test_import_layers.py REGISTRY_LOOKUPS), or None when it has none."""
    spec_module = _MODULES.get(name)
    if spec_module is None:
        return None
    where = spec_module.rsplit(".", 1)[0] + "." + module
    try:
        found = importlib.util.find_spec(where) is not None
    except ModuleNotFoundError:
        found = False
    return importlib.import_module(where) if found else None


def sweep_axes_of(name: str) -> tuple:
    """The op's sweep axes (contract.SweepAxis: `wmma-gen sweep` flags, SweepConfig.axes keys): its
    spec module's light SWEEP_AXES; () for an op without one (no sweep flags)."""
    return tuple(_light_opt(name, "SWEEP_AXES") or ())


def one_kernel() -> tuple[str, ...]:
    """Ops `wmma-gen compile` can write (one kernel's artifacts): all but those whose spec module
    declares several KERNELS (light: read without loading the builder)."""
    return tuple(n for n in NAMES if len(_light_opt(n, "KERNELS") or ()) <= 1)


def _light_opt(name: str, attr: str):
    module = _MODULES.get(name)
    return getattr(importlib.import_module(module), attr, None) if module is not None else None


def names() -> tuple[str, ...]:
    """The registered op names now (NAMES as imported elsewhere is a snapshot)."""
    return NAMES


def get(name: str) -> OpSpec:
    """The OpSpec of `name`; ValueError naming the known ops otherwise."""
    if name not in _LOADERS:
        raise ValueError(f"op={name!r} is not allowed: one of {', '.join(NAMES)}")
    if name not in _cache:
        spec = _LOADERS[name]()
        if spec.name != name:
            raise ValueError(f"op={name!r}: its spec is named {spec.name!r} (they must agree)")
        _cache[name] = spec
    return _cache[name]


def tunable() -> tuple[str, ...]:
    """Ops the tuner can sweep (a Tuning on their spec). Loads every spec."""
    return tuple(n for n in NAMES if get(n).tuning is not None)


register("gemm", "wmma_gen.ops.gemm.spec")
register("attention", "wmma_gen.ops.attention.spec")
register("attention_bwd", "wmma_gen.ops.attention_bwd.spec")
register("paged_attention", "wmma_gen.ops.paged_attention.spec")
register("mla", "wmma_gen.ops.mla.spec")


def tuning(name: str):
    """The Tuning of op `name`; ScheduleError naming the sweepable ops when it has none."""
    from ..errors import ScheduleError
    spec = get(name) if name in _LOADERS else None
    if spec is None or spec.tuning_from is None:
        raise ScheduleError("op", name, f"one of {', '.join(tunable())} (ops the tuner can sweep)")
    return spec.tuning
