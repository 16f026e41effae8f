"""The forward's K/V/Q tile copies live in kernels/staging/kv_tiles.py (with GEMM's tiles and the
backward's rows: kernels/staging/); re-exported here for the forward's builders."""
from ...kernels.staging.kv_tiles import (CONTIG_BYTES, MAX_IMM, TileCopy, lane_offsets, load, plan,  # noqa: F401
                                         store, tile_offset)
