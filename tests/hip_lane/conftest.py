"""Fixtures for the HIP lane without a GPU (stub_library, stub and hip_dev live in
tests/conftest.py: one emulator-backed libamdhip64.so per session for every folder, since
hip-python binds the library once per process)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ -> `import hipstub`

from hip_helpers import compile_axpy  # noqa: E402


@pytest.fixture(scope="session")
def axpy():
    return compile_axpy()
