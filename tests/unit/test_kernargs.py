"""Kernarg packing follows the metadata `.args` (offsets, sizes, kinds), never assumptions."""
import struct

import pytest

from wmma_gen.compiler.metadata import KernArg, KernelMetadata
from wmma_gen.device.kernargs import check_launch, hidden_values, pack_kernargs
from wmma_gen.errors import DeviceError


def meta(args, size, reqd=(), max_flat=256):
    return KernelMetadata(name="k", args=tuple(args), kernarg_size=size, kernarg_align=8, vgpr_count=8,
                          sgpr_count=8, vgpr_spill_count=0, sgpr_spill_count=0, lds_bytes=0, scratch_bytes=0,
                          wavefront_size=32, max_flat_workgroup_size=max_flat, reqd_workgroup_size=tuple(reqd))


MIXED = meta([KernArg(0, 8, "global_buffer", "A"), KernArg(8, 4, "by_value", "n"),
              KernArg(12, 4, "by_value", "alpha"), KernArg(16, 8, "global_buffer", "C"),
              KernArg(24, 4, "hidden_block_count_x"), KernArg(28, 4, "hidden_block_count_y"),
              KernArg(32, 4, "hidden_block_count_z"), KernArg(36, 2, "hidden_group_size_x"),
              KernArg(38, 2, "hidden_group_size_y"), KernArg(40, 2, "hidden_group_size_z"),
              KernArg(42, 2, "hidden_remainder_x"), KernArg(64, 8, "hidden_global_offset_x"),
              KernArg(88, 2, "hidden_grid_dims"), KernArg(96, 8, "hidden_printf_buffer")], 264)


def test_explicit_args_land_at_their_metadata_offsets():
    raw = pack_kernargs(MIXED, [0x1_0000_1000, -3, 0.5, 0x1_0000_2000], (6, 2, 1), (128, 1, 1))
    assert len(raw) == 264
    assert int.from_bytes(raw[0:8], "little") == 0x1_0000_1000
    assert struct.unpack("<i", raw[8:12])[0] == -3
    assert struct.unpack("<f", raw[12:16])[0] == 0.5
    assert int.from_bytes(raw[16:24], "little") == 0x1_0000_2000


def test_hidden_args_follow_amdgpuusage():
    raw = pack_kernargs(MIXED, [1, 2, 3.0, 4], (6, 2, 1), (128, 1, 1))
    u32 = lambda o: int.from_bytes(raw[o:o + 4], "little")  # noqa: E731
    u16 = lambda o: int.from_bytes(raw[o:o + 2], "little")  # noqa: E731
    assert (u32(24), u32(28), u32(32)) == (6, 2, 1)           # workgroups per axis
    assert (u16(36), u16(38), u16(40)) == (128, 1, 1)         # work-items per workgroup
    assert u16(42) == 0                                        # whole workgroups: no remainder
    assert raw[64:72] == bytes(8)                              # no global offset
    assert u16(88) == 2                                        # x and y used
    assert raw[96:104] == bytes(8)                             # services not provided -> 0
    assert raw[104:] == bytes(264 - 104)                       # padding stays zero


def test_grid_dims_counts_used_axes():
    assert hidden_values((1, 1, 1), (32, 1, 1))["hidden_grid_dims"] == 1
    assert hidden_values((4, 1, 3), (32, 1, 1))["hidden_grid_dims"] == 3


@pytest.mark.parametrize("values, match", [
    ([1, 2, 3.0], "count=3"),
    ([1.5, 2, 3.0, 4], "Buffer or a device address"),
    ([1, 2**40, 3.0, 4], "does not fit 32 bits"),
    ([1, "x", 3.0, 4], "an int or a float"),
    ([-1, 2, 3.0, 4], "an address in"),
])
def test_bad_values_are_rejected_with_the_arg_named(values, match):
    with pytest.raises(DeviceError, match=match):
        pack_kernargs(MIXED, values, (1, 1, 1), (32, 1, 1))


def test_metadata_arg_outside_segment_is_rejected():
    bad = meta([KernArg(0, 8, "global_buffer"), KernArg(8, 8, "global_buffer")], 12)
    with pytest.raises(DeviceError, match="kernarg_segment_size=12"):
        pack_kernargs(bad, [1, 2], (1, 1, 1), (32, 1, 1))


def test_f16_and_f64_by_value():
    m = meta([KernArg(0, 2, "by_value"), KernArg(8, 8, "by_value")], 16)
    raw = pack_kernargs(m, [1.5, -2.25], (1, 1, 1), (32, 1, 1))
    assert struct.unpack("<e", raw[0:2])[0] == 1.5 and struct.unpack("<d", raw[8:16])[0] == -2.25


def test_launch_shape_checks():
    m = meta([], 0, reqd=(128, 1, 1), max_flat=128)
    assert check_launch(m, (2, 1, 3), (128, 1, 1)) == ((2, 1, 3), (128, 1, 1))
    with pytest.raises(DeviceError, match="reqd_workgroup_size"):
        check_launch(m, (1, 1, 1), (64, 1, 1))
    with pytest.raises(DeviceError, match="max_flat_workgroup_size"):
        check_launch(m, (1, 1, 1), (256, 1, 1))
    with pytest.raises(DeviceError, match="three positive integers"):
        check_launch(m, (0, 1, 1), (128, 1, 1))
