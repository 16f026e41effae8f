"""wmma_gen.model.isa_loop: instruction classes and widths, back-edge loop detection,
single-wave latency simulation."""
import pytest

from wmma_gen.model.isa_loop import classify, find_main_loop, wave_iteration_clocks

from model_synth import loop


@pytest.mark.parametrize("line,kind,bits", [
    ("global_load_b128 v[0:3], v[4:5], off", "vmem_load", 128),
    ("global_load_d16_hi_b16 v63, v[1:2], off offset:32", "vmem_load", 16),
    ("global_load_u8 v1, v[1:2], off", "vmem_load", 8),
    ("buffer_load_dwordx4 v[0:3], v4, s[0:3], 0 offen", "vmem_load", 128),
    ("global_store_b64 v[0:1], v[2:3], off", "vmem_store", 64),
    ("ds_load_b128 v[1:4], v5 offset:16", "ds_read", 128),
    ("ds_load_2addr_b64 v[1:4], v5 offset1:8", "ds_read", 128),
    ("ds_read2_b32 v[1:2], v5 offset1:4", "ds_read", 64),
    ("ds_store_b16_d16_hi v162, v159 offset:400", "ds_write", 16),
    ("scratch_store_b32 off, v1, s0", "scratch_store", 32),
    ("v_wmma_i32_16x16x16_iu8 v[0:7], v[8:11], v[12:15], v[0:7]", "wmma", 0),
    ("v_dual_mov_b32 v1, 0 :: v_dual_add_nc_u32 v2, 1, v2", "valu", 0),
    ("s_delay_alu instid0(VALU_DEP_1)", "hint", 0),
    ("s_wait_alu depctr_va_vcc(0)", "hint", 0),
    ("s_load_b128 s[4:7], s[0:1], 0x0", "smem", 0),
    ("s_barrier", "barrier", 0),
    ("s_barrier_wait -1", "barrier", 0),
    ("s_add_i32 s0, s0, 1", "salu", 0),
])
def test_classify_kind_and_width(line, kind, bits):
    op = classify("\t" + line)
    assert op.kind == kind
    if bits:
        assert op.bits == bits


@pytest.mark.parametrize("line,vm,lg", [
    ("s_waitcnt vmcnt(3) lgkmcnt(0)", 3, 0), ("s_waitcnt vmcnt(0)", 0, -1), ("s_waitcnt lgkmcnt(2)", -1, 2),
    ("s_wait_loadcnt 0x2", 2, -1), ("s_wait_dscnt 0x0", -1, 0)])
def test_wait_counters(line, vm, lg):
    op = classify(line)
    assert (op.kind, op.vm_wait, op.lgkm_wait) == ("waitcnt", vm, lg)


def test_non_instructions_are_skipped():
    for line in ("", "\t.p2align 8", ".LBB0_1:", "; comment", "\t; %bb.1:"):
        assert classify(line) is None


def test_counts_per_iteration():
    L = loop(wmma=12, valu=20, loads={128: 6, 16: 4}, ds_reads={128: 8}, ds_writes={64: 2})
    assert L.found and L.label == ".LBB0_1"
    assert L.wmma == 12 and L.count("valu") == 20
    assert L.widths("vmem_load") == {16: 4, 128: 6}
    assert L.widths("ds_read") == {128: 8} and L.widths("ds_write") == {64: 2}
    assert L.count("vmem_store") == 0  # the epilogue store is outside the loop
    assert sum(o.kind == "vmem_store" for o in L.outside) == 1
    assert L.summary()["global_load_bytes_per_wave"] == 32 * (6 * 16 + 4 * 2)


def test_picks_the_loop_with_wmma_and_ignores_forward_branches():
    isa = "\n".join(["kern:", ".LBB0_1:", "\ts_cbranch_execz .LBB0_3", ".LBB0_2:",
                     "\tv_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]",
                     "\tv_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]",
                     "\ts_cbranch_scc1 .LBB0_2", "\tv_add_nc_u32_e32 v1, 1, v1",
                     "\ts_cbranch_scc1 .LBB0_1", ".LBB0_3:", "\ts_endpgm"])
    L = find_main_loop(isa)
    assert L.label == ".LBB0_2" and L.wmma == 2 and L.issued == 3


def test_no_back_edge_means_whole_kernel():
    L = find_main_loop("kern:\n\tv_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]\n\ts_endpgm\n")
    assert not L.found and L.wmma == 1


def test_exposed_latency_depends_on_wait_placement():
    cost = {"wmma": 32, "valu": 1, "hint": 0}
    late = loop(wmma=8, loads={128: 4})
    early = loop(wmma=8, loads={128: 4}, wait_after_loads=True)
    t_late = wave_iteration_clocks(late.ops, cost, 500, 64)
    t_early = wave_iteration_clocks(early.ops, cost, 500, 64)
    issue = sum(cost.get(o.kind, 1) for o in late.ops)
    assert t_late >= issue and t_late < t_early          # waiting right after each load serialises 4 latencies
    assert t_early >= 4 * 500
    assert wave_iteration_clocks(late.ops, cost, 0, 0) == issue  # no latency -> pure issue time
