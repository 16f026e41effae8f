"""The instruction objects both front ends produce and the executor binds: `Instr` (mnemonic,
operands, modifiers; for decoded machine code also its byte offset, raw encoding and encoding
class) and `Operand`, plus the hardware operand encodings the scalar file is indexed with.

Producers: decode/machine.py (machine code, the path kernels run on) and decode/asm.py
(LLVM's assembly text: test oracle and hand-written kernels).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Hardware operand encodings (RDNA3 ISA guide §3.3 "SGPRs" / §6.2 "Scalar operands");
# the emulator indexes its scalar file with them.
SPECIAL_SGPR = {
    "vcc_lo": (106, 1), "vcc_hi": (107, 1), "vcc": (106, 2), "null": (124, 1),
    "m0": (125, 1), "exec_lo": (126, 1), "exec_hi": (127, 1), "exec": (126, 2),
    "scc": (253, 1),
}
SCC = 253
TTMP0 = 108  # ttmp0..ttmp15; gfx12 passes workgroup ids in ttmp9 / ttmp7 (see run/launch.py)
INV_2PI = 0.15915494309189532


@dataclass(frozen=True)
class Operand:
    """One parsed operand. kind: 'v', 's' (index = hardware encoding, count = dwords),
    'int' (value = python int), 'float' (value = python float), 'off', 'label'."""
    kind: str
    index: int = 0
    count: int = 1
    half: str | None = None      # 'l' / 'h' for true16 register halves
    value: object = None
    neg: bool = False
    abs: bool = False
    text: str = ""

    @property
    def is_reg(self) -> bool:
        return self.kind in ("v", "s")


@dataclass
class Instr:
    """One instruction: mnemonic (with encoding suffix), operands, modifiers."""
    mnemonic: str
    operands: tuple[Operand, ...]
    mods: dict = field(default_factory=dict)
    text: str = ""
    line: int = 0
    pair: "Instr | None" = None  # second half of a VOPD dual-issue
    pc: int = -1                 # byte offset in the code object's .text (decoded machine code)
    encoding: str = ""           # the instruction's bytes, hex (decoded machine code)
    fmt: str = ""                # encoding class: sop2, vop3, ds, ... (decoded machine code)

    @property
    def base(self) -> str:
        """Mnemonic without the encoding suffix (_e32, _e64, _dpp, _e64_dpp)."""
        return strip_encoding(self.mnemonic)


def strip_encoding(m: str) -> str:
    for suf in ("_e64_dpp", "_e32_dpp", "_e64", "_e32", "_dpp"):
        if m.endswith(suf):
            return m[: -len(suf)]
    return m


# Mnemonics whose operand text is free-form and ignored (timing hints only).
RAW_OPERANDS = ("s_waitcnt", "s_delay_alu", "s_waitcnt_depctr", "s_sendmsg", "s_clause",
                 "s_setprio", "s_nop", "s_sleep", "s_inst_prefetch", "s_set_inst_prefetch_distance",
                 "s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt", "s_waitcnt_expcnt",
                 "s_denorm_mode", "s_round_mode", "s_version", "s_setreg_imm32_b32", "s_getreg_b32",
                 "s_setreg_b32", "s_sendmsghalt", "s_icache_inv", "s_code_end", "s_ttracedata",
                 # gfx12 split counters (AMDGPUAsmGFX12.rst SOPP): `s_wait_alu depctr_sa_sdst(0)`
                 "s_wait_alu", "s_wait_loadcnt", "s_wait_storecnt", "s_wait_samplecnt",
                 "s_wait_bvhcnt", "s_wait_expcnt", "s_wait_dscnt", "s_wait_kmcnt",
                 "s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt", "s_wait_idle", "s_wait_event")
