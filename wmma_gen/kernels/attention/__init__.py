"""The attention forward's main-loop blocks, shared by the dense (ops/attention/kernel.py) and
paged (ops/paged_attention/kernel.py) builders: the per-kernel context (context.py), the Q/K/V
operand reads (operands.py), the tile copies (kernels/staging/kv_tiles.py), the online softmax (softmax.py) and
which keys each query sees (bounds.py); and the dense forward's key loop (main_loop.py)."""

LDS_PAD = 8  # halves of padding per LDS row (16 bytes: keeps ds_load_b128 aligned, spreads banks)
