"""Kernel metadata parsed from the linked hsaco's NT_AMDGPU_METADATA note.

Field names are the code object V5/V6 metadata keys of llvm/docs/AMDGPUUsage.rst
("Code Object V3 Metadata", `amdhsa.kernels`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..codeobj.codeobject import CodeObjectError, load_code_object
from ..errors import CompileError


@dataclass(frozen=True)
class KernArg:
    offset: int
    size: int
    kind: str          # .value_kind: global_buffer, by_value, hidden_*
    name: str = ""


@dataclass(frozen=True)
class KernelMetadata:
    name: str
    args: tuple[KernArg, ...]
    kernarg_size: int
    kernarg_align: int
    vgpr_count: int
    sgpr_count: int
    vgpr_spill_count: int
    sgpr_spill_count: int
    lds_bytes: int              # .group_segment_fixed_size
    scratch_bytes: int          # .private_segment_fixed_size
    wavefront_size: int
    max_flat_workgroup_size: int
    reqd_workgroup_size: tuple[int, ...] = field(default=())

    @property
    def spills(self) -> int:
        return self.vgpr_spill_count + self.sgpr_spill_count

    def to_dict(self) -> dict:
        from dataclasses import asdict
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "KernelMetadata":
        d = dict(d)
        d["args"] = tuple(KernArg(**a) for a in d["args"])
        d["reqd_workgroup_size"] = tuple(d.get("reqd_workgroup_size", ()))
        return cls(**d)


def read_metadata(hsaco: bytes) -> KernelMetadata:
    """Metadata from the code object's NT_AMDGPU_METADATA note (read by codeobj/codeobject.py,
    wmma_gen's one ELF reader)."""
    try:
        doc = load_code_object(hsaco).metadata
    except CodeObjectError as e:
        raise CompileError("the code object cannot be read", diagnostics=str(e)) from None
    return metadata_from_doc(doc)


def parse_isa_metadata(isa_text: str) -> KernelMetadata:
    """The same metadata from the `.amdgpu_metadata` YAML block of LLVM assembly text: for
    other compilers' assembly (bench/peers.py reads Triton's); wmma_gen's own kernels read
    the note of their code object (read_metadata)."""
    import yaml
    start, end = isa_text.find(".amdgpu_metadata"), isa_text.find(".end_amdgpu_metadata")
    if start < 0 or end < 0:
        raise CompileError("ISA text has no .amdgpu_metadata block")
    block = isa_text[start + len(".amdgpu_metadata"):end]
    doc_end = block.find("\n...")  # YAML document end marker; the rest is assembler layout
    return metadata_from_doc(yaml.safe_load(block[:doc_end] if doc_end >= 0 else block))


def metadata_from_doc(doc: dict) -> KernelMetadata:
    kernels = doc.get("amdhsa.kernels")
    if not kernels:
        raise CompileError("hsaco has no amdhsa.kernels metadata note")
    if len(kernels) != 1:
        raise CompileError(f"expected one kernel per code object, found {len(kernels)}")
    k = kernels[0]
    try:
        return KernelMetadata(
            name=k[".name"],
            args=tuple(KernArg(a[".offset"], a[".size"], a[".value_kind"], a.get(".name", ""))
                       for a in k.get(".args", [])),
            kernarg_size=k[".kernarg_segment_size"],
            kernarg_align=k[".kernarg_segment_align"],
            vgpr_count=k[".vgpr_count"],
            sgpr_count=k[".sgpr_count"],
            vgpr_spill_count=k.get(".vgpr_spill_count", 0),
            sgpr_spill_count=k.get(".sgpr_spill_count", 0),
            lds_bytes=k[".group_segment_fixed_size"],
            scratch_bytes=k[".private_segment_fixed_size"],
            wavefront_size=k[".wavefront_size"],
            max_flat_workgroup_size=k[".max_flat_workgroup_size"],
            reqd_workgroup_size=tuple(k.get(".reqd_workgroup_size", ())),
        )
    except KeyError as e:
        raise CompileError(f"kernel metadata lacks required key {e}") from None
