"""gfx12 opcode numbers -> mnemonics, one table per encoding class.

Source: AMD RDNA4 ISA guide, chapter 'Microcode Formats': the opcode table of each format (sections named below);
the numbers were checked against LLVM's MC disassembler (llvm-mc -disassemble) for
gfx1201. VOP3 lists only the VOP3-only opcodes (>= 512); opcodes 0-255 / 256-383 /
384-511 of VOP3 are the VOPC / VOP2 / VOP1 opcodes (+256 / +384) with the `_e64` suffix.
Mnemonics are LLVM's (llvm/docs/AMDGPU/AMDGPUAsmGFX12.rst).
"""

from ._table import parse

TABLE = {
    # §15.6 DS opcodes
    "ds": parse("""
    0:ds_add_u32 1:ds_sub_u32 2:ds_rsub_u32 3:ds_inc_u32 4:ds_dec_u32 5:ds_min_i32 6:ds_max_i32
    7:ds_min_u32 8:ds_max_u32 9:ds_and_b32 10:ds_or_b32 11:ds_xor_b32 12:ds_mskor_b32 13:ds_store_b32
    14:ds_store_2addr_b32 15:ds_store_2addr_stride64_b32 16:ds_cmpstore_b32 18:ds_min_num_f32
    19:ds_max_num_f32 20:ds_nop 21:ds_add_f32 30:ds_store_b8 31:ds_store_b16 32:ds_add_rtn_u32
    33:ds_sub_rtn_u32 34:ds_rsub_rtn_u32 35:ds_inc_rtn_u32 36:ds_dec_rtn_u32 37:ds_min_rtn_i32
    38:ds_max_rtn_i32 39:ds_min_rtn_u32 40:ds_max_rtn_u32 41:ds_and_rtn_b32 42:ds_or_rtn_b32
    43:ds_xor_rtn_b32 44:ds_mskor_rtn_b32 45:ds_storexchg_rtn_b32 46:ds_storexchg_2addr_rtn_b32
    47:ds_storexchg_2addr_stride64_rtn_b32 48:ds_cmpstore_rtn_b32 50:ds_min_num_rtn_f32
    51:ds_max_num_rtn_f32 53:ds_swizzle_b32 54:ds_load_b32 55:ds_load_2addr_b32
    56:ds_load_2addr_stride64_b32 57:ds_load_i8 58:ds_load_u8 59:ds_load_i16 60:ds_load_u16 61:ds_consume
    62:ds_append 64:ds_add_u64 65:ds_sub_u64 66:ds_rsub_u64 67:ds_inc_u64 68:ds_dec_u64 69:ds_min_i64
    70:ds_max_i64 71:ds_min_u64 72:ds_max_u64 73:ds_and_b64 74:ds_or_b64 75:ds_xor_b64 76:ds_mskor_b64
    77:ds_store_b64 78:ds_store_2addr_b64 79:ds_store_2addr_stride64_b64 80:ds_cmpstore_b64
    82:ds_min_num_f64 83:ds_max_num_f64 96:ds_add_rtn_u64 97:ds_sub_rtn_u64 98:ds_rsub_rtn_u64
    99:ds_inc_rtn_u64 100:ds_dec_rtn_u64 101:ds_min_rtn_i64 102:ds_max_rtn_i64 103:ds_min_rtn_u64
    104:ds_max_rtn_u64 105:ds_and_rtn_b64 106:ds_or_rtn_b64 107:ds_xor_rtn_b64 108:ds_mskor_rtn_b64
    109:ds_storexchg_rtn_b64 110:ds_storexchg_2addr_rtn_b64 111:ds_storexchg_2addr_stride64_rtn_b64
    112:ds_cmpstore_rtn_b64 114:ds_min_num_rtn_f64 115:ds_max_num_rtn_f64 118:ds_load_b64
    119:ds_load_2addr_b64 120:ds_load_2addr_stride64_b64 121:ds_add_rtn_f32 126:ds_condxchg32_rtn_b64
    152:ds_cond_sub_u32 153:ds_sub_clamp_u32 154:ds_pk_add_f16 155:ds_pk_add_bf16 160:ds_store_b8_d16_hi
    161:ds_store_b16_d16_hi 162:ds_load_u8_d16 163:ds_load_u8_d16_hi 164:ds_load_i8_d16
    165:ds_load_i8_d16_hi 166:ds_load_u16_d16 167:ds_load_u16_d16_hi 168:ds_cond_sub_rtn_u32
    169:ds_sub_clamp_rtn_u32 170:ds_pk_add_rtn_f16 171:ds_pk_add_rtn_bf16 176:ds_store_addtid_b32
    177:ds_load_addtid_b32 178:ds_permute_b32 179:ds_bpermute_b32 222:ds_store_b96 223:ds_store_b128
    254:ds_load_b96 255:ds_load_b128
    """),
    # §15.9.1 FLAT opcodes
    "flat": parse("""
    16:flat_load_u8 17:flat_load_i8 18:flat_load_u16 19:flat_load_i16 20:flat_load_b32 21:flat_load_b64
    22:flat_load_b96 23:flat_load_b128 24:flat_store_b8 25:flat_store_b16 26:flat_store_b32
    27:flat_store_b64 28:flat_store_b96 29:flat_store_b128 30:flat_load_d16_u8 31:flat_load_d16_i8
    32:flat_load_d16_b16 33:flat_load_d16_hi_u8 34:flat_load_d16_hi_i8 35:flat_load_d16_hi_b16
    36:flat_store_d16_hi_b8 37:flat_store_d16_hi_b16 51:flat_atomic_swap_b32 52:flat_atomic_cmpswap_b32
    53:flat_atomic_add_u32 54:flat_atomic_sub_u32 55:flat_atomic_sub_clamp_u32 56:flat_atomic_min_i32
    57:flat_atomic_min_u32 58:flat_atomic_max_i32 59:flat_atomic_max_u32 60:flat_atomic_and_b32
    61:flat_atomic_or_b32 62:flat_atomic_xor_b32 63:flat_atomic_inc_u32 64:flat_atomic_dec_u32
    65:flat_atomic_swap_b64 66:flat_atomic_cmpswap_b64 67:flat_atomic_add_u64 68:flat_atomic_sub_u64
    69:flat_atomic_min_i64 70:flat_atomic_min_u64 71:flat_atomic_max_i64 72:flat_atomic_max_u64
    73:flat_atomic_and_b64 74:flat_atomic_or_b64 75:flat_atomic_xor_b64 76:flat_atomic_inc_u64
    77:flat_atomic_dec_u64 80:flat_atomic_cond_sub_u32 81:flat_atomic_min_num_f32
    82:flat_atomic_max_num_f32 86:flat_atomic_add_f32 89:flat_atomic_pk_add_f16 90:flat_atomic_pk_add_bf16
    """),
    # §15.9.3 GLOBAL opcodes
    "global": parse("""
    16:global_load_u8 17:global_load_i8 18:global_load_u16 19:global_load_i16 20:global_load_b32
    21:global_load_b64 22:global_load_b96 23:global_load_b128 24:global_store_b8 25:global_store_b16
    26:global_store_b32 27:global_store_b64 28:global_store_b96 29:global_store_b128 30:global_load_d16_u8
    31:global_load_d16_i8 32:global_load_d16_b16 33:global_load_d16_hi_u8 34:global_load_d16_hi_i8
    35:global_load_d16_hi_b16 36:global_store_d16_hi_b8 37:global_store_d16_hi_b16
    40:global_load_addtid_b32 41:global_store_addtid_b32 43:global_inv 44:global_wb
    51:global_atomic_swap_b32 52:global_atomic_cmpswap_b32 53:global_atomic_add_u32
    54:global_atomic_sub_u32 55:global_atomic_sub_clamp_u32 56:global_atomic_min_i32
    57:global_atomic_min_u32 58:global_atomic_max_i32 59:global_atomic_max_u32 60:global_atomic_and_b32
    61:global_atomic_or_b32 62:global_atomic_xor_b32 63:global_atomic_inc_u32 64:global_atomic_dec_u32
    65:global_atomic_swap_b64 66:global_atomic_cmpswap_b64 67:global_atomic_add_u64
    68:global_atomic_sub_u64 69:global_atomic_min_i64 70:global_atomic_min_u64 71:global_atomic_max_i64
    72:global_atomic_max_u64 73:global_atomic_and_b64 74:global_atomic_or_b64 75:global_atomic_xor_b64
    76:global_atomic_inc_u64 77:global_atomic_dec_u64 79:global_wbinv 80:global_atomic_cond_sub_u32
    81:global_atomic_min_num_f32 82:global_atomic_max_num_f32 83:global_load_block 84:global_store_block
    86:global_atomic_add_f32 87:global_load_tr_b128 88:global_load_tr_b64 89:global_atomic_pk_add_f16
    90:global_atomic_pk_add_bf16 115:global_atomic_ordered_add_b64
    """),
    # §15.9.2 SCRATCH opcodes
    "scratch": parse("""
    16:scratch_load_u8 17:scratch_load_i8 18:scratch_load_u16 19:scratch_load_i16 20:scratch_load_b32
    21:scratch_load_b64 22:scratch_load_b96 23:scratch_load_b128 24:scratch_store_b8 25:scratch_store_b16
    26:scratch_store_b32 27:scratch_store_b64 28:scratch_store_b96 29:scratch_store_b128
    30:scratch_load_d16_u8 31:scratch_load_d16_i8 32:scratch_load_d16_b16 33:scratch_load_d16_hi_u8
    34:scratch_load_d16_hi_i8 35:scratch_load_d16_hi_b16 36:scratch_store_d16_hi_b8
    37:scratch_store_d16_hi_b16 83:scratch_load_block 84:scratch_store_block
    """),
    # §15.2 SMEM opcodes
    "smem": parse("""
    0:s_load_b32 1:s_load_b64 2:s_load_b128 3:s_load_b256 4:s_load_b512 5:s_load_b96 8:s_load_i8
    9:s_load_u8 10:s_load_i16 11:s_load_u16 16:s_buffer_load_b32 17:s_buffer_load_b64 18:s_buffer_load_b128
    19:s_buffer_load_b256 20:s_buffer_load_b512 21:s_buffer_load_b96 24:s_buffer_load_i8
    25:s_buffer_load_u8 26:s_buffer_load_i16 27:s_buffer_load_u16 33:s_dcache_inv 34:s_atc_probe
    35:s_atc_probe_buffer 36:s_prefetch_inst 37:s_prefetch_inst_pc_rel 38:s_prefetch_data
    39:s_buffer_prefetch_data 40:s_prefetch_data_pc_rel 64:s_load_b32 65:s_load_b64 66:s_load_b128
    67:s_load_b256 68:s_load_b512 69:s_load_b96 72:s_load_i8 73:s_load_u8 74:s_load_i16 75:s_load_u16
    80:s_buffer_load_b32 81:s_buffer_load_b64 82:s_buffer_load_b128 83:s_buffer_load_b256
    84:s_buffer_load_b512 85:s_buffer_load_b96 88:s_buffer_load_i8 89:s_buffer_load_u8 90:s_buffer_load_i16
    91:s_buffer_load_u16 97:s_dcache_inv 98:s_atc_probe 99:s_atc_probe_buffer 100:s_prefetch_inst
    101:s_prefetch_inst_pc_rel 102:s_prefetch_data 103:s_buffer_prefetch_data 104:s_prefetch_data_pc_rel
    128:s_load_b32 129:s_load_b64 130:s_load_b128 131:s_load_b256 132:s_load_b512 133:s_load_b96
    136:s_load_i8 137:s_load_u8 138:s_load_i16 139:s_load_u16 144:s_buffer_load_b32 145:s_buffer_load_b64
    146:s_buffer_load_b128 147:s_buffer_load_b256 148:s_buffer_load_b512 149:s_buffer_load_b96
    152:s_buffer_load_i8 153:s_buffer_load_u8 154:s_buffer_load_i16 155:s_buffer_load_u16 161:s_dcache_inv
    162:s_atc_probe 163:s_atc_probe_buffer 164:s_prefetch_inst 165:s_prefetch_inst_pc_rel
    166:s_prefetch_data 167:s_buffer_prefetch_data 168:s_prefetch_data_pc_rel 192:s_load_b32 193:s_load_b64
    194:s_load_b128 195:s_load_b256 196:s_load_b512 197:s_load_b96 200:s_load_i8 201:s_load_u8
    202:s_load_i16 203:s_load_u16 208:s_buffer_load_b32 209:s_buffer_load_b64 210:s_buffer_load_b128
    211:s_buffer_load_b256 212:s_buffer_load_b512 213:s_buffer_load_b96 216:s_buffer_load_i8
    217:s_buffer_load_u8 218:s_buffer_load_i16 219:s_buffer_load_u16 225:s_dcache_inv 226:s_atc_probe
    227:s_atc_probe_buffer 228:s_prefetch_inst 229:s_prefetch_inst_pc_rel 230:s_prefetch_data
    231:s_buffer_prefetch_data 232:s_prefetch_data_pc_rel
    """),
    # §15.1.3 SOP1 opcodes
    "sop1": parse("""
    0:s_mov_b32 1:s_mov_b64 2:s_cmov_b32 3:s_cmov_b64 4:s_brev_b32 5:s_brev_b64 8:s_ctz_i32_b32
    9:s_ctz_i32_b64 10:s_clz_i32_u32 11:s_clz_i32_u64 12:s_cls_i32 13:s_cls_i32_i64 14:s_sext_i32_i8
    15:s_sext_i32_i16 16:s_bitset0_b32 17:s_bitset0_b64 18:s_bitset1_b32 19:s_bitset1_b64
    20:s_bitreplicate_b64_b32 21:s_abs_i32 22:s_bcnt0_i32_b32 23:s_bcnt0_i32_b64 24:s_bcnt1_i32_b32
    25:s_bcnt1_i32_b64 26:s_quadmask_b32 27:s_quadmask_b64 28:s_wqm_b32 29:s_wqm_b64 30:s_not_b32
    31:s_not_b64 32:s_and_saveexec_b32 33:s_and_saveexec_b64 34:s_or_saveexec_b32 35:s_or_saveexec_b64
    36:s_xor_saveexec_b32 37:s_xor_saveexec_b64 38:s_nand_saveexec_b32 39:s_nand_saveexec_b64
    40:s_nor_saveexec_b32 41:s_nor_saveexec_b64 42:s_xnor_saveexec_b32 43:s_xnor_saveexec_b64
    44:s_and_not0_saveexec_b32 45:s_and_not0_saveexec_b64 46:s_or_not0_saveexec_b32
    47:s_or_not0_saveexec_b64 48:s_and_not1_saveexec_b32 49:s_and_not1_saveexec_b64
    50:s_or_not1_saveexec_b32 51:s_or_not1_saveexec_b64 52:s_and_not0_wrexec_b32 53:s_and_not0_wrexec_b64
    54:s_and_not1_wrexec_b32 55:s_and_not1_wrexec_b64 64:s_movrels_b32 65:s_movrels_b64 66:s_movreld_b32
    67:s_movreld_b64 68:s_movrelsd_2_b32 71:s_getpc_b64 72:s_setpc_b64 73:s_swappc_b64 74:s_rfe_b64
    76:s_sendmsg_rtn_b32 77:s_sendmsg_rtn_b64 78:s_barrier_signal 79:s_barrier_signal_isfirst
    80:s_get_barrier_state 81:s_barrier_init 82:s_barrier_join 87:s_wakeup_barrier 88:s_sleep_var
    96:s_ceil_f32 97:s_floor_f32 98:s_trunc_f32 99:s_rndne_f32 100:s_cvt_f32_i32 101:s_cvt_f32_u32
    102:s_cvt_i32_f32 103:s_cvt_u32_f32 104:s_cvt_f16_f32 105:s_cvt_f32_f16 106:s_cvt_hi_f32_f16
    107:s_ceil_f16 108:s_floor_f16 109:s_trunc_f16 110:s_rndne_f16
    """),
    # §15.1.1 SOP2 opcodes
    "sop2": parse("""
    0:s_add_co_u32 1:s_sub_co_u32 2:s_add_co_i32 3:s_sub_co_i32 4:s_add_co_ci_u32 5:s_sub_co_ci_u32
    6:s_absdiff_i32 8:s_lshl_b32 9:s_lshl_b64 10:s_lshr_b32 11:s_lshr_b64 12:s_ashr_i32 13:s_ashr_i64
    14:s_lshl1_add_u32 15:s_lshl2_add_u32 16:s_lshl3_add_u32 17:s_lshl4_add_u32 18:s_min_i32 19:s_min_u32
    20:s_max_i32 21:s_max_u32 22:s_and_b32 23:s_and_b64 24:s_or_b32 25:s_or_b64 26:s_xor_b32 27:s_xor_b64
    28:s_nand_b32 29:s_nand_b64 30:s_nor_b32 31:s_nor_b64 32:s_xnor_b32 33:s_xnor_b64 34:s_and_not1_b32
    35:s_and_not1_b64 36:s_or_not1_b32 37:s_or_not1_b64 38:s_bfe_u32 39:s_bfe_i32 40:s_bfe_u64 41:s_bfe_i64
    42:s_bfm_b32 43:s_bfm_b64 44:s_mul_i32 45:s_mul_hi_u32 46:s_mul_hi_i32 48:s_cselect_b32
    49:s_cselect_b64 50:s_pack_ll_b32_b16 51:s_pack_lh_b32_b16 52:s_pack_hh_b32_b16 53:s_pack_hl_b32_b16
    64:s_add_f32 65:s_sub_f32 66:s_min_num_f32 67:s_max_num_f32 68:s_mul_f32 69:s_fmaak_f32 70:s_fmamk_f32
    71:s_fmac_f32 72:s_cvt_pk_rtz_f16_f32 73:s_add_f16 74:s_sub_f16 75:s_min_num_f16 76:s_max_num_f16
    77:s_mul_f16 78:s_fmac_f16 79:s_minimum_f32 80:s_maximum_f32 81:s_minimum_f16 82:s_maximum_f16
    83:s_add_nc_u64 84:s_sub_nc_u64 85:s_mul_u64
    """),
    # §15.1.4 SOPC opcodes
    "sopc": parse("""
    0:s_cmp_eq_i32 1:s_cmp_lg_i32 2:s_cmp_gt_i32 3:s_cmp_ge_i32 4:s_cmp_lt_i32 5:s_cmp_le_i32
    6:s_cmp_eq_u32 7:s_cmp_lg_u32 8:s_cmp_gt_u32 9:s_cmp_ge_u32 10:s_cmp_lt_u32 11:s_cmp_le_u32
    12:s_bitcmp0_b32 13:s_bitcmp1_b32 14:s_bitcmp0_b64 15:s_bitcmp1_b64 16:s_cmp_eq_u64 17:s_cmp_lg_u64
    65:s_cmp_lt_f32 66:s_cmp_eq_f32 67:s_cmp_le_f32 68:s_cmp_gt_f32 69:s_cmp_lg_f32 70:s_cmp_ge_f32
    71:s_cmp_o_f32 72:s_cmp_u_f32 73:s_cmp_nge_f32 74:s_cmp_nlg_f32 75:s_cmp_ngt_f32 76:s_cmp_nle_f32
    77:s_cmp_neq_f32 78:s_cmp_nlt_f32 81:s_cmp_lt_f16 82:s_cmp_eq_f16 83:s_cmp_le_f16 84:s_cmp_gt_f16
    85:s_cmp_lg_f16 86:s_cmp_ge_f16 87:s_cmp_o_f16 88:s_cmp_u_f16 89:s_cmp_nge_f16 90:s_cmp_nlg_f16
    91:s_cmp_ngt_f16 92:s_cmp_nle_f16 93:s_cmp_neq_f16 94:s_cmp_nlt_f16
    """),
    # §15.1.2 SOPK opcodes
    "sopk": parse("""
    0:s_movk_i32 1:s_version 2:s_cmovk_i32 15:s_addk_co_i32 16:s_mulk_i32 17:s_getreg_b32 18:s_setreg_b32
    20:s_call_b64
    """),
    # §15.1.5 SOPP opcodes
    "sopp": parse("""
    0:s_nop 1:s_setkill 2:s_sethalt 3:s_sleep 5:s_clause 7:s_delay_alu 8:s_wait_alu 9:s_waitcnt
    10:s_wait_idle 11:s_wait_event 16:s_trap 17:s_round_mode 18:s_denorm_mode 19:s_singleuse_vdst
    20:s_barrier_wait 21:s_barrier_leave 31:s_code_end 32:s_branch 33:s_cbranch_scc0 34:s_cbranch_scc1
    35:s_cbranch_vccz 36:s_cbranch_vccnz 37:s_cbranch_execz 38:s_cbranch_execnz 48:s_endpgm
    49:s_endpgm_saved 52:s_wakeup 53:s_setprio 54:s_sendmsg 55:s_sendmsghalt 56:s_incperflevel
    57:s_decperflevel 58:s_ttracedata 59:s_ttracedata_imm 60:s_icache_inv 64:s_wait_loadcnt
    65:s_wait_storecnt 66:s_wait_samplecnt 67:s_wait_bvhcnt 68:s_wait_expcnt 70:s_wait_dscnt
    71:s_wait_kmcnt 72:s_wait_loadcnt_dscnt 73:s_wait_storecnt_dscnt
    """),
    # §15.3.2 VOP1 opcodes
    "vop1": parse("""
    0:v_nop 1:v_mov_b32 2:v_readfirstlane_b32 3:v_cvt_i32_f64 4:v_cvt_f64_i32 5:v_cvt_f32_i32 6:v_cvt_f32_u32
    7:v_cvt_u32_f32 8:v_cvt_i32_f32 10:v_cvt_f16_f32 11:v_cvt_f32_f16 12:v_cvt_nearest_i32_f32
    13:v_cvt_floor_i32_f32 14:v_cvt_off_f32_i4 15:v_cvt_f32_f64 16:v_cvt_f64_f32 17:v_cvt_f32_ubyte0
    18:v_cvt_f32_ubyte1 19:v_cvt_f32_ubyte2 20:v_cvt_f32_ubyte3 21:v_cvt_u32_f64 22:v_cvt_f64_u32
    23:v_trunc_f64 24:v_ceil_f64 25:v_rndne_f64 26:v_floor_f64 28:v_mov_b16 32:v_fract_f32 33:v_trunc_f32
    34:v_ceil_f32 35:v_rndne_f32 36:v_floor_f32 37:v_exp_f32 39:v_log_f32 42:v_rcp_f32 43:v_rcp_iflag_f32
    46:v_rsq_f32 47:v_rcp_f64 49:v_rsq_f64 51:v_sqrt_f32 52:v_sqrt_f64 53:v_sin_f32 54:v_cos_f32
    55:v_not_b32 56:v_bfrev_b32 57:v_clz_i32_u32 58:v_ctz_i32_b32 59:v_cls_i32 60:v_frexp_exp_i32_f64
    61:v_frexp_mant_f64 62:v_fract_f64 63:v_frexp_exp_i32_f32 64:v_frexp_mant_f32 66:v_movreld_b32
    67:v_movrels_b32 68:v_movrelsd_b32 72:v_movrelsd_2_b32 80:v_cvt_f16_u16 81:v_cvt_f16_i16
    82:v_cvt_u16_f16 83:v_cvt_i16_f16 84:v_rcp_f16 85:v_sqrt_f16 86:v_rsq_f16 87:v_log_f16 88:v_exp_f16
    89:v_frexp_mant_f16 90:v_frexp_exp_i16_f16 91:v_floor_f16 92:v_ceil_f16 93:v_trunc_f16 94:v_rndne_f16
    95:v_fract_f16 96:v_sin_f16 97:v_cos_f16 98:v_sat_pk_u8_i16 99:v_cvt_norm_i16_f16
    100:v_cvt_norm_u16_f16 101:v_swap_b32 103:v_permlane64_b32 104:v_swaprel_b32 105:v_not_b16
    106:v_cvt_i32_i16 107:v_cvt_u32_u16 108:v_cvt_f32_fp8 109:v_cvt_f32_bf8 110:v_cvt_pk_f32_fp8
    111:v_cvt_pk_f32_bf8
    """),
    # §15.3.1 VOP2 opcodes
    "vop2": parse("""
    1:v_cndmask_b32 2:v_add_f64 3:v_add_f32 4:v_sub_f32 5:v_subrev_f32 6:v_mul_f64 7:v_mul_dx9_zero_f32
    8:v_mul_f32 9:v_mul_i32_i24 10:v_mul_hi_i32_i24 11:v_mul_u32_u24 12:v_mul_hi_u32_u24 13:v_min_num_f64
    14:v_max_num_f64 17:v_min_i32 18:v_max_i32 19:v_min_u32 20:v_max_u32 21:v_min_num_f32 22:v_max_num_f32
    24:v_lshlrev_b32 25:v_lshrrev_b32 26:v_ashrrev_i32 27:v_and_b32 28:v_or_b32 29:v_xor_b32 30:v_xnor_b32
    31:v_lshlrev_b64 32:v_add_co_ci_u32 33:v_sub_co_ci_u32 34:v_subrev_co_ci_u32 37:v_add_nc_u32
    38:v_sub_nc_u32 39:v_subrev_nc_u32 43:v_fmac_f32 44:v_fmamk_f32 45:v_fmaak_f32 47:v_cvt_pk_rtz_f16_f32
    48:v_min_num_f16 49:v_max_num_f16 50:v_add_f16 51:v_sub_f16 52:v_subrev_f16 53:v_mul_f16 54:v_fmac_f16
    55:v_fmamk_f16 56:v_fmaak_f16 59:v_ldexp_f16 60:v_pk_fmac_f16 62:v_cmp_lt_f16 63:v_cvt_i32_f64
    """),
    # §15.3.4 VOP3 opcodes (VOP3-only, >= 512)
    "vop3": parse("""
    521:v_fma_dx9_zero_f32 522:v_mad_i32_i24 523:v_mad_u32_u24 524:v_cubeid_f32 525:v_cubesc_f32
    526:v_cubetc_f32 527:v_cubema_f32 528:v_bfe_u32 529:v_bfe_i32 530:v_bfi_b32 531:v_fma_f32 532:v_fma_f64
    533:v_lerp_u8 534:v_alignbit_b32 535:v_alignbyte_b32 536:v_mullit_f32 538:v_min3_i32 539:v_min3_u32
    541:v_max3_i32 542:v_max3_u32 544:v_med3_i32 545:v_med3_u32 546:v_sad_u8 547:v_sad_hi_u8 548:v_sad_u16
    549:v_sad_u32 550:v_cvt_pk_u8_f32 551:v_div_fixup_f32 552:v_div_fixup_f64 553:v_min3_num_f32
    554:v_max3_num_f32 555:v_min3_num_f16 556:v_max3_num_f16 557:v_minimum3_f32 558:v_maximum3_f32
    559:v_minimum3_f16 560:v_maximum3_f16 561:v_med3_num_f32 562:v_med3_num_f16 567:v_div_fmas_f32
    568:v_div_fmas_f64 569:v_msad_u8 570:v_qsad_pk_u16_u8 571:v_mqsad_pk_u16_u8 573:v_mqsad_u32_u8
    576:v_xor3_b32 577:v_mad_u16 580:v_perm_b32 581:v_xad_u32 582:v_lshl_add_u32 583:v_add_lshl_u32
    584:v_fma_f16 586:v_min3_i16 587:v_min3_u16 589:v_max3_i16 590:v_max3_u16 592:v_med3_i16 593:v_med3_u16
    595:v_mad_i16 596:v_div_fixup_f16 597:v_add3_u32 598:v_lshl_or_b32 599:v_and_or_b32 600:v_or3_b32
    601:v_mad_u32_u16 602:v_mad_i32_i16 603:v_permlane16_b32 604:v_permlanex16_b32 605:v_cndmask_b16
    610:v_maxmin_u32 611:v_minmax_u32 612:v_maxmin_i32 613:v_minmax_i32 614:v_dot2_f16_f16
    615:v_dot2_bf16_bf16 616:v_minmax_num_f32 617:v_maxmin_num_f32 618:v_minmax_num_f16
    619:v_maxmin_num_f16 620:v_minimummaximum_f32 621:v_maximumminimum_f32 622:v_minimummaximum_f16
    623:v_maximumminimum_f16 640:v_s_exp_f32 641:v_s_exp_f16 642:v_s_log_f32 643:v_s_log_f16
    644:v_s_rcp_f32 645:v_s_rcp_f16 646:v_s_rsq_f32 647:v_s_rsq_f16 648:v_s_sqrt_f32 649:v_s_sqrt_f16
    764:v_div_scale_f32 765:v_div_scale_f64 766:v_mad_co_u64_u32 767:v_mad_co_i64_i32 768:v_add_co_u32
    769:v_sub_co_u32 770:v_subrev_co_u32 771:v_add_nc_u16 772:v_sub_nc_u16 773:v_mul_lo_u16
    774:v_cvt_pk_i16_f32 775:v_cvt_pk_u16_f32 777:v_max_u16 778:v_max_i16 779:v_min_u16 780:v_min_i16
    781:v_add_nc_i16 782:v_sub_nc_i16 783:v_permlane16_var_b32 784:v_permlanex16_var_b32 785:v_pack_b32_f16
    786:v_cvt_pk_norm_i16_f16 787:v_cvt_pk_norm_u16_f16 796:v_ldexp_f32 797:v_bfm_b32 798:v_bcnt_u32_b32
    799:v_mbcnt_lo_u32_b32 800:v_mbcnt_hi_u32_b32 801:v_cvt_pk_norm_i16_f32 802:v_cvt_pk_norm_u16_f32
    803:v_cvt_pk_u16_u32 804:v_cvt_pk_i16_i32 805:v_sub_nc_i32 806:v_add_nc_i32 811:v_ldexp_f64
    812:v_mul_lo_u32 813:v_mul_hi_u32 814:v_mul_hi_i32 815:v_trig_preop_f64 824:v_lshlrev_b16
    825:v_lshrrev_b16 826:v_ashrrev_i16 829:v_lshrrev_b64 830:v_ashrrev_i64 833:v_minimum_f64
    834:v_maximum_f64 864:v_readlane_b32 865:v_writelane_b32 866:v_and_b16 867:v_or_b16 868:v_xor_b16
    869:v_minimum_f32 870:v_maximum_f32 871:v_minimum_f16 872:v_maximum_f16 873:v_cvt_pk_fp8_f32
    874:v_cvt_pk_bf8_f32 875:v_cvt_sr_fp8_f32 876:v_cvt_sr_bf8_f32
    """),
    # §15.3.6 VOP3P opcodes
    "vop3p": parse("""
    0:v_pk_mad_i16 1:v_pk_mul_lo_u16 2:v_pk_add_i16 3:v_pk_sub_i16 4:v_pk_lshlrev_b16 5:v_pk_lshrrev_b16
    6:v_pk_ashrrev_i16 7:v_pk_max_i16 8:v_pk_min_i16 9:v_pk_mad_u16 10:v_pk_add_u16 11:v_pk_sub_u16
    12:v_pk_max_u16 13:v_pk_min_u16 14:v_pk_fma_f16 15:v_pk_add_f16 16:v_pk_mul_f16 19:v_dot2_f32_f16
    22:v_dot4_i32_iu8 23:v_dot4_u32_u8 24:v_dot8_i32_iu4 25:v_dot8_u32_u4 26:v_dot2_f32_bf16
    32:v_fma_mix_f32 33:v_fma_mixlo_f16 34:v_fma_mixhi_f16 36:v_dot4_f32_fp8_bf8 37:v_dot4_f32_bf8_fp8
    38:v_dot4_f32_fp8_fp8 39:v_dot4_f32_bf8_bf8 64:v_wmma_f32_16x16x16_f16 65:v_wmma_f32_16x16x16_bf16
    66:v_wmma_f16_16x16x16_f16 67:v_wmma_bf16_16x16x16_bf16 68:v_wmma_i32_16x16x16_iu8
    69:v_wmma_i32_16x16x16_iu4 70:v_wmma_f32_16x16x16_fp8_fp8 71:v_wmma_f32_16x16x16_fp8_bf8
    72:v_wmma_f32_16x16x16_bf8_fp8 73:v_wmma_f32_16x16x16_bf8_bf8 74:v_wmma_i32_16x16x32_iu4
    80:v_swmmac_f32_16x16x32_f16 81:v_swmmac_f32_16x16x32_bf16 82:v_swmmac_f16_16x16x32_f16
    83:v_swmmac_bf16_16x16x32_bf16 84:v_swmmac_i32_16x16x32_iu8 85:v_swmmac_i32_16x16x32_iu4
    86:v_swmmac_i32_16x16x64_iu4 87:v_swmmac_f32_16x16x32_fp8_fp8 88:v_swmmac_f32_16x16x32_fp8_bf8
    89:v_swmmac_f32_16x16x32_bf8_fp8 90:v_swmmac_f32_16x16x32_bf8_bf8
    """),
    # §15.3.3 VOPC opcodes
    "vopc": parse("""
    1:v_cmp_lt_f16 2:v_cmp_eq_f16 3:v_cmp_le_f16 4:v_cmp_gt_f16 5:v_cmp_lg_f16 6:v_cmp_ge_f16 7:v_cmp_o_f16
    8:v_cmp_u_f16 9:v_cmp_nge_f16 10:v_cmp_nlg_f16 11:v_cmp_ngt_f16 12:v_cmp_nle_f16 13:v_cmp_neq_f16
    14:v_cmp_nlt_f16 17:v_cmp_lt_f32 18:v_cmp_eq_f32 19:v_cmp_le_f32 20:v_cmp_gt_f32 21:v_cmp_lg_f32
    22:v_cmp_ge_f32 23:v_cmp_o_f32 24:v_cmp_u_f32 25:v_cmp_nge_f32 26:v_cmp_nlg_f32 27:v_cmp_ngt_f32
    28:v_cmp_nle_f32 29:v_cmp_neq_f32 30:v_cmp_nlt_f32 33:v_cmp_lt_f64 34:v_cmp_eq_f64 35:v_cmp_le_f64
    36:v_cmp_gt_f64 37:v_cmp_lg_f64 38:v_cmp_ge_f64 39:v_cmp_o_f64 40:v_cmp_u_f64 41:v_cmp_nge_f64
    42:v_cmp_nlg_f64 43:v_cmp_ngt_f64 44:v_cmp_nle_f64 45:v_cmp_neq_f64 46:v_cmp_nlt_f64 49:v_cmp_lt_i16
    50:v_cmp_eq_i16 51:v_cmp_le_i16 52:v_cmp_gt_i16 53:v_cmp_ne_i16 54:v_cmp_ge_i16 57:v_cmp_lt_u16
    58:v_cmp_eq_u16 59:v_cmp_le_u16 60:v_cmp_gt_u16 61:v_cmp_ne_u16 62:v_cmp_ge_u16 65:v_cmp_lt_i32
    66:v_cmp_eq_i32 67:v_cmp_le_i32 68:v_cmp_gt_i32 69:v_cmp_ne_i32 70:v_cmp_ge_i32 73:v_cmp_lt_u32
    74:v_cmp_eq_u32 75:v_cmp_le_u32 76:v_cmp_gt_u32 77:v_cmp_ne_u32 78:v_cmp_ge_u32 81:v_cmp_lt_i64
    82:v_cmp_eq_i64 83:v_cmp_le_i64 84:v_cmp_gt_i64 85:v_cmp_ne_i64 86:v_cmp_ge_i64 89:v_cmp_lt_u64
    90:v_cmp_eq_u64 91:v_cmp_le_u64 92:v_cmp_gt_u64 93:v_cmp_ne_u64 94:v_cmp_ge_u64 125:v_cmp_class_f16
    126:v_cmp_class_f32 127:v_cmp_class_f64 129:v_cmpx_lt_f16 130:v_cmpx_eq_f16 131:v_cmpx_le_f16
    132:v_cmpx_gt_f16 133:v_cmpx_lg_f16 134:v_cmpx_ge_f16 135:v_cmpx_o_f16 136:v_cmpx_u_f16
    137:v_cmpx_nge_f16 138:v_cmpx_nlg_f16 139:v_cmpx_ngt_f16 140:v_cmpx_nle_f16 141:v_cmpx_neq_f16
    142:v_cmpx_nlt_f16 145:v_cmpx_lt_f32 146:v_cmpx_eq_f32 147:v_cmpx_le_f32 148:v_cmpx_gt_f32
    149:v_cmpx_lg_f32 150:v_cmpx_ge_f32 151:v_cmpx_o_f32 152:v_cmpx_u_f32 153:v_cmpx_nge_f32
    154:v_cmpx_nlg_f32 155:v_cmpx_ngt_f32 156:v_cmpx_nle_f32 157:v_cmpx_neq_f32 158:v_cmpx_nlt_f32
    161:v_cmpx_lt_f64 162:v_cmpx_eq_f64 163:v_cmpx_le_f64 164:v_cmpx_gt_f64 165:v_cmpx_lg_f64
    166:v_cmpx_ge_f64 167:v_cmpx_o_f64 168:v_cmpx_u_f64 169:v_cmpx_nge_f64 170:v_cmpx_nlg_f64
    171:v_cmpx_ngt_f64 172:v_cmpx_nle_f64 173:v_cmpx_neq_f64 174:v_cmpx_nlt_f64 177:v_cmpx_lt_i16
    178:v_cmpx_eq_i16 179:v_cmpx_le_i16 180:v_cmpx_gt_i16 181:v_cmpx_ne_i16 182:v_cmpx_ge_i16
    185:v_cmpx_lt_u16 186:v_cmpx_eq_u16 187:v_cmpx_le_u16 188:v_cmpx_gt_u16 189:v_cmpx_ne_u16
    190:v_cmpx_ge_u16 193:v_cmpx_lt_i32 194:v_cmpx_eq_i32 195:v_cmpx_le_i32 196:v_cmpx_gt_i32
    197:v_cmpx_ne_i32 198:v_cmpx_ge_i32 201:v_cmpx_lt_u32 202:v_cmpx_eq_u32 203:v_cmpx_le_u32
    204:v_cmpx_gt_u32 205:v_cmpx_ne_u32 206:v_cmpx_ge_u32 209:v_cmpx_lt_i64 210:v_cmpx_eq_i64
    211:v_cmpx_le_i64 212:v_cmpx_gt_i64 213:v_cmpx_ne_i64 214:v_cmpx_ge_i64 217:v_cmpx_lt_u64
    218:v_cmpx_eq_u64 219:v_cmpx_le_u64 220:v_cmpx_gt_u64 221:v_cmpx_ne_u64 222:v_cmpx_ge_u64
    253:v_cmpx_class_f16 254:v_cmpx_class_f32 255:v_cmpx_class_f64
    """),
    # §15.3.7 VOPD OPX opcodes
    "vopdx": parse("""
    0:v_dual_fmac_f32 1:v_dual_fmaak_f32 2:v_dual_fmamk_f32 3:v_dual_mul_f32 4:v_dual_add_f32
    5:v_dual_sub_f32 6:v_dual_subrev_f32 7:v_dual_mul_dx9_zero_f32 8:v_dual_mov_b32 9:v_dual_cndmask_b32
    10:v_dual_max_num_f32 11:v_dual_min_num_f32
    """),
    # §15.3.7 VOPD OPY opcodes
    "vopdy": parse("""
    0:v_dual_fmac_f32 1:v_dual_fmaak_f32 2:v_dual_fmamk_f32 3:v_dual_mul_f32 4:v_dual_add_f32
    5:v_dual_sub_f32 6:v_dual_subrev_f32 7:v_dual_mul_dx9_zero_f32 8:v_dual_mov_b32 9:v_dual_cndmask_b32
    10:v_dual_max_num_f32 11:v_dual_min_num_f32 16:v_dual_add_nc_u32 17:v_dual_lshlrev_b32
    18:v_dual_and_b32
    """),
}
