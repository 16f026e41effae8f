"""Writes docs/cli.md from the real `wmma-gen` parser (issue 39): every command's usage and help.

    python -m wmma_gen.cli.docs            # rewrite docs/cli.md
    python -m wmma_gen.cli.docs --check    # exit 1 when docs/cli.md differs from the parser

tests/cli/test_cli_docs.py regenerates the text in memory and compares it with the committed file,
so a flag added to a command without regenerating fails the suite. The help is formatted at a fixed
width (WIDTH columns) so the text does not depend on the terminal it was generated in.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

WIDTH = 100
DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"

HEADER = """# `wmma-gen` command reference

Generated from the argparse parser by `python -m wmma_gen.cli.docs`; do not edit by hand
(tests/cli/test_cli_docs.py fails when this file and the parser differ). Run
`wmma-gen COMMAND --help` for the same text in a terminal.
"""


def _commands(p: argparse.ArgumentParser, summary: str = "") -> list[tuple[argparse.ArgumentParser, str]]:
    """(parser, one-line help) for the parser and every subcommand below it, depth first, each once
    (aliases share one parser)."""
    out, seen = [(p, summary)], set()
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sp in action.choices.items():
                if id(sp) not in seen:
                    seen.add(id(sp))
                    out.extend(_commands(sp, helps.get(name, "")))
    return out


def render() -> str:
    """docs/cli.md's text, built from wmma_gen.cli.main.parser() at WIDTH columns."""
    from .main import parser
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)      # argparse's HelpFormatter sizes itself from COLUMNS
    try:
        parts = [HEADER]
        cmds = _commands(parser())
        parts.append("## Commands\n\n" + "\n".join(
            f"- [`{c.prog}`](#{c.prog.replace(' ', '-')}): {h}" for c, h in cmds[1:]) + "\n")
        for c, h in cmds:
            parts.append(f"<a id=\"{c.prog.replace(' ', '-')}\"></a>\n## `{c.prog}`\n\n"
                         + (f"{h}\n\n" if h else "")
                         + f"```text\n{c.format_help().rstrip()}\n```\n")
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m wmma_gen.cli.docs", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with docs/cli.md instead of writing it")
    ap.add_argument("--out", type=Path, default=DOC, help="file to write (default: docs/cli.md)")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        same = args.out.is_file() and args.out.read_text() == text
        print(f"{args.out}: {'in sync' if same else 'differs from the parser; run python -m wmma_gen.cli.docs'}")
        return 0 if same else 1
    args.out.write_text(text)
    print(f"wrote {args.out} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
