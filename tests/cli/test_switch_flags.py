"""A directive switch that an op defaults on can be turned off (--no-NAME): paged_attention's
--causal is on unless --no-causal is given; the flag reaches the directive the command builds."""
from __future__ import annotations

import dataclasses

import pytest

from wmma_gen.cli import main as cli
from wmma_gen.cli.op_generic import directive_of
from wmma_gen.cli.op_options import flag_of, op_spec
from wmma_gen.errors import ScheduleError
from wmma_gen.ops import registry
from wmma_gen.ops.contract import flags_of


def _directive(command: str, argv: list[str]):
    base = [command, "--arch", "gfx1100", "--dtype", "f16"] + (["--out", "k"] if command == "compile" else [])
    args = cli.parser(command).parse_args(base + argv)
    return directive_of(args, op_spec(args))


@pytest.mark.parametrize("command", ("compile", "check", "analyze"))
def test_paged_attention_causal_is_on_by_default_and_no_causal_turns_it_off(command):
    assert _directive(command, ["--op", "paged_attention"]).causal is True
    assert _directive(command, ["--op", "paged_attention", "--causal"]).causal is True
    assert _directive(command, ["--op", "paged_attention", "--no-causal"]).causal is False


def test_every_switch_an_op_defaults_on_has_a_no_flag():
    """Every bool directive field of every op whose default is True: --no-NAME gives False."""
    on = [(op, f, fl) for op in registry.NAMES for f, fl in flags_of(registry.directive_of(op))
          if f.type in (bool, "bool") and fl.value is None and not fl.raw
          and (fl.cli_default if fl.cli_default is not dataclasses.MISSING else f.default) is True]
    assert on, "no op defaults a switch on: the test checks nothing"
    for op, f, fl in on:
        flag = flag_of(f, fl)
        assert getattr(_directive("check", ["--op", op]), f.name) is True
        assert getattr(_directive("check", ["--op", op, "--no-" + flag[2:]]), f.name) is False


def test_no_causal_is_refused_by_an_op_without_the_field_naming_the_flag_given():
    with pytest.raises(ScheduleError, match=r"^--no-causal does not apply to --op gemm"):
        _directive("check", ["--op", "gemm", "--no-causal"])


def test_a_switch_every_op_defaults_off_has_no_no_flag():
    with pytest.raises(SystemExit):
        cli.parser("check").parse_args(["check", "--dtype", "i8", "--op", "gemm", "--no-unsigned"])
