"""Fixtures for the HIP lane without a GPU: the emulator-backed libamdhip64.so (tests/hipstub)
built once per session with the C compiler that is there, a fresh runtime per test installed
behind it, and the real HipDevice over the real hip-python bindings."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ -> `import hipstub`

from hip_helpers import compile_axpy  # noqa: E402


@pytest.fixture(scope="session")
def stub_library(tmp_path_factory):
    pytest.importorskip("hip", reason="hip-python is not installed: pip install 'wmma-gen[hip]'")
    from hipstub import StubLibrary, build, find_c_compiler
    cc, why = find_c_compiler()
    if cc is None:
        pytest.skip(f"the emulator-backed HIP stub cannot be built: {why}")
    return StubLibrary(build(tmp_path_factory.mktemp("hipstub"), cc))


@pytest.fixture
def stub(stub_library):
    """A fresh EmuHipRuntime (gfx1100) behind libamdhip64.so for one test."""
    from hipstub import EmuHipRuntime
    runtime = EmuHipRuntime("gfx1100")
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


@pytest.fixture(scope="session")
def axpy():
    return compile_axpy()
