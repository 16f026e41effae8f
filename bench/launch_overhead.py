"""Host time per call of cached kernels through the HIP path, side by side in one run (issue 23).

Every mode goes through the real hip-python bindings and the real HipDevice into the
emulator-backed HIP stand-in (tests/hipstub) with kernel execution switched off
(`runtime.execute = False`: the stand-in records the launch and returns), so what is timed is
the host work of each path plus the stand-in's own per-call cost, which every mode pays alike:

  bare        hipModuleLaunchKernel of the same kernel with a prepacked kernarg segment
  device      wmma_gen.ops.device_calls.gemm_into / attention_into on device memory (repeat call)
  torch       wmma_gen.torch.linear / flash_attn_func on torch tensors routed to the stand-in
              (includes torch's custom-op dispatch and the output's torch.empty)
  numpy       wmma_gen.gemm / wmma_gen.attention on numpy arrays: hipMalloc, H2D copies, launch,
              D2H copies, sync, hipFree per call (the stand-in's copies are host memcpy into
              emulator memory, cheaper than PCIe: this UNDERSTATES the numpy path's cost on a GPU)

Modes run interleaved, round after round; per round each mode makes `--calls` calls; the
median and min of the per-call means over rounds are printed with ratios to `bare`. Source:
host wall time on this machine (no GPU; these are not GPU times).

    python bench/launch_overhead.py [--rounds 7] [--calls 300] [--out results/launch_overhead.md]
"""
from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
_keep: list = []
sys.path.insert(0, str(ROOT / "tests"))


def stand_in():
    """(runtime, HipDevice) over the emulator-backed libamdhip64.so, execution off."""
    import tempfile

    from hipstub import EmuHipRuntime, StubLibrary, build, find_c_compiler
    cc, why = find_c_compiler()
    if cc is None:
        raise SystemExit(f"the HIP stand-in cannot be built: {why}")
    lib = StubLibrary(build(Path(tempfile.mkdtemp(prefix="wmma-bench-hipstub-")), cc))
    _keep.append(lib)
    runtime = EmuHipRuntime("gfx1100")
    if not hasattr(runtime, "execute"):
        raise SystemExit("tests/hipstub has no `execute` switch: this bench needs launches without emulation")
    lib.install(runtime)
    from wmma_gen.device.hip import HipDevice
    dev = HipDevice()
    runtime.execute = False
    return runtime, dev


def upload(dev, x: np.ndarray, dtype: str):
    from wmma_gen.device.operand import Operand
    buf = dev.alloc(max(x.nbytes, 4))
    dev.copy_in(buf, x)
    return Operand(buf.addr, x.shape, tuple(s // x.itemsize for s in x.strides), dtype, "rocm", 0, buf, "")


def bare_launcher(dev, key_fn):
    """A closure doing exactly one hipModuleLaunchKernel with the kernarg segment the device
    path built for this call shape (taken from its cache after one call)."""
    from wmma_gen.device.hip import _PARAM_BUFFER_POINTER, _PARAM_BUFFER_SIZE, _PARAM_END
    from wmma_gen.ops import device_calls
    key_fn()
    _dev, used, _host = next(reversed(device_calls._fast.values()))
    compiled, t = used[0]
    seg = bytearray(t.segment)
    buf = (ctypes.c_char * len(seg)).from_buffer(seg)
    size = ctypes.c_size_t(len(seg))
    extra = (ctypes.c_void_p * 5)(_PARAM_BUFFER_POINTER, ctypes.addressof(buf), _PARAM_BUFFER_SIZE,
                                  ctypes.addressof(size), _PARAM_END)
    fn, hip, stream, (gx, gy, gz), (bx, by, bz) = dev.function(compiled), dev.hip, dev.stream, t.grid, t.block
    addr = ctypes.addressof(extra)
    keep = (seg, buf, size, extra)        # the segment and `extra` must outlive every launch
    ok = hip.hipError_t.hipSuccess

    def launch(keep=keep):
        err = hip.hipModuleLaunchKernel(fn, gx, gy, gz, bx, by, bz, 0, stream, None, addr)
        if (err[0] if isinstance(err, tuple) else err) != ok:
            raise SystemExit(f"bare hipModuleLaunchKernel failed: {err}")
    return launch


def modes_for(dev, op: str):
    import wmma_gen
    from wmma_gen.ops.device_calls import attention_into, gemm_into
    rng = np.random.default_rng(0)
    out = {}
    if op == "linear":      # y = x w^T, x (256, 512), w (512, 512), f16
        x = rng.standard_normal((256, 512)).astype(np.float16)
        w = rng.standard_normal((512, 512)).astype(np.float16)
        X, W, Y = upload(dev, x, "f16"), upload(dev, w, "f16"), upload(dev, np.zeros((256, 512), np.float16), "f16")
        dev_call = lambda: gemm_into(X, W, Y, layout="NT", device=dev)
        out["bare"] = bare_launcher(dev, dev_call)
        out["device"] = dev_call
        out["numpy"] = lambda: wmma_gen.gemm(x, w, layout="NT", device=dev)
        torch_call = _torch_linear(dev, x, w)
    else:                   # attention forward, bshd (1, 128, 4, 64) f16
        q = rng.standard_normal((1, 128, 4, 64)).astype(np.float16)
        Q, K, V = (upload(dev, q, "f16") for _ in range(3))
        O = upload(dev, np.zeros_like(q), "f16")
        dev_call = lambda: attention_into(Q, K, V, O, device=dev)
        out["bare"] = bare_launcher(dev, dev_call)
        out["device"] = dev_call
        out["numpy"] = lambda: wmma_gen.attention(q, q, q, device=dev)
        torch_call = _torch_attention(dev, q)
    if torch_call is not None:
        out["torch"] = torch_call
    return out


def _torch_linear(dev, x, w):
    try:
        import torch

        import wmma_gen.torch as wt
        from wmma_gen.device.select import routed
    except ImportError:
        return None
    xt, wt_ = torch.from_numpy(x), torch.from_numpy(w)

    def call():
        with routed(dev):
            wt.linear(xt, wt_)
    return call


def _torch_attention(dev, q):
    try:
        import torch

        import wmma_gen.torch as wt
        from wmma_gen.device.select import routed
    except ImportError:
        return None
    qt = torch.from_numpy(q)

    def call():
        with routed(dev):
            wt.flash_attn_func(qt, qt, qt)
    return call


def measure(modes: dict, rounds: int, calls: int) -> dict[str, list[float]]:
    per = {m: [] for m in modes}
    for fn in modes.values():        # warm: plans, templates, modules, torch dispatch
        for _ in range(3):
            fn()
    for _ in range(rounds):
        for name, fn in modes.items():
            n = max(3, calls // 20) if name == "numpy" else calls
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            per[name].append((time.perf_counter() - t0) / n * 1e6)
    return per


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--out", default=str(ROOT / "results" / "launch_overhead.md"))
    args = ap.parse_args(argv)
    runtime, dev = stand_in()
    rows = ["| op | mode | host us/call median | min | x bare (median) | x numpy (numpy / mode) |",
            "|---|---|---|---|---|---|"]
    for op in ("linear", "attention"):
        modes = modes_for(dev, op)
        per = measure(modes, args.rounds, args.calls)
        med = {m: statistics.median(v) for m, v in per.items()}
        for m, v in per.items():
            rows.append(f"| {op} | {m} | {med[m]:.1f} | {min(v):.1f} | {med[m] / med['bare']:.2f} | "
                        f"{med['numpy'] / med[m]:.1f} |")
    text = ("Host time per call through real hip-python + HipDevice into the HIP stand-in with execution off "
            f"(source: host wall time on this machine, no GPU; {args.rounds} interleaved rounds of "
            f"{args.calls} calls, numpy mode {max(3, args.calls // 20)}). `python bench/launch_overhead.py`\n\n"
            + "\n".join(rows) + "\n")
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    dev.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
