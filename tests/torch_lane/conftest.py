"""tests/torch_lane: wmma_gen.torch on CPU tensors (the emulator runs the compiled kernels) against
float64 torch references. Skipped as a whole when torch is not installed."""
import pytest

pytest.importorskip("torch", reason="torch is not installed: pip install 'wmma-gen[test]' (torch==2.13.0, CPU wheel)")


@pytest.fixture(autouse=True)
def _seed():
    import torch
    torch.manual_seed(0)
