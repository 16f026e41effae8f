"""`wmma-gen compile/targets/doctor` through the real entry point."""
import json

from wmma_gen.cli.main import main


def test_compile_writes_four_artifacts(tmp_path, capsys):
    out = tmp_path / "k"
    rc = main(["compile", "--arch", "gfx1151", "--dtype", "bf16", "--shape", "64x64x64", "--out", str(out), "--json"])
    assert rc == 0
    assert sorted(p.name for p in out.iterdir()) == ["kernel.hsaco", "kernel.json", "kernel.mlir", "kernel.s"]
    info = json.loads(capsys.readouterr().out)
    assert info["arch"] == "gfx1151" and info["v_wmma"] > 0
    assert (out / "kernel.hsaco").read_bytes()[:4] == b"\x7fELF"
    assert "amdgpu.wmma" in (out / "kernel.mlir").read_text()


def test_bad_inputs_write_nothing(tmp_path, capsys):
    cases = [
        (["--arch", "gfx906", "--dtype", "f16"], "arch='gfx906' is not allowed"),
        (["--arch", "gfx1100", "--dtype", "fp8"], "fp8/f32 has no WMMA on gfx1100"),
        (["--arch", "gfx1100", "--dtype", "f16", "--block-m", "32", "--waves-m", "4"], "block_m=32 must be a multiple"),
        (["--arch", "gfx1100", "--dtype", "f16", "--shape", "0x16x16"], "shape='0x16x16'"),
        (["--arch", "gfx1100", "--dtype", "f16", "--block-m", "256", "--block-n", "256", "--waves-m", "8",
          "--waves-n", "8"], "2048 threads exceeds 1024"),
    ]
    for extra, needle in cases:
        out = tmp_path / "never"
        rc = main(["compile", *extra, "--out", str(out)])
        err = capsys.readouterr().err
        assert rc == 2 and needle in err, err
        assert not out.exists()


def test_targets_json(capsys):
    assert main(["targets", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["arch"] for r in rows} >= {"gfx1100", "gfx1201"}


def test_doctor_reports_linker(capsys):
    assert main(["doctor", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] and rep["lld"]["version"].startswith("LLD")
    # the emulator's WMMA path: the compiled kernel where a C compiler is found (CI has gcc)
    assert rep["emulator_wmma"].startswith("native (C, loaded ") or rep["emulator_wmma"].startswith("numpy (")
