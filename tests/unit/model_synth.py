"""Synthetic ISA text and loop statistics for the model's unit tests (no compiler needed)."""
from __future__ import annotations

from wmma_gen.model.isa_loop import find_main_loop


def loop_isa(wmma: int = 8, valu: int = 16, loads: dict | None = None, ds_reads: dict | None = None,
             ds_writes: dict | None = None, wait_after_loads: bool = False, arch_wmma: str = "v_wmma_f32_16x16x16_f16",
             scratch: int = 0) -> str:
    """A kernel whose single loop issues the given instructions; loads are waited for at the
    end of the iteration (or right after issue with wait_after_loads)."""
    loads = {128: 8} if loads is None else loads
    body = []
    for bits, n in loads.items():
        for _ in range(n):
            body.append(f"\tglobal_load_b{bits} v[0:3], v[4:5], off")
            if wait_after_loads:
                body.append("\ts_waitcnt vmcnt(0)")
    for bits, n in (ds_writes or {}).items():
        body += [f"\tds_store_b{bits} v1, v[0:3]"] * n
    for bits, n in (ds_reads or {}).items():
        body += [f"\tds_load_b{bits} v[0:3], v1"] * n
    body += ["\tscratch_load_b32 v9, off, s0"] * scratch
    body += ["\tv_add_nc_u32_e32 v1, 4, v1"] * valu
    body += ["\ts_waitcnt vmcnt(0) lgkmcnt(0)"]
    body += [f"\t{arch_wmma} v[8:15], v[16:23], v[24:31], v[8:15]"] * wmma
    return "\n".join(["\t.text", "kern:", "\ts_load_b128 s[0:3], s[0:1], 0x0", "\ts_waitcnt lgkmcnt(0)",
                      ".LBB0_1:", *body, "\ts_add_i32 s4, s4, 1", "\ts_cmp_lg_u32 s4, s5",
                      "\ts_cbranch_scc1 .LBB0_1", "\tglobal_store_b128 v[0:1], v[2:5], off", "\ts_endpgm",
                      ".Lfunc_end0:"])


def loop(**kw):
    return find_main_loop(loop_isa(**kw))
