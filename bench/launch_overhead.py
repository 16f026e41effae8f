"""Host time per call of wmma_gen's launch paths beside a no-op launch in C and torch's own ops
(issue 36), side by side in one run.

Every wmma_gen mode goes through the real hip-python bindings and the real HipDevice into the
HIP stand-in (tests/hipstub) switched to its C no-op launch (`StubLibrary.noop_launch`:
hipModuleLaunchKernel returns hipSuccess inside the C library, no Python callback, no kernel
execution), so what is timed is the host work of each path plus hip-python's own call:

  bare           one hipModuleLaunchKernel through hip-python with a prepacked kernarg segment
  native         the C Launcher of device/_fastlaunch.c (what HipDevice.prepack builds when the
                 extension is built): addresses patched in C, hipModuleLaunchKernel called from C
  device         wmma_gen.ops.gemm.device.gemm_into / ops.attention.device.attention_into on device memory
  torch          wmma_gen.torch.linear / flash_attn_func with grad off as an inference loop has
                 it: one `torch.no_grad()` block around each round's timed calls (a model step
                 enters it once, not per op); CPU tensors routed to the stand-in: their addresses
                 are the "device" pointers; the routing context is entered once around all rounds,
                 as a ROCm program has no routing
  torch/call     the same with `with torch.no_grad():` entered per call (~5 us of torch's own)
  torch+grad     the same with inputs that require grad (forward, recording autograd)
  torch+fwd+bwd  forward and backward (y.backward(gy))
  ref*           torch's own op on the same tensors (F.linear / F.scaled_dot_product_attention on
                 transposed views), no-grad (in one block, and /call), +grad, +fwd+bwd: CPU
                 kernels, so their time includes
                 a tiny compute; f16 on CPU is slower than f32, so the ref f32 rows take f32 copies
  numpy          wmma_gen.gemm / wmma_gen.attention on numpy arrays (hipMalloc, H2D copies, launch,
                 D2H copies, sync, hipFree per call; host memcpy in the stand-in)

Then two model steps: a tiny-GPT training step (examples/tiny_gpt.py: 2 layers, d_model 64,
seq 32, batch 4; wmma_gen ops vs the same step on pure f32 torch ops) and a decode step of a
tiny model (2 layers of qkv linear, flash_attn_with_kvcache with a 1-token append, proj, MLP,
head; batch 2, 4 heads, head_dim 64): host time per step and per launch (launches counted by
the C stub). Rounds are interleaved; medians and mins of per-round means are printed with
ratios. torch runs with one intra-op thread, and time is the process's CPU time
(time.process_time: the host work itself, not the waits of a machine whose 2 cores are shared).
Source: host CPU time on this machine (no GPU; not GPU times).

    python bench/launch_overhead.py [--rounds 7] [--calls 200] [--out results/launch_overhead.md]
"""
from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "examples")]
_keep: list = []


def stand_in():
    """(StubLibrary, HipDevice) over the emulator-backed libamdhip64.so, C no-op launches on."""
    from hipstub import EmuHipRuntime, StubLibrary, build, find_c_compiler
    cc, why = find_c_compiler()
    if cc is None:
        raise SystemExit(f"the HIP stand-in cannot be built: {why}")
    lib = StubLibrary(build(Path(tempfile.mkdtemp(prefix="wmma-bench-hipstub-")), cc))
    _keep.append(lib)
    runtime = EmuHipRuntime("gfx1100")
    lib.install(runtime)
    from wmma_gen.device.hip import HipDevice
    dev = HipDevice()
    runtime.execute = False
    lib.noop_launch(True)
    return lib, dev


def upload(dev, x: np.ndarray, dtype: str):
    from wmma_gen.device.operand import Operand
    buf = dev.alloc(max(x.nbytes, 4))
    dev.copy_in(buf, x)
    return Operand(buf.addr, x.shape, tuple(s // x.itemsize for s in x.strides), dtype, "rocm", 0, buf, "")


def bare_launcher(dev, token):
    """Exactly one hipModuleLaunchKernel (hip-python -> the C no-op) with a prepacked `extra`
    kernarg array, for the first kernel of a call the device path made (its Prepacked token):
    the C Launcher's members (device/_fastlaunch.c) or the Python closure's cells."""
    from wmma_gen.device.hip import launch_extra
    launch = token.launches[0][0]
    if hasattr(launch, "kernarg"):
        seg, (gx, gy, gz), (bx, by, bz) = launch.kernarg, launch.grid, launch.block
        f = next(f for k, (_, f) in dev._functions.items() if int(f) == launch.fn)
    else:
        cells = {name: cell.cell_contents for name, cell in zip(launch.__code__.co_freevars, launch.__closure__)}
        seg, f = bytes(cells["buf"].raw), cells["fn"]
        gx, gy, gz, bx, by, bz = (cells[k] for k in ("gx", "gy", "gz", "bx", "by", "bz"))
    extra, buf, size = launch_extra(seg)
    hip = dev.hip
    addr, stream, ok = ctypes.addressof(extra), dev.stream, hip.hipError_t.hipSuccess
    keep = (buf, size, extra)

    def bare(keep=keep):
        err = hip.hipModuleLaunchKernel(f, gx, gy, gz, bx, by, bz, 0, stream, None, addr)
        if err[0] != ok:
            raise SystemExit(f"bare hipModuleLaunchKernel failed: {err}")
    return bare


def native_launcher(token):
    """The C Launcher of the call's first kernel called with its addresses (None without the
    extension: the row is left out)."""
    launch, names = token.launches[0]
    if not hasattr(launch, "kernarg"):
        return None
    ptrs = tuple(range(16, 16 * (len(names) + 1), 16))
    return lambda: launch(ptrs)


def modes_for(dev, op: str) -> dict:
    import torch
    import torch.nn.functional as F

    import wmma_gen
    import wmma_gen.torch as wt
    from wmma_gen.ops.attention.device import attention_into
    from wmma_gen.ops.gemm.device import gemm_into
    rng = np.random.default_rng(0)
    out = {}
    if op == "linear":      # y = x w^T, x (8, 64), w (64, 64), f16
        x = rng.standard_normal((8, 64)).astype(np.float16)
        w = rng.standard_normal((64, 64)).astype(np.float16)
        X, W, Y = upload(dev, x, "f16"), upload(dev, w, "f16"), upload(dev, np.zeros((8, 64), np.float16), "f16")
        dev_call = lambda: gemm_into(X, W, Y, layout="NT", device=dev)
        token = dev_call()
        out["bare"] = bare_launcher(dev, token)
        out["native"] = native_launcher(token)
        out["device"] = dev_call
        xt, wt_ = torch.from_numpy(x), torch.from_numpy(w)
        ours = lambda a, b: wt.linear(a, b)
        ref = lambda a, b: F.linear(a, b)
        args, gy = (xt, wt_), torch.ones(8, 64, dtype=torch.float16)
        out["numpy"] = lambda: wmma_gen.gemm(x, w, layout="NT", device=dev)
    else:                   # flash-attn forward, (1, 16, 2, 64) f16
        q = rng.standard_normal((1, 16, 2, 64)).astype(np.float16)
        Q, K, V = (upload(dev, q, "f16") for _ in range(3))
        O = upload(dev, np.zeros_like(q), "f16")
        dev_call = lambda: attention_into(Q, K, V, O, device=dev)
        token = dev_call()
        out["bare"] = bare_launcher(dev, token)
        out["native"] = native_launcher(token)
        out["device"] = dev_call
        qt = torch.from_numpy(q)
        ours = lambda a, b: wt.flash_attn_func(a, b, b)
        ref = lambda a, b: F.scaled_dot_product_attention(a.transpose(1, 2), b.transpose(1, 2),
                                                          b.transpose(1, 2)).transpose(1, 2)
        args, gy = (qt, qt.clone()), torch.ones(1, 16, 2, 64, dtype=torch.float16)
        out["numpy"] = lambda: wmma_gen.attention(q, q, q, device=dev)
    grads = tuple(a.clone().requires_grad_() for a in args)
    f32 = tuple(a.float() for a in args)
    f32g = tuple(a.float().requires_grad_() for a in args)
    gy32 = gy.float()

    def nograd(fn, a):
        def call():
            with torch.no_grad():
                fn(*a)
        return call
    out["torch"] = lambda: ours(*args)           # measure() runs it inside one no_grad block (IN_BLOCK)
    out["torch/call"] = nograd(ours, args)       # ... and every mode inside routed(dev)
    out["torch+grad"] = lambda: ours(*grads)
    out["torch+fwd+bwd"] = lambda: ours(*grads).backward(gy)
    out["ref f16"] = lambda: ref(*args)
    out["ref f32"] = lambda: ref(*f32)
    out["ref f32/call"] = nograd(ref, f32)
    out["ref f32+grad"] = lambda: ref(*f32g)
    out["ref f32+fwd+bwd"] = lambda: ref(*f32g).backward(gy32)
    return {m: fn for m, fn in out.items() if fn is not None}


# modes timed inside one `torch.no_grad()` block per round (entered within the timed span, so its
# ~5 us is spread over the round's calls, as over an inference step's ops)
IN_BLOCK = {"torch", "ref f16", "ref f32"}


def measure(dev, modes: dict, rounds: int, calls: int) -> dict[str, list[float]]:
    """Interleaved rounds of every mode, all inside `routed(dev)`: the routing of CPU tensors to
    the stand-in is entered once, as a ROCm program (GPU tensors, no routing) never pays it."""
    import contextlib

    import torch

    from wmma_gen.device.select import routed
    per = {m: [] for m in modes}
    with routed(dev):
        for name, fn in modes.items():        # warm: plans, templates, modules, torch dispatch
            with torch.no_grad() if name in IN_BLOCK else contextlib.nullcontext():
                for _ in range(3):
                    fn()
        for _ in range(rounds):
            for name, fn in modes.items():
                n = max(3, calls // 20) if name == "numpy" else calls
                t0 = time.process_time()
                with torch.no_grad() if name in IN_BLOCK else contextlib.nullcontext():
                    for _ in range(n):
                        fn()
                per[name].append((time.process_time() - t0) / n * 1e6)
    return per


def tiny_gpt_step(lib, dev, rounds: int) -> list[str]:
    """Host time of one training step with wmma_gen ops (no-op launches) vs pure torch."""
    import torch
    import torch.nn.functional as F
    from tiny_gpt import GPT, TorchOps, WmmaOps, batches

    from wmma_gen.device.select import routed
    torch.manual_seed(0)
    model = GPT(64, 64, 2, 4, 2, 32)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = next(batches(1, 4, 32, 64))
    ops = {"wmma_gen": WmmaOps(torch.float16), "torch f32": TorchOps()}

    def step(o):
        loss = F.cross_entropy(model(x, o).reshape(-1, 64), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    with routed(dev):
        for o in ops.values():
            for _ in range(3):
                step(o)
        before = lib.noop_launches()
        step(ops["wmma_gen"])
        launches = lib.noop_launches() - before
        per = {n: [] for n in ops}
        for _ in range(rounds):
            for n, o in ops.items():
                t0 = time.process_time()
                for _ in range(5):
                    step(o)
                per[n].append((time.process_time() - t0) / 5 * 1e3)
    med = {n: statistics.median(v) for n, v in per.items()}
    extra = (med["wmma_gen"] - med["torch f32"]) * 1e3 / launches
    return [f"| tiny-GPT train step (2 layers, d 64, seq 32, batch 4) | {launches} | {med['wmma_gen']:.2f} | "
            f"{min(per['wmma_gen']):.2f} | {med['torch f32']:.2f} | {med['wmma_gen'] * 1e3 / launches:.1f} | "
            f"{extra:.1f} |"]


def decode_step(lib, dev, rounds: int) -> list[str]:
    """Host time of one decode step of a tiny model (no grad) with wmma_gen ops (no-op launches)."""
    import torch
    import torch.nn.functional as F

    import wmma_gen.torch as wt
    from wmma_gen.device.select import routed
    torch.manual_seed(0)
    B, H, D, L, S = 2, 4, 64, 2, 128
    dm = H * D
    f16 = torch.float16
    W = [{n: (torch.randn(o, i) / 16).to(f16) for n, (o, i) in
          {"qkv": (3 * dm, dm), "proj": (dm, dm), "up": (2 * dm, dm), "down": (dm, 2 * dm)}.items()}
         for _ in range(L)]
    head = (torch.randn(64, dm) / 16).to(f16)
    kc = [torch.zeros(B, S, H, D, dtype=f16) for _ in range(L)]
    vc = [torch.zeros(B, S, H, D, dtype=f16) for _ in range(L)]
    lens = torch.full((B,), 17, dtype=torch.int32)
    x0 = torch.randn(B, dm).to(f16)

    def step(lin, attn):
        x = x0
        for i in range(L):
            q, k, v = lin(x, W[i]["qkv"]).view(B, 1, 3, H, D).unbind(2)
            a = attn(q, kc[i], vc[i], k, v, i)
            x = x + lin(a.reshape(B, dm), W[i]["proj"])
            x = x + lin(lin(x, W[i]["up"], "gelu"), W[i]["down"])
        return lin(x, head)

    ours = (lambda x, w, act=None: wt.linear(x, w, activation=act),
            lambda q, kc, vc, k, v, i: wt.flash_attn_with_kvcache(q, kc, vc, k, v, cache_seqlens=lens))

    def ref_attn(q, kc, vc, k, v, i):      # torch: append at position 17, attend over 18 keys
        kc[:, 17:18], vc[:, 17:18] = k, v
        return F.scaled_dot_product_attention(q.transpose(1, 2), kc[:, :18].transpose(1, 2),
                                              vc[:, :18].transpose(1, 2)).transpose(1, 2)
    refs = (lambda x, w, act=None: F.gelu(F.linear(x, w)) if act else F.linear(x, w), ref_attn)
    with routed(dev), torch.no_grad():
        for _ in range(3):
            step(*ours), step(*refs)
        before = lib.noop_launches()
        step(*ours)
        launches = lib.noop_launches() - before
        per = {"wmma_gen": [], "torch f16": []}
        for _ in range(rounds):
            for n, fns in (("wmma_gen", ours), ("torch f16", refs)):
                t0 = time.process_time()
                for _ in range(10):
                    step(*fns)
                per[n].append((time.process_time() - t0) / 10 * 1e3)
    med = {n: statistics.median(v) for n, v in per.items()}
    return [f"| decode step (2 layers, batch 2, 4 heads, hd 64, kv cache 128) | {launches} | {med['wmma_gen']:.2f} | "
            f"{min(per['wmma_gen']):.2f} | {med['torch f16']:.2f} | {med['wmma_gen'] * 1e3 / launches:.1f} | "
            f"{(med['wmma_gen'] - med['torch f16']) * 1e3 / launches:.1f} |"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--out", default=str(ROOT / "results" / "launch_overhead.md"))
    args = ap.parse_args(argv)
    import torch
    torch.set_num_threads(1)     # host cost, not intra-op parallelism (2 shared cores: threads only add noise)
    import os
    load0 = os.getloadavg()[:1]
    lib, dev = stand_in()
    rows = ["| op | mode | host us/call median | min | x bare (median) | x ref f32 same mode (median) |",
            "|---|---|---|---|---|---|"]
    pairs = {"torch": "ref f32", "torch/call": "ref f32/call", "torch+grad": "ref f32+grad",
             "torch+fwd+bwd": "ref f32+fwd+bwd"}
    for op in ("linear", "attention"):
        modes = modes_for(dev, op)
        per = measure(dev, modes, args.rounds, args.calls)
        med = {m: statistics.median(v) for m, v in per.items()}
        for m, v in per.items():
            vs = f"{med[m] / med[pairs[m]]:.2f}" if m in pairs else ""
            rows.append(f"| {op} | {m} | {med[m]:.1f} | {min(v):.1f} | {med[m] / med['bare']:.2f} | {vs} |")
    steps = ["| step | launches | wmma_gen ms/step median | min | torch ms/step median | wmma_gen us/launch | "
             "(wmma_gen - torch) us/launch |", "|---|---|---|---|---|---|---|"]
    steps += tiny_gpt_step(lib, dev, args.rounds)
    steps += decode_step(lib, dev, args.rounds)
    import os
    from wmma_gen.device import native
    load = "load average " + " / ".join(f"{a:.1f}" for a in os.getloadavg()[:1] + load0) + " (end / start, 1 min)"
    launch = "C Launcher (device/_fastlaunch.c)" if native.launcher_module() else "pure-Python launch (extension not built)"
    import results_header
    text = ("# Host time per call\n\n" + results_header.line("host CPU time") + "\n\n"
            "Host time per call through real hip-python + HipDevice into the HIP stand-in, hipModuleLaunchKernel a "
            f"no-op in C; wmma_gen launches through the {launch}; {load} "
            f"(source: host CPU time of the process on this machine, no GPU; {args.rounds} interleaved rounds of "
            f"{args.calls} calls, numpy mode {max(3, args.calls // 20)}; ref = torch's own op on the same tensors, "
            "CPU; `torch`, `ref f16`, `ref f32`: grad off by one `torch.no_grad()` block around each round's calls, "
            "as in an inference step; `/call`: `with torch.no_grad():` entered per call). "
            "\n\n" + "\n".join(rows) + "\n\n" + "\n".join(steps) + "\n")
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    dev.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
