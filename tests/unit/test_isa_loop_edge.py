"""The main loop's edge block (model/isa_loop.LoopStats.edge, issue 38 item 4): code after the back-edge
that branches to the loop head itself -- the attention forward's edge-mask block -- is found, and the
density over trips that run it counts its instructions."""
from wmma_gen.model.isa_loop import find_main_loop

ISA = """kern:
  s_mov_b32 s0, 0
.Lloop:
  v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]
  v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]
  s_add_u32 s0, s0, 1
  s_cmp_lt_u32 s0, s1
  s_cbranch_scc1 .Lloop
  v_cmp_gt_u32_e64 s2, v1, v2
  v_cndmask_b32_e64 v3, 0xff800000, v3, s2
  s_delay_alu 1
  s_branch .Lloop
  s_endpgm
.Lfunc_end0:
"""


def test_the_block_that_rejoins_the_loop_head_is_its_edge():
    L = find_main_loop(ISA)
    assert (L.wmma, L.issued) == (2, 5)
    assert [o.mnemonic for o in L.edge] == ["v_cmp_gt_u32_e64", "v_cndmask_b32_e64", "s_delay_alu", "s_branch"]
    assert L.edge_issued == 3                                        # the hint takes no issue slot
    assert L.density() == 2 / 5 and L.density(1.0) == 2 / 8 and L.density(0.5) == 2 / 6.5


def test_a_loop_without_such_a_block_has_no_edge():
    L = find_main_loop(ISA.replace("  s_branch .Lloop\n", ""))
    assert L.edge == () and L.density(1.0) == L.density()
