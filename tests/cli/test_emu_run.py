"""`wmma-gen emu run` (issue 24 item 5): the example its --help prints runs and computes A @ B,
and every bad argument is one clear line with exit 2, before anything runs or is written."""
from __future__ import annotations

import shlex

import numpy as np
import pytest

from wmma_gen.cli import main as cli

SCALARS = "16:i32, 16:i32, 16:i32, 1:i32, 256:i32, 16:i32, 256:i32, 16:i32, 256:i32, 16:i32"
OK = f"f16[256], f16[256], f32[256], {SCALARS}"


def _help() -> str:
    p = cli.parser("emu")
    run = p._subparsers._group_actions[0].choices["emu"]._subparsers._group_actions[0].choices["run"]
    return run.format_help()


def _example_commands(text: str) -> list[list[str]]:
    """The `wmma-gen ...` commands of the help's example (backslash continuations joined)."""
    body = text.split("example", 1)[1].replace("\\\n", " ")
    return [shlex.split(line.strip())[1:] for line in body.splitlines() if line.strip().startswith("wmma-gen ")]


def _run(argv, capsys) -> tuple[int, str]:
    try:
        rc = cli.main(argv)
    except SystemExit as e:     # argparse: exit 2 after the usage and the error
        rc = e.code
    c = capsys.readouterr()
    return rc, c.err + c.out


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    """The help's own example: compile, then its emu run (the example is the fixture)."""
    import contextlib
    import io
    import os
    d = tmp_path_factory.mktemp("emu_example")
    compile_argv, run_argv = _example_commands(_help())
    cwd = os.getcwd()
    os.chdir(d)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            assert cli.main(compile_argv) == 0
            assert cli.main(run_argv) == 0
    finally:
        os.chdir(cwd)
    return d


def test_help_states_the_args_grammar():
    text = _help()
    for part in ("DTYPE[N]=INIT", "VALUE:DTYPE", "@FILE.npy", "zeros | ones | range", "example"):
        assert part in text


def test_the_help_example_computes_a_at_b(kernel):
    a, b, c = (np.load(kernel / "out" / f"arg{i}.npy") for i in range(3))
    assert c.dtype == np.float32 and a.dtype == np.float16
    ref = a.astype(np.float64).reshape(16, 16) @ b.astype(np.float64).reshape(16, 16)
    np.testing.assert_allclose(c.reshape(16, 16), ref, atol=1e-5)


def _patched(kernel, name: str, offset: int, value: bytes):
    data = bytearray((kernel / "k16" / "kernel.hsaco").read_bytes())
    data[offset:offset + len(value)] = value
    path = kernel / name
    path.write_bytes(bytes(data))
    return str(path)


CASES = [   # (id, extra argv, --args, text the one-line error holds)
    ("block-over-1024", ["--block", "2048"], OK, "--block='2048' is not allowed: at most 1024 work-items"),
    ("block-not-reqd", ["--block", "64"], OK, "32,1,1: kernel wmma_gemm requires that workgroup size"),
    ("block-zero", ["--block", "0"], OK, "--block='0' is not allowed"),
    ("grid-four-dims", ["--grid", "1,1,1,1"], OK, "--grid='1,1,1,1' is not allowed"),
    ("lds-negative", ["--lds-dynamic", "-1"], OK, "argument --lds-dynamic: -1 is out of range"),
    ("lds-beyond-target", ["--lds-dynamic", "1000000000"], OK,
     "--lds-dynamic=1000000000 is not allowed: at most 62464 bytes: gfx1100 has 65536 bytes of LDS"),
    ("arch-other", ["--arch", "gfx1201"], OK, "--arch='gfx1201' is not allowed: gfx1100, the target"),
    ("f64-npy-for-f16", [], f"f16[256]=@f64.npy, f16[256], f32[256], {SCALARS}",
     "a .npy of dtype float16 (f16); it holds float64"),
    ("npy-wrong-length", [], f"f16[128]=@f16.npy, f16[256], f32[256], {SCALARS}",
     "a file of 128 elements (it holds 256)"),
    ("npy-missing", [], f"f16[256]=@nope.npy, f16[256], f32[256], {SCALARS}", "a readable .npy file"),
    ("too-few-args", [], "f16[256], f16[256]", "13 items, one per explicit kernel argument"),
    ("scalar-for-buffer", [], f"f16[256], 3:i32, f32[256], {SCALARS}", "kernel argument 1 is global_buffer"),
    ("buffer-for-scalar", [], "f16[256], f16[256], f32[256], i32[4]" + SCALARS[6:],
     "a 4-byte scalar VALUE:DTYPE: kernel argument 3 is by_value"),
    ("scalar-size", [], "f16[256], f16[256], f32[256], 16:i64" + SCALARS[6:], "a 4-byte scalar (kernel argument 3)"),
    ("scalar-range", [], "f16[256], f16[256], f32[256], 99999999999:i32" + SCALARS[6:], "VALUE in [-2147483648"),
    ("buffer-budget", [], f"f16[256], f16[256], f32[9999999999999], {SCALARS}", "buffers of at most 4 GiB"),
    ("dtype-unknown", [], f"f99[256], f16[256], f32[256], {SCALARS}", "a dtype among i8"),
    ("seed-negative", ["--seed", "-1"], OK, "argument --seed: -1 is out of range"),
    ("out-in-proc", ["--out", "/proc/wmma_gen_out"], OK, "argument --out: '/proc/wmma_gen_out' cannot be written"),
    ("kernel-unknown", ["--kernel", "nope"], OK, "kernel 'nope' not in the code object"),
]


@pytest.mark.parametrize("extra, spec, needle", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_argument_is_one_line_exit_2(kernel, capsys, monkeypatch, extra, spec, needle):
    monkeypatch.chdir(kernel)
    np.save(kernel / "f64.npy", np.zeros(256))
    np.save(kernel / "f16.npy", np.zeros(256, np.float16))
    before = sorted(p.name for p in kernel.rglob("*"))
    rc, text = _run(["emu", "run", "k16/kernel.hsaco", "--args", spec] + extra, capsys)
    assert rc == 2, text
    assert needle in text and "Traceback" not in text
    assert text.strip().splitlines()[-1].startswith("wmma-gen emu"), text
    assert sorted(p.name for p in kernel.rglob("*")) == before


@pytest.mark.parametrize("what, offset, value, needle", [
    ("gfx90a e_flags", 48, bytes([0x3F]), "EF_AMDGPU_MACH 0x3f (gfx90a)"),
    ("gfx1201 e_flags", 48, bytes([0x4E]), "EF_AMDGPU_MACH 0x4e (gfx1201)"),
    ("x86-64 e_machine", 18, (62).to_bytes(2, "little"), "ELF e_machine=62 is not allowed"),
])
def test_an_elf_for_another_target_is_refused(kernel, capsys, what, offset, value, needle):
    path = _patched(kernel, f"patched_{offset}_{value.hex()}.hsaco", offset, value)
    rc, text = _run(["emu", "run", path, "--args", OK], capsys)
    assert rc == 2 and needle in text and "Traceback" not in text, text
