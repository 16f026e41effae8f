"""`wmma-gen check --op attention | attention_bwd`: the registry's check from the CLI."""
import json

import pytest

from wmma_gen.cli.main import main


@pytest.mark.parametrize("op,arch,extra", [
    ("attention", "gfx1201", ["--dtype", "bf16", "--causal", "--heads", "4", "--kv-heads", "2"]),
    ("attention_bwd", "gfx1100", ["--dtype", "f16", "--window", "8,0", "--head-dim", "32"]),
])
def test_attention_ops_pass_on_the_emulator(capsys, op, arch, extra):
    rc = main(["check", "--op", op, "--arch", arch, "--device", "emu", "--json", *extra])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["verdict"] == "PASS" and data["source"] == "emulator"
    assert 0 < data["max_abs"] <= data["tol"]


def test_fail_exits_1(capsys, monkeypatch):
    import wmma_gen.attention_common.check as chk
    real = chk.attention_forward
    monkeypatch.setattr(chk, "attention_forward", lambda *a, **k: tuple(x + 1.0 for x in real(*a, **k)))
    rc = main(["check", "--op", "attention", "--arch", "gfx1100", "--dtype", "f16", "--device", "emu"])
    assert rc == 1 and capsys.readouterr().out.strip().endswith("FAIL")


@pytest.mark.parametrize("args,needle", [
    (["--window", "left"], "window"),
    (["--head-dim", "40"], "head_dim"),
    (["--heads", "3", "--kv-heads", "2"], "kv"),
])
def test_bad_input_exits_2_naming_the_argument(capsys, args, needle):
    rc = main(["check", "--op", "attention", "--arch", "gfx1100", "--dtype", "f16", "--device", "emu", *args])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and "Traceback" not in err


@pytest.mark.parametrize("op", ["attention", "attention_bwd"])
def test_analyze_prints_a_model_estimate_labelled_model(capsys, op):
    rc = main(["analyze", "--op", op, "--arch", "gfx1201", "--dtype", "f16", "--head-dim", "64", "--heads", "8",
               "--kv-heads", "8", "--seq-q", "1024", "--seq-k", "1024", "--causal", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["op"] == op and data["estimate"]["source"] == "model"
    assert 0 < data["estimate"]["tflops"] < 400


def test_compile_op_attention_writes_the_artifacts(tmp_path, capsys):
    from wmma_gen.codeobj.codeobject import load_code_object
    rc = main(["compile", "--op", "attention", "--arch", "gfx1100", "--dtype", "f16", "--head-dim", "64",
               "--causal", "--out", str(tmp_path / "k"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["op"] == "attention" and data["metadata"]["vgpr_spill_count"] == 0
    assert data["v_wmma"] > 0 and data["directive"]["causal"] is True
    from wmma_gen.targets import get_target
    assert load_code_object((tmp_path / "k" / "kernel.hsaco").read_bytes()).mach == get_target("gfx1100").elf_mach
    assert "v_wmma" in (tmp_path / "k" / "kernel.s").read_text()
