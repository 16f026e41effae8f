"""`wmma-gen selftest`: every op/dtype row passes on the emulator (gfx1100, gfx1201), a wrong
reference or a failing row gives FAIL and exit 1, and `--device hip` through the emulator-backed
HIP runtime (tests/hipstub, in a subprocess so exactly one stub is loaded) labels every result
`stub`, never `hip`, and reports no time."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wmma_gen.cli.main import main

TESTS = Path(__file__).resolve().parents[1]
ATTENTION_ROWS = [("attention", "f16"), ("attention", "bf16"), ("attention_bwd", "f16"), ("attention_bwd", "bf16"),
                  ("paged_attention", "f16"), ("paged_attention", "bf16"), ("mla", "f16"), ("mla", "bf16")]
EXPECTED = {   # gemm: f16, bf16, i8, and fp8 where the target has it (gfx12)
    "gfx1100": [("gemm", "f16"), ("gemm", "bf16"), ("gemm", "i8")] + ATTENTION_ROWS,
    "gfx1201": [("gemm", "f16"), ("gemm", "bf16"), ("gemm", "i8"), ("gemm", "fp8")] + ATTENTION_ROWS,
}


@pytest.mark.parametrize("arch", sorted(EXPECTED))
def test_every_row_passes_on_the_emulator(arch, capsys):
    rc = main(["selftest", "--device", "emu", "--arch", arch, "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0, rep
    assert [(r["op"], r["dtype"]) for r in rep["rows"]] == EXPECTED[arch]
    assert all(r["passed"] and r["source"] == "emulator" for r in rep["rows"]), rep["rows"]
    assert rep["arch"] == arch and rep["failed"] == 0 and rep["timing"] is None and rep["untested_ops"] == []


def test_without_a_gpu_it_says_so_and_prints_no_time(capsys):
    from wmma_gen.device.hip import real_gpu_visible
    if real_gpu_visible():
        pytest.skip("a GPU is visible: auto runs on it")
    assert main(["selftest", "--op", "gemm"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("wmma-gen selftest: gfx1100 on the emulator: no GPU visible")
    assert [ln.split()[:6] for ln in lines[2:5]] == [["gemm", dt, "m=48", "n=40", "k=72", "batch=1"]
                                                     for dt in ("f16", "bf16", "i8")]
    assert "(tol exact)" in lines[4] and "max rel" in lines[2]
    assert all(" PASS   emulator " in ln for ln in lines[2:5])
    assert "timing  none: no GPU used" in out and "TFLOP/s" not in out and " ms" not in out
    assert lines[-1].startswith("PASS: 3 kernels checked")


def test_a_wrong_reference_fails_its_row_and_exits_1(monkeypatch, capsys):
    from wmma_gen.ops.gemm import check
    right = check.gemm_reference

    def wrong_for_f16(d, *args, **kwargs):
        ref = right(d, *args, **kwargs)
        return ref + 1.0 if d.dtype == "f16" else ref
    monkeypatch.setattr(check, "gemm_reference", wrong_for_f16)
    rc = main(["selftest", "--device", "emu", "--arch", "gfx1100", "--op", "gemm"])
    out = capsys.readouterr().out
    rows = {ln.split()[1]: ln for ln in out.splitlines() if ln.startswith("  gemm ")}
    assert rc == 1
    assert " FAIL " in rows["f16"] and " PASS " in rows["bf16"] and " PASS " in rows["i8"]
    assert out.splitlines()[-1].startswith("FAIL (1 of 3 failed)")


def test_a_row_that_raises_is_a_fail_with_its_error_and_the_rest_still_run(monkeypatch, capsys):
    from wmma_gen.cli import selftest_cmd
    from wmma_gen.errors import CompileError

    right = selftest_cmd._spec_check

    def broken(spec, d, p, arch, device):
        if spec.name != "attention":
            return right(spec, d, p, arch, device)
        raise CompileError(f"pass failed for {spec.name} {d.dtype}\nmore diagnostics")
    monkeypatch.setattr(selftest_cmd, "_spec_check", broken)
    rc = main(["selftest", "--device", "emu", "--arch", "gfx1100", "--op", "gemm", "--op", "attention", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 1 and rep["failed"] == 2
    att = [r for r in rep["rows"] if r["op"] == "attention"]
    assert [r["error"] for r in att] == [f"CompileError: pass failed for attention {dt}" for dt in ("f16", "bf16")]
    assert all(r["passed"] for r in rep["rows"] if r["op"] == "gemm")


@pytest.mark.parametrize("argv, needle", [
    (["--arch", "gfx906"], "argument --arch: 'gfx906' is not a known target"),
    (["--device", "gpu"], "argument --device: invalid choice: 'gpu'"),
    (["--op", "conv"], "argument --op: invalid choice: 'conv'"),
])
def test_usage_errors_exit_2(argv, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(["selftest", *argv])
    assert e.value.code == 2 and needle in capsys.readouterr().err


def _python(code: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout,
                          check=False)


def test_device_hip_without_a_hip_runtime_is_one_line_and_exit_2():
    done = _python("import sys; from wmma_gen.cli.main import main; sys.exit(main(['selftest', '--device', 'hip']))")
    if done.returncode == 0:
        pytest.skip("a HIP device is visible here")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("wmma-gen selftest: error: ") and "device=hip is not available" in done.stderr \
        or "hip-python is not installed: pip install" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def stub_so(tmp_path_factory):
    """The emulator-backed libamdhip64.so, built as tests/hip_lane/conftest.py builds it."""
    pytest.importorskip("hip", reason="hip-python is not installed: pip install 'wmma-gen[hip]'")
    sys.path.insert(0, str(TESTS))
    from hipstub import build, find_c_compiler
    cc, why = find_c_compiler()
    if cc is None:
        pytest.skip(f"the emulator-backed HIP stub cannot be built: {why}")
    return build(tmp_path_factory.mktemp("hipstub"), cc)


THROUGH_STUB = """
import contextlib, io, json, sys
from pathlib import Path
from hipstub import EmuHipRuntime, StubLibrary
lib = StubLibrary(Path({so!r}))
runtime = EmuHipRuntime("gfx1100")
lib.install(runtime)
ok, why = lib.connected()
if not ok:
    print(json.dumps({{"skip": why}}))
    sys.exit(0)
from wmma_gen.cli.main import main
from wmma_gen.cli import selftest_cmd
from wmma_gen.device.hip import HipDevice, TimingProtocol
out = {{}}
for name, argv in (("json", ["--json"]), ("text", ["--op", "gemm"])):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out[name + "_rc"] = main(["selftest", "--device", "hip", *argv])
    out[name] = buf.getvalue()
dev = HipDevice()
# the GPU timing path, run through the stub on a tiny reference (no GPU: never reported as a time)
timing = selftest_cmd.time_reference(dev, dev.arch, reference=("f16", 64, 64, 64),
                                     protocol=TimingProtocol(warmup=1, repeats=2, min_pair_ms=0.25),
                                     cache_bytes=1 << 16)
out["timing"], out["timing_text"] = timing, selftest_cmd.timing_text(timing)
out["launches"], out["crashes"] = len(runtime.launches), runtime.crashes
print(json.dumps(out))
"""


def test_device_hip_through_the_stub_is_labelled_stub_never_hip(stub_so):
    done = _python(THROUGH_STUB.format(so=str(stub_so)))
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.splitlines()[-1])
    if "skip" in out:
        pytest.skip(out["skip"])
    assert out["crashes"] == []
    rep = json.loads(out["json"])
    assert out["json_rc"] == 0 and rep["failed"] == 0
    assert [(r["op"], r["dtype"]) for r in rep["rows"]] == EXPECTED["gfx1100"]
    assert {r["source"] for r in rep["rows"]} == {"stub"} and rep["source"] == "stub"
    assert "[emulator-backed]" in rep["device"] and "not a GPU" in rep["device"] and rep["timing"] is None
    text = out["text"]
    assert out["text_rc"] == 0 and " hip " not in text and "TFLOP/s" not in text
    assert all(" PASS   stub " in ln for ln in text.splitlines() if ln.startswith("  gemm "))
    assert "timing  none: no GPU (the HIP device is emulator-backed; its event clock is fake)" in text
    # the timing protocol itself ran (gate + warm-up + repeats on 3 rotated sets) but is no measurement
    t = out["timing"]
    assert t["passed"] and t["source"] == "stub" and t["buffer_sets"] == 3 and t["rotation_bytes"] > 1 << 16
    assert "not a measurement" in t["note"]
    assert out["timing_text"].startswith("timing  gemm f16 NN 64x64x64: not reported")
    assert out["launches"] >= 1 + 2 * t["launches_per_pair"]


def test_on_a_gpu_the_reference_gemm_is_timed_and_reported_with_its_protocol(monkeypatch, capsys):
    """The wiring of run() when the device is a GPU (here faked: the rows and the timer are
    stand-ins); time_reference itself runs through the stub above."""
    from wmma_gen.cli import selftest_cmd
    figures = {"problem": "gemm f16 NN 2048x2048x2048", "passed": True, "source": "hip", "median_ms": 0.25,
               "min_ms": 0.24, "tflops": 68.7, "peak_tflops": 122.9, "note": "GPU time between hipEvents",
               "protocol": {"warmup": 5, "min_pair_ms": 1.0, "repeats": 7, "max_launches": 10000},
               "launches_per_pair": 4, "buffer_sets": 4, "rotation_bytes": 128 << 20, "cache_bytes": 102 << 20}
    monkeypatch.setattr(selftest_cmd, "source_of", lambda device: "hip")
    one_row = lambda op: (lambda arch, dev: [("gemm", "f16", "tiny", lambda: (True, "ok"))]) if op == "gemm" else None
    monkeypatch.setattr(selftest_cmd, "cases", one_row)
    monkeypatch.setattr(selftest_cmd, "time_reference", lambda device, arch: figures)
    assert main(["selftest", "--device", "emu", "--arch", "gfx1100"]) == 0
    out = capsys.readouterr().out
    assert ("timing  gemm f16 NN 2048x2048x2048: median 0.250 ms = 68.7 TFLOP/s (56% of the 122.9 peak), "
            "min 0.240 ms") in out
    assert "5 warm-up launches, 4 launches per event pair x 7 repeats, 4 operand sets (128 MiB > 102 MiB" in out
    monkeypatch.setattr(selftest_cmd, "time_reference", lambda device, arch: {**figures, "passed": False,
                                                                             "error": "gate 128x128x64: max rel 1"})
    assert main(["selftest", "--device", "emu", "--arch", "gfx1100"]) == 1
    assert "timing  gemm f16 NN 2048x2048x2048: FAIL (gate 128x128x64: max rel 1)" in capsys.readouterr().out
