"""Import the bindings' `ir` module without numpy (issue 36 item 5: the first compile's imports).

The upstream `ir.py` (FlyDSL's `flydsl/_mlir/ir.py` and mlir-gml's `mlir/ir.py`) tries
`import numpy` only to register four attribute builders -- F64ElementsAttr, I32ElementsAttr,
I64ElementsAttr, IndexElementsAttr -- and skips them on ImportError. No generated op module
wmma_gen builds with uses those kinds (FlyDSL's dialect modules use none; mlir-gml's affine, shape
and tosa do), yet numpy was ~80 ms of a first compile's imports in a bare interpreter
(`python -X importtime`). So `ir` is imported with numpy hidden from the importing thread (when
numpy is not loaded already), and the same four builders are registered here, importing numpy on
their first call: the bindings stay whole.

Like lean_ops.py, this file imports nothing from mlir_api.
"""
from __future__ import annotations

import contextlib
import importlib
import sys
import threading

# kind -> (numpy dtype of the elements, the element type's builder in `ir`)
_ELEMENTS = {
    "F64ElementsAttr": ("float64", lambda ir, ctx: ir.F64Type.get(context=ctx)),
    "I32ElementsAttr": ("int32", lambda ir, ctx: ir.IntegerType.get_signless(32, context=ctx)),
    "I64ElementsAttr": ("int64", lambda ir, ctx: ir.IntegerType.get_signless(64, context=ctx)),
    "IndexElementsAttr": ("int64", lambda ir, ctx: ir.IndexType.get(context=ctx)),
}


class _HideNumpy:
    """A meta-path finder that makes `import numpy` fail in one thread (others import it as usual)."""

    def __init__(self):
        self.thread = threading.get_ident()

    def find_spec(self, name, path=None, target=None):
        if name == "numpy" and threading.get_ident() == self.thread:
            raise ModuleNotFoundError("numpy is hidden while the MLIR bindings' ir module imports", name=name)
        return None


@contextlib.contextmanager
def _numpy_hidden():
    finder = _HideNumpy()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def import_ir(package: str):
    """`<package>.ir`, imported without numpy unless numpy is loaded already."""
    if "numpy" in sys.modules or f"{package}.ir" in sys.modules:
        return importlib.import_module(f"{package}.ir")
    with _numpy_hidden():
        ir = importlib.import_module(f"{package}.ir")
    for kind, (dtype, element) in _ELEMENTS.items():
        ir.register_attribute_builder(kind)(_elements_builder(ir, dtype, element))
    return ir


def _elements_builder(ir, dtype: str, element):
    def build(x, context):
        import numpy as np      # on the first use of this attribute kind only (the point of this file)
        return ir.DenseElementsAttr.get(np.array(x, dtype=dtype), type=element(ir, context), context=context)
    return build
