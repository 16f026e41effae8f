"""Register state of a *group*: W waves that share one PC and execute together.

Layout (lanes last, STYLE rule 11):
  v: uint32 (nvgpr, W, 32)   VGPR r of every wave is v[r], shape (W, 32)
  s: uint32 (256, W)         scalar file indexed by the hardware operand encoding
                             (RDNA3 ISA guide §3.3): s0..s105, vcc_lo=106, vcc_hi=107,
                             null=124 (reads 0, writes dropped), m0=125, exec_lo=126,
                             exec_hi=127; SCC lives at 253 (its SRC_SCC encoding).
EXEC as a (W, 32) bool mask is cached and refreshed whenever exec_lo is written.
"""
from __future__ import annotations

import numpy as np

LANES = np.arange(32, dtype=np.uint32)
EXEC, VCC, M0, NULL, SCC = 126, 106, 125, 124, 253
NSREG = 256


def bits_to_mask(bits: np.ndarray) -> np.ndarray:
    """(W,) uint32 lane mask -> (W, 32) bool."""
    return ((bits[:, None] >> LANES) & 1).astype(bool)


def mask_to_bits(mask: np.ndarray) -> np.ndarray:
    """(W, 32) bool -> (W,) uint32 (bit l = lane l)."""
    packed = np.packbits(np.ascontiguousarray(mask, dtype=bool), axis=-1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u4")[:, 0].astype(np.uint32)


class Group:
    """W waves at one PC. `wave` holds global wave ids, `wg` the workgroup slot (index
    into the launch batch's LDS), `base_steps` each wave's instruction count before this
    group was formed; `nsteps` counts instructions since."""

    __slots__ = ("pc", "v", "s", "wave", "wg", "base_steps", "nsteps", "mask", "exec_all",
                 "status", "priv")

    def __init__(self, pc, v, s, wave, wg, base_steps, priv=None):
        self.pc, self.v, self.s, self.wave, self.wg = pc, v, s, wave, wg
        self.base_steps, self.nsteps = base_steps, 0
        self.status = "run"
        self.priv = priv
        self.refresh_exec()

    @property
    def W(self) -> int:
        return self.s.shape[1]

    def refresh_exec(self) -> None:
        e = self.s[EXEC]
        self.exec_all = bool((e == 0xFFFFFFFF).all())
        self.mask = bits_to_mask(e)

    def take(self, idx: np.ndarray) -> "Group":
        """A new group made of waves `idx` (indices into this group), same PC."""
        g = Group(self.pc, self.v[:, idx], self.s[:, idx], self.wave[idx], self.wg[idx],
                  self.base_steps[idx] + self.nsteps,
                  None if self.priv is None else self.priv[idx])
        return g

    @staticmethod
    def merge(groups: list["Group"]) -> "Group":
        """One group from several at the same PC."""
        priv = None if groups[0].priv is None else np.concatenate([g.priv for g in groups])
        return Group(groups[0].pc, np.concatenate([g.v for g in groups], axis=1),
                     np.concatenate([g.s for g in groups], axis=1),
                     np.concatenate([g.wave for g in groups]), np.concatenate([g.wg for g in groups]),
                     np.concatenate([g.base_steps + g.nsteps for g in groups]), priv)
