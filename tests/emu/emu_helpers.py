"""Helpers for emulator tests: hand-written gfx11 assembly kernels (instruction-level
tests need exact instructions, not whatever LLVM picks) and MLIR-compiled kernels."""
from __future__ import annotations

import numpy as np
from wmma_gen.emu import GlobalMemory, Program, run_kernel

from mlir_helper import compile_isa  # noqa: F401  (re-exported for tests)


def asm_kernel(body: str, *, lds: int = 0, nargs: int = 2, workitem_id: int = 0,
               wg_ids: tuple[int, int, int] = (1, 0, 0), user_sgpr_count: int = 2,
               name: str = "t") -> str:
    """ISA text of one kernel: `body` plus a descriptor and metadata like LLVM prints.
    Kernarg pointer in s[0:1]; workgroup ids from s[user_sgpr_count]."""
    args = "\n".join(f"      - .offset: {8 * i}\n        .size: 8\n        .value_kind: global_buffer"
                     for i in range(nargs))
    return f"""\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
\t.text
\t.globl\t{name}
\t.p2align\t8
\t.type\t{name},@function
{name}:
{body}
.Lfunc_end0:
\t.size\t{name}, .Lfunc_end0-{name}
\t.section\t.rodata,"a",@progbits
\t.amdhsa_kernel {name}
\t\t.amdhsa_group_segment_fixed_size {lds}
\t\t.amdhsa_private_segment_fixed_size 0
\t\t.amdhsa_kernarg_size {8 * nargs}
\t\t.amdhsa_user_sgpr_count {user_sgpr_count}
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t\t.amdhsa_wavefront_size32 1
\t\t.amdhsa_system_sgpr_workgroup_id_x {wg_ids[0]}
\t\t.amdhsa_system_sgpr_workgroup_id_y {wg_ids[1]}
\t\t.amdhsa_system_sgpr_workgroup_id_z {wg_ids[2]}
\t\t.amdhsa_system_vgpr_workitem_id {workitem_id}
\t\t.amdhsa_next_free_vgpr 64
\t\t.amdhsa_next_free_sgpr 32
\t\t.amdhsa_float_denorm_mode_32 3
\t\t.amdhsa_float_denorm_mode_16_64 3
\t\t.amdhsa_ieee_mode 1
\t.end_amdhsa_kernel
\t.text
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
{args}
    .group_segment_fixed_size: {lds}
    .kernarg_segment_align: 8
    .kernarg_segment_size: {8 * nargs}
    .name:           {name}
    .wavefront_size: 32
amdhsa.version:
  - 1
  - 2
...
\t.end_amdgpu_metadata
"""


def lanes_kernel(body: str, n_in: int, n_out: int, waves: int = 1, lds: int = 0) -> str:
    """A kernel whose lanes load inputs k into v[10+k] (u32 each, one workgroup of
    `waves` waves), run `body`, and store v[20+k] as output k."""
    stride = 128 * waves
    loads = "\n".join(f"\tglobal_load_b32 v{10 + k}, v1, s[4:5] offset:{k * stride}" for k in range(n_in))
    stores = "\n".join(f"\tglobal_store_b32 v1, v{20 + k}, s[6:7] offset:{k * stride}" for k in range(n_out))
    return asm_kernel(f"""\ts_load_b128 s[4:7], s[0:1], 0x0
\tv_and_b32_e32 v1, 0x3ff, v0
\tv_lshlrev_b32_e32 v1, 2, v1
\ts_waitcnt lgkmcnt(0)
{loads}
\ts_waitcnt vmcnt(0)
{body}
{stores}
\ts_endpgm""", lds=lds)


def run_lanes(body: str, inputs, n_out: int = 1, waves: int = 1, lds: int = 0, mode: str = "batched",
              fill=None):
    """Run lanes_kernel on u32 inputs (each shape (32*waves,)); returns the outputs as
    uint32 arrays. `fill`: initial values of the output buffer."""
    inputs = [np.asarray(x).astype(np.uint32) if np.asarray(x).dtype != np.float32 else
              np.asarray(x).view(np.uint32) for x in inputs]
    prog = Program.from_isa(lanes_kernel(body, len(inputs), n_out, waves, lds))
    mem = GlobalMemory()
    n = 32 * waves
    src = mem.alloc(max(1, 4 * n * len(inputs)))
    dst = mem.alloc(4 * n * n_out)
    if inputs:
        mem.write(src, np.concatenate(inputs))
    if fill is not None:
        mem.write(dst, np.asarray(fill, np.uint32))
    run_kernel(prog, mem, (1, 1, 1), (n, 1, 1), prog.pack_kernarg([src, dst], (1, 1, 1), (n, 1, 1)),
               mode=mode)
    out = np.frombuffer(mem.read(dst, 4 * n * n_out), np.uint32).reshape(n_out, n)
    return [out[k].copy() for k in range(n_out)]


def f32(x):
    return np.asarray(x, np.float32).view(np.uint32)


def as_f32(u):
    return np.asarray(u, np.uint32).view(np.float32)
