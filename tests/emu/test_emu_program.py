"""Program.from_isa: kernel body, labels, descriptor directives and metadata."""
from __future__ import annotations

import numpy as np
import pytest

from emu_helpers import asm_kernel
from wmma_gen.emu import Program
from wmma_gen.emu.decode.program import metadata_yaml
from wmma_gen.errors import EmulatorFault

BODY = "\ts_mov_b32 s8, 1\n.LBB0_1:\n\ts_sub_u32 s8, s8, 1\n\ts_cbranch_scc1 .LBB0_1\n\ts_endpgm"


def test_body_labels_and_descriptor():
    p = Program.from_isa(asm_kernel(BODY, lds=512, workitem_id=2, wg_ids=(1, 1, 0)))
    assert [i.mnemonic for i in p.instrs] == ["s_mov_b32", "s_sub_u32", "s_cbranch_scc1", "s_endpgm"]
    assert p.labels == {".LBB0_1": 1}
    assert p.group_segment_size == 512 and p.desc("system_vgpr_workitem_id") == 2
    assert p.desc("system_sgpr_workgroup_id_y") == 1 and p.kernarg_size == 16
    assert [(a.offset, a.size, a.kind) for a in p.args] == [(0, 8, "global_buffer"), (8, 8, "global_buffer")]


def test_pack_kernarg_places_values_at_metadata_offsets():
    p = Program.from_isa(asm_kernel("\ts_endpgm"))
    raw = p.pack_kernarg([0x1_0000_1000, 0x2_0000_2000], (1, 1, 1), (32, 1, 1))
    assert np.frombuffer(raw, "<u8").tolist() == [0x1_0000_1000, 0x2_0000_2000]
    with pytest.raises(EmulatorFault, match="takes 2 explicit args"):
        p.pack_kernarg([1], (1, 1, 1), (32, 1, 1))


def test_unknown_label_and_kernel_names_fault():
    with pytest.raises(EmulatorFault, match="unknown label"):
        Program.from_isa(asm_kernel("\ts_branch .LBB9_9\n\ts_endpgm"))
    with pytest.raises(EmulatorFault, match="not in ISA text"):
        Program.from_isa(asm_kernel("\ts_endpgm"), kernel_name="other")


def test_yaml_subset():
    doc = metadata_yaml("""---
amdhsa.kernels:
  - .args:
      - .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .name:           k
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .uses_dynamic_stack: false
amdhsa.target:   amdgcn-amd-amdhsa--gfx1100
amdhsa.version:  [ 1, 2 ]
...""")
    k = doc["amdhsa.kernels"][0]
    assert k[".args"] == [{".offset": 0, ".size": 8, ".value_kind": "global_buffer"}]
    assert k[".reqd_workgroup_size"] == [64, 1, 1] and k[".uses_dynamic_stack"] is False
    assert doc["amdhsa.version"] == [1, 2]
