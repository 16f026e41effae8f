"""The per-op option model of check/compile/analyze/sweep (issue 24 item 3): which flags an op
takes is derived from the registry (the op's directive class) and its SPACE table, so every
knob of every op is a flag its op accepts and every other op refuses."""
from __future__ import annotations

import json

import pytest

from wmma_gen.cli import main as cli
from wmma_gen.cli.op_options import op_spec
from wmma_gen.errors import ScheduleError
from wmma_gen.ops import registry

COMMANDS = ("check", "analyze", "compile")


def _parse(command: str, argv: list[str]):
    base = [command, "--arch", "gfx1100", "--dtype", "f16"] + (["--out", "k"] if command == "compile" else [])
    return cli.parser(command).parse_args(base + argv)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _ops(command: str) -> tuple:
    return ("gemm", "attention") if command == "compile" else registry.NAMES


@pytest.mark.parametrize("command", COMMANDS)
def test_every_knob_is_a_flag_of_its_op_and_refused_by_the_others(command):
    ops = _ops(command)
    spaces = {op: {k.name: k for k in registry.get(op).space} for op in ops}
    for op in ops:
        for name, knob in spaces[op].items():
            args = _parse(command, ["--op", op, _flag(name), str(knob.domain[-1])])
            assert op_spec(args).name == op
        for other in ops:
            for name, knob in spaces[other].items():
                if name in spaces[op]:
                    continue
                args = _parse(command, ["--op", op, _flag(name), str(knob.domain[0])])
                with pytest.raises(ScheduleError, match=rf"^{_flag(name)} does not apply to --op {op}; "
                                                        rf"--op {op} takes "):
                    op_spec(args)


@pytest.mark.parametrize("command", COMMANDS)
def test_the_error_lists_exactly_the_flags_the_op_takes(command):
    for op in _ops(command):
        spec = registry.get(op)
        stranger = "--causal" if spec.directive.__name__ == "GemmDirective" else "--shape"
        args = _parse(command, ["--op", op] + ([stranger] if stranger == "--causal" else [stranger, "64"]))
        with pytest.raises(ScheduleError) as e:
            op_spec(args)
        listed = str(e.value).split(" takes ")[1].split(" (besides")[0].split(", ")
        knobs = [_flag(k.name) for k in spec.space]
        assert set(knobs) <= set(listed) and "--schedule-json" in listed
        assert stranger not in listed
        other = "--head-dim" if spec.directive.__name__ == "GemmDirective" else "--layout"
        assert other not in listed


def test_a_knob_value_is_checked_against_the_op_own_domain():
    """block_m exists in every op with a different domain: 128 is legal for gemm and attention,
    not for attention_bwd's dK/dV kernel (16, 32, 64)."""
    for op, ok in (("gemm", True), ("attention", True), ("attention_bwd", False)):
        args = _parse("analyze", ["--op", op, "--block-m", "128"])
        spec = op_spec(args)
        from wmma_gen.cli.op_options import schedule_for
        base = spec.schedule()
        if ok:
            assert schedule_for(args, spec, base).block_m == 128
        else:
            with pytest.raises(ScheduleError, match=r"^--block-m=128 is not allowed: one of 16, 32, 64 for "
                                                    r"--op attention_bwd"):
                schedule_for(args, spec, base)


def test_common_and_default_valued_flags_pass():
    """Flags not given are not "given": defaults never trip the check, and shared flags apply to all."""
    for op in registry.NAMES:
        args = _parse("check", ["--op", op, "--batch", "2", "--seed", "3", "--json"])
        assert op_spec(args).name == op


def test_check_json_with_nan_alpha_is_valid_json(capsys):
    rc = cli.main(["check", "--arch", "gfx1100", "--dtype", "f16", "--shape", "16", "--device", "emu",
                   "--json", "--alpha", "nan"])
    out = capsys.readouterr().out
    doc = json.loads(out)                 # NaN/Infinity would not parse as strict JSON here
    json.loads(out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert rc in (0, 1) and doc["directive"]["alpha"] == "nan"


def test_attention_check_uses_the_knob_flags(capsys):
    rc = cli.main(["check", "--arch", "gfx1100", "--dtype", "f16", "--op", "attention", "--device", "emu",
                   "--seq-q", "20", "--seq-k", "24", "--heads", "1", "--block-m", "16", "--block-n", "16",
                   "--waves", "1", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["verdict"] == "PASS"
    assert (doc["schedule"]["block_m"], doc["schedule"]["block_n"], doc["schedule"]["waves"]) == (16, 16, 1)


def test_attention_check_with_no_keys(capsys):
    """Sk = 0: every query sees no key (O = 0, LSE = -inf), as the API defines it."""
    rc = cli.main(["check", "--arch", "gfx1100", "--dtype", "f16", "--op", "attention", "--device", "emu",
                   "--seq-q", "16", "--seq-k", "0", "--heads", "1"])
    text = capsys.readouterr()
    assert rc == 0 and "PASS" in text.out, text.err
