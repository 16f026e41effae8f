"""time_varlen times through wmma_gen/tuner/timing.time_signature with valid varlen offsets in
place of random ones (the other inputs stay random); a non-GPU timing still raises."""
from types import SimpleNamespace

import numpy as np
import pytest

from wmma_gen.tuner import timing
from wmma_gen.errors import DeviceError
from wmma_gen.ops.attention.varlen_gate import time_varlen


class FakePrepared:
    seen: dict = {}
    source = "hip"

    def __init__(self, compiled, signature, problem, device, arrays):
        FakePrepared.seen = arrays

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def launch(self):
        return SimpleNamespace(source=FakePrepared.source, seconds=1e-3)


def _signature():
    args = [SimpleNamespace(name=n) for n in ("Q", "cu_seqlens_q", "cu_seqlens_k")]
    return SimpleNamespace(buffers=tuple(args))


def test_offsets_are_valid_and_the_rest_random(monkeypatch):
    monkeypatch.setattr(timing, "Prepared", FakePrepared)
    monkeypatch.setattr(timing, "random_inputs", lambda sig, p, seed: {"Q": np.ones(3), "cu_seqlens_q": np.zeros(4),
                                                                       "cu_seqlens_k": np.zeros(4)})
    FakePrepared.source = "hip"
    t = time_varlen(None, None, _signature(), {"batch": 3, "seq_q": 5, "seq_k": 7}, warmup=1, repeats=2)
    assert t == pytest.approx(1e-3)
    assert list(FakePrepared.seen["cu_seqlens_q"]) == [0, 5, 10, 15]
    assert list(FakePrepared.seen["cu_seqlens_k"]) == [0, 7, 14, 21]
    assert list(FakePrepared.seen["Q"]) == [1, 1, 1]
    FakePrepared.source = "emulator"
    with pytest.raises(DeviceError, match="not GPU time"):
        time_varlen(None, None, _signature(), {"batch": 1, "seq_q": 5, "seq_k": 7})
