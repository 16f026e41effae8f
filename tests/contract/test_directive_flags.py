"""Directive flags come from the op (issue 39 item 1): a registered op whose directive declares a
field with `option(...)` gets that flag in check/compile/analyze -- its help, type, choices and
default -- with no edit under wmma_gen/cli/; other ops refuse it, and two ops reading one flag
differently are refused when the parser is built."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from wmma_gen.cli import main as cli
from wmma_gen.cli import op_generic
from wmma_gen.cli.op_options import op_spec
from wmma_gen.errors import ScheduleError
from wmma_gen.ops import registry
from wmma_gen.ops.contract import option


@dataclass(frozen=True)
class ScaledDirective:
    """The dummy op's directive with new fields: a required one, a valued one, a switch."""
    width: int = option(help="lanes per row (no default: must be given)", choices=(4, 8))
    dtype: str = option("f16", "input dtype", choices=("f16",))
    offset: int = option(1, "the constant added to 2 x")
    negate: bool = option(False, "negate the result")


@dataclass(frozen=True)
class SwitchDirective:
    dtype: str = "f16"
    offset: bool = option(False, "a switch named like ScaledDirective's valued flag")


def _register(name: str, directive: type) -> None:
    from dummy_op.spec import spec as dummy_spec
    registry.register(name, lambda: dataclasses.replace(dummy_spec(), name=name, directive=directive))


@pytest.fixture
def scaled():
    _register("scaled", ScaledDirective)
    yield
    registry.unregister("scaled")


def _parse(*argv: str):
    return cli.parser("check").parse_args(["check", "--arch", "gfx1100", "--dtype", "f16", *argv])


def test_a_new_directive_field_is_a_flag_of_its_op(scaled, capsys):
    with pytest.raises(SystemExit):
        cli.parser("check").parse_args(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "scaled (--op scaled):" in text
    assert "--offset OFFSET the constant added to 2 x (default 1)" in text
    assert "--negate negate the result" in text and "--width {4,8}" in text
    args = _parse("--op", "scaled", "--width", "8", "--offset", "3", "--negate", "--length", "50")
    spec = op_spec(args)
    assert op_generic.directive_of(args, spec) == ScaledDirective(width=8, dtype="f16", offset=3, negate=True)
    assert op_generic.problem_of(args, spec).n == 50
    args = _parse("--op", "scaled", "--width", "4")          # the others take the field's default
    assert op_generic.directive_of(args, op_spec(args)) == ScaledDirective(width=4)


def test_the_new_flag_is_refused_by_other_ops_and_checked(scaled, capsys):
    with pytest.raises(ScheduleError, match=r"^--offset does not apply to --op gemm; --op gemm takes --shape"):
        op_spec(_parse("--op", "gemm", "--offset", "3"))
    with pytest.raises(ScheduleError) as e:
        op_spec(_parse("--op", "scaled", "--shape", "64"))
    takes = str(e.value).split(" takes ")[1].split(" (besides")[0].split(", ")
    assert {"--width", "--offset", "--negate", "--length", "--block"} <= set(takes) and "--shape" not in takes
    with pytest.raises(ScheduleError, match=r"^--width=None is not allowed: a value for --op scaled \(lanes per row"):
        args = _parse("--op", "scaled")
        op_generic.directive_of(args, op_spec(args))
    with pytest.raises(SystemExit):
        _parse("--op", "scaled", "--width", "5")
    assert "argument --width: invalid choice: 5" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _parse("--op", "scaled", "--width", "4", "--offset", "two")
    assert "argument --offset: invalid int value: 'two'" in capsys.readouterr().err


def test_two_ops_reading_one_flag_differently_are_refused(scaled):
    _register("switch", SwitchDirective)
    try:
        with pytest.raises(ValueError, match=r"flag --offset .* one reading per flag"):
            cli.parser("check")
    finally:
        registry.unregister("switch")
