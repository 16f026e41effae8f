"""Host CPU time of a pair of small run_backward calls: a fresh EmuDevice per call (what a call
without a device got before it shared get_device's default) beside the shared default device,
interleaved in one run (time.process_time: host CPU, not GPU time).

    PYTHONPATH=$PWD python bench/attention_bwd_device_reuse.py [ROUNDS]

The problem is the smallest the backward tests use (batch 1, one head, Sq = Sk = 16, d = 64,
f16, gfx1100); the kernels come from the compile cache after the warm-up pair, so the
difference is the emulator's decode and bind of the three kernels (EmuDevice.program)."""
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "emu"))
from attention_bwd_cases import make_problem  # noqa: E402

from wmma_gen.device.emu import EmuDevice  # noqa: E402
from wmma_gen.ops.attention_bwd import run_backward  # noqa: E402


def main(rounds: int) -> None:
    arrays, kw = make_problem(np.random.default_rng(0), sq=16, sk=16, d=64)
    feed = [arrays[n].astype(np.float16) for n in ("q", "k", "v", "o", "do")] + [arrays["lse"]]

    def pair(fresh: bool) -> float:
        t = time.process_time()
        for _ in range(2):
            run_backward(*feed, dtype="f16", arch="gfx1100", device=EmuDevice() if fresh else None, **kw)
        return time.process_time() - t

    pair(True), pair(False)        # compile (or cache read) and imports
    old, new = [], []
    for _ in range(rounds):
        old.append(pair(True))
        new.append(pair(False))
    mo, mn = statistics.median(old), statistics.median(new)
    print(f"pair of run_backward calls, host CPU (median of {rounds} interleaved rounds): fresh EmuDevice "
          f"{mo * 1e3:.1f} ms, shared default {mn * 1e3:.1f} ms, saved {(mo - mn) * 1e3:.1f} ms ({mo / mn:.2f}x)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
