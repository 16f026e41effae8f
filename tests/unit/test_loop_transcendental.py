"""model/loop_kernel.py charges quarter-rate transcendentals of the loop body find_main_loop returns,
nothing after it (issue 38: a second text scan missed the back-edge of LLVM's commented loop label
`.LBB0_2:  ; =>This Inner Loop Header: Depth=1`, as Triton's ISA writes it, and counted to the end of
the kernel). Synthetic ISA, no compiler: 3 transcendentals in the loop, 5 in the epilogue."""
from types import SimpleNamespace

import pytest

from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.model.loop_kernel import estimate_loop_kernel
from wmma_gen.model.params import params_for, wmma_cycles
from wmma_gen.targets import get_target

ARCH = "gfx1100"
LOOP_TRANS = ("v_exp_f32_e32 v1, v1", "v_exp_f32_e32 v2, v2", "v_rcp_f32_e32 v3, v3")
EPILOGUE_TRANS = ("v_log_f32_e32 v4, v4", "v_rcp_f32_e32 v5, v5", "v_rsq_f32_e32 v6, v6",
                  "v_sqrt_f32_e32 v7, v7", "v_exp_f16_e32 v8, v8")
HEADER = "; =>This Inner Loop Header: Depth=1"


def isa(back_edge: str, commented: bool) -> str:
    """One loop, closed by `back_edge`: "s_cbranch" (conditional back-edge at the bottom) or "s_branch"
    (exit test at the top, unconditional jump back at the bottom), its label with or without LLVM's comment."""
    wmma = get_target(ARCH).instr("f16", "f32").mnemonic + " v[8:15], v[16:23], v[24:31], v[8:15]"
    head = ".LBB0_1:" + ("                                " + HEADER if commented else "")
    body = [wmma, "v_add_nc_u32_e32 v1, 4, v1", *LOOP_TRANS, "s_add_i32 s4, s4, 1", "s_cmp_lg_u32 s4, s5"]
    if back_edge == "s_cbranch":
        loop = [head, *("\t" + x for x in body), "\ts_cbranch_scc1 .LBB0_1"]
    else:
        loop = [head, "\ts_cbranch_scc0 .LBB0_2", *("\t" + x for x in body), "\ts_branch .LBB0_1", ".LBB0_2:"]
    return "\n".join(["\t.text", "kern:", "\ts_load_b128 s[0:3], s[0:1], 0x0", "\ts_waitcnt lgkmcnt(0)", *loop,
                      *("\t" + x for x in EPILOGUE_TRANS), "\tglobal_store_b128 v[0:1], v[2:5], off", "\ts_endpgm",
                      ".Lfunc_end0:"])


CASES = [(b, c) for b in ("s_cbranch", "s_branch") for c in (False, True)]


@pytest.mark.parametrize("back_edge,commented", CASES)
def test_loop_body_holds_exactly_the_loop_transcendentals(back_edge, commented):
    L = find_main_loop(isa(back_edge, commented))
    assert L.found and L.label == ".LBB0_1"     # the label's name, not LLVM's comment after it
    assert L.transcendental == len(LOOP_TRANS)
    assert sum(1 for o in L.outside if o.mnemonic.startswith(("v_log", "v_rsq", "v_sqrt", "v_exp_f16"))) == 4


@pytest.mark.parametrize("back_edge,commented", CASES)
def test_estimate_charges_the_loop_transcendentals_only(back_edge, commented):
    t = get_target(ARCH)
    md = SimpleNamespace(vgpr_count=32, lds_bytes=0, reqd_workgroup_size=(t.wave_size, 1, 1),
                         max_flat_workgroup_size=t.wave_size)
    e = estimate_loop_kernel(SimpleNamespace(isa=isa(back_edge, commented), metadata=md), t, "f16",
                             total_trips=1e6, workgroups=4 * t.cus, l2_bytes=0.0, compulsory_bytes=0.0, flops=1e12)
    assert e.figures["transcendental_per_trip"] == len(LOOP_TRANS)
    # VALU pipe of one trip: VALU instructions (transcendentals among them) + 3 more clocks per transcendental
    L = find_main_loop(isa(back_edge, commented))
    clk = params_for(ARCH).valu_clk
    assert e.figures["clocks_per_wave_trip"]["valu_pipe"] == pytest.approx(
        L.wmma * wmma_cycles(t, "f16", "f32") + (L.count("valu") + 3 * len(LOOP_TRANS)) * clk)


def test_no_loop_counts_the_whole_kernel():
    text = isa("s_cbranch", False).replace("\ts_cbranch_scc1 .LBB0_1", "")
    L = find_main_loop(text)
    assert not L.found and L.transcendental == len(LOOP_TRANS) + len(EPILOGUE_TRANS)
