"""Read an AMDGPU code object (hsaco): ELF64 header, sections, and the metadata note.

Format facts from llvm/docs/AMDGPUUsage.rst: e_machine EM_AMDGPU = 224, EI_OSABI
ELFOSABI_AMDGPU_HSA = 64, e_flags & 0xff = EF_AMDGPU_MACH_*; code object V3+ metadata is
a MessagePack map in an SHT_NOTE note named "AMDGPU" of type NT_AMDGPU_METADATA = 32.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import msgpack

from ..errors import CompileError

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
NT_AMDGPU_METADATA = 32
SHT_NOTE = 7
ET_DYN = 3


@dataclass(frozen=True)
class ElfInfo:
    e_type: int
    e_machine: int
    e_flags: int
    osabi: int
    sections: dict  # name -> (offset, size, type)
    metadata: dict  # decoded NT_AMDGPU_METADATA

    @property
    def mach(self) -> int:
        return self.e_flags & 0xFF


def read_elf(data: bytes) -> ElfInfo:
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise CompileError("code object is not a little-endian ELF64 file")
    osabi = data[7]
    e_type, e_machine = struct.unpack_from("<HH", data, 16)
    e_flags, = struct.unpack_from("<I", data, 48)
    e_shoff, = struct.unpack_from("<Q", data, 40)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 58)
    raw = []
    for i in range(e_shnum):
        name, typ, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", data, e_shoff + i * e_shentsize)
        raw.append((name, typ, off, size))
    str_off = raw[e_shstrndx][2]
    sections, metadata = {}, {}
    for name, typ, off, size in raw:
        end = data.index(b"\0", str_off + name)
        sname = data[str_off + name:end].decode()
        sections[sname] = (off, size, typ)
        if typ == SHT_NOTE:
            metadata.update(_notes(data[off:off + size]))
    return ElfInfo(e_type, e_machine, e_flags, osabi, sections, metadata)


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
            out.update(msgpack.unpackb(desc, raw=False, strict_map_key=False))
    return out

