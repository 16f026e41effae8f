"""What bench/peers.py and its backward rows (bench/peers_bwd.py) share: a problem's label, the
static figures of an ISA, a Triton object as the model reads it, and the operands of an emulator run."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np


def label(q: dict) -> str:
    if q["op"] == "gemm":
        return f"gemm {q['dtype']} NN {q['m']}x{q['n']}x{q['k']}"
    return (f"{q['op']} {q['dtype']} B{q['batch']} H{q['heads']} S{q['seq']} d{q['head_dim']}"
            + (" causal" if q["causal"] else ""))


# --- static figures from an ISA --------------------------------------------------------------
def _widths(w: dict) -> str:
    return " ".join(f"b{b}x{n}" for b, n in sorted(w.items())) or "-"


def static(isa: str, vgprs: int, spills: int, seconds: float) -> dict:
    from wmma_gen.model.isa_loop import find_main_loop
    L = find_main_loop(isa).summary()
    return {"vgprs": vgprs, "spills": spills, "loop_wmma": L["wmma"], "loop_issued": L["issued"],
            "density": round(L["wmma"] / max(L["issued"], 1), 3), "global_loads": _widths(L["global_load_widths"]),
            "lds_loads": _widths(L["ds_read_widths"]), "scratch_in_loop": L["scratch_load"] + L["scratch_store"],
            "compile_s": round(seconds, 2)}


def as_compiled(ck):
    """What the model reads (metadata + ISA) from a Triton object: the .amdgpu_metadata block of
    its ISA, with Triton's dynamic LDS (metadata.shared) added and the launch's workgroup size."""
    from wmma_gen.compiler.metadata import parse_isa_metadata
    md = parse_isa_metadata(ck.asm["amdgcn"])
    md = replace(md, lds_bytes=md.lds_bytes + ck.metadata.shared,
                 reqd_workgroup_size=(32 * ck.metadata.num_warps, 1, 1))
    return SimpleNamespace(metadata=md, isa=ck.asm["amdgcn"])


def operand(rng, shape, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """(stored array, its exact values in float64): standard normals as f16, or as float32 rounded
    to bf16 (RNE) and stored as uint16 bits (numpy has no bf16)."""
    from wmma_gen import hostdata, numerics
    x = rng.standard_normal(shape)
    stored = x.astype(np.float16) if dtype == "f16" else numerics.f32_to_bf16_bits(x.astype(np.float32))
    return stored, hostdata.decode(stored, dtype)
