"""Bits per stored value of each dtype name (i4 packs two per byte).

Its own numpy-free module: the schedule, tile and kernel-building code sizes operands with it,
and a first compile should not import numpy for a table (issue 36 item 5; numerics.py holds the
numpy conversions)."""

BITS = {"f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8, "i4": 4, "f32": 32, "i32": 32}
