"""An AMDGPU code object (hsaco, ELF64) -> its kernels: code bytes, kernel descriptor and the
metadata note, checked field by field so that a bad file fails with a clear error.

Facts (llvm/docs/AMDGPUUsage.rst): "ELF Header" (EI_CLASS ELFCLASS64, EI_DATA little endian,
e_machine EM_AMDGPU = 224, EI_OSABI ELFOSABI_AMDGPU_HSA = 64, EI_ABIVERSION 2/3/4 = code object
V4/V5/V6, e_flags & 0xff = EF_AMDGPU_MACH); "Symbols" (a kernel has a STT_FUNC symbol `name`
for its code and a STT_OBJECT symbol `name.kd` for its 64-byte descriptor in .rodata; the
entry is the descriptor address + kernel_code_entry_byte_offset); "Code Object V3+ Metadata"
(NT_AMDGPU_METADATA = 32 note "AMDGPU", MessagePack, `amdhsa.target` and `amdhsa.kernels`);
"Target ID" (`amdgcn-amd-amdhsa--gfx1100`, optionally followed by `:sramecc+`/`:xnack-`
feature settings).

This is wmma_gen's one ELF reader: the compiler reads the metadata note of the object it
linked (compiler/metadata.py), the HIP device its EF_AMDGPU_MACH, the emulator its kernels.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import msgpack

from ..errors import EmulatorFault

EM_AMDGPU, ELFOSABI_AMDGPU_HSA, NT_AMDGPU_METADATA = 224, 64, 32
ET_DYN = 3                  # a linked code object is a shared object (ld.lld -shared)
SHT_SYMTAB, SHT_NOTE, SHT_DYNSYM = 2, 7, 11
STT_FUNC, STT_OBJECT = 2, 1
# EF_AMDGPU_MACH_AMDGCN_* (AMDGPUUsage "AMDGPU ELF Header e_flags for Code Object V4 and After")
MACH = {0x041: "gfx1100", 0x046: "gfx1101", 0x047: "gfx1102", 0x044: "gfx1103", 0x043: "gfx1150",
        0x04a: "gfx1151", 0x055: "gfx1152", 0x058: "gfx1153", 0x05d: "gfx1170", 0x05e: "gfx1171", 0x048: "gfx1200",
        0x04e: "gfx1201"}  # gfx1170/gfx1171: llvm test/CodeGen/AMDGPU/elf-header-flags-mach.ll
# LLVM 23+ (e.g. Triton 3.9's) spells the arch "amdgpu11.00" instead of "amdgcn": "amdgpu11.00-amd-amdhsa-unknown-gfx1100"
_TARGET = re.compile(r"^(?:amdgcn|amdgpu[\d.]*)-amd-amdhsa-[\w.]*-(gfx[0-9a-f]+)((?::[\w-]+[+-])*)$")


class CodeObjectError(EmulatorFault):
    """The file is not an AMDGPU code object the emulator can load."""

    def __init__(self, message: str, kernel: str = "?"):
        super().__init__(message, kernel=kernel)


def parse_target_id(target: str) -> tuple[str, dict[str, bool]]:
    """'amdgcn-amd-amdhsa--gfx1100:sramecc+:xnack-' -> ('gfx1100', {'sramecc': True, 'xnack': False})."""
    m = _TARGET.match(target.strip())
    if not m:
        raise CodeObjectError(f"target id {target!r} is not of the form amdgcn-amd-amdhsa--gfxNNNN[:feature(+|-)]...")
    feats = {f[:-1]: f[-1] == "+" for f in m.group(2).split(":") if f}
    return m.group(1), feats


@dataclass
class Kernel:
    name: str
    code: bytes
    code_address: int           # virtual address of code[0]
    descriptor: bytes
    metadata: dict = field(default_factory=dict)
    tail: bytes = b""           # bytes after the function up to the next kernel's code or its section's
                                # end: LLVM's s_code_end padding (prefetch past the end stays in code)


@dataclass
class CodeObject:
    arch: str
    features: dict
    abi_version: int
    kernels: dict[str, Kernel]
    metadata: dict              # the whole NT_AMDGPU_METADATA document
    e_type: int = 0             # ET_DYN for a linked code object
    e_flags: int = 0
    osabi: int = ELFOSABI_AMDGPU_HSA
    sections: dict = field(default_factory=dict)    # name -> (file offset, size, sh_type)

    @property
    def mach(self) -> int:
        """EF_AMDGPU_MACH (e_flags & 0xff): what HIP matches against the device."""
        return self.e_flags & 0xFF


def _need(data: bytes, off: int, n: int, what: str) -> None:
    if off < 0 or off + n > len(data):
        raise CodeObjectError(f"truncated code object: {what} at bytes {off}..{off + n} is past the end "
                              f"of the {len(data)}-byte file")


def _sections(data: bytes):
    if data[:4] != b"\x7fELF":
        raise CodeObjectError("not an ELF file (no \\x7fELF magic)")
    _need(data, 0, 64, "ELF header")
    if data[4] != 2 or data[5] != 1:
        raise CodeObjectError("not a little-endian ELF64 file (AMDGPU code objects are ELFCLASS64, ELFDATA2LSB)")
    machine, = struct.unpack_from("<H", data, 18)
    if machine != EM_AMDGPU:
        raise CodeObjectError(f"ELF e_machine={machine} is not allowed: AMDGPU code objects have EM_AMDGPU={EM_AMDGPU}")
    if data[7] != ELFOSABI_AMDGPU_HSA:
        raise CodeObjectError(f"ELF EI_OSABI={data[7]} is not allowed: HSA code objects have {ELFOSABI_AMDGPU_HSA}")
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    if shnum and shentsize < 64:
        raise CodeObjectError(f"ELF e_shentsize={shentsize} is not allowed: ELF64 section headers are 64 bytes")
    _need(data, shoff, shentsize * shnum, "section header table")
    secs = []
    for i in range(shnum):
        name, typ, _fl, addr, off, size, link, _info, _al, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        if typ != 8:  # SHT_NOBITS has no file bytes
            _need(data, off, size, f"section {i}")
        secs.append(dict(name=name, type=typ, addr=addr, off=off, size=size, link=link, entsize=entsize))
    if not 0 <= shstrndx < len(secs):
        raise CodeObjectError("ELF e_shstrndx names no section")
    strtab = secs[shstrndx]
    for s in secs:
        s["name"] = _cstr(data, strtab["off"] + s["name"], strtab["off"] + strtab["size"])
    return secs


def _cstr(data: bytes, start: int, end: int) -> str:
    stop = data.find(b"\0", start, end)
    return data[start:stop if stop >= 0 else end].decode("utf-8", "replace")


def _notes(blob: bytes) -> dict:
    out, pos = {}, 0
    while pos + 12 <= len(blob):
        namesz, descsz, ntype = struct.unpack_from("<III", blob, pos)
        pos += 12
        name = blob[pos:pos + namesz].rstrip(b"\0")
        pos += (namesz + 3) & ~3
        desc = blob[pos:pos + descsz]
        pos += (descsz + 3) & ~3
        if name == b"AMDGPU" and ntype == NT_AMDGPU_METADATA:
            try:
                out.update(msgpack.unpackb(desc, raw=False, strict_map_key=False))
            except Exception as e:  # noqa: BLE001 - any msgpack failure is a corrupt note
                raise CodeObjectError(f"the NT_AMDGPU_METADATA note is not valid MessagePack ({e})") from None
    return out


def load_code_object(data: bytes) -> CodeObject:
    data = bytes(data)
    secs = _sections(data)
    meta = {}
    for s in secs:
        if s["type"] == SHT_NOTE:
            meta.update(_notes(data[s["off"]:s["off"] + s["size"]]))
    target = meta.get("amdhsa.target")
    e_flags, = struct.unpack_from("<I", data, 48)
    if target:
        arch, feats = parse_target_id(str(target))
    elif e_flags & 0xFF in MACH:
        arch, feats = MACH[e_flags & 0xFF], {}
    else:
        raise CodeObjectError(f"code object names no known target (no amdhsa.target, e_flags mach "
                              f"{e_flags & 0xFF:#x}); emulated targets: {', '.join(sorted(MACH.values()))}")
    syms = {}
    for s in secs:
        if s["type"] in (SHT_SYMTAB, SHT_DYNSYM) and s["entsize"] == 24:
            strs = secs[s["link"]] if s["link"] < len(secs) else None
            for i in range(s["size"] // 24):
                st_name, info, _other, shndx, value, size = struct.unpack_from("<IBBHQQ", data, s["off"] + 24 * i)
                if strs is None or not st_name:
                    continue
                name = _cstr(data, strs["off"] + st_name, strs["off"] + strs["size"])
                syms[name] = (info & 0xF, shndx, value, size)
    kernels = {}
    by_name = {k.get(".name"): k for k in meta.get("amdhsa.kernels", []) or []}
    for name, (typ, shndx, value, size) in syms.items():
        if not name.endswith(".kd") or typ != STT_OBJECT:
            continue
        kname = name[:-3]
        desc = _read_at(data, secs, value, 64, f"kernel descriptor {name}")
        entry = value + struct.unpack_from("<q", desc, 16)[0]
        fsize = syms.get(kname, (0, 0, 0, 0))[3]
        text = _section_at(secs, entry)
        if text is None:
            raise CodeObjectError(f"kernel {kname}: entry {entry:#x} lies in no section", kernel=kname)
        end = text["addr"] + text["size"] if not fsize else entry + fsize
        code = _read_at(data, secs, entry, end - entry, f"code of kernel {kname}")
        kernels[kname] = Kernel(kname, code, entry, desc, by_name.get(kname, {}))
    if not kernels:
        raise CodeObjectError("code object has no kernel (no STT_OBJECT symbol NAME.kd)")
    _fill_tails(data, secs, kernels)
    e_type, = struct.unpack_from("<H", data, 16)
    sections = {sec["name"]: (sec["off"], sec["size"], sec["type"]) for sec in secs}
    return CodeObject(arch, feats, data[8], kernels, meta, e_type, e_flags, data[7], sections)


def _fill_tails(data, secs, kernels: dict) -> None:
    """Kernel.tail: the bytes between each function's end and the next function's entry (or
    its section's end)."""
    starts = sorted(k.code_address for k in kernels.values())
    for k in kernels.values():
        sec = _section_at(secs, k.code_address)
        end = k.code_address + len(k.code)
        stop = min([a for a in starts if a >= end] + [sec["addr"] + sec["size"]])
        if stop > end:
            k.tail = _read_at(data, secs, end, stop - end, f"code padding after kernel {k.name}")


def _section_at(secs, addr):
    for s in secs:
        if s["addr"] and s["addr"] <= addr < s["addr"] + s["size"] and s["type"] != 8:
            return s
    return None


def _read_at(data, secs, addr, n, what):
    s = _section_at(secs, addr)
    if s is None or addr + n > s["addr"] + s["size"]:
        raise CodeObjectError(f"truncated code object: {what} ({n} bytes at {addr:#x}) is outside its section")
    off = s["off"] + addr - s["addr"]
    _need(data, off, n, what)
    return data[off:off + n]
