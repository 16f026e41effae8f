"""`Program`: one kernel, decoded once — instructions, labels, the kernel descriptor (as
`.amdhsa_*` names) and the `amdhsa.kernels` metadata entry.

Two front ends build the same Program:
  Program.from_code_object(hsaco)  the machine code a GPU runs: ELF .text, the 64-byte kernel
                                   descriptor and the MessagePack metadata note (decode/)
  Program.from_isa(text)           LLVM's assembly text of the same compilation; kept as a test
                                   oracle (tests/emu/test_decode_crosscheck.py) and for
                                   hand-written assembly in instruction-level tests

Directive meanings: llvm/docs/AMDGPUUsage.rst, "Code Object V3+ Kernel Descriptor" and
"AMDHSA Kernel Assembler Directives"; metadata keys: "Code Object V3+ Metadata".
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import yaml

from ...errors import EmulatorFault
from ..isa.table import GFX11, GFX12, family
from .asm import parse_instruction
from ...codeobj.codeobject import load_code_object
from ...codeobj.descriptor import decode_descriptor
from ...codeobj.instr import Instr
from ...codeobj.machine import decode

_LABEL = re.compile(r"^([.\w$]+):\s*(?:[;/].*)?$")
# `.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"`, also with feature suffixes (":sramecc+:xnack-")
# or an environment field ("amdgcn-amd-amdhsa-unknown-gfx1100") as other producers write it.
_TARGET = re.compile(r'^\s*\.amdgcn_target\s+"amdgcn-amd-amdhsa-[\w.]*-(gfx[0-9a-f]+)', re.M)


@dataclass(frozen=True)
class KernArg:
    offset: int
    size: int
    kind: str           # .value_kind: by_value, global_buffer, hidden_block_count_x, ...
    name: str = ""


@dataclass
class Program:
    name: str
    instrs: list[Instr]
    labels: dict[str, int]
    descriptor: dict[str, int]
    metadata: dict = field(default_factory=dict)
    isa: str = ""
    arch: str = ""      # from `.amdgcn_target "amdgcn-amd-amdhsa--gfx1151"`; "" if absent
    features: dict = field(default_factory=dict)    # target-id features, {"xnack": False, ...}
    source: str = "isa"  # "hsaco" (machine code) or "isa" (assembly text)

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_isa(cls, isa_text: str, kernel_name: str | None = None) -> "Program":
        """Parse the kernel `kernel_name` (default: the only kernel) out of `isa_text`."""
        kernels = re.findall(r"^\s*\.amdhsa_kernel\s+(\S+)", isa_text, re.M)
        if not kernels:
            raise EmulatorFault("ISA text has no .amdhsa_kernel descriptor")
        if kernel_name is None:
            if len(kernels) > 1:
                raise EmulatorFault(f"ISA text holds kernels {kernels}; pass kernel_name")
            kernel_name = kernels[0]
        if kernel_name not in kernels:
            raise EmulatorFault(f"kernel {kernel_name!r} not in ISA text; it has {kernels}")
        instrs, labels = _parse_body(isa_text, kernel_name)
        desc = _parse_descriptor(isa_text, kernel_name)
        meta = _parse_metadata(isa_text, kernel_name)
        target = _TARGET.search(isa_text)
        prog = cls(kernel_name, instrs, labels, desc, meta, isa_text, target.group(1) if target else "")
        for ins in instrs:
            for op in ins.operands + (ins.pair.operands if ins.pair else ()):
                if op.kind == "label" and op.value not in labels:
                    raise EmulatorFault(f"branch to unknown label {op.value}", kernel=kernel_name,
                                        instruction=ins.text)
        return prog

    @classmethod
    def from_code_object(cls, data: bytes, kernel_name: str | None = None) -> "Program":
        """Decode kernel `kernel_name` (default: the only kernel) of a code object (hsaco)."""
        co = load_code_object(data)
        if co.arch not in GFX11 | GFX12:
            raise EmulatorFault(f"code object arch={co.arch} is not allowed: the emulator runs "
                                f"{', '.join(sorted(GFX11 | GFX12))}")
        names = sorted(co.kernels)
        if kernel_name is None:
            if len(names) > 1:
                raise EmulatorFault(f"code object holds kernels {names}; pass kernel_name")
            kernel_name = names[0]
        if kernel_name not in co.kernels:
            raise EmulatorFault(f"kernel {kernel_name!r} not in the code object; it has {names}")
        k = co.kernels[kernel_name]
        fam = family(co.arch)
        instrs, labels = decode(k.code, fam, kernel_name, k.code_address)
        desc = decode_descriptor(k.descriptor, fam)
        prog = cls(kernel_name, instrs, labels, desc, k.metadata, "", co.arch, co.features, "hsaco")
        for ins in instrs:
            for op in ins.operands:
                if op.kind == "label" and op.value not in labels:
                    raise EmulatorFault(f"branch to {op.value[5:]} (byte offset) is not an instruction "
                                        "boundary of the kernel", kernel=kernel_name, pc=ins.pc,
                                        instruction=ins.text)
        if not instrs:
            raise EmulatorFault("kernel has no instructions", kernel=kernel_name)
        return prog

    @classmethod
    def load(cls, path, kernel_name: str | None = None) -> "Program":
        """Program of a code object file (.hsaco / .co / .o)."""
        with open(path, "rb") as f:
            return cls.from_code_object(f.read(), kernel_name)

    # ---- derived facts (descriptor first, metadata as cross-check) ------------------------
    def desc(self, key: str, default: int = 0) -> int:
        return self.descriptor.get(key, default)

    @property
    def group_segment_size(self) -> int:
        return self.desc("group_segment_fixed_size", int(self.metadata.get(".group_segment_fixed_size", 0)))

    @property
    def private_segment_size(self) -> int:
        return self.desc("private_segment_fixed_size", 0)

    @property
    def kernarg_size(self) -> int:
        return int(self.metadata.get(".kernarg_segment_size", self.desc("kernarg_size", 0)))

    @property
    def wave_size(self) -> int:
        return 32 if self.desc("wavefront_size32", 1) else 64

    @property
    def args(self) -> list[KernArg]:
        return [KernArg(int(a[".offset"]), int(a[".size"]), str(a.get(".value_kind", "")),
                        str(a.get(".name", ""))) for a in self.metadata.get(".args", [])]

    @property
    def next_free_vgpr(self) -> int:
        return self.desc("next_free_vgpr", 0)

    def pack_kernarg(self, values: list, grid: tuple[int, int, int], block: tuple[int, int, int],
                     dynamic_lds: int = 0) -> bytes:
        """Kernarg bytes from the metadata `.args`: explicit args take `values` in order
        (ints; pointers are device addresses), hidden_* args are filled from grid/block
        (AMDGPUUsage.rst "Code Object V5 Metadata" hidden argument table)."""
        buf = bytearray(max(self.kernarg_size, 1))
        explicit = [a for a in self.args if not a.kind.startswith("hidden_")]
        if len(values) != len(explicit):
            raise EmulatorFault(f"kernel {self.name} takes {len(explicit)} explicit args "
                                f"({[a.kind for a in explicit]}), got {len(values)}")
        hidden = _hidden_values(grid, block, dynamic_lds)
        for a in self.args:
            if a.kind.startswith("hidden_"):
                v = hidden.get(a.kind, 0)
            else:
                v = values[explicit.index(a)]
            if isinstance(v, float):
                raw = struct.pack({4: "<f", 8: "<d"}[a.size], v)
            else:
                raw = int(v).to_bytes(a.size, "little", signed=int(v) < 0)
            buf[a.offset:a.offset + a.size] = raw
        return bytes(buf)


def _hidden_values(grid, block, dynamic_lds: int = 0) -> dict[str, int]:
    """Hidden kernel arguments as the HIP runtime fills them for a dispatch of whole
    workgroups (AMDGPUUsage "Code Object V5 Metadata", hidden argument table): block counts
    (u32), group sizes and remainders (u16; the grid is whole workgroups, so remainder 0),
    global offsets 0, grid dims, the dynamic LDS size; apertures and runtime service pointers
    (printf/hostcall buffers, heap, queue) stay 0, so a kernel that uses them faults on address 0."""
    out = {}
    for i, ax in enumerate("xyz"):
        out[f"hidden_block_count_{ax}"] = grid[i]
        out[f"hidden_group_size_{ax}"] = block[i]
        out[f"hidden_remainder_{ax}"] = 0
        out[f"hidden_global_offset_{ax}"] = 0
    out["hidden_grid_dims"] = 3 if grid[2] * block[2] > 1 else (2 if grid[1] * block[1] > 1 else 1)
    out["hidden_dynamic_lds_size"] = dynamic_lds
    return out


def _strip_comment(line: str) -> str:
    for c in (";", "//"):
        i = line.find(c)
        if i >= 0:
            line = line[:i]
    return line.strip()


def _parse_body(text: str, name: str) -> tuple[list[Instr], dict[str, int]]:
    lines = text.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.strip() == f"{name}:" or
                     l.strip().startswith(f"{name}:") and _LABEL.match(l.strip()))
    except StopIteration:
        raise EmulatorFault(f"no code label '{name}:' in ISA text", kernel=name) from None
    instrs: list[Instr] = []
    labels: dict[str, int] = {}
    for lineno in range(start + 1, len(lines)):
        s = lines[lineno].strip()
        if s.startswith(".Lfunc_end") or s.startswith(".size") or s.startswith(".section"):
            break
        m = _LABEL.match(s)
        if m:
            labels[m.group(1)] = len(instrs)
            continue
        s = _strip_comment(s)
        if not s or s.startswith("."):
            continue
        try:
            instrs.append(parse_instruction(s, lineno + 1))
        except ValueError as e:
            raise EmulatorFault(f"cannot parse instruction ({e})", kernel=name, instruction=s) from None
    if not instrs:
        raise EmulatorFault("kernel has no instructions", kernel=name)
    return instrs, labels


def _parse_descriptor(text: str, name: str) -> dict[str, int]:
    m = re.search(rf"^\s*\.amdhsa_kernel\s+{re.escape(name)}\s*$(.*?)^\s*\.end_amdhsa_kernel",
                  text, re.M | re.S)
    out: dict[str, int] = {}
    for line in (m.group(1).splitlines() if m else ()):
        parts = _strip_comment(line).split()
        if len(parts) == 2 and parts[0].startswith(".amdhsa_"):
            try:
                out[parts[0][len(".amdhsa_"):]] = int(parts[1], 0)
            except ValueError:
                pass
    return out


def _parse_metadata(text: str, name: str) -> dict:
    m = re.search(r"\.amdgpu_metadata\s*\n(.*?)\n\s*\.end_amdgpu_metadata", text, re.S)
    if not m:
        return {}
    doc = metadata_yaml(m.group(1))
    for k in (doc or {}).get("amdhsa.kernels", []) or []:
        if k.get(".name") == name:
            return k
    return {}


def metadata_yaml(text: str):
    """One `.amdgpu_metadata` YAML document of an ISA text (AMDGPUUsage "Code Object V3+
    Metadata"; anything after the `...` end marker is ignored). Code objects carry the same
    document as MessagePack (codeobject.py)."""
    end = text.find("\n...")
    return yaml.safe_load(text[:end] if end >= 0 else text)
