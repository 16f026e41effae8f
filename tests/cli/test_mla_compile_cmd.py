"""`wmma-gen compile --op mla` through the real entry point: both kernels of the op (the decode
kernel as kernel.*, its split-KV combine as combine.*), the same code objects the API runs, and
a refused schedule writes nothing."""
import hashlib
import json

from wmma_gen.cli.main import main


def test_writes_the_decode_kernel_and_its_combine(tmp_path, capsys):
    out = tmp_path / "mla"
    rc = main(["compile", "--op", "mla", "--arch", "gfx1201", "--dtype", "bf16", "--split-kv", "2", "--out", str(out),
               "--json"])
    assert rc == 0
    assert sorted(p.name for p in out.iterdir()) == ["combine.hsaco", "combine.mlir", "combine.s", "kernel.hsaco",
                                                     "kernel.json", "kernel.mlir", "kernel.s"]
    info = json.loads(capsys.readouterr().out)
    assert info == json.loads((out / "kernel.json").read_text())
    assert info["schedule"]["split_kv"] == 2 and info["v_wmma"] > 0
    comb = info["then"]["combine"]
    assert comb["kernel"] == info["kernel"] + "_combine" and comb["block"] == [256, 1, 1]
    # the artifacts are the objects a call runs (ops/mla/api.compile_mla: the one compile path)
    from wmma_gen.ops.mla.api import compile_mla
    from wmma_gen.ops.mla.directive import MLADirective
    from wmma_gen.ops.mla.schedule import MLASchedule
    k = compile_mla(MLADirective("bf16"), MLASchedule(split_kv=2), "gfx1201")
    for role, name in (("mla", "kernel"), ("combine", "combine")):
        hsaco = (out / f"{name}.hsaco").read_bytes()
        assert hsaco == k[role][1].hsaco and hsaco[:4] == b"\x7fELF"
        assert (out / f"{name}.s").read_text() == k[role][1].isa
    assert hashlib.sha256((out / "combine.hsaco").read_bytes()).hexdigest() == comb["hsaco_sha256"]
    assert "amdgpu.wmma" in (out / "kernel.mlir").read_text()
    assert "amdgpu.wmma" not in (out / "combine.mlir").read_text()


def test_a_refused_schedule_writes_nothing(tmp_path, capsys):
    out = tmp_path / "never"
    rc = main(["compile", "--op", "mla", "--arch", "gfx1100", "--dtype", "f16", "--fp8-wmma", "True",
               "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "fp8 latent cache" in err, err
    assert not out.exists()
