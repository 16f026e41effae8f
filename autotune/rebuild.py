"""Ladders rebuilt from a study storage alone (issue #16).

    studies(url, arch=, op=, prefix=) -> {(arch, op): [optuna.Study, ...]}
    ladders(url, arch=, op=, prefix=, top_k=) -> {(arch, op): ladder DataFrame}

Every sweep records what a ladder needs in the storage -- the study's user attrs (arch, op,
directive, problem row, peak, unit) and each trial's (schedule, measurement, source) -- so
`wmma-gen ladder --storage URL` and `wmma-gen export --storage URL` need nothing but the
database (or journal): no process memory, no results directory, any host. Studies without
wmma_gen's attrs (another program's studies in the same database) are left out; `prefix`
selects one campaign (`wmma-gen sweep --study-name PREFIX`).
"""
from __future__ import annotations

import optuna

from . import ladder as ladder_mod
from wmma_gen.ops import registry
from .storage import load_studies, open_storage


def _selected(name: str, ua: dict, arch: str | None, op: str | None, prefix: str | None) -> bool:
    if not {"arch", "op", "directive"} <= set(ua) or ua["op"] not in registry.tunable():
        return False
    if prefix is not None and not name.startswith(f"{prefix}:"):
        return False
    return (arch is None or ua["arch"] == arch) and (op is None or ua["op"] == op)


def studies(url: str, arch: str | None = None, op: str | None = None,
            prefix: str | None = None) -> dict[tuple[str, str], list[optuna.Study]]:
    storage = open_storage(url)
    load_studies(storage, url)                         # reads it through once: damage fails here
    found = storage.get_all_studies()
    out: dict[tuple[str, str], list[optuna.Study]] = {}
    for fs in sorted(found, key=lambda s: s.study_name):
        if _selected(fs.study_name, fs.user_attrs, arch, op, prefix):
            out.setdefault((fs.user_attrs["arch"], fs.user_attrs["op"]), []).append(
                optuna.load_study(study_name=fs.study_name, storage=storage))
    return out


def ladders(url: str, arch: str | None = None, op: str | None = None, prefix: str | None = None,
            top_k: int = 3) -> dict:
    """{(arch, op): the ladder of those studies}, built exactly as `wmma-gen sweep` builds it."""
    return {key: ladder_mod.build(group, top_k=top_k, op=key[1])
            for key, group in studies(url, arch, op, prefix).items()}
