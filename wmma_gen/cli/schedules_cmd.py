"""`wmma-gen schedules list|show|remove`: the schedule files the lookup finds (issue 25 item 1).

    list    every regular *.json file in the search path, in lookup order ($WMMA_GEN_SCHEDULES
            entries, the user dir, the shipped files): op, arch, dtype, entries, "used" files with
            their precedence among the files of their (op, arch, dtype) -- a call takes the
            best-matching bucket of all of them, precedence only breaks ties -- and files the
            lookup refuses (with the reason) or ignores (other names, not regular files: a FIFO
            is never opened); --op / --arch must name a registry op / a known target
    show    one file (a path, or ARCH-OP-DTYPE such as gfx1100-gemm-f16: the file that wins),
            validated by its op's reader: header and one line per entry
    remove  ARCH-OP-DTYPE or a path, from the user dir only (shipped files are package data;
            $WMMA_GEN_SCHEDULES directories are the user's own); all named files or none

Every file is read through its op's lookup (wmma_gen/ops/<op>/lookup.py `load_file`, over
wmma_gen/schedule_files.py), so what this command calls valid is what gemm()/attention() use.
Nothing here loads MLIR, optuna or matplotlib.
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path

from .options import add_json, emit


def register(sub) -> None:
    p = sub.add_parser("schedules", help="list, show or remove the schedule files the lookup uses")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="{list,show,remove}")
    ls = verbs.add_parser("list", help="every schedule file in lookup order, and which one wins")
    ls.add_argument("--op", default=None, help="only this op's files")
    ls.add_argument("--arch", default=None, help="only this target's files")
    add_json(ls)
    sh = verbs.add_parser("show", help="one schedule file, validated: header and entries")
    sh.add_argument("file", metavar="FILE|ARCH-OP-DTYPE", help="a path, or e.g. gfx1100-gemm-f16 (the file that wins)")
    add_json(sh)
    rm = verbs.add_parser("remove", help="delete schedule files from the user dir (never shipped ones)")
    rm.add_argument("files", nargs="+", metavar="FILE|ARCH-OP-DTYPE", help="e.g. gfx1100-gemm-f16, or a path")
    add_json(rm)
    p.set_defaults(func=run)


def run(args) -> int:
    return {"list": run_list, "show": run_show, "remove": run_remove}[args.verb](args)


# ---- reading one file through its op's reader -----------------------------------------------
def validate(path: Path) -> int:
    """Number of entries of a valid file (read by its op's lookup); ScheduleFileError naming
    file and field otherwise."""
    from ..ops.registry import NAMES
    from ..schedule_files import ScheduleFileError, name_parts
    parts = name_parts(path)
    if parts is None:
        raise ScheduleFileError(path, "<name>", path.name, "<arch>-<op>-<dtype>.json (the name the lookup reads)")
    if parts[1] not in NAMES:
        raise ScheduleFileError(path, "<name>", path.name, f"an op of the registry in the name: {', '.join(NAMES)}")
    return len(importlib.import_module(f"wmma_gen.ops.{parts[1]}.lookup").load_file(path))


def _status(path: Path, origin: str, seen: set) -> dict:
    from ..schedule_files import ScheduleFileError, name_parts
    parts = name_parts(path)
    row = {"file": str(path), "dir": str(path.parent), "origin": origin, "op": None, "arch": None, "dtype": None,
           "entries": None, "status": "ignored", "error": None}
    if parts is None:
        row["error"] = "not named <arch>-<op>-<dtype>.json: the lookup never reads it"
        return row
    row.update(arch=parts[0], op=parts[1], dtype=parts[2])
    try:
        row["entries"] = validate(path)
    except ScheduleFileError as e:
        row.update(status="refused", error=str(e))
        return row
    seen[parts] = seen.get(parts, 0) + 1
    row.update(status="used", precedence=seen[parts])
    return row


# ---- list -----------------------------------------------------------------------------------
def run_list(args) -> int:
    from ..schedule_files import all_files, search_dirs
    from ..errors import ScheduleError
    from ..ops.registry import NAMES
    from ..targets import get_target
    if args.op is not None and args.op not in NAMES:
        raise ScheduleError("--op", args.op, f"one of {', '.join(NAMES)}")
    if args.arch is not None:
        get_target(args.arch)           # an unknown arch: ScheduleError listing the known ones (exit 2)
    seen: dict = {}
    rows = [_status(p, origin, seen) for p, origin in all_files()]
    rows = [r for r in rows
            if (args.op is None or r["op"] == args.op) and (args.arch is None or r["arch"] == args.arch)]
    dirs = [{"dir": str(d), "origin": origin, "exists": d.is_dir()} for d, origin in search_dirs()]
    lines = ["search path (a call takes the best-matching bucket of all files; on a tie the earlier file's):"]
    lines += [f"  {i}. {d['origin']:18} {d['dir']}{'' if d['exists'] else '  (does not exist)'}"
              for i, d in enumerate(dirs, 1)]
    if rows:
        lines.append(f"{'op':14} {'arch':8} {'dtype':5} {'entries':>7}  {'status':8}  {'from':18} file")
        for r in rows:
            entries = "-" if r["entries"] is None else str(r["entries"])
            status = f"used #{r['precedence']}" if r["status"] == "used" else r["status"]
            lines.append(f"{r['op'] or '-':14} {r['arch'] or '-':8} {r['dtype'] or '-':5} {entries:>7}  "
                         f"{status:8}  {r['origin']:18} {r['file']}")
            if r["error"]:
                lines.append(f"{'':40}{r['error']}")
        lines.append("used #n: its entries compete with the other files' of its (op, arch, dtype) -- the nearest "
                     "bucket wins, #1 on a tie (WMMA_GEN_LOG=schedules says which file won a call and why the "
                     "others lost); refused: skipped with a warning; ignored: never read")
    else:
        lines.append("no schedule files: every call uses the op's default schedule (wmma-gen export writes some)")
    emit(args, {"search_path": dirs, "files": rows}, "\n".join(lines))
    return 0


# ---- show -----------------------------------------------------------------------------------
def resolve(text: str) -> tuple[Path, str, list[tuple[Path, str]]]:
    """(the file, its origin, every file for that key in lookup order) of a path or ARCH-OP-DTYPE."""
    from ..errors import ScheduleError
    from ..schedule_files import name_parts, search_dirs
    given = Path(text)
    if given.is_file():
        return given, "given", [(given, "given")]
    name = text if text.endswith(".json") else f"{text}.json"
    if os.sep in text or name_parts(name) is None:
        raise ScheduleError("FILE", text, "an existing file, or ARCH-OP-DTYPE such as gfx1100-gemm-f16")
    found = [(d / name, origin) for d, origin in search_dirs() if (d / name).is_file()]
    if not found:
        raise ScheduleError("FILE", text, f"a key with a file in the search path: no {name} in "
                                          f"{os.pathsep.join(str(d) for d, _ in search_dirs())} "
                                          "(`wmma-gen schedules list` shows what there is)")
    return found[0][0], found[0][1], found


def _key_text(e: dict) -> str:
    keys = {**e.get("bucket", {}), **{k: e[k] for k in ("head_dim", "causal", "acc", "layout") if k in e}}
    return " ".join(f"{k}={v}" for k, v in keys.items())


def run_show(args) -> int:
    from ..schedule_files import read
    path, origin, found = resolve(args.file)
    n = validate(path)                       # refused -> ScheduleFileError (exit 2) naming file and field
    doc = read(path)
    entries = [{"key": _key_text(e), "schedule": e["schedule"], "tflops": e["tflops"], "unit": e.get("unit", ""),
                "source": e["source"]} for e in doc["entries"]]
    info = {"file": str(path), "origin": origin, "op": doc["op"] if "op" in doc else None, "arch": doc["arch"],
            "dtype": doc["dtype"], "schema": doc["schema"], "schema_version": doc["schema_version"],
            "generated": doc.get("generated"), "wmma_gen_version": doc.get("wmma_gen_version"),
            "entries": entries, "other_files": [str(p) for p, _ in found[1:]]}
    lines = [f"{path} ({origin}): {info['op']} {doc['arch']} {doc['dtype']}, {n} entries, schema "
             f"{doc['schema']} v{doc['schema_version']}, generated {info['generated'] or '?'} "
             f"by wmma_gen {info['wmma_gen_version'] or '?'}"]
    for e in entries:
        sched = " ".join(f"{k}={v}" for k, v in e["schedule"].items())
        lines.append(f"  {e['key']:40} {e['tflops']:9.2f} {e['unit']:7} {e['source']:5}  {sched}")
    lines += [f"  (also {p}: its entries compete by bucket; this file wins ties)" for p in info["other_files"]]
    emit(args, info, "\n".join(lines))
    return 0


# ---- remove ---------------------------------------------------------------------------------
def _in_user_dir(text: str) -> Path:
    from ..errors import ScheduleError
    from ..schedule_files import name_parts
    from ..userdirs import schedules_dir
    user = schedules_dir()
    given = Path(text)
    if os.sep in text or given.is_file():
        if not given.is_file():
            raise ScheduleError("FILE", text, f"an existing schedule file in the user dir {user}")
        if os.path.realpath(given.parent) != os.path.realpath(user) or given.suffix != ".json":
            raise ScheduleError("FILE", text, f"a .json file in the user dir {user}: remove never deletes shipped "
                                              "files or files in $WMMA_GEN_SCHEDULES directories")
        return given
    name = text if text.endswith(".json") else f"{text}.json"
    if name_parts(name) is None:
        raise ScheduleError("FILE", text, "ARCH-OP-DTYPE such as gfx1100-gemm-f16, or a path in the user dir")
    if not (user / name).is_file():
        raise ScheduleError("FILE", text, f"a key with a file in the user dir: no {name} in {user} "
                                          "(`wmma-gen schedules list` shows what there is)")
    return user / name


def run_remove(args) -> int:
    from ..schedule_files import search_dirs
    paths = list(dict.fromkeys(_in_user_dir(t) for t in args.files))   # every name checked before any delete
    info, lines = [], []
    for path in paths:
        path.unlink()
        nxt = [str(d / path.name) for d, _ in search_dirs() if (d / path.name).is_file()]
        info.append({"removed": str(path), "now": nxt[0] if nxt else "default"})
        lines.append(f"removed {path}; lookups for {path.stem} now use "
                     f"{nxt[0] if nxt else 'the default schedule'}")
    emit(args, info, "\n".join(lines))
    return 0
