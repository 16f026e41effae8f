"""Runs groups of waves over the bound program.

Batched mode: all waves of a launch batch start as one group. A group runs until its PC
reaches the lowest PC of another runnable group (then the two merge), a scalar branch
diverges (the group splits by wave), it reaches s_barrier (it waits until every live wave
of each of its workgroups has arrived; if the group holds all of them it goes on at once)
or s_endpgm. Per-wave mode (the reference): every wave is its own group, groups never
merge and each runs until it blocks.
"""
from __future__ import annotations

import numpy as np

from ...errors import EmulatorFault
from ..isa.table import BARRIER, END, Fault, Split
from .state import Group


class Scheduler:
    def __init__(self, prog, ops, ctx, n_wg: int, max_steps: int, merge: bool):
        self.prog, self.ops, self.ctx = prog, ops, ctx
        self.max_steps, self.merge = max_steps, merge
        self.alive = np.zeros(n_wg, np.int64)
        self.arrived = np.zeros(n_wg, np.int64)
        self.runnable: list[Group] = []
        self.waiting: list[Group] = []
        self.wave_instructions = 0

    def add(self, g: Group) -> None:
        np.add.at(self.alive, g.wg, 1)
        self.runnable.append(g)

    # ---- main loop ------------------------------------------------------------------------------
    def run(self) -> None:
        while self.runnable or self.waiting:
            if not self.runnable:
                if not self._release():
                    g = self.waiting[0]
                    self._fault(g, g.pc, Fault("barrier deadlock: waves wait at s_barrier that "
                                               "the rest of their workgroup never reaches", wave=0))
                continue
            g, limit = self._pick()
            r = self._step(g, limit)
            if r is None:
                continue
            self.runnable.remove(g)
            if r is END:
                g.status = "done"
                np.subtract.at(self.alive, g.wg, 1)
                self._release()
            elif r is BARRIER:
                np.add.at(self.arrived, g.wg, 1)
                self.waiting.append(g)
                self._release()
            else:  # Split
                taken = np.nonzero(r.taken)[0]
                rest = np.nonzero(~r.taken)[0]
                a, b = g.take(taken), g.take(rest)
                a.pc, b.pc = r.target, g.pc + 1
                self.runnable += [a, b]

    def _pick(self):
        if not self.merge or len(self.runnable) == 1:
            return self.runnable[-1], 1 << 62
        low = min(g.pc for g in self.runnable)
        same = [g for g in self.runnable if g.pc == low]
        if len(same) > 1:
            merged = Group.merge(same)
            self.runnable = [g for g in self.runnable if g.pc != low] + [merged]
            g = merged
        else:
            g = same[0]
        others = [o.pc for o in self.runnable if o is not g]
        return g, (min(others) if others else 1 << 62)

    def _release(self) -> bool:
        """Let waves go past s_barrier where their whole (live) workgroup has arrived."""
        full = (self.arrived == self.alive) & (self.arrived > 0)
        if not full.any():
            return False
        still = []
        for g in self.waiting:
            rel = full[g.wg]
            if rel.all():
                g.pc += 1
                self.runnable.append(g)
            elif rel.any():
                go, stay = g.take(np.nonzero(rel)[0]), g.take(np.nonzero(~rel)[0])
                go.pc += 1
                self.runnable.append(go)
                still.append(stay)
            else:
                still.append(g)
        self.waiting = still
        self.arrived[full] = 0
        return True

    # ---- the hot loop ------------------------------------------------------------------------------
    def _step(self, g: Group, limit: int):
        """Run g until it leaves the straight path; returns None (still runnable) or a signal."""
        ops, ctx, pc, n = self.ops, self.ctx, g.pc, 0
        budget = self.max_steps - g.nsteps - int(g.base_steps.max(initial=0))
        try:
            while True:
                if n >= budget:
                    raise Fault(f"step limit exceeded: a wave executed more than {self.max_steps} "
                                "instructions (max_steps)", wave=0)
                r = ops[pc](g, ctx)
                n += 1
                if r is None:
                    pc += 1
                elif r.__class__ is int:
                    pc = r
                else:
                    if r is BARRIER or r is END:
                        return r
                    return r if isinstance(r, Split) else self._bad(r)
                if pc >= limit:
                    return None
        except Fault as f:
            self._fault(g, pc, f)
        finally:
            g.pc = pc
            g.nsteps += n
            self.wave_instructions += n * g.W

    @staticmethod
    def _bad(r):
        raise Fault(f"internal: instruction returned {r!r}")

    def _fault(self, g: Group, pc: int, f: Fault):
        ins = self.prog.instrs[pc] if pc < len(self.prog.instrs) else None
        wave = int(g.wave[f.wave]) if f.wave is not None else int(g.wave[0])
        if ins is not None and ins.encoding:   # decoded machine code: byte offset, raw bytes, class
            where = f" [instruction #{pc}, {ins.fmt} encoding {ins.encoding}]"
            at = ins.pc
        else:
            where = f" [instruction #{pc}, line {ins.line}]" if ins is not None else ""
            at = pc
        raise EmulatorFault(f.message + where, kernel=self.prog.name, pc=at,
                            instruction=ins.text if ins is not None else "<past end of program>",
                            wave=wave, lane=f.lane, address=f.address) from None
