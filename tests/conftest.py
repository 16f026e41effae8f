"""Shared fixtures: an isolated kernel cache, user dirs and tmp dir per test session, and the
emulator-backed HIP stand-in (tests/hipstub) built once per session for every test folder."""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))   # tests/ -> `import hipstub`


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    # Cache location only; compiled bytes never depend on it.
    d = tmp_path_factory.mktemp("kernel_cache")
    old = os.environ.get("WMMA_GEN_CACHE_DIR")
    os.environ["WMMA_GEN_CACHE_DIR"] = str(d)
    yield d
    if old is None:
        os.environ.pop("WMMA_GEN_CACHE_DIR", None)
    else:
        os.environ["WMMA_GEN_CACHE_DIR"] = old


@pytest.fixture(scope="session", autouse=True)
def _isolated_user_dirs(tmp_path_factory):
    # The schedule lookup reads $WMMA_GEN_SCHEDULES and the user data dir before the shipped
    # files, and export/sweep write to the user data dir by default: point both at a session
    # tmp dir so a user's own exported schedules never change a test, and tests write nothing
    # outside pytest's tmp dirs (issue 24 item 7). WMMA_GEN_LOG is cleared for the same reason.
    d = tmp_path_factory.mktemp("xdg_data")
    saved = {k: os.environ.get(k) for k in ("XDG_DATA_HOME", "WMMA_GEN_SCHEDULES", "WMMA_GEN_LOG")}
    os.environ["XDG_DATA_HOME"] = str(d)
    os.environ.pop("WMMA_GEN_SCHEDULES", None)
    os.environ.pop("WMMA_GEN_LOG", None)
    yield d
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session", autouse=True)
def _isolated_tmp(tmp_path_factory):
    # Issue 24 item 7: a test run leaves nothing in /tmp. torch.compile (inductor) builds ~28 .so
    # files into $TMPDIR/torchinductor_$USER, and the toolkit folder, failed-pass MLIR dumps and
    # subprocesses use tempfile's dir: point all of them at one session dir under pytest's tmp.
    import tempfile
    d = tmp_path_factory.mktemp("tmp")
    keys = ("TMPDIR", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
    saved, saved_tempdir = {k: os.environ.get(k) for k in keys}, tempfile.tempdir
    os.environ.update(TMPDIR=str(d), TORCHINDUCTOR_CACHE_DIR=str(d / "torchinductor"),
                      TRITON_CACHE_DIR=str(d / "triton"))
    tempfile.tempdir = str(d)
    yield d
    tempfile.tempdir = saved_tempdir
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def stub_library(tmp_path_factory):
    pytest.importorskip("hip", reason="hip-python is not installed: pip install 'wmma-gen[hip]'")
    from hipstub import StubLibrary, build, find_c_compiler
    cc, why = find_c_compiler()
    if cc is None:
        pytest.skip(f"the emulator-backed HIP stub cannot be built: {why}")
    return StubLibrary(build(tmp_path_factory.mktemp("hipstub"), cc))


@pytest.fixture
def stub(stub_library, request):
    """A fresh EmuHipRuntime behind libamdhip64.so for one test: gfx1100, or the arch given by
    `@pytest.mark.parametrize("stub", ["gfx1201"], indirect=True)`."""
    from hipstub import EmuHipRuntime
    runtime = EmuHipRuntime(getattr(request, "param", "gfx1100"))
    stub_library.install(runtime)
    ok, why = stub_library.connected()
    if not ok:
        stub_library.uninstall()
        pytest.skip(why)
    yield runtime
    stub_library.uninstall()
    assert not runtime.crashes, "stub callbacks raised:\n" + "\n".join(runtime.crashes)


@pytest.fixture
def hip_dev(stub):
    from wmma_gen.device.hip import HipDevice
    dev = HipDevice()
    yield dev
    dev.close()
