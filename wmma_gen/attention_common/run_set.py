"""Run the attention kernels of a CompiledSet (ops/compile_op.py) on host arrays: what the
correctness gate uses so it certifies the very code objects it was handed (no recompile).

The steps are the user API's (api.run_attention, attention_bwd/run.run_backward) minus the
schedule choice and the compile: validated inputs -> one launch per kernel, in set order.
The sizes come from the Problem the arrays were built from (issue 26): the arrays are only
checked against it (inputs.forward_inputs_for), never measured."""
from __future__ import annotations

from ..device.launcher import launch
from ..device.select import get_device
from ..hostdata import user_array
from .inputs import backward_inputs_for, forward_inputs_for, public_scale
from .problem import as_problem

_FORWARD_ARG = {"Q": "q", "K": "k", "V": "v"}       # kernel argument -> inputs.py array name


def _kernel_values(problem) -> dict:
    """The scalar values besides sizes (scale; softcap where the inputs carry it), as the API passes."""
    values = getattr(problem, "kernel_values", None)
    return values() if values is not None else {"scale": problem.scale}


def forward(cs, problem, q, k, v, *, causal=False, window=None, scale=None, layout="bshd", dtype=None, device=None,
            softcap=None, s_aux=None):
    """(o, lse) of the forward set {"attention"[, "combine"]} (the combine when split_kv > 1) on
    arrays shaped by `problem` (an AttentionProblem or its sizes mapping); lse is None when the
    set's directive does not return it."""
    q, scale, _ = public_scale(q, scale)
    inp = forward_inputs_for(as_problem(problem), cs.directive.head_dim, q, k, v, causal=causal, window=window,
                             scale=scale, return_lse=cs.directive.return_lse, layout=layout, dtype=dtype,
                             softcap=softcap, s_aux=s_aux)
    dev, pairs = get_device(device), cs.pairs()
    args = {**inp.problem.sizes(), **_kernel_values(inp.problem)}
    src, ck = pairs["attention"]
    outs, _ = launch(ck, src.signature, args, dev, {n: inp.arrays[_FORWARD_ARG.get(n, n)]
                                                     for n in src.signature.inputs})
    if "combine" in pairs:
        csrc, cck = pairs["combine"]
        outs, _ = launch(cck, csrc.signature, args, dev,
                         {n: outs[n] if n in outs else inp.arrays[n] for n in csrc.signature.inputs})
    return user_array(outs["O"], inp.problem.dtype), outs.get("LSE")


def backward(cs, problem, q, k, v, o, do, lse, *, causal=False, window=None, scale=None, layout="bshd", dtype=None,
             device=None, softcap=None):
    """(dq, dk, dv) of the backward set (prepass, dkdv, dq) on arrays shaped by `problem`, stored like the inputs."""
    q, scale, flipped = public_scale(q, scale)
    inp = backward_inputs_for(as_problem(problem), cs.directive.head_dim, q, k, v, o, do, lse, causal=causal,
                              window=window, scale=scale, layout=layout, dtype=dtype, softcap=softcap)
    dev, arrays = get_device(device), dict(inp.arrays)
    args = {**inp.problem.sizes(), **_kernel_values(inp.problem)}
    for _, (src, ck) in cs.pairs().items():
        outs, _ = launch(ck, src.signature, args, dev, {n: arrays[n] for n in src.signature.inputs})
        arrays.update(outs)
    grads = [user_array(arrays[n], inp.problem.dtype) for n in ("dq", "dk", "dv")]
    if flipped:
        grads[0] = -grads[0]
    return tuple(grads)
