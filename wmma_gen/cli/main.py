"""Entry point of `wmma-gen`. Each subcommand lives in its own module with register()/run().

Fast start (issue 14): a command module imports at its top only what its parser needs; what
its run() needs (the MLIR bindings, the compiler, the emulator, optuna, pandas, matplotlib)
is imported inside run(). When argv names a command, only that command's module is imported
and registered; `--help`, no command or an unknown one builds the full parser.
tests/cli/test_fast_start.py checks that `targets` and `--help` load no heavy module.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from ..errors import WmmaGenError

# command name -> module (each module's register() adds exactly that subcommand)
COMMANDS = {"targets": "targets_cmd", "doctor": "doctor", "compile": "compile_cmd", "check": "check_cmd",
            "analyze": "analyze_cmd", "sweep": "sweep_cmd", "export": "export_cmd", "selftest": "selftest_cmd",
            "emu": "emu_cmd",
            "ladder": "ladder_cmd",          # ladders rebuilt from a study storage alone
            "dashboard": "dashboard_cmd",    # optuna-dashboard on a study storage
            "schedules": "schedules_cmd",    # list/show/remove the schedule files the lookup reads
            "bench": "bench_cmd"}            # torch's own op beside the ladder, on a GPU


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The CLI parser; `only`: register just that command (the others are not imported)."""
    p = argparse.ArgumentParser(prog="wmma-gen",
                                description="WMMA kernel generator, emulator and autotuner for AMD RDNA")
    # usage names every command even when only one is registered (the text argparse would print)
    sub = p.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    for name, module in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(f"wmma_gen.cli.{module}").register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    named = argv[0] if argv and argv[0] in COMMANDS else None
    args = parser(named).parse_args(argv)
    try:
        return args.func(args)
    except WmmaGenError as e:
        print(f"wmma-gen {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
