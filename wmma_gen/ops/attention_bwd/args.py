"""Kernel arguments of the three backward kernels, declared once (STYLE rule 15), and the
gpu.func scaffold that binds them to named MLIR values.

Compile-time facts are a `BwdSpec` (dtype, head_dim, causal, window, varlen, output dtype,
arch, softcap); everything else is a runtime argument:

  buffers  KERNEL_TENSORS[kernel] (inputs, then outputs), then cu_seqlens_q cu_seqlens_k (varlen)
  i32      heads kv_heads seq_q seq_k window_left window_right
  f32      scale, then softcap (the cap; dK/dV and dQ only, and only with spec.softcap, so the
           kernels without it keep their argument lists)
  i32      element strides <t>_sb <t>_ss <t>_sh of every 4-D tensor t (batch, seq, head) and
           <t>_sb <t>_sh of the row vectors lse/delta (their sequence stride is 1)

Problem keys (AttentionProblem.sizes() plus scale): batch heads kv_heads seq_q seq_k head_dim scale
window_left window_right total_q total_k (for varlen seq_q/k are the longest
sequence, used for the grid only). Array shapes follow attention_common/reference.py:
  bshd q (B, Sq, H, D)   bhsd q (B, H, Sq, D)   varlen q (total_q, H, D)
  lse/delta (B, H, Sq), varlen (H, total_q); k/v like q with kv_heads and Sk.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...kernels.signature import KArg, Signature

OUT_DTYPES = ("same", "f32")


@dataclass(frozen=True)
class BwdSpec:
    """The compile-time key of the backward kernels (no problem sizes)."""
    arch: str
    family: str
    dtype: str
    head_dim: int
    causal: bool = False
    window: bool = False
    varlen: bool = False
    layout: str = "bshd"
    out: str = "same"        # dq/dk/dv dtype: "same" as the inputs or "f32"
    softcap: bool = False    # logits capped at c * tanh(s / c) (kernels/softcap.py)

    @property
    def out_dtype(self) -> str:
        return self.dtype if self.out == "same" else "f32"


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def tensor_shape(spec: BwdSpec, kind: str):
    """Shape function of a q-like ("q") or k-like ("k") 4-D tensor, or of a row vector ("lse")."""
    def shape(p):
        if kind == "lse":
            return (p["heads"], p["total_q"]) if spec.varlen else (p["batch"], p["heads"], p["seq_q"])
        h, s, t = (("heads", "seq_q", "total_q") if kind == "q" else ("kv_heads", "seq_k", "total_k"))
        if spec.varlen:
            return (p[t], p[h], p["head_dim"])
        if spec.layout == "bshd":
            return (p["batch"], p[s], p[h], p["head_dim"])
        return (p["batch"], p[h], p[s], p["head_dim"])
    return shape


def stride_names(spec: BwdSpec, name: str, kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(names filled from the array's strides in dim order, names that are always 0)."""
    if kind == "lse":
        return ((f"{name}_sh",), (f"{name}_sb",)) if spec.varlen else ((f"{name}_sb", f"{name}_sh"), ())
    b, s, h = f"{name}_sb", f"{name}_ss", f"{name}_sh"
    if spec.varlen:
        return (s, h), (b,)
    return ((b, s, h) if spec.layout == "bshd" else (b, h, s)), ()


TENSORS = {  # name -> (kind, role, dtype source)
    "q": ("q", "in", "in"), "k": ("k", "in", "in"), "v": ("k", "in", "in"), "o": ("q", "in", "in"),
    "do": ("q", "in", "in"), "lse": ("lse", "in", "f32"), "delta": ("lse", "in", "f32"),
    "dq": ("q", "out", "out"), "dk": ("k", "out", "out"), "dv": ("k", "out", "out"),
}
KERNEL_TENSORS = {
    "prepass": ("o", "do", "delta"),
    "dkdv": ("q", "k", "v", "do", "lse", "delta", "dk", "dv"),
    "dq": ("q", "k", "v", "do", "lse", "delta", "dq"),
}
SADDR_TENSORS = ("q", "k", "v", "o", "do", "lse", "delta", "dq", "dk", "dv")   # reached in the saddr
#   form (kernels/global_tensor.py); cu_seqlens_q/k stay flat memref views (bare pointers)
SIZE_SCALARS = ("heads", "kv_heads", "seq_q", "seq_k", "window_left", "window_right")


def kernel_args(spec: BwdSpec, kernel: str) -> tuple[KArg, ...]:
    """Argument list of `kernel` ("prepass" | "dkdv" | "dq") in kernel-function order."""
    bufs, scalars = [], []
    for name in KERNEL_TENSORS[kernel]:
        kind, role, src = TENSORS[name]
        if kernel == "prepass" and name == "delta":
            role = "out"
        dtype = {"in": spec.dtype, "out": spec.out_dtype, "f32": "f32"}[src]
        named, zero = stride_names(spec, name, kind)
        bufs.append(KArg(name, role, dtype, shape=tensor_shape(spec, kind), strides=named,
                         offset_bits=32 if name in SADDR_TENSORS else None))   # saddr: 32-bit byte offsets
        order = (f"{name}_sb", f"{name}_sh") if kind == "lse" else (f"{name}_sb", f"{name}_ss", f"{name}_sh")
        scalars += [KArg(s, "scalar", "i32", value=(lambda p: 0) if s in zero else None) for s in order]
    if spec.varlen:
        bufs += [KArg("cu_seqlens_q", "in", "i32", shape=lambda p: (p["batch"] + 1,)),
                 KArg("cu_seqlens_k", "in", "i32", shape=lambda p: (p["batch"] + 1,))]
    sizes = [KArg(n, "scalar", "i32", value=(lambda p, n=n: int(p.get(n, -1)))) for n in SIZE_SCALARS]
    scale = [KArg("scale", "scalar", "f32", value=lambda p: float(p["scale"]))]
    if spec.softcap and kernel != "prepass":   # Di = rowsum(dO * O) does not see the logits
        scale.append(KArg("softcap", "scalar", "f32", value=lambda p: float(p["softcap"])))
    return tuple(bufs + sizes + scale + scalars)


def grid_fn(kernel: str, rows: int):
    """Workgroups: prepass/dq (query tiles, heads, batch); dkdv (key tiles, kv heads, batch)."""
    if kernel == "dkdv":
        return lambda p: (_cdiv(p["seq_k"], rows), p["kv_heads"], p["batch"])
    return lambda p: (_cdiv(p["seq_q"], rows), p["heads"], p["batch"])


def signature(spec: BwdSpec, s, kernel: str, name: str) -> Signature:
    """`kernel`'s Signature ("prepass" | "dkdv" | "dq"): its arguments, grid and block under
    schedule s -- what the builder declares, read without the MLIR bindings (a cached launch)."""
    rows, threads = {"prepass": (s.prepass_rows, s.prepass_rows), "dkdv": (s.block_n, s.threads),
                     "dq": (s.dq_block_m, s.dq_threads)}[kernel]
    return Signature(name, kernel_args(spec, kernel), grid_fn(kernel, rows), (threads, 1, 1))


def _arg_type(a: KArg):
    from ...compiler.mlir_api import ir
    from ...kernels import irb, saddr
    if a.role == "scalar":
        return ir.F32Type.get() if a.dtype == "f32" else ir.IntegerType.get_signless(32)
    if a.name in SADDR_TENSORS:
        return saddr.pointer_type()
    return ir.MemRefType.get([1], irb.storage_type(a.dtype))


def build_module(name: str, arch: str, args: tuple[KArg, ...], lds: list[tuple[list[int], str]],
                 threads: int, body, sched_strategy: str = "") -> str:
    """The module (kernels/module.py) holding one kernel `name`; `body(vals, lds_refs)` emits the kernel body
    given {arg name: block argument} and the LDS memrefs (shape, dtype) in order. `sched_strategy`: LLVM's
    "amdgpu-sched-strategy" function attribute ("" keeps LLVM's default scheduler)."""
    from ...compiler.mlir_api import gpu_ops as gpu, ir     # the bindings load on a build, not on a launch
    from ...kernels import irb
    from ...kernels.module import gpu_module_text, kernel_func

    def emit():
        types = [_arg_type(a) for a in args]
        ws = ir.Attribute.parse("#gpu.address_space<workgroup>")
        lds_types = [ir.MemRefType.get(shape, irb.storage_type(dt), memory_space=ws) for shape, dt in lds]
        block = kernel_func(name, types, threads, lds_types, sched_strategy)
        with ir.InsertionPoint(block):
            bargs = list(block.arguments)
            body({a.name: v for a, v in zip(args, bargs[:len(args)], strict=True)}, bargs[len(args):])
            gpu.ReturnOp([])
    return gpu_module_text(name, arch, emit)
