"""tests/hosts_transformers: wmma_gen as a transformers attention implementation, on tiny
random-weight models built with from_config (no download), against the same weights on eager
attention. Skipped as a whole when transformers (or torch) is not installed."""
import pytest

pytest.importorskip("torch", reason="torch is not installed: pip install 'wmma-gen[test]'")
pytest.importorskip("transformers", reason="transformers is not installed: pip install 'wmma-gen[test]'")


@pytest.fixture(autouse=True)
def _seed():
    import torch
    torch.manual_seed(0)


@pytest.fixture(scope="session")
def names():
    from wmma_gen.integrations.transformers import register
    return register()
