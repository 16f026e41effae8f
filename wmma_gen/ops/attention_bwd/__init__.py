"""Flash-attention backward (FA-2 with recomputation from the forward LSE): pre-pass
Di = rowsum(dO * O), a dK/dV kernel per key tile and a dQ kernel per query tile, on WMMA.

    run_backward(q, k, v, o, do, lse, *, scale, causal, window, cu_seqlens_q, cu_seqlens_k,
                 layout, dtype, out_dtype, arch, device, schedule) -> (dq, dk, dv)

The names below are imported on first use (PEP 562) so that the light modules (schedule,
lookup) load without the MLIR bindings (`wmma-gen schedules list` stays fast).
"""
_WHERE = {"BwdSpec": "args", "default_schedule": "defaults", "build_backward": "build", "make_spec": "build",
          "run_backward": "run", "AttentionBwdSchedule": "schedule"}
__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        import importlib
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module 'wmma_gen.ops.attention_bwd' has no attribute {name!r}")
