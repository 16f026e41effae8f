"""Fixtures for emulator tests (helpers live in emu_helpers.py)."""
import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
