"""`wmma-gen check`: PASS exits 0, FAIL exits 1, errors exit 2 with the reason."""
import json

import pytest

import wmma_gen.ops.gemm.check
from wmma_gen.cli.main import main
from wmma_gen.device import hip_status


def test_pass_prints_errors_tolerance_and_verdict(capsys):
    rc = main(["check", "--op", "gemm", "--arch", "gfx1100", "--dtype", "f16", "--shape", "32x48x40",
               "--device", "emu", "--seed", "3"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "max abs error" in out and "max rel error" in out and "tolerance" in out
    assert out.strip().endswith("PASS") and "emulator wall time" in out


def test_json_and_schedule_options(capsys):
    rc = main(["check", "--arch", "gfx1100", "--dtype", "i4", "--shape", "32x32x64", "--layout", "NT",
               "--device", "emu", "--block-m", "32", "--waves-m", "1", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["verdict"] == "PASS" and data["max_abs"] == 0.0 and data["tol"] == 0.0
    assert data["schedule"]["block_m"] == 32 and data["source"] == "emulator" and data["seed"] == 0


def test_fail_exits_1(capsys, monkeypatch):
    real = wmma_gen.ops.gemm.check.gemm_reference
    monkeypatch.setattr(wmma_gen.ops.gemm.check, "gemm_reference", lambda *a, **k: real(*a, **k) + 1.0)
    rc = main(["check", "--arch", "gfx1100", "--dtype", "f16", "--shape", "16x16x16", "--device", "emu"])
    out = capsys.readouterr().out
    assert rc == 1 and "FAIL" in out and "worst element" in out


@pytest.mark.parametrize("argv, text", [
    (["--dtype", "f16"], "shape"),
    (["--dtype", "f64", "--shape", "16"], "dtype"),
    (["--dtype", "f16", "--shape", "16", "--block-m", "48"], "--block-m=48 is not allowed: one of 16, 32"),
])
def test_bad_input_exits_2_with_reason(capsys, argv, text):
    try:
        rc = main(["check", "--arch", "gfx1100", "--device", "emu"] + argv)
    except SystemExit as e:     # argparse rejects before run()
        rc = e.code
    assert rc == 2 and text in capsys.readouterr().err


@pytest.mark.skipif(hip_status()[0], reason="a GPU is visible here")
def test_hip_without_gpu_says_why(capsys):
    rc = main(["check", "--arch", "gfx1100", "--dtype", "f16", "--shape", "16", "--device", "hip"])
    assert rc == 2 and "device=hip is not available" in capsys.readouterr().err
