"""Shared helpers for the sweep tests: one small, fast study configuration."""
import pytest

from autotune.study import SweepConfig

from sweep_helpers import ARCH, SHAPE


@pytest.fixture
def small_config(tmp_path):
    def make(**kw):
        base = dict(arch=ARCH, dtypes=("f16",), shapes=(SHAPE,), trials=4, device="emu",
                    results=str(tmp_path / "results"), progress=False)
        base.update(kw)
        return SweepConfig(**base)
    return make
