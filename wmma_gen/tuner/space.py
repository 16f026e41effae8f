"""The tuner's search space, derived from an op's knob table `SPACE` (ops/<op>/schedule.py, STYLE rule 6).

Nothing here restates a knob: every suggest call is `trial.suggest_categorical(knob.name,
domain)` with the knob's own values (never an index into a list), in SPACE order, and a
conditional knob (`Knob.when`) is suggested only when its condition holds for the knobs
chosen before it; otherwise it keeps the schedule class's default. A study may narrow a knob's
domain (`--quick`, the tuner-efficiency bench) but never widen it.
"""
from __future__ import annotations

import itertools
from typing import Iterator, Mapping

from wmma_gen.errors import ScheduleError

Domains = Mapping[str, tuple]


def narrow(domains: Domains | None, space: tuple) -> dict[str, tuple]:
    """Each knob's domain, with the overrides in `domains` checked to be non-empty subsets."""
    domains = dict(domains or {})
    names = [k.name for k in space]
    unknown = sorted(set(domains) - set(names))
    if unknown:
        raise ScheduleError("domains", unknown, f"knob names from the op's SPACE: {', '.join(names)}")
    out = {}
    for knob in space:
        dom = tuple(domains.get(knob.name, knob.domain))
        extra = [v for v in dom if v not in knob.domain]
        if not dom or extra:
            raise ScheduleError(f"domains.{knob.name}", dom, f"a non-empty subset of {knob.domain}")
        out[knob.name] = dom
    return out


def _active(knob, chosen: dict, cls) -> bool:
    when = getattr(knob, "when", None)   # knob tables without conditions (attention backward)
    return when is None or when(cls(**chosen))


def suggest_schedule(trial, domains: Domains | None, space: tuple, cls):
    """Ask the trial for one value per active knob of the op's `space` and build its schedule `cls`.

    Knob values may be any combination; legality is the schedule's problems()'s job (the
    objective prunes), so the sampler learns which regions are illegal."""
    doms = narrow(domains, space)
    chosen: dict = {}
    for knob in space:
        if _active(knob, chosen, cls):
            chosen[knob.name] = trial.suggest_categorical(knob.name, doms[knob.name])
    return cls(**chosen)


def params_of(s, domains: Domains | None, space: tuple) -> dict:
    """The trial params that make `suggest_schedule` return `s` (for enqueue_trial);
    raises ScheduleError when `s` lies outside the (narrowed) space."""
    doms = narrow(domains, space)
    params: dict = {}
    for knob in space:
        if _active(knob, params, type(s)):
            v = getattr(s, knob.name)
            if v not in doms[knob.name]:
                raise ScheduleError(knob.name, v, f"one of {doms[knob.name]} in this search space")
            params[knob.name] = v
    return params


def enumerate_space(domains: Domains | None, space: tuple, cls) -> Iterator:
    """Every distinct schedule of the (narrowed) space, inactive knobs at their defaults."""
    doms = narrow(domains, space)
    seen = set()
    for values in itertools.product(*(doms[k.name] for k in space)):
        chosen: dict = {}
        for knob, v in zip(space, values):
            if _active(knob, chosen, cls):
                chosen[knob.name] = v
        s = cls(**chosen)
        if s not in seen:
            seen.add(s)
            yield s
