"""Entry point of `wmma-gen`. Each subcommand lives in its own module with register()/run()."""
from __future__ import annotations

import argparse
import importlib
import sys

from ..errors import WmmaGenError

COMMANDS = ("targets_cmd", "doctor", "compile_cmd", "check_cmd", "analyze_cmd", "sweep_cmd", "export_cmd", "demo_cmd", "emu_cmd")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wmma-gen", description="WMMA kernel generator, emulator and autotuner for AMD RDNA")
    sub = p.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"wmma_gen.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"wmma_gen.cli.{name}":
                continue  # optional subcommand not present in this build
            raise
        mod.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except WmmaGenError as e:
        print(f"wmma-gen {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
