"""Shared CLI options. Schedule flags are derived from schedule.SPACE (one declaration)."""
from __future__ import annotations

import argparse
import json
import sys

from ..ops.registry import NAMES as OP_NAMES
from ..directive import ACTIVATIONS, IN_DTYPES, LAYOUTS, GemmDirective
from ..errors import ScheduleError
from ..schedule import SPACE, Schedule
from ..targets import TARGETS


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


def add_target(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--arch", required=required, help=f"one of {', '.join(TARGETS)}")


def add_directive(p: argparse.ArgumentParser, shape_default: str = "") -> None:
    p.add_argument("--op", default="gemm", choices=list(OP_NAMES),
                   help="op from the registry (wmma_gen/ops/registry.py); compile/analyze: gemm only so far")
    p.add_argument("--dtype", required=True, help=f"input dtype: {', '.join(IN_DTYPES)}")
    p.add_argument("--acc", default="", help="accumulator: f32 (default for floats), f16/bf16 (gfx11 same-type), i32")
    p.add_argument("--shape", default=shape_default, help="MxNxK (e.g. 256x256x256); M,N,K >= 1")
    p.add_argument("--layout", default="NN", help=f"{'|'.join(LAYOUTS)}: first letter A, second B; T = stored transposed")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--out-dtype", default="", help="output dtype (default: the accumulator)")
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--beta", type=float, default=0.0)
    p.add_argument("--bias", default="", choices=["", "n", "m"], help="bias along N (per column) or M (per row)")
    p.add_argument("--activation", default="", choices=[""] + list(ACTIVATIONS))
    p.add_argument("--unsigned", action="store_true", help="integer inputs are unsigned")


def add_schedule(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("schedule (defaults: the built-in default schedule)")
    g.add_argument("--schedule-json", default="", help="a schedule as JSON text or a path to a JSON file")
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
    fields = (base or Schedule()).to_dict()
    if args.schedule_json:
        text = args.schedule_json
        if not text.lstrip().startswith("{"):
            with open(text) as f:
                text = f.read()
        loaded = json.loads(text)
        fields.update(loaded.get("schedule", loaded))
    fields.update({k.name: getattr(args, k.name) for k in SPACE if getattr(args, k.name) is not None})
    return Schedule.from_dict(fields)


def emit(args, data, text: str) -> None:
    if getattr(args, "json", False):
        json.dump(data, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        print(text)
