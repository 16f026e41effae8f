"""The 64-byte kernel descriptor (llvm/docs/AMDGPUUsage.rst "Kernel Descriptor", tables
"Code Object V3 Kernel Descriptor", "compute_pgm_rsrc1 for GFX6-GFX12", "compute_pgm_rsrc2 for
GFX6-GFX12", "compute_pgm_rsrc3 for GFX10-GFX12", "Kernel Code Properties") decoded into the
names of the `.amdhsa_*` assembler directives (AMDGPUUsage "AMDHSA Kernel Assembler
Directives"), the keys Program.descriptor uses for the ISA text too.

  bytes 0-3 group_segment_fixed_size, 4-7 private_segment_fixed_size, 8-11 kernarg_size,
  16-23 kernel_code_entry_byte_offset (signed, from the descriptor's address), 44 rsrc3,
  48 rsrc1, 52 rsrc2, 56-57 kernel_code_properties, 58-59 kernarg_preload.
"""
from __future__ import annotations

import struct

SIZE = 64

_RSRC1 = (("float_round_mode_32", 12, 2), ("float_round_mode_16_64", 14, 2), ("float_denorm_mode_32", 16, 2),
          ("float_denorm_mode_16_64", 18, 2), ("dx10_clamp", 21, 1), ("ieee_mode", 23, 1),
          ("fp16_overflow", 26, 1), ("workgroup_processor_mode", 29, 1), ("memory_ordered", 30, 1),
          ("forward_progress", 31, 1))
_RSRC2 = (("enable_private_segment", 0, 1), ("user_sgpr_count", 1, 5), ("enable_trap_handler", 6, 1),
          ("system_sgpr_workgroup_id_x", 7, 1), ("system_sgpr_workgroup_id_y", 8, 1),
          ("system_sgpr_workgroup_id_z", 9, 1), ("system_sgpr_workgroup_info", 10, 1),
          ("system_vgpr_workitem_id", 11, 2))
_PROPS = (("user_sgpr_private_segment_buffer", 0), ("user_sgpr_dispatch_ptr", 1), ("user_sgpr_queue_ptr", 2),
          ("user_sgpr_kernarg_segment_ptr", 3), ("user_sgpr_dispatch_id", 4), ("user_sgpr_flat_scratch_init", 5),
          ("user_sgpr_private_segment_size", 6), ("wavefront_size32", 10), ("uses_dynamic_stack", 11))


def decode_descriptor(raw: bytes, family: str) -> dict[str, int]:
    if len(raw) < SIZE:
        raise ValueError(f"kernel descriptor has {len(raw)} bytes, needs {SIZE}")
    group, private, kernarg = struct.unpack_from("<III", raw, 0)
    entry, = struct.unpack_from("<q", raw, 16)
    rsrc3, rsrc1, rsrc2 = struct.unpack_from("<III", raw, 44)
    props, preload = struct.unpack_from("<HH", raw, 56)
    out = {"group_segment_fixed_size": group, "private_segment_fixed_size": private, "kernarg_size": kernarg,
           "kernel_code_entry_byte_offset": entry, "compute_pgm_rsrc1": rsrc1, "compute_pgm_rsrc2": rsrc2,
           "compute_pgm_rsrc3": rsrc3}
    for name, lo, w in _RSRC1:
        out[name] = (rsrc1 >> lo) & ((1 << w) - 1)
    if family == "gfx12":       # rsrc1 bits 21 / 23 are WG_RR_EN / DISABLE_PERF on GFX12, no DX10/IEEE mode
        out.pop("dx10_clamp")
        out.pop("ieee_mode")
    for name, lo, w in _RSRC2:
        out[name] = (rsrc2 >> lo) & ((1 << w) - 1)
    for name, bit in _PROPS:
        out[name] = (props >> bit) & 1
    out["user_sgpr_kernarg_preload_length"] = preload & 0x7F
    out["user_sgpr_kernarg_preload_offset"] = preload >> 7
    # GRANULATED_WORKITEM_VGPR_COUNT = ceil(vgprs / granule) - 1, granule 8 (wave32, GFX10+)
    out["next_free_vgpr"] = ((rsrc1 & 0x3F) + 1) * 8
    return out
