"""Commands that compile nothing start without the heavy imports: building the CLI parser and
running `targets`, `--help` or any subcommand's `--help` loads neither the MLIR bindings nor
matplotlib nor optuna (each costs ~0.7-1.1 s; issue #14). Checked in a fresh interpreter."""
import json
import subprocess
import sys

import pytest

HEAVY = ("mlir", "matplotlib", "optuna")
PROBE = """
import contextlib, io, json, sys
from wmma_gen.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main({argv!r})
    except SystemExit as e:
        code = e.code
print(json.dumps({{"code": code, "heavy": sorted(m for m in {heavy!r} if m in sys.modules)}}))
"""


@pytest.mark.parametrize("argv", [["targets"], ["targets", "--json"], ["--help"], ["export", "--help"],
                                  ["selftest", "--help"], ["sweep", "--help"], ["check", "--help"]],
                         ids=" ".join)
def test_command_imports_no_heavy_module(argv):
    done = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv, heavy=HEAVY)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["code"] in (0, None) and out["heavy"] == [], out


def test_command_map_names_what_each_module_registers():
    """main.COMMANDS lets `wmma-gen NAME` import one module: each must register exactly NAME."""
    from wmma_gen.cli import main as cli
    for name, module in cli.COMMANDS.items():
        sub = cli.parser(name)._subparsers._group_actions[0]
        assert list(sub.choices) == [name], (module, list(sub.choices))
    full = cli.parser()._subparsers._group_actions[0]
    assert {"targets", "doctor", "compile", "check", "analyze", "sweep", "export", "selftest"} <= set(full.choices)


def test_targets_starts_without_numpy_or_the_device_layer():
    """`wmma-gen targets` imports only its own command module (numpy costs ~0.1-0.3 s here)."""
    done = subprocess.run([sys.executable, "-c", PROBE.format(argv=["targets"], heavy=("numpy", "wmma_gen.device",
                                                                                      "wmma_gen.cli.check_cmd"))],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"code": 0, "heavy": []}
