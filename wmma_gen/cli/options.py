"""Shared CLI options. Schedule flags are derived from schedule.SPACE (one declaration)."""
from __future__ import annotations

import argparse
import json
import math
import os
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ScheduleError
from ..ops.gemm.directive import ACTIVATIONS, IN_DTYPES, LAYOUTS, GemmDirective
from ..ops.registry import NAMES as OP_NAMES
from ..targets import TARGETS

if TYPE_CHECKING:   # schedule.py loads numpy: imported where used, so `targets` starts without it
    from ..ops.gemm.schedule import Schedule


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")


def add_attention(p: argparse.ArgumentParser) -> None:
    """Problem and flags of the attention ops (used with --op attention | attention_bwd)."""
    g = p.add_argument_group("attention (--op attention | attention_bwd)")
    g.add_argument("--head-dim", type=int, default=64, help="32, 64, 80, 96, 128 or 256")
    g.add_argument("--heads", type=int, default=2, help="query heads")
    g.add_argument("--kv-heads", type=int, default=1, help="key/value heads (divides --heads: GQA/MQA)")
    g.add_argument("--seq-q", type=int, default=40)
    g.add_argument("--seq-k", type=int, default=72)
    g.add_argument("--causal", action="store_true", help="bottom-right aligned causal mask")
    g.add_argument("--window", default="", help="LEFT,RIGHT sliding window (-1 = unbounded)")
    g.add_argument("--attn-layout", default="bshd", choices=["bshd", "bhsd"])


def add_target(p: argparse.ArgumentParser, required: bool = True, checked: bool = False) -> None:
    """--arch; `checked`: refused at parse time unless a known target (sweep, export)."""
    p.add_argument("--arch", required=required, type=arch_name if checked else None,
                   help=f"one of {', '.join(TARGETS)}")


def add_directive(p: argparse.ArgumentParser, shape_default: str = "") -> None:
    p.add_argument("--op", default="gemm", choices=list(OP_NAMES),
                   help="op from the registry (wmma_gen/ops/registry.py); compile/analyze: gemm only so far")
    p.add_argument("--dtype", required=True, help=f"input dtype: {', '.join(IN_DTYPES)}")
    p.add_argument("--acc", default="", help="accumulator: f32 (default for floats), f16/bf16 (gfx11 same-type), i32")
    p.add_argument("--shape", default=shape_default, help="MxNxK (e.g. 256x256x256); M,N,K >= 1")
    p.add_argument("--layout", default="NN", help=f"{'|'.join(LAYOUTS)}: first letter A, second B; T = stored transposed")
    p.add_argument("--batch", type=int_at_least(1), default=1)
    p.add_argument("--out-dtype", default="", help="output dtype (default: the accumulator)")
    p.add_argument("--alpha", type=f32_exact, default=1.0, help="scale of A@B (exact in f32)")
    p.add_argument("--beta", type=f32_exact, default=0.0, help="scale of C0 (exact in f32)")
    p.add_argument("--bias", default="", choices=["", "n", "m"], help="bias along N (per column) or M (per row)")
    p.add_argument("--activation", default="", choices=[""] + list(ACTIVATIONS))
    p.add_argument("--unsigned", action="store_true", help="integer inputs are unsigned")


def add_schedule(p: argparse.ArgumentParser) -> None:
    from ..ops.gemm.schedule import SPACE
    g = p.add_argument_group("schedule (defaults: the built-in default schedule)")
    g.add_argument("--schedule-json", type=schedule_json, default=None,
                   help="a schedule as JSON text or a path to a JSON file")
    for knob in SPACE:
        kind = type(knob.domain[0])
        g.add_argument(f"--{knob.name.replace('_', '-')}", dest=knob.name, type=kind, default=None,
                       help=f"{knob.doc} ({'|'.join(map(str, knob.domain))})")


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


def directive_from(args) -> GemmDirective:
    m, n, k = parse_shape(args.shape)
    return GemmDirective(args.dtype, m, n, k, acc=args.acc, layout=args.layout.upper(), batch=args.batch,
                         out_dtype=args.out_dtype, alpha=args.alpha, beta=args.beta, bias=args.bias,
                         activation=args.activation, unsigned=args.unsigned)


def schedule_from(args, base: Schedule | None = None) -> Schedule:
    from ..ops.gemm.schedule import SPACE, Schedule
    fields = (base or Schedule()).to_dict()
    if args.schedule_json:
        given = args.schedule_json   # parsed by the schedule_json type; text from other callers
        fields.update(given if isinstance(given, dict) else schedule_json(given))
    fields.update({k.name: getattr(args, k.name) for k in SPACE if getattr(args, k.name) is not None})
    return Schedule.from_dict(fields)


def emit(args, data, text: str) -> None:
    if getattr(args, "json", False):
        json.dump(data, sys.stdout, indent=2, default=str)
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
    try:
        m, n, k = parse_shape(text.strip())
    except ScheduleError as e:
        raise _bad(f"{text!r}: {e.allowed}") from None
    reason = operand_size(Schedule(), GemmDirective("f16", m, n, k), None)
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
    """Type: a schedule as JSON text ({...}) or the path of a JSON file; parsed and validated."""
    from ..ops.gemm.schedule import Schedule
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
    fields = loaded.get("schedule", loaded) if isinstance(loaded, dict) else loaded
    if not isinstance(fields, dict):
        raise _bad(f"{source} is not a JSON object of schedule fields (or {{\"schedule\": {{...}}}})")
    try:
        Schedule.from_dict({**Schedule().to_dict(), **fields})
    except (ScheduleError, TypeError) as e:
        raise _bad(f"{source}: {e}") from None
    return fields





def known_ops() -> tuple[str, ...]:
    """Ops `wmma-gen sweep` accepts for --op: those with a tuning adapter (autotune/ops/)."""
    from autotune.ops import TUNABLE
    return TUNABLE
