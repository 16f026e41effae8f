"""Main-loop analysis of a kernel's ISA text: `CompiledKernel.isa`, the listing decoded from the
code object that runs (codeobj/listing.py; LLVM's assembly syntax, branch targets labelled
`.Lpc_<offset>`). LLVM's own `format=isa` text reads the same way (tests/compile/test_compile_once.py
checks both give the same loop, instruction for instruction).

The steady-state loop is the body between a label and a branch back to it (a back-edge);
with several loops the one issuing the most v_wmma wins (ties: the shortest, i.e. innermost).
Each instruction is classified once (`classify`) into the kinds the model costs:

    wmma, valu, salu, smem, branch, barrier, waitcnt, hint,
    vmem_load, vmem_store, scratch_load, scratch_store, ds_read, ds_write

Widths are in bits per lane, read from the mnemonic suffix (b32/b64/b96/b128, d16 b16,
u8/i8/u16/i16, 2addr pairs; dword/dwordxN for older spellings). Syntax: llvm/docs/
AMDGPUInstructionSyntax.rst; counters: RDNA3 ISA guide 4.4 "s_waitcnt" (vmcnt counts loads,
lgkmcnt DS/SMEM), RDNA4 splits them into s_wait_loadcnt / s_wait_dscnt / s_wait_kmcnt.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

_LABEL = re.compile(r"^([.\w$]+):")
_WIDTH = re.compile(r"_(?:[bui])(\d+)$")
_DWORD = re.compile(r"_dword(?:x(\d))?$")
_COUNTER = re.compile(r"(vmcnt|lgkmcnt)\((\d+)\)")
# quarter-rate transcendentals (LLVM SISchedule.td: "F16 or F32 transcendental instructions (these are
# quarter rate)"); classify() keeps them "valu", model/loop_kernel.py charges them 3 clocks on top
_TRANSCENDENTAL = re.compile(r"^v_(exp|log|rcp|rsq|sqrt|sin|cos)_")
_HINTS = ("s_delay_alu", "s_clause", "s_nop", "s_wait_alu", "s_set_inst_prefetch_distance",
          "s_inst_prefetch", "s_waitcnt_depctr", "s_wait_idle", "s_sleep")


@dataclass(frozen=True)
class Op:
    """One instruction of the loop: its kind, lane width in bits (memory ops) and, for waits,
    the outstanding-count limits it imposes (-1 = no limit on that counter)."""
    mnemonic: str
    kind: str
    bits: int = 0
    vm_wait: int = -1
    lgkm_wait: int = -1


def _bits(m: str) -> int:
    base = m.replace("_2addr_stride64", "").replace("_2addr", "").replace("read2st64", "read").replace("read2", "read")
    base = base.replace("write2st64", "write").replace("write2", "write")
    base = re.sub(r"_d16(_hi)?$", "", base)
    pair = 2 if ("2addr" in m or "read2" in m or "write2" in m) else 1
    if (w := _DWORD.search(base)):
        return 32 * int(w.group(1) or 1) * pair
    if (w := _WIDTH.search(base)):
        return int(w.group(1)) * pair
    for suf, b in (("ubyte", 8), ("sbyte", 8), ("byte", 8), ("ushort", 16), ("sshort", 16), ("short", 16)):
        if base.endswith(suf):
            return b * pair
    return 32 * pair


def classify(line: str) -> Op | None:
    """Op for one assembly line, or None for labels, directives, comments and blanks."""
    text = line.split(";", 1)[0].strip()
    if not text or text.startswith((".", "//")) or _LABEL.match(text):
        return None
    m = text.split()[0]
    if m.startswith("v_wmma"):
        return Op(m, "wmma")
    if m.startswith("v_"):
        return Op(m, "valu")
    if m.startswith(("global_load", "buffer_load", "flat_load")):
        return Op(m, "vmem_load", _bits(m))
    if m.startswith(("global_store", "buffer_store", "flat_store", "global_atomic", "buffer_atomic", "flat_atomic")):
        return Op(m, "vmem_store", _bits(m))
    if m.startswith("scratch_load"):
        return Op(m, "scratch_load", _bits(m))
    if m.startswith("scratch_store"):
        return Op(m, "scratch_store", _bits(m))
    if m.startswith(("ds_load", "ds_read")) or m in ("ds_bpermute_b32", "ds_permute_b32", "ds_swizzle_b32"):
        return Op(m, "ds_read", _bits(m))
    if m.startswith("ds_"):
        return Op(m, "ds_write", _bits(m))
    if m in _HINTS:
        return Op(m, "hint")
    if m.startswith("s_waitcnt") or m.startswith("s_wait_"):
        return _wait(m, text)
    if m.startswith(("s_branch", "s_cbranch")):
        return Op(m, "branch")
    if m.startswith("s_barrier"):
        return Op(m, "barrier")
    if m.startswith(("s_load", "s_buffer_load", "s_store", "s_dcache", "s_gl1_inv", "s_icache")):
        return Op(m, "smem")
    if m.startswith("s_"):
        return Op(m, "salu")
    return Op(m, "other")


def _wait(m: str, text: str) -> Op:
    vm = lg = -1
    if m == "s_waitcnt":
        for name, n in _COUNTER.findall(text):
            if name == "vmcnt":
                vm = int(n)
            else:
                lg = int(n)
    elif m in ("s_wait_loadcnt", "s_waitcnt_vmcnt"):
        vm = _last_int(text)
    elif m in ("s_wait_dscnt", "s_wait_kmcnt", "s_waitcnt_lgkmcnt"):
        lg = _last_int(text)
    elif m == "s_wait_loadcnt_dscnt":
        v = _last_int(text)
        vm, lg = v >> 8, v & 0x3F  # RDNA4 ISA: loadcnt in [13:8], dscnt in [5:0]
    return Op(m, "waitcnt", vm_wait=vm, lgkm_wait=lg)


def _last_int(text: str) -> int:
    tok = text.replace(",", " ").split()[-1]
    try:
        return int(tok, 0)
    except ValueError:
        return 0


@dataclass(frozen=True)
class LoopStats:
    """Per-wave counts for one steady-state loop iteration (or the whole kernel when
    `found` is False: a fully unrolled kernel is treated as one iteration)."""
    found: bool
    label: str
    ops: tuple[Op, ...]
    outside: tuple[Op, ...] = field(default=())   # prologue + epilogue instructions
    # blocks after the back-edge that branch back to the loop head themselves (part of `outside` too):
    # code some trips run on top of the body -- the attention forward's edge-mask block (v_cmp /
    # v_cndmask of the S tile for key tiles crossing seq_k or the causal diagonal)
    edge: tuple[Op, ...] = field(default=())

    def count(self, kind: str) -> int:
        return sum(1 for o in self.ops if o.kind == kind)

    def widths(self, kind: str) -> dict[int, int]:
        return dict(sorted(Counter(o.bits for o in self.ops if o.kind == kind).items()))

    def lane_bytes(self, kind: str, ops: tuple[Op, ...] | None = None) -> int:
        """Bytes one lane moves for `kind` per iteration (x32 for the wave)."""
        return sum(o.bits for o in (self.ops if ops is None else ops) if o.kind == kind) // 8

    @property
    def wmma(self) -> int:
        return self.count("wmma")

    @property
    def transcendental(self) -> int:
        """Quarter-rate transcendentals (v_exp/v_log/v_rcp/v_rsq/v_sqrt/v_sin/v_cos) among `ops`."""
        return count_transcendental(self.ops)

    @property
    def issued(self) -> int:
        """Instructions that take an issue slot (hints excluded)."""
        return sum(1 for o in self.ops if o.kind != "hint")

    @property
    def edge_issued(self) -> int:
        return sum(1 for o in self.edge if o.kind != "hint")

    def density(self, edge_share: float = 0.0) -> float:
        """v_wmma per issued instruction over trips of which `edge_share` also run the edge block."""
        issued = self.issued + edge_share * self.edge_issued
        return self.wmma / issued if issued else 0.0

    def summary(self) -> dict:
        kinds = ("wmma", "valu", "salu", "smem", "waitcnt", "barrier", "branch", "hint",
                 "vmem_load", "vmem_store", "scratch_load", "scratch_store", "ds_read", "ds_write")
        return {"found": self.found, "label": self.label, "instructions": len(self.ops), "issued": self.issued,
                **{k: self.count(k) for k in kinds}, "edge_issued": self.edge_issued,
                "global_load_widths": self.widths("vmem_load"), "global_store_widths": self.widths("vmem_store"),
                "ds_read_widths": self.widths("ds_read"), "ds_write_widths": self.widths("ds_write"),
                "global_load_bytes_per_wave": 32 * self.lane_bytes("vmem_load"),
                "ds_bytes_per_wave": 32 * (self.lane_bytes("ds_read") + self.lane_bytes("ds_write"))}


def count_transcendental(ops) -> int:
    """Transcendental VALU instructions among `ops` (a loop body as find_main_loop returns it)."""
    return sum(1 for o in ops if o.kind == "valu" and _TRANSCENDENTAL.match(o.mnemonic))


def kernel_lines(isa: str) -> list[str]:
    """The instruction and label lines of the (single) kernel function body."""
    out, inside = [], False
    for line in isa.splitlines():
        s = line.strip()
        if not inside:
            inside = bool(_LABEL.match(s)) and not s.startswith(".")
            continue
        if s.startswith(".Lfunc_end") or s.startswith(".section") or s.startswith(".size"):
            break
        out.append(s)
    return out


def find_main_loop(isa: str) -> LoopStats:
    lines = kernel_lines(isa)
    ops = [classify(t) for t in lines]
    labels = {m.group(1): i for i, t in enumerate(lines) if (m := _LABEL.match(t))}
    best = None
    for i, op in enumerate(ops):
        if op is None or op.kind != "branch":
            continue
        j = labels.get(lines[i].split(";", 1)[0].split()[-1])
        if j is None or j > i:
            continue  # forward branch
        body = [o for o in ops[j + 1:i + 1] if o is not None]
        key = (sum(o.kind == "wmma" for o in body), -len(body))
        if best is None or key > best[0]:
            best = (key, _LABEL.match(lines[j]).group(1), tuple(body), j, i)   # the name, not LLVM's comment
    if best is None:
        return LoopStats(False, "", tuple(o for o in ops if o is not None))
    _, label, body, j, i = best
    outside = tuple(o for o in ops[:j] + ops[i + 1:] if o is not None)
    rejoin = [k for k, o in enumerate(ops) if k > i and o is not None and o.kind == "branch"
              and labels.get(lines[k].split(";", 1)[0].split()[-1]) == j]
    edge = tuple(o for o in ops[i + 1:max(rejoin) + 1] if o is not None) if rejoin else ()
    return LoopStats(True, label, body, outside, edge)


def wave_iteration_clocks(ops: tuple[Op, ...], cost: dict[str, float], vm_latency: float,
                          lgkm_latency: float, passes: int = 3) -> float:
    """Clocks one wave alone needs for one steady-state iteration: issue cost of every
    instruction plus the stalls its s_waitcnt's impose on loads of this or the previous
    iteration (simulated over `passes` iterations; the last one is returned)."""
    t = 0.0
    vm: list[float] = []    # completion times of outstanding loads, oldest first
    lg: list[float] = []
    start = 0.0
    for _ in range(passes):
        start = t
        for o in ops:
            t += cost.get(o.kind, 1.0)
            if o.kind in ("vmem_load", "scratch_load"):
                vm.append(t + vm_latency)
            elif o.kind in ("ds_read", "smem"):
                lg.append(t + lgkm_latency)
            elif o.kind == "waitcnt":
                if o.vm_wait >= 0 and len(vm) > o.vm_wait:
                    t = max(t, vm[len(vm) - o.vm_wait - 1])
                    vm = vm[len(vm) - o.vm_wait:] if o.vm_wait else []
                if o.lgkm_wait >= 0 and len(lg) > o.lgkm_wait:
                    t = max(t, lg[len(lg) - o.lgkm_wait - 1])
                    lg = lg[len(lg) - o.lgkm_wait:] if o.lgkm_wait else []
        vm = [c for c in vm if c > t]  # completed ones no longer count
        lg = [c for c in lg if c > t]
    return t - start


def main_loop_density(isas) -> float:
    """v_wmma per issued instruction of the main loops of a kernel set (the ISA texts of its kernels):
    summed over the kernels whose main loop issues WMMAs (a backward's dK/dV and dQ kernels together; a
    paged decode's loop without its combine kernel), 0.0 when none does. Compiler output, static: the
    figure the shipped-entry rule compares (tests/compile/test_shipped_density.py)."""
    loops = [lp for lp in (find_main_loop(t) for t in isas) if lp.wmma]
    issued = sum(lp.issued for lp in loops)
    return sum(lp.wmma for lp in loops) / issued if issued else 0.0
