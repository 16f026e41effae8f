"""Shared fixtures: an isolated kernel cache per test session."""
import os

import pytest


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
