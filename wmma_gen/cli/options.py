"""Shared CLI options: argument types checked at parse time, output. The per-op flags of
check/compile/analyze (problem-axis, directive and schedule flags, generated from each op's
declarations) live in op_options.py; a directive option may name a reader here (op_options.READERS)."""
from __future__ import annotations

import argparse
import json
import math
import os
import struct
import sys
from pathlib import Path

from ..errors import ScheduleError
from ..ops.gemm.directive import IN_DTYPES, GemmDirective
from ..targets import TARGETS


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")


def add_target(p: argparse.ArgumentParser, required: bool = True, checked: bool = False) -> None:
    """--arch; `checked`: refused at parse time unless a known target (sweep, export)."""
    p.add_argument("--arch", required=required, type=arch_name if checked else None,
                   help=f"one of {', '.join(TARGETS)}")


def parse_shape(text: str) -> tuple[int, int, int]:
    parts = text.lower().split("x")
    try:
        vals = tuple(int(p) for p in parts)
    except ValueError:
        raise ScheduleError("shape", text, "MxNxK with positive integers, e.g. 256x256x256") from None
    if len(vals) == 1:
        vals = vals * 3
    if len(vals) != 3 or min(vals) < 1:
        raise ScheduleError("shape", text, "MxNxK (or one size N for NxNxN) with positive integers")
    return vals


def plain_json(x):
    """`x` with every non-finite float as the string "nan", "inf" or "-inf": json.dump would
    write NaN/Infinity, which is not JSON (`check --json --alpha nan`, issue 24)."""
    if isinstance(x, dict):
        return {k: plain_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain_json(v) for v in x]
    if isinstance(x, float) or type(x).__module__ == "numpy" and hasattr(x, "dtype") and x.dtype.kind == "f":
        v = float(x)
        return v if math.isfinite(v) else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    return x


def emit(args, data, text: str) -> None:
    if getattr(args, "json", False):
        json.dump(plain_json(data), sys.stdout, indent=2, default=str, allow_nan=False)
        sys.stdout.write("\n")
    else:
        print(text)


# ---- argument types: every value is checked at parse time (issue #13) -----------------------
# argparse turns ArgumentTypeError into "wmma-gen CMD: error: argument --NAME: MESSAGE", exit 2,
# before any command runs, so a malformed argument never writes anything.
def _bad(text: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(text)


def int_at_least(lo: int, hi: int | None = None):
    """Type: an integer in [lo, hi]."""
    def parse(text: str) -> int:
        try:
            v = int(text.strip())
        except ValueError:
            raise _bad(f"{text!r} is not an integer") from None
        if v < lo or (hi is not None and v > hi):
            raise _bad(f"{v} is out of range: an integer >= {lo}" + (f" and <= {hi}" if hi is not None else ""))
        return v
    parse.__name__ = "integer"
    return parse


def positive_seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise _bad(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(v) or v <= 0:
        raise _bad(f"{text!r} is not allowed: a finite number of seconds > 0")
    return v


def f32_exact(text: str) -> float:
    """Type for alpha/beta: a real number the f32 epilogue holds exactly (inf/nan allowed)."""
    try:
        v = float(text)
    except ValueError:
        raise _bad(f"{text!r} is not a number") from None
    try:
        back = struct.unpack("f", struct.pack("f", v))[0]
    except OverflowError:
        back = math.inf
    if not (math.isnan(v) or back == v):
        raise _bad(f"{text} is not exactly representable in f32, which the epilogue computes in "
                   f"(nearest f32: {back!r}); pass that value if it is what you mean")
    return v


def arch_name(text: str) -> str:
    if text not in TARGETS:
        raise _bad(f"{text!r} is not a known target: one of {', '.join(TARGETS)}")
    return text


def shape_text(text: str) -> tuple[int, int, int]:
    """Type: one shape N or MxNxK whose operands fit 32-bit indexing (the size error compile gives)."""
    from ..ops.gemm.schedule import Schedule, operand_size
    from ..ops.gemm.problem import GemmProblem
    try:
        m, n, k = parse_shape(text.strip())
    except ScheduleError as e:
        raise _bad(f"{text!r}: {e.allowed}") from None
    reason = operand_size(Schedule(), GemmDirective("f16"), None, GemmProblem(m, n, k))
    if reason:
        raise _bad(f"{text!r} is too large for any kernel: {reason}")
    return m, n, k


def csv_list(item, what: str):
    """Type: a non-empty comma-separated list, each item parsed by `item`, duplicates dropped."""
    def parse(text: str) -> tuple:
        parts = [p.strip() for p in text.split(",")]
        if not any(parts):
            raise _bad(f"empty list: give one or more {what}, comma-separated")
        if not all(parts):
            raise _bad(f"{text!r} has an empty item: give {what}, comma-separated, without empty entries")
        return tuple(dict.fromkeys(item(p) for p in parts))
    parse.__name__ = f"list of {what}"
    return parse


def in_dtype(text: str) -> str:
    if text not in IN_DTYPES:
        raise _bad(f"{text!r} is not an input dtype: one of {', '.join(IN_DTYPES)}")
    return text


def shapes_file(text: str) -> tuple:
    """Type: a readable file with one shape per line (N or MxNxK; # comments), at least one."""
    try:
        lines = Path(text).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise _bad(f"{text!r} cannot be read ({getattr(e, 'strerror', None) or e})") from None
    shapes = []
    for i, line in enumerate(lines, start=1):
        body = line.split("#")[0].strip()
        if body:
            try:
                shapes.append(shape_text(body))
            except argparse.ArgumentTypeError as e:
                raise _bad(f"{text} line {i}: {e}") from None
    if not shapes:
        raise _bad(f"{text!r} holds no shape (one N or MxNxK per line)")
    return tuple(dict.fromkeys(shapes))


def writable_dir(text: str) -> str:
    """Type: a directory that exists and is writable, or can be created (nothing is left behind:
    the check creates and removes one probe file in the nearest existing directory)."""
    from autotune.storage import unwritable
    if not text.strip():
        raise _bad("empty path: give a directory")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise _bad(f"{text!r} exists and is not a directory")
    why = unwritable(path / "x")
    if why:
        raise _bad(f"{text!r} cannot be written: {why}")
    return text


def out_dir(text: str) -> str:
    """Type: an output directory -- an existing directory, or a path whose nearest existing
    parent is a directory that takes new entries (probed by creating and removing one temp
    directory: permission bits do not tell for root or /proc). An existing file is refused."""
    import tempfile
    if not text.strip():
        raise _bad("empty path: give a directory")
    path = Path(os.path.abspath(text))
    if path.exists() and not path.is_dir():
        raise _bad(f"{text!r} exists and is not a directory (the artifacts are files inside --out)")
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise _bad(f"{text!r} cannot be created: {probe} is not a directory")
    try:
        os.rmdir(tempfile.mkdtemp(dir=probe, prefix=".wmma_gen_probe_"))
    except OSError as e:
        raise _bad(f"{text!r} cannot be written: {probe} does not take new entries "
                   f"({e.strerror or type(e).__name__})") from None
    return text


def storage_url(text: str) -> str:
    """Type: "" (the default journal), a journal file path, or a reachable RDB URL."""
    if not text:
        return text
    from autotune.storage import StorageError, check
    try:
        check(text)
    except StorageError as e:
        raise _bad(str(e)) from None
    return text


def missing_storage(text: str) -> str | None:
    """Why a storage a command only reads cannot be used: its journal or sqlite file does not
    exist (reading never creates one, issue 24); None when it exists or is a server."""
    from autotune.storage import local_file
    try:
        f = local_file(text)
    except Exception:       # an unparsable URL: storage_url says why
        f = None
    if f is not None and not f.exists():
        return (f"{text!r}: {f} does not exist; this command only reads a storage a sweep wrote "
                "(pass the journal path or sqlite URL the sweep used)")
    return None


def existing_storage(text: str) -> str:
    """Type for commands that only read a storage (export, ladder): storage_url, and a journal
    or sqlite file must already exist."""
    if not text:
        return text
    why = missing_storage(text)
    if why:
        raise _bad(why)
    return storage_url(text)


def ladder_source(text: str) -> str:
    """Type: a ladder .parquet/.csv file or a results directory (its content is checked on read)."""
    path = Path(text)
    if not path.exists():
        raise _bad(f"{text!r} does not exist: give a results directory or a ladder .parquet/.csv file")
    if path.is_file() and path.suffix not in (".parquet", ".csv"):
        raise _bad(f"{text!r} is not a ladder: a ladder is a .parquet or .csv file written by `wmma-gen sweep`")
    if not os.access(path, os.R_OK):
        raise _bad(f"{text!r} is not readable")
    return text


def schedule_json(text: str) -> dict:
    """Type: a schedule as JSON text ({...}) or the path of a JSON file -> its fields (a dict;
    {"schedule": {...}} is unwrapped). Checked against --op's schedule after parsing
    (op_options.schedule_for), since the fields differ per op."""
    source = "JSON text"
    if not text.lstrip().startswith("{"):
        source = f"file {text}"
        try:
            text = Path(text).read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise _bad(f"{text!r} is neither JSON text (it does not start with '{{') nor a readable file "
                       f"({getattr(e, 'strerror', None) or e})") from None
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as e:
        raise _bad(f"{source} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise _bad(f"{source} is nested too deeply: a schedule is one flat JSON object") from None
    fields = loaded.get("schedule", loaded) if isinstance(loaded, dict) else loaded
    if not isinstance(fields, dict):
        raise _bad(f"{source} is not a JSON object of schedule fields (or {{\"schedule\": {{...}}}})")
    bad = next((k for k, v in fields.items() if isinstance(v, (dict, list))), None)
    if bad is not None:      # a schedule is one flat object of numbers and strings
        raise _bad(f"{source}: field {bad!r} holds a {type(fields[bad]).__name__}; schedule fields are "
                   "numbers or strings")
    return fields


def known_ops() -> tuple[str, ...]:
    """Ops `wmma-gen sweep` offers for --op: the registry's (one without a Tuning is refused by
    SweepConfig naming the sweepable ones; listing them here would load every op's builder)."""
    from ..ops.registry import NAMES
    return NAMES
