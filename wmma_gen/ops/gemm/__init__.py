"""The wmma_gemm op: directive, schedule (space, legality, defaults, lookup), kernel builder,
signature, build path, reference, check, model share (model.py, traffic.py, banks.py) and API.

The API names are imported on first use (PEP 562) so that the light modules here (directive,
schedule, lookup) load without the MLIR bindings (`wmma-gen targets`/`--help` stay fast).
"""
_API = ("default_schedule", "fit_schedule", "gemm", "run_gemm")
__all__ = list(_API)


def __getattr__(name):
    if name in _API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'wmma_gen.ops.gemm' has no attribute {name!r}")
