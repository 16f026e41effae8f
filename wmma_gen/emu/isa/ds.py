"""LDS (DS encoding) rows: loads/stores of every width, d16 halves, two-address forms,
and the cross-lane DS ops that do not touch LDS memory.

Semantics: RDNA3 ISA guide chapter 11 "Data Share Operations" and §16 DS opcodes:
address = vaddr + offset (16-bit); 2addr forms use offset0/offset1 (8 bits each) scaled
by the element size, and by 64 more for _stride64. ds_swizzle_b32 (§11.4 offset modes:
bit 15 set = quad permute, else and/or/xor bit-mask mode on 32 lanes), ds_bpermute_b32
(lane l reads lane (addr[l] + offset) / 4 mod 32) and ds_permute_b32 (lane l's data goes
to lane (addr[l] + offset) / 4 mod 32); an inactive source lane reads 0.
`args`: size in bytes, sign extension, d16 half, 2addr element count/stride.
"""
from __future__ import annotations

from .table import Op, rows

C = "RDNA3 ISA §11 / §16 DS opcodes"


def D(name, kind, size, signed=False, half=None, stride=None):
    return Op(name, kind, cite=C, args={"size": size, "signed": signed, "half": half, "stride": stride})


DS = rows(
    *[D(f"ds_load_b{8 * n}", "ds_load", n) for n in (4, 8, 12, 16)],
    D("ds_load_u8", "ds_load", 1), D("ds_load_i8", "ds_load", 1, True),
    D("ds_load_u16", "ds_load", 2), D("ds_load_i16", "ds_load", 2, True),
    D("ds_load_u8_d16", "ds_load", 1, half="lo"), D("ds_load_u8_d16_hi", "ds_load", 1, half="hi"),
    D("ds_load_i8_d16", "ds_load", 1, True, "lo"), D("ds_load_i8_d16_hi", "ds_load", 1, True, "hi"),
    D("ds_load_u16_d16", "ds_load", 2, half="lo"), D("ds_load_u16_d16_hi", "ds_load", 2, half="hi"),
    *[D(f"ds_store_b{8 * n}", "ds_store", n) for n in (1, 2, 4, 8, 12, 16)],
    D("ds_store_b8_d16_hi", "ds_store", 1, half="hi"), D("ds_store_b16_d16_hi", "ds_store", 2, half="hi"),
    D("ds_load_2addr_b32", "ds_load2", 4, stride=1), D("ds_load_2addr_b64", "ds_load2", 8, stride=1),
    D("ds_load_2addr_stride64_b32", "ds_load2", 4, stride=64),
    D("ds_load_2addr_stride64_b64", "ds_load2", 8, stride=64),
    D("ds_store_2addr_b32", "ds_store2", 4, stride=1), D("ds_store_2addr_b64", "ds_store2", 8, stride=1),
    D("ds_store_2addr_stride64_b32", "ds_store2", 4, stride=64),
    D("ds_store_2addr_stride64_b64", "ds_store2", 8, stride=64),
    Op("ds_swizzle_b32", "ds_swizzle", cite=C),
    Op("ds_bpermute_b32", "ds_bpermute", cite=C),
    Op("ds_permute_b32", "ds_permute", cite=C),
    Op("ds_add_u32", "ds_atomic", cite=C, args={"op": "add", "type": "u32", "ret": False}),
    Op("ds_add_f32", "ds_atomic", cite=C, args={"op": "add", "type": "f32", "ret": False}),
    Op("ds_add_rtn_u32", "ds_atomic", cite=C, args={"op": "add", "type": "u32", "ret": True}),
    Op("ds_add_rtn_f32", "ds_atomic", cite=C, args={"op": "add", "type": "f32", "ret": True}),
    Op("ds_max_f32", "ds_atomic", cite=C, args={"op": "max", "type": "f32", "ret": False}),
    Op("ds_min_f32", "ds_atomic", cite=C, args={"op": "min", "type": "f32", "ret": False}),
)
