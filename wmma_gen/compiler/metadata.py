"""Kernel metadata parsed from the linked hsaco's NT_AMDGPU_METADATA note.

Field names are the code object V5/V6 metadata keys of llvm/docs/AMDGPUUsage.rst
("Code Object V3 Metadata", `amdhsa.kernels`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import CompileError
from .elf import ElfInfo


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


def parse_metadata(info: ElfInfo) -> KernelMetadata:
    kernels = info.metadata.get("amdhsa.kernels")
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
