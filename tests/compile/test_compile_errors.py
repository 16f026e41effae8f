"""Compiler failures carry MLIR's diagnostics and a repro."""
import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.errors import CompileError

BAD = """
module attributes {gpu.container_module} {
  gpu.module @m [#rocdl.target<chip = "gfx1100">] {
    gpu.func @k(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<4xf32>
      %w = arith.addi %v, %v : f32
      gpu.return
    }
  }
}
"""


def test_invalid_module_raises_compile_error_with_diagnostics():
    with pytest.raises(CompileError) as e:
        compile_mlir(BAD, "gfx1100", cache=False)
    msg = str(e.value)
    assert "arith.addi" in msg and "stage 'lower' failed" in msg
    assert e.value.mlir_path and open(e.value.mlir_path).read() == BAD
    assert "--pass-pipeline=" in msg and "convert-gpu-to-rocdl" in e.value.pipeline
