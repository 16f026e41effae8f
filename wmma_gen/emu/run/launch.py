"""`run_kernel`: the launch ABI (initial wave state from the kernel descriptor) and
batching of workgroups.

Initial state follows llvm/docs/AMDGPUUsage.rst "Initial Kernel Execution State":
user SGPRs from s0 in the order private segment buffer (4), dispatch ptr (2), queue ptr (2),
kernarg segment ptr (2), dispatch id (2), flat scratch init (2), private segment size (1),
preloaded kernargs; each only when its `.amdhsa_user_sgpr_*` directive is 1. System SGPRs
start at `.amdhsa_user_sgpr_count`: workgroup id X, Y, Z (each when
`.amdhsa_system_sgpr_workgroup_id_*` is 1), then workgroup info; gfx12 instead has
architected SGPRs: workgroup ids in ttmp9 / ttmp7, the wave's index in its workgroup in
ttmp8[29:25] (see _initial_state). VGPR0 holds the
work-item ids packed as x | y << 10 | z << 20 (gfx11 has packed work-item ids,
"FeaturePackedTID"; y/z present when `.amdhsa_system_vgpr_workitem_id` >= 1 / 2).
Registers the ABI does not define start as a poison pattern so reads of uninitialised
state show up as garbage (as on hardware) instead of silently reading zero.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ...errors import EmulatorFault
from ...codeobj.instr import TTMP0
from ..decode.program import Program
from ..isa.table import Fault, family
from .bind import bind_program
from .device_memory import GlobalMemory
from .scheduler import Scheduler
from .state import EXEC, NSREG, NULL, SCC, Group

POISON_V = np.uint32(0x7FC0DEAD)  # a quiet NaN as f32
POISON_S = np.uint32(0xBAADF00D)
DEFAULT_MAX_STEPS = 1_000_000


@dataclass(frozen=True)
class RunStats:
    wave_instructions: int
    waves: int
    workgroups: int
    seconds: float

    @property
    def wave_instructions_per_second(self) -> float:
        return self.wave_instructions / self.seconds if self.seconds > 0 else float("inf")


class _Ctx:
    __slots__ = ("mem", "lds", "lds_size")

    def __init__(self, mem, lds, lds_size):
        self.mem, self.lds, self.lds_size = mem, lds, lds_size


def _past_end(g, ctx):
    raise Fault("execution ran past the last instruction (no s_endpgm)")


def bound_ops(prog: Program) -> list:
    ops = getattr(prog, "_bound_ops", None)
    if ops is None:
        ops = bind_program(prog) + [_past_end]
        prog._bound_ops = ops
    return ops


def _profiled(prog: Program, ops: list, profile: dict) -> list:
    """Each bound op wrapped to add its wall time and wave count to profile[key] = [s, n],
    key = the instruction's mnemonic without encoding suffix (bench/emu_speed.py groups them)."""
    out = []
    for i, op in enumerate(ops):
        ins = prog.instrs[i] if i < len(prog.instrs) else None
        key = ins.base if ins is not None else "<end>"
        if ins is not None and ins.pair is not None:
            key = f"{ins.base}::{ins.pair.base}"

        def run(g, ctx, op=op, key=key, clock=time.perf_counter):
            t0 = clock()
            try:
                return op(g, ctx)
            finally:
                slot = profile.setdefault(key, [0.0, 0])
                slot[0] += clock() - t0
                slot[1] += g.W
        out.append(run)
    return out


def run_kernel(prog: Program, mem: GlobalMemory, grid, block, kernarg: bytes = b"",
               max_steps: int = DEFAULT_MAX_STEPS, *, mode: str = "batched",
               dynamic_lds: int = 0, max_batch_waves: int | None = None,
               profile: dict | None = None) -> RunStats:
    """Run `prog` over grid (workgroups per axis) x block (work-items per axis).

    mode='batched' executes waves that share a PC together; mode='per_wave' runs each
    wave alone (the reference path). `profile` (a dict) collects wall time and wave
    executions per mnemonic. Raises EmulatorFault on any fault."""
    grid, block = _dims("grid", grid), _dims("block", block)
    if mode not in ("batched", "per_wave"):
        raise ValueError(f"mode={mode!r} is not allowed: 'batched' or 'per_wave'")
    if prog.wave_size != 32:
        raise EmulatorFault("only wave32 kernels are emulated", kernel=prog.name)
    # Private segment (scratch): gfx11 and gfx12 kernels use architected flat scratch (the
    # hardware sets each wave's scratch base; no user SGPR setup, AMDGPUUsage "Flat Scratch"
    # for GFX11+), so each work-item gets `private_segment_fixed_size` bytes that its
    # scratch_* instructions address from 0 (mem.SCRATCH).
    priv_size = -(-prog.private_segment_size // 4) * 4 if prog.desc("enable_private_segment", 1) else 0
    if len(kernarg) < prog.kernarg_size:
        raise ValueError(f"kernarg has {len(kernarg)} bytes, kernel {prog.name} needs "
                         f"kernarg_segment_size={prog.kernarg_size} (use Program.pack_kernarg)")
    t0 = time.perf_counter()
    ops = bound_ops(prog)
    if profile is not None:
        ops = _profiled(prog, ops, profile)
    threads = block[0] * block[1] * block[2]
    wpw = math.ceil(threads / 32)
    n_wg = grid[0] * grid[1] * grid[2]
    lds_size = prog.group_segment_size + dynamic_lds
    nv = max(prog.next_free_vgpr, _max_vgpr(prog)) + 1
    if max_batch_waves is None:  # keep a batch's VGPR file near 64 MiB
        max_batch_waves = max(wpw, (64 << 20) // (nv * 128))
    wg_per_batch = max(1, max_batch_waves // wpw)

    # The runtime hands the kernel a kernarg segment padded to its alignment and LLVM relies
    # on it: scalar loads of adjacent arguments are widened (s_load_b128 at offset 48 of a
    # 56-byte segment). Pad with zeros to a 64-byte multiple (the HSA kernarg segment
    # alignment the CP uses; AMDGPUUsage "Kernel Dispatch"), never more.
    padded = bytes(kernarg) + bytes(-len(kernarg) % 64)
    karg = mem.alloc(max(len(padded), 64))
    mem.write(karg, padded) if padded else None
    extra = _dispatch_packet(prog, mem, grid, block, karg)
    total = 0
    try:
        for first in range(0, n_wg, wg_per_batch):
            ids = np.arange(first, min(n_wg, first + wg_per_batch))
            ctx = _Ctx(mem, np.zeros(-(-len(ids) * lds_size // 4) * 4, np.uint8), lds_size)
            sched = Scheduler(prog, ops, ctx, len(ids), max_steps, merge=(mode == "batched"))
            s, v, wave, wg = _initial_state(prog, grid, block, ids, wpw, nv, karg, extra)
            priv = np.zeros((len(wave), 32, priv_size), np.uint8) if priv_size else None
            if mode == "batched":
                sched.add(Group(0, v, s, wave, wg, np.zeros(len(wave), np.int64), priv))
            else:
                for k in range(len(wave)):
                    sched.add(Group(0, v[:, k:k + 1].copy(), s[:, k:k + 1].copy(), wave[k:k + 1],
                                    wg[k:k + 1], np.zeros(1, np.int64),
                                    None if priv is None else priv[k:k + 1].copy()))
            with np.errstate(all="ignore"):
                sched.run()
            total += sched.wave_instructions
    finally:
        mem.free(karg)
        for a in extra.values():
            mem.free(a)
    return RunStats(total, n_wg * wpw, n_wg, time.perf_counter() - t0)


def _dims(name, d) -> tuple[int, int, int]:
    d = tuple(int(x) for x in (d if isinstance(d, (tuple, list)) else (d,)))
    d = d + (1,) * (3 - len(d))
    if len(d) != 3 or min(d) < 1:
        raise ValueError(f"{name}={d} is not allowed: 1 to 3 positive extents")
    return d


def _max_vgpr(prog: Program) -> int:
    hi = 0
    for ins in prog.instrs:
        for op in ins.operands + (ins.pair.operands if ins.pair else ()):
            if op.kind == "v":
                hi = max(hi, op.index + op.count - 1)
    return hi


def _dispatch_packet(prog, mem, grid, block, karg) -> dict[str, int]:
    """hsa_kernel_dispatch_packet_t (HSA runtime spec §2.9.6) and a zeroed queue
    object, only when the kernel asks for their pointers."""
    out = {}
    if prog.desc("user_sgpr_dispatch_ptr"):
        pkt = np.zeros(64, np.uint8)
        pkt[4:10] = np.array(block, "<u2").view(np.uint8)
        pkt[12:24] = np.array([grid[i] * block[i] for i in range(3)], "<u4").view(np.uint8)
        pkt[28:32] = np.array([prog.group_segment_size], "<u4").view(np.uint8)
        pkt[40:48] = np.array([karg], "<u8").view(np.uint8)
        out["dispatch"] = mem.alloc(64)
        mem.write(out["dispatch"], pkt)
    if prog.desc("user_sgpr_queue_ptr"):
        out["queue"] = mem.alloc(256)
    return out


def _initial_state(prog, grid, block, ids, wpw, nv, karg, extra):
    W = len(ids) * wpw
    s = np.full((NSREG, W), POISON_S, np.uint32)
    s[NULL] = 0
    s[SCC] = 0
    v = np.full((nv, W, 32), POISON_V, np.uint32)
    wg = np.repeat(np.arange(len(ids)), wpw)
    wave = np.repeat(ids * wpw, wpw) + np.tile(np.arange(wpw), len(ids))
    # user SGPRs, in AMDGPUUsage order
    i = 0
    def put64(addr):
        s[i] = addr & 0xFFFFFFFF
        s[i + 1] = addr >> 32
    for key, n, value in (("private_segment_buffer", 4, 0), ("dispatch_ptr", 2, extra.get("dispatch", 0)),
                          ("queue_ptr", 2, extra.get("queue", 0)), ("kernarg_segment_ptr", 2, karg),
                          ("dispatch_id", 2, 0), ("flat_scratch_init", 2, 0),
                          ("private_segment_size", 1, 0)):
        if prog.desc(f"user_sgpr_{key}"):
            if n == 1:
                s[i] = value
            elif n == 2:
                put64(value)
            else:
                s[i:i + n] = 0
            i += n
    if prog.desc("user_sgpr_kernarg_preload_length"):
        raise EmulatorFault("kernarg preloading is not emulated", kernel=prog.name)
    if i > prog.desc("user_sgpr_count", i):
        raise EmulatorFault(f"descriptor enables {i} user SGPRs but user_sgpr_count="
                            f"{prog.desc('user_sgpr_count')}", kernel=prog.name)
    j = prog.desc("user_sgpr_count", i)
    gx, gy = grid[0], grid[1]
    wid = np.repeat(ids, wpw)
    ids3 = (wid % gx, (wid // gx) % gy, wid // (gx * gy))
    if family(prog.arch) == "gfx12":
        # Architected SGPRs (gfx12): the workgroup ids are not loaded into system SGPRs but
        # read from trap temporaries, X = TTMP9, Y = TTMP7[15:0], Z = TTMP7[31:16] (LLVM
        # AMDGPULegalizerInfo / SIISelLowering: WorkGroupIDY = TTMP7 & 0xFFFF, Z = TTMP7 >> 16).
        s[TTMP0 + 9] = ids3[0]
        s[TTMP0 + 7] = (ids3[1] & 0xFFFF) | ((ids3[2] & 0xFFFF) << 16)
        # TTMP8 = {DebugMark 0, GridYZvalid 1 (TTMP7 is loaded), waveIDinGroup[29:25], dispatchIndex[24:0]
        # = 0} (RDNA4 ISA §3.5.3.4 Table 12 "CS SGPR Load"); LLVM reads the wave id as ttmp8[29:25].
        s[TTMP0 + 8] = (np.tile(np.arange(wpw), len(ids)) << 25) | (1 << 30)
    else:
        for axis, value in zip("xyz", ids3, strict=True):
            if prog.desc(f"system_sgpr_workgroup_id_{axis}"):
                s[j] = value
                j += 1
    if prog.desc("system_sgpr_workgroup_info"):
        s[j] = 0
        j += 1
    # work-items: wave k of a workgroup holds flat ids 32k .. 32k+31
    flat = (np.arange(wpw)[:, None] * 32 + np.arange(32)[None, :])
    bx, by, bz = block
    tx, ty, tz = flat % bx, (flat // bx) % by, flat // (bx * by)
    comp = prog.desc("system_vgpr_workitem_id")
    packed = tx | ((ty << 10) if comp >= 1 else 0) | ((tz << 20) if comp >= 2 else 0)
    v[0] = np.tile(packed.astype(np.uint32), (len(ids), 1))
    live = flat < bx * by * bz
    bits = (live.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
    s[EXEC] = np.tile(bits, len(ids))
    s[EXEC + 1] = 0
    return s, v, wave, wg
