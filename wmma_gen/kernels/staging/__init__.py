"""Cooperative global -> LDS staging, one module per copy plan:

    gemm_tiles  GEMM A/B macro tiles from guarded strided matrices (global_tensor.GlobalTensor, globalmem), stored
                K-contiguous [buffer][outer][k + pad]; transposed operands scattered once here
    kv_tiles    attention forward K (as stored), V (transposed) and Q tiles: per-thread saddr
                lane offsets computed once, one 32-bit add per row and tile
    rows        attention backward row tiles, natural and/or transposed in slot order
                (lanes.slot), and per-row f32 values (LSE, Di) in slot order

All read global memory in the saddr form (kernels/saddr.py) and pack 16-bit column pairs with
v_perm_b32 (lanes.perm_b32) where they transpose.
"""
