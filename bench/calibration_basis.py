"""What bench/calibrate.py estimates each published point with, and the clock floors the points prove
(issue 38 item 4): the model's estimate of the kernel family the point measured (our Triton FA-2 kernel of
the family for a Triton peer, compiled here; our default kernel otherwise) and, per target, the clock each
published figure needs at efficiency 1 (model/calibration.fit raises the sustained clock to the highest).
"""
from __future__ import annotations

import sys
from pathlib import Path

from wmma_gen.model import calibration as C
from wmma_gen.targets import TARGETS, get_target

ROOT = Path(__file__).resolve().parents[1]

TRITON_PEERS = ("Triton fused-attention tutorial 06", "Triton/AITER FA prefill", "tuned Triton FA backward")
NO_TRITON = "n/a (no triton)"


_PEERS: list = []     # one bench/peers.Peers per process: its Triton objects compile once


def triton_peer_estimates(points, cal: C.Calibration = C.CALIBRATED) -> dict[str, tuple]:
    """{point id: (TFLOP/s or None, config or why not)} for the points whose peer is a Triton kernel:
    our Triton FA-2 forward/backward compiled for the point (bench/peers.py Peers) and estimated by
    peers.peer_estimate under `cal` (default: the stored calibration; source=model)."""
    pts = [p for p in points if is_triton_peer(p)]
    try:
        import triton  # noqa: F401
    except ImportError:
        return {p.id: (None, NO_TRITON) for p in pts}
    sys.path.insert(0, str(ROOT / "bench"))
    import peers
    if not _PEERS:
        _PEERS.append(peers.Peers())
    out = {}
    with C.use(cal):
        for p in pts:
            c = p.config
            q = dict(op=p.op, arch=p.arch, dtype=p.dtype, batch=c["batch"], heads=c["heads"], seq=c["seq"],
                     head_dim=c["head_dim"], causal=bool(c["causal"]))
            ck, _, cfg = _PEERS[0].get(q)
            e = peers.peer_estimate(ck, cfg, q)
            out[p.id] = (e.tflops, " ".join(f"{k}={v}" for k, v in cfg.items()))
    return out


def is_triton_peer(p) -> bool:
    return p.kind == "peer_attention" and p.implementation in TRITON_PEERS


class NeedsTriton(RuntimeError):
    """The loop family is fitted on the Triton peers' estimates: without Triton there is no fit."""


def measured_family(points, ours: dict, tri: dict) -> dict[str, float]:
    """{id: TFLOP/s} of the kernel family each point measured (the fit's and the band's basis, issue 38
    item 4a): our Triton FA-2 kernel of the same family for a Triton peer, our default kernel otherwise
    (library GEMMs, CK, hand-written and HIP attention, microbenchmarks). Fitting the loop efficiency on our
    own forward made it absorb the Triton loops' looseness (published / our Triton FA-2 estimate ~1.2 on
    all three archs, consistently), which then under-estimated every compiled kernel of our structure
    (CK's FMHA, gcnasm's HIP v39)."""
    out = {}
    for p in points:
        if is_triton_peer(p):
            if tri[p.id][0] is None:
                raise NeedsTriton(f"{p.id}: the loop family is fitted on the model's estimate of the Triton peer's "
                                  "family (bench/peers_triton.py); install Triton (the `peers` extra: "
                                  "pip install 'triton>=3.9')")
            out[p.id] = tri[p.id][0]
        else:
            out[p.id] = ours[p.id][0]
    return out


def clock_floors(points) -> dict[str, list[tuple[float, str]]]:
    """{arch: [(GHz, point id)]}: the clock each published figure proves at least (model/calibration.py,
    "clock floors"): the figure over the TFLOP/s per GHz its kernel can issue at efficiency 1 with no stall.
    A GEMM point counts 2MNK FLOPs, every one done by a v_wmma: its kernel issues at most the dense WMMA
    rate (targets.py peak / boost clock). A point whose peer kernel's loops are counted
    (calibration_peer_kernels.recorded_floor: AITER's backward, compiler output recorded) uses those loops'
    VALU-pipe clocks. Microbenchmarks set their clock themselves (fit:clock)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import calibration_peer_kernels as K
    counted = {pid: (arch, per_ghz) for pid, arch, per_ghz, _ in (K.recorded_floor(),)}
    out: dict[str, list[tuple[float, str]]] = {}
    for p in points:
        t = get_target(p.arch)
        if p.id in counted and counted[p.id][0] == p.arch:
            per_ghz = counted[p.id][1]
        elif p.kind == "library_gemm":
            per_ghz = t.peak_tflops(p.dtype) / t.boost_ghz
        else:
            continue
        out.setdefault(p.arch, []).append((p.tflops / per_ghz, p.id))
    return out


def floor_lines(floors: dict, f: C.Fit) -> list[str]:
    """Markdown: the clock floor each published figure proves (clock_floors), per target, beside the fit's clock."""
    if not floors:
        return []
    sys.path.insert(0, str(ROOT / "bench"))
    import calibration_peer_kernels as K
    pid, _, per_ghz, how = K.recorded_floor()
    L = ["Clock floors (model/calibration.py): a published figure F needs clock >= F / (TFLOP/s per GHz its "
         "kernel issues at efficiency 1 with no stall) -- a GEMM's 2MNK FLOPs at the dense WMMA rate (targets.py), "
         f"or the counted loops of the peer kernel ({pid}: {how}; {per_ghz:.2f} TFLOP/s per GHz). The sustained "
         "clock is at least the highest floor, capped at boost:", ""]
    for arch, fl in sorted(floors.items()):
        top = max(fl)
        L.append(f"* {arch}: " + ", ".join(f"{pid_} {g:.3f}" for g, pid_ in sorted(fl, reverse=True))
                 + f" GHz; highest {top[0]:.3f} ({top[1]}), boost {TARGETS[arch].boost_ghz}, "
                 f"fit {f.sustained_ghz.get(arch, 0.0):.3f} GHz")
    return L
