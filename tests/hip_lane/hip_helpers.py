"""Helpers for the HIP tests: a tiny kernel to launch through HipDevice."""

AXPY = """
gpu.func @axpy(%X: memref<64xf32>, %Y: memref<64xf32>, %a: f32)
    kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
  %t = gpu.thread_id x
  %x = memref.load %X[%t] : memref<64xf32>
  %y = memref.load %Y[%t] : memref<64xf32>
  %ax = arith.mulf %a, %x : f32
  %r = arith.addf %ax, %y : f32
  memref.store %r, %Y[%t] : memref<64xf32>
  gpu.return
}
"""
GRID, BLOCK = (1, 1, 1), (64, 1, 1)


def compile_axpy(arch: str = "gfx1100", cache=None, name: str = "axpy"):
    """Y += a * X over 64 floats: 2 waves, two pointers and one f32 by value."""
    from wmma_gen.compiler import compile_mlir
    body = AXPY.replace("@axpy", f"@{name}")
    src = ("module attributes {gpu.container_module} {\n"
           f'gpu.module @m [#rocdl.target<chip = "{arch}">] {{\n{body}\n}}\n}}\n')
    return compile_mlir(src, arch, cache=cache)
