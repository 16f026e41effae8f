"""Operand roles of every mnemonic the decoder names: kind, destination and source role tags
(upper case = implicit), the Op.args the decoder reads (access `size` in bytes, DS atomic `ret`),
and the register counts of the WMMA operands per WMMA family. The decoder uses them to know how
many registers an operand spans and which operands the encoding leaves implicit (roles.py).

GENERATED from the emulator's semantic rows (emu/isa) by `python -m wmma_gen.emu.decode.roles_export`;
do not edit. tests/emu/test_operand_roles_sync.py fails when this table and the rows differ, so
decode and execution cannot disagree about an operand."""

# role tag -> bits of one operand (emu/isa/table.TYPES; `u8` is read as a 32-bit register)
BITS = {
    'u32': 32, 'i32': 32, 'f32': 32, 'b32': 32, 'u16': 16, 'i16': 16, 'f16': 16, 'b16': 16, 'u64': 64,
    'i64': 64, 'f64': 64, 'b64': 64, 'u8': 32
}

# One group per line, `kind|dst tags|src tags|key=value args: mnemonic ...`; indented lines continue
# the mnemonics of the group above.
_GROUPS = """
barrier|||: s_barrier
barrier_signal|||: s_barrier_signal
barrier_wait|||: s_barrier_wait
branch|||: s_branch
branch||execnz|: s_cbranch_execnz
branch||execz|: s_cbranch_execz
branch||scc0|: s_cbranch_scc0
branch||scc1|: s_cbranch_scc1
branch||vccnz|: s_cbranch_vccnz
branch||vccz|: s_cbranch_vccz
denorm|||: s_denorm_mode
ds_atomic|||ret=False: ds_add_f32 ds_add_u32 ds_max_f32 ds_min_f32
ds_atomic|||ret=True: ds_add_rtn_f32 ds_add_rtn_u32
ds_bpermute|||: ds_bpermute_b32
ds_load|||size=1: ds_load_i8 ds_load_i8_d16 ds_load_i8_d16_hi ds_load_u8 ds_load_u8_d16
    ds_load_u8_d16_hi
ds_load|||size=12: ds_load_b96
ds_load|||size=16: ds_load_b128
ds_load|||size=2: ds_load_i16 ds_load_u16 ds_load_u16_d16 ds_load_u16_d16_hi
ds_load|||size=4: ds_load_b32
ds_load|||size=8: ds_load_b64
ds_load2|||size=4: ds_load_2addr_b32 ds_load_2addr_stride64_b32
ds_load2|||size=8: ds_load_2addr_b64 ds_load_2addr_stride64_b64
ds_permute|||: ds_permute_b32
ds_store|||size=1: ds_store_b8 ds_store_b8_d16_hi
ds_store|||size=12: ds_store_b96
ds_store|||size=16: ds_store_b128
ds_store|||size=2: ds_store_b16 ds_store_b16_d16_hi
ds_store|||size=4: ds_store_b32
ds_store|||size=8: ds_store_b64
ds_store2|||size=4: ds_store_2addr_b32 ds_store_2addr_stride64_b32
ds_store2|||size=8: ds_store_2addr_b64 ds_store_2addr_stride64_b64
ds_swizzle|||: ds_swizzle_b32
end|||: s_code_end s_endpgm
global_atomic|||size=4: global_atomic_add_f32 global_atomic_add_u32 global_atomic_max_i32
    global_atomic_max_u32 global_atomic_min_i32 global_atomic_min_u32
global_load|||size=1: global_load_d16_hi_i8 global_load_d16_hi_u8 global_load_d16_i8 global_load_d16_u8
    global_load_i8 global_load_u8
global_load|||size=12: global_load_b96
global_load|||size=16: global_load_b128
global_load|||size=2: global_load_d16_b16 global_load_d16_hi_b16 global_load_i16 global_load_u16
global_load|||size=4: global_load_b32
global_load|||size=8: global_load_b64
global_store|||size=1: global_store_b8 global_store_d16_hi_b8
global_store|||size=12: global_store_b96
global_store|||size=16: global_store_b128
global_store|||size=2: global_store_b16 global_store_d16_hi_b16
global_store|||size=4: global_store_b32
global_store|||size=8: global_store_b64
lane|s|v|: v_readfirstlane_b32
lane|s|v s|: v_readlane_b32
lane|v|v s s D|: v_permlane16_b32 v_permlanex16_b32
lane|v2|v D|: v_swap_b32
lane|vall|s s D|: v_writelane_b32
mix|f16|hi|: v_fma_mixhi_f16
mix|f16|lo|: v_fma_mixlo_f16
mix|f32||: v_fma_mix_f32
nop|||: buffer_gl0_inv buffer_gl1_inv global_inv global_wb s_clause s_dcache_inv s_delay_alu s_gl1_inv
    s_icache_inv s_inst_prefetch s_nop s_sendmsg s_set_inst_prefetch_distance s_setprio s_sleep
    s_ttracedata s_version s_wait_alu s_wait_bvhcnt s_wait_dscnt s_wait_expcnt s_wait_kmcnt
    s_wait_loadcnt s_wait_loadcnt_dscnt s_wait_samplecnt s_wait_storecnt s_wait_storecnt_dscnt s_waitcnt
    s_waitcnt_depctr s_waitcnt_expcnt s_waitcnt_lgkmcnt s_waitcnt_vmcnt s_waitcnt_vscnt v_nop
salu|SCC|b32 u32|: s_bitcmp0_b32 s_bitcmp1_b32
salu|SCC|b64 u32|: s_bitcmp0_b64 s_bitcmp1_b64
salu|SCC|f16 f16|: s_cmp_eq_f16 s_cmp_ge_f16 s_cmp_gt_f16 s_cmp_le_f16 s_cmp_lg_f16 s_cmp_lt_f16
    s_cmp_neq_f16 s_cmp_nge_f16 s_cmp_ngt_f16 s_cmp_nle_f16 s_cmp_nlg_f16 s_cmp_nlt_f16 s_cmp_o_f16
    s_cmp_u_f16
salu|SCC|f32 f32|: s_cmp_eq_f32 s_cmp_ge_f32 s_cmp_gt_f32 s_cmp_le_f32 s_cmp_lg_f32 s_cmp_lt_f32
    s_cmp_neq_f32 s_cmp_nge_f32 s_cmp_ngt_f32 s_cmp_nle_f32 s_cmp_nlg_f32 s_cmp_nlt_f32 s_cmp_o_f32
    s_cmp_u_f32
salu|SCC|i32 i32|: s_cmp_eq_i32 s_cmp_ge_i32 s_cmp_gt_i32 s_cmp_le_i32 s_cmp_lg_i32 s_cmp_lt_i32
    s_cmpk_eq_i32 s_cmpk_ge_i32 s_cmpk_gt_i32 s_cmpk_le_i32 s_cmpk_lg_i32 s_cmpk_lt_i32
salu|SCC|u32 u32|: s_cmp_eq_u32 s_cmp_ge_u32 s_cmp_gt_u32 s_cmp_le_u32 s_cmp_lg_u32 s_cmp_lt_u32
    s_cmpk_eq_u32 s_cmpk_ge_u32 s_cmpk_gt_u32 s_cmpk_le_u32 s_cmpk_lg_u32 s_cmpk_lt_u32
salu|SCC|u64 u64|: s_cmp_eq_u64 s_cmp_lg_u64
salu|b32|b32|: s_brev_b32 s_mov_b32
salu|b32|b32 D SCC|: s_cmov_b32
salu|b32|b32 b32|: s_pack_hh_b32_b16 s_pack_hl_b32_b16 s_pack_lh_b32_b16 s_pack_ll_b32_b16
salu|b32|b32 b32 SCC|: s_cselect_b32
salu|b32|f32 f32|: s_cvt_pk_rtz_f16_f32
salu|b32|u32 D|: s_bitset0_b32 s_bitset1_b32
salu|b32|u32 u32|: s_bfm_b32
salu|b32 EXEC SCC|b32 EXEC|: s_and_not0_saveexec_b32 s_and_not1_saveexec_b32 s_and_saveexec_b32
    s_nand_saveexec_b32 s_nor_saveexec_b32 s_or_not0_saveexec_b32 s_or_not1_saveexec_b32
    s_or_saveexec_b32 s_xnor_saveexec_b32 s_xor_saveexec_b32
salu|b32 SCC|b32|: s_not_b32
salu|b32 SCC|b32 b32|: s_and_b32 s_and_not1_b32 s_nand_b32 s_nor_b32 s_or_b32 s_or_not1_b32 s_xnor_b32
    s_xor_b32
salu|b32 SCC|b32 u32|: s_lshl_b32 s_lshr_b32
salu|b64|b64|: s_mov_b64
salu|b64|b64 D SCC|: s_cmov_b64
salu|b64|b64 b64 SCC|: s_cselect_b64
salu|b64 SCC|b64|: s_not_b64
salu|b64 SCC|b64 b64|: s_and_b64 s_and_not1_b64 s_nand_b64 s_nor_b64 s_or_b64 s_or_not1_b64 s_xnor_b64
    s_xor_b64
salu|b64 SCC|b64 u32|: s_lshl_b64 s_lshr_b64
salu|f16|f16|: s_ceil_f16 s_floor_f16 s_rndne_f16 s_trunc_f16 v_s_exp_f16 v_s_log_f16 v_s_rcp_f16
    v_s_rsq_f16 v_s_sqrt_f16
salu|f16|f16 f16|: s_add_f16 s_max_f16 s_max_num_f16 s_maximum_f16 s_min_f16 s_min_num_f16 s_minimum_f16
    s_mul_f16 s_sub_f16
salu|f16|f16 f16 D|: s_fmac_f16
salu|f16|f32|: s_cvt_f16_f32
salu|f32|b32|: s_cvt_hi_f32_f16
salu|f32|f16|: s_cvt_f32_f16
salu|f32|f32|: s_ceil_f32 s_floor_f32 s_rndne_f32 s_trunc_f32 v_s_exp_f32 v_s_log_f32 v_s_rcp_f32
    v_s_rsq_f32 v_s_sqrt_f32
salu|f32|f32 f32|: s_add_f32 s_max_f32 s_max_num_f32 s_maximum_f32 s_min_f32 s_min_num_f32 s_minimum_f32
    s_mul_f32 s_sub_f32
salu|f32|f32 f32 D|: s_fmac_f32
salu|f32|f32 f32 f32|: s_fmaak_f32 s_fmamk_f32
salu|f32|i32|: s_cvt_f32_i32
salu|f32|u32|: s_cvt_f32_u32
salu|i32|D i32|: s_mulk_i32
salu|i32|b32|: s_clz_i32_u32 s_ctz_i32_b32
salu|i32|b64|: s_ctz_i32_b64
salu|i32|f32|: s_cvt_i32_f32
salu|i32|i32|: s_movk_i32 s_sext_i32_i16 s_sext_i32_i8
salu|i32|i32 D SCC|: s_cmovk_i32
salu|i32|i32 i32|: s_mul_hi_i32 s_mul_i32
salu|i32 SCC|D i32|: s_addk_co_i32 s_addk_i32
salu|i32 SCC|b32|: s_bcnt0_i32_b32 s_bcnt1_i32_b32
salu|i32 SCC|b64|: s_bcnt1_i32_b64
salu|i32 SCC|i32|: s_abs_i32
salu|i32 SCC|i32 i32|: s_absdiff_i32 s_add_co_i32 s_add_i32 s_max_i32 s_min_i32 s_sub_co_i32 s_sub_i32
salu|i32 SCC|i32 u32|: s_ashr_i32 s_bfe_i32
salu|i64 SCC|i64 u32|: s_ashr_i64 s_bfe_i64
salu|u32|f32|: s_cvt_u32_f32
salu|u32|u32 u32|: s_mul_hi_u32
salu|u32 SCC|u32 u32|: s_add_co_u32 s_add_u32 s_bfe_u32 s_lshl1_add_u32 s_lshl2_add_u32 s_lshl3_add_u32
    s_lshl4_add_u32 s_max_u32 s_min_u32 s_sub_co_u32 s_sub_u32
salu|u32 SCC|u32 u32 SCC|: s_add_co_ci_u32 s_addc_u32 s_sub_co_ci_u32 s_subb_u32
salu|u64|u64 u64|: s_add_nc_u64 s_mul_u64 s_sub_nc_u64
salu|u64 SCC|u64 u32|: s_bfe_u64
scratch_load|||size=1: scratch_load_d16_hi_i8 scratch_load_d16_hi_u8 scratch_load_d16_i8
    scratch_load_d16_u8 scratch_load_i8 scratch_load_u8
scratch_load|||size=12: scratch_load_b96
scratch_load|||size=16: scratch_load_b128
scratch_load|||size=2: scratch_load_d16_b16 scratch_load_d16_hi_b16 scratch_load_i16 scratch_load_u16
scratch_load|||size=4: scratch_load_b32
scratch_load|||size=8: scratch_load_b64
scratch_store|||size=1: scratch_store_b8 scratch_store_d16_hi_b8
scratch_store|||size=12: scratch_store_b96
scratch_store|||size=16: scratch_store_b128
scratch_store|||size=2: scratch_store_b16 scratch_store_d16_hi_b16
scratch_store|||size=4: scratch_store_b32
scratch_store|||size=8: scratch_store_b64
smem|||: s_load_b128 s_load_b256 s_load_b32 s_load_b512 s_load_b64 s_load_b96 s_load_i16 s_load_i8
    s_load_u16 s_load_u8
valu|EXEC|f16 f16|: v_cmpx_eq_f16 v_cmpx_f_f16 v_cmpx_ge_f16 v_cmpx_gt_f16 v_cmpx_le_f16 v_cmpx_lg_f16
    v_cmpx_lt_f16 v_cmpx_neq_f16 v_cmpx_nge_f16 v_cmpx_ngt_f16 v_cmpx_nle_f16 v_cmpx_nlg_f16
    v_cmpx_nlt_f16 v_cmpx_o_f16 v_cmpx_t_f16 v_cmpx_tru_f16 v_cmpx_u_f16
valu|EXEC|f16 u32|: v_cmpx_class_f16
valu|EXEC|f32 f32|: v_cmpx_eq_f32 v_cmpx_f_f32 v_cmpx_ge_f32 v_cmpx_gt_f32 v_cmpx_le_f32 v_cmpx_lg_f32
    v_cmpx_lt_f32 v_cmpx_neq_f32 v_cmpx_nge_f32 v_cmpx_ngt_f32 v_cmpx_nle_f32 v_cmpx_nlg_f32
    v_cmpx_nlt_f32 v_cmpx_o_f32 v_cmpx_t_f32 v_cmpx_tru_f32 v_cmpx_u_f32
valu|EXEC|f32 u32|: v_cmpx_class_f32
valu|EXEC|f64 f64|: v_cmpx_eq_f64 v_cmpx_f_f64 v_cmpx_ge_f64 v_cmpx_gt_f64 v_cmpx_le_f64 v_cmpx_lg_f64
    v_cmpx_lt_f64 v_cmpx_neq_f64 v_cmpx_nge_f64 v_cmpx_ngt_f64 v_cmpx_nle_f64 v_cmpx_nlg_f64
    v_cmpx_nlt_f64 v_cmpx_o_f64 v_cmpx_t_f64 v_cmpx_tru_f64 v_cmpx_u_f64
valu|EXEC|f64 u32|: v_cmpx_class_f64
valu|EXEC|i16 i16|: v_cmpx_eq_i16 v_cmpx_ge_i16 v_cmpx_gt_i16 v_cmpx_le_i16 v_cmpx_lt_i16 v_cmpx_ne_i16
valu|EXEC|i32 i32|: v_cmpx_eq_i32 v_cmpx_f_i32 v_cmpx_ge_i32 v_cmpx_gt_i32 v_cmpx_le_i32 v_cmpx_lt_i32
    v_cmpx_ne_i32 v_cmpx_t_i32
valu|EXEC|i64 i64|: v_cmpx_eq_i64 v_cmpx_f_i64 v_cmpx_ge_i64 v_cmpx_gt_i64 v_cmpx_le_i64 v_cmpx_lt_i64
    v_cmpx_ne_i64 v_cmpx_t_i64
valu|EXEC|u16 u16|: v_cmpx_eq_u16 v_cmpx_ge_u16 v_cmpx_gt_u16 v_cmpx_le_u16 v_cmpx_lt_u16 v_cmpx_ne_u16
valu|EXEC|u32 u32|: v_cmpx_eq_u32 v_cmpx_f_u32 v_cmpx_ge_u32 v_cmpx_gt_u32 v_cmpx_le_u32 v_cmpx_lt_u32
    v_cmpx_ne_u32 v_cmpx_t_u32
valu|EXEC|u64 u64|: v_cmpx_eq_u64 v_cmpx_f_u64 v_cmpx_ge_u64 v_cmpx_gt_u64 v_cmpx_le_u64 v_cmpx_lt_u64
    v_cmpx_ne_u64 v_cmpx_t_u64
valu|b16|b16|: v_mov_b16 v_not_b16
valu|b16|b16 b16|: v_and_b16 v_or_b16 v_xor_b16
valu|b16|b16 b16 lm|: v_cndmask_b16
valu|b16|b32 b32 b32|: v_dot2_bf16_bf16 v_dot2_f16_f16
valu|b16|u16 b16|: v_lshlrev_b16 v_lshrrev_b16
valu|b32|b32|: v_bfrev_b32 v_mov_b32 v_not_b32
valu|b32|b32 b32|: v_and_b32 v_or_b32 v_xnor_b32 v_xor_b32
valu|b32|b32 b32 b32|: v_and_or_b32 v_bfi_b32 v_or3_b32 v_perm_b32 v_xor3_b32
valu|b32|b32 b32 lm|: v_cndmask_b32
valu|b32|b32 b32 u32|: v_alignbit_b32 v_alignbyte_b32
valu|b32|b32 u32 b32|: v_lshl_or_b32
valu|b32|f16 f16|: v_pack_b32_f16
valu|b32|f32 f32|: v_cvt_pk_rtz_f16_f32
valu|b32|f32 f32 D|: v_cvt_pk_bf8_f32 v_cvt_pk_fp8_f32
valu|b32|f32 u32 D|: v_cvt_sr_bf8_f32 v_cvt_sr_fp8_f32
valu|b32|i32 i32|: v_cvt_pk_i16_i32
valu|b32|u32 b32|: v_lshlrev_b32 v_lshrrev_b32
valu|b32|u32 u32|: v_bfm_b32 v_cvt_pk_u16_u32
valu|b64|u32|: v_cvt_pk_f32_bf8 v_cvt_pk_f32_fp8
valu|b64|u32 b64|: v_lshlrev_b64 v_lshrrev_b64
valu|f16|f16|: v_ceil_f16 v_cos_f16 v_exp_f16 v_floor_f16 v_fract_f16 v_frexp_mant_f16 v_log_f16
    v_rcp_f16 v_rndne_f16 v_rsq_f16 v_sin_f16 v_sqrt_f16 v_trunc_f16
valu|f16|f16 f16|: v_add_f16 v_max_f16 v_max_num_f16 v_maximum_f16 v_min_f16 v_min_num_f16 v_minimum_f16
    v_mul_f16 v_sub_f16 v_subrev_f16
valu|f16|f16 f16 D|: v_fmac_f16
valu|f16|f16 f16 f16|: v_div_fixup_f16 v_fma_f16 v_fmaak_f16 v_fmamk_f16 v_max3_f16 v_max3_num_f16
    v_maximum3_f16 v_maximumminimum_f16 v_maxmin_f16 v_maxmin_num_f16 v_med3_f16 v_med3_num_f16
    v_min3_f16 v_min3_num_f16 v_minimum3_f16 v_minimummaximum_f16 v_minmax_f16 v_minmax_num_f16
valu|f16|f16 i16|: v_ldexp_f16
valu|f16|f32|: v_cvt_f16_f32
valu|f16|i16|: v_cvt_f16_i16
valu|f16|u16|: v_cvt_f16_u16
valu|f32|b32 b32 D|: v_dot2acc_f32_f16
valu|f32|b32 b32 f32|: v_dot2_f32_bf16 v_dot2_f32_f16
valu|f32|f16|: v_cvt_f32_f16
valu|f32|f32|: v_ceil_f32 v_cos_f32 v_exp_f32 v_floor_f32 v_fract_f32 v_frexp_mant_f32 v_log_f32
    v_rcp_f32 v_rcp_iflag_f32 v_rndne_f32 v_rsq_f32 v_sin_f32 v_sqrt_f32 v_trunc_f32
valu|f32|f32 f32|: v_add_f32 v_max_f32 v_max_num_f32 v_maximum_f32 v_min_f32 v_min_num_f32 v_minimum_f32
    v_mul_dx9_zero_f32 v_mul_f32 v_sub_f32 v_subrev_f32
valu|f32|f32 f32 D|: v_fmac_dx9_zero_f32 v_fmac_f32
valu|f32|f32 f32 f32|: v_div_fixup_f32 v_fma_dx9_zero_f32 v_fma_f32 v_fmaak_f32 v_fmamk_f32 v_max3_f32
    v_max3_num_f32 v_maximum3_f32 v_maximumminimum_f32 v_maxmin_f32 v_maxmin_num_f32 v_med3_f32
    v_med3_num_f32 v_min3_f32 v_min3_num_f32 v_minimum3_f32 v_minimummaximum_f32 v_minmax_f32
    v_minmax_num_f32
valu|f32|f32 f32 f32 VCC|: v_div_fmas_f32
valu|f32|f32 i32|: v_ldexp_f32
valu|f32|f64|: v_cvt_f32_f64
valu|f32|i32|: v_cvt_f32_i32
valu|f32|u32|: v_cvt_f32_bf8 v_cvt_f32_fp8 v_cvt_f32_u32 v_cvt_f32_ubyte0 v_cvt_f32_ubyte1
    v_cvt_f32_ubyte2 v_cvt_f32_ubyte3
valu|f32 lm|f32 f32 f32|: v_div_scale_f32
valu|f64|f32|: v_cvt_f64_f32
valu|f64|f64|: v_ceil_f64 v_floor_f64 v_fract_f64 v_rcp_f64 v_rndne_f64 v_rsq_f64 v_sqrt_f64 v_trunc_f64
valu|f64|f64 f64|: v_add_f64 v_max_f64 v_max_num_f64 v_maximum_f64 v_min_f64 v_min_num_f64 v_minimum_f64
    v_mul_f64
valu|f64|f64 f64 f64|: v_fma_f64
valu|f64|i32|: v_cvt_f64_i32
valu|f64|u32|: v_cvt_f64_u32
valu|i16|f16|: v_cvt_i16_f16 v_frexp_exp_i16_f16
valu|i16|i16 i16|: v_add_nc_i16 v_max_i16 v_min_i16 v_sub_nc_i16
valu|i16|i16 i16 i16|: v_mad_i16 v_max3_i16 v_med3_i16 v_min3_i16
valu|i16|u16 i16|: v_ashrrev_i16
valu|i32|b32|: v_ctz_i32_b32
valu|i32|b32 b32 i32|: v_dot4_i32_iu8 v_dot8_i32_iu4
valu|i32|f32|: v_cvt_floor_i32_f32 v_cvt_flr_i32_f32 v_cvt_i32_f32 v_cvt_nearest_i32_f32
    v_cvt_rpi_i32_f32 v_frexp_exp_i32_f32
valu|i32|f64|: v_cvt_i32_f64
valu|i32|i16|: v_cvt_i32_i16
valu|i32|i16 i16 i32|: v_mad_i32_i16
valu|i32|i32|: v_cls_i32
valu|i32|i32 i32|: v_add_nc_i32 v_max_i32 v_min_i32 v_mul_hi_i32 v_sub_nc_i32
valu|i32|i32 i32 i32|: v_max3_i32 v_maxmin_i32 v_med3_i32 v_min3_i32 v_minmax_i32
valu|i32|u32|: v_clz_i32_u32
valu|i32|u32 i32|: v_ashrrev_i32
valu|i32|u32 u32|: v_mul_hi_i32_i24 v_mul_i32_i24
valu|i32|u32 u32 i32|: v_mad_i32_i24
valu|i32|u32 u32 u32|: v_bfe_i32
valu|i64|u32 i64|: v_ashrrev_i64
valu|i64 lm|i32 i32 i64|: v_mad_co_i64_i32 v_mad_i64_i32
valu|lm|f16 f16|: v_cmp_eq_f16 v_cmp_f_f16 v_cmp_ge_f16 v_cmp_gt_f16 v_cmp_le_f16 v_cmp_lg_f16
    v_cmp_lt_f16 v_cmp_neq_f16 v_cmp_nge_f16 v_cmp_ngt_f16 v_cmp_nle_f16 v_cmp_nlg_f16 v_cmp_nlt_f16
    v_cmp_o_f16 v_cmp_t_f16 v_cmp_tru_f16 v_cmp_u_f16
valu|lm|f16 u32|: v_cmp_class_f16
valu|lm|f32 f32|: v_cmp_eq_f32 v_cmp_f_f32 v_cmp_ge_f32 v_cmp_gt_f32 v_cmp_le_f32 v_cmp_lg_f32
    v_cmp_lt_f32 v_cmp_neq_f32 v_cmp_nge_f32 v_cmp_ngt_f32 v_cmp_nle_f32 v_cmp_nlg_f32 v_cmp_nlt_f32
    v_cmp_o_f32 v_cmp_t_f32 v_cmp_tru_f32 v_cmp_u_f32
valu|lm|f32 u32|: v_cmp_class_f32
valu|lm|f64 f64|: v_cmp_eq_f64 v_cmp_f_f64 v_cmp_ge_f64 v_cmp_gt_f64 v_cmp_le_f64 v_cmp_lg_f64
    v_cmp_lt_f64 v_cmp_neq_f64 v_cmp_nge_f64 v_cmp_ngt_f64 v_cmp_nle_f64 v_cmp_nlg_f64 v_cmp_nlt_f64
    v_cmp_o_f64 v_cmp_t_f64 v_cmp_tru_f64 v_cmp_u_f64
valu|lm|f64 u32|: v_cmp_class_f64
valu|lm|i16 i16|: v_cmp_eq_i16 v_cmp_ge_i16 v_cmp_gt_i16 v_cmp_le_i16 v_cmp_lt_i16 v_cmp_ne_i16
valu|lm|i32 i32|: v_cmp_eq_i32 v_cmp_f_i32 v_cmp_ge_i32 v_cmp_gt_i32 v_cmp_le_i32 v_cmp_lt_i32
    v_cmp_ne_i32 v_cmp_t_i32
valu|lm|i64 i64|: v_cmp_eq_i64 v_cmp_f_i64 v_cmp_ge_i64 v_cmp_gt_i64 v_cmp_le_i64 v_cmp_lt_i64
    v_cmp_ne_i64 v_cmp_t_i64
valu|lm|u16 u16|: v_cmp_eq_u16 v_cmp_ge_u16 v_cmp_gt_u16 v_cmp_le_u16 v_cmp_lt_u16 v_cmp_ne_u16
valu|lm|u32 u32|: v_cmp_eq_u32 v_cmp_f_u32 v_cmp_ge_u32 v_cmp_gt_u32 v_cmp_le_u32 v_cmp_lt_u32
    v_cmp_ne_u32 v_cmp_t_u32
valu|lm|u64 u64|: v_cmp_eq_u64 v_cmp_f_u64 v_cmp_ge_u64 v_cmp_gt_u64 v_cmp_le_u64 v_cmp_lt_u64
    v_cmp_ne_u64 v_cmp_t_u64
valu|u16|f16|: v_cvt_u16_f16
valu|u16|u16 u16|: v_add_nc_u16 v_max_u16 v_min_u16 v_mul_lo_u16 v_sub_nc_u16
valu|u16|u16 u16 u16|: v_mad_u16 v_max3_u16 v_med3_u16 v_min3_u16
valu|u32|b32 b32 u32|: v_dot4_u32_u8 v_dot8_u32_u4
valu|u32|b32 u32|: v_bcnt_u32_b32 v_mbcnt_hi_u32_b32 v_mbcnt_lo_u32_b32
valu|u32|f32|: v_cvt_u32_f32
valu|u32|f64|: v_cvt_u32_f64
valu|u32|u16|: v_cvt_u32_u16
valu|u32|u16 u16 u32|: v_mad_u32_u16
valu|u32|u32 u32|: v_add_nc_u32 v_max_u32 v_min_u32 v_mul_hi_u32 v_mul_hi_u32_u24 v_mul_lo_u32
    v_mul_u32_u24 v_sub_nc_u32 v_subrev_nc_u32
valu|u32|u32 u32 u32|: v_add3_u32 v_add_lshl_u32 v_bfe_u32 v_lshl_add_u32 v_mad_u32_u24 v_max3_u32
    v_maxmin_u32 v_med3_u32 v_min3_u32 v_minmax_u32 v_sad_u32 v_xad_u32
valu|u32 lm|u32 u32|: v_add_co_u32 v_sub_co_u32 v_subrev_co_u32
valu|u32 lm|u32 u32 lm|: v_add_co_ci_u32 v_sub_co_ci_u32 v_subrev_co_ci_u32
valu|u64 lm|u32 u32 u64|: v_mad_co_u64_u32 v_mad_u64_u32
vop3p|f16|f16 f16|: v_pk_add_f16 v_pk_max_f16 v_pk_min_f16 v_pk_mul_f16
vop3p|f16|f16 f16 f16|: v_pk_fma_f16
vop3p|i16|i16 i16|: v_pk_add_i16 v_pk_max_i16 v_pk_min_i16 v_pk_sub_i16
vop3p|i16|i16 i16 i16|: v_pk_mad_i16
vop3p|i16|u16 i16|: v_pk_ashrrev_i16
vop3p|u16|u16 u16|: v_pk_add_u16 v_pk_lshlrev_b16 v_pk_lshrrev_b16 v_pk_max_u16 v_pk_min_u16
    v_pk_mul_lo_u16 v_pk_sub_u16
vop3p|u16|u16 u16 u16|: v_pk_mad_u16
"""


def _parse(text: str) -> dict[str, tuple[str, str, str, dict]]:
    rows, roles = {}, None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            head, _, line = line.partition(": ")
            kind, dst, src, args = head.split("|")
            roles = (kind, dst, src, {k: int(v) if v.isdigit() else v == "True"
                                      for k, v in (a.split("=") for a in args.split(",") if a)})
        rows.update((name, roles) for name in line.split())
    return rows


# mnemonic -> (kind, dst tags, src tags, args)
ROWS = _parse(_GROUPS)

# WMMA family -> mnemonic -> (A registers, B registers, C/D registers)
WMMA = {
    'gfx11': {
        'v_wmma_bf16_16x16x16_bf16': (8, 8, 8),
        'v_wmma_f16_16x16x16_f16': (8, 8, 8),
        'v_wmma_f32_16x16x16_bf16': (8, 8, 8),
        'v_wmma_f32_16x16x16_f16': (8, 8, 8),
        'v_wmma_i32_16x16x16_iu4': (2, 2, 8),
        'v_wmma_i32_16x16x16_iu8': (4, 4, 8),
    },
    'gfx12': {
        'v_wmma_bf16_16x16x16_bf16': (4, 4, 4),
        'v_wmma_f16_16x16x16_f16': (4, 4, 4),
        'v_wmma_f32_16x16x16_bf16': (4, 4, 8),
        'v_wmma_f32_16x16x16_bf8_bf8': (2, 2, 8),
        'v_wmma_f32_16x16x16_bf8_fp8': (2, 2, 8),
        'v_wmma_f32_16x16x16_f16': (4, 4, 8),
        'v_wmma_f32_16x16x16_fp8_bf8': (2, 2, 8),
        'v_wmma_f32_16x16x16_fp8_fp8': (2, 2, 8),
        'v_wmma_i32_16x16x16_iu4': (1, 1, 8),
        'v_wmma_i32_16x16x16_iu8': (2, 2, 8),
        'v_wmma_i32_16x16x32_iu4': (2, 2, 8),
    },
}
