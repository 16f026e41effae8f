"""gfx12 (RDNA4) instructions on hand-written gfx1201 kernels: split counters and barrier,
th/scope modifiers, cache ops, architected workgroup ids (ttmp), renamed SALU/VALU rows,
WMMA through the executor, and the arch gating in both directions."""
import numpy as np
import pytest
from emu_helpers import asm_kernel, as_f32, f32, lanes_kernel
from test_wmma12_semantics import pack_ab, pack_c32, unpack_c32

from wmma_gen import numerics
from wmma_gen.emu import GlobalMemory, Program, run_kernel
from wmma_gen.errors import EmulatorFault

LOADS = "\ts_load_b128 s[4:7], s[0:1], 0x0\n\ts_wait_kmcnt 0x0\n"


def gfx(text: str, arch: str = "gfx1201") -> Program:
    return Program.from_isa(text.replace("--gfx1100", f"--{arch}"))


def run_lanes12(body, inputs, n_out=1, waves=1, lds=0, arch="gfx1201", mode="batched"):
    prog = gfx(lanes_kernel(body, len(inputs), n_out, waves, lds)
               .replace("s_waitcnt lgkmcnt(0)", "s_wait_kmcnt 0x0")
               .replace("s_waitcnt vmcnt(0)", "s_wait_loadcnt 0x0"), arch)
    mem, n = GlobalMemory(), 32 * waves
    src, dst = mem.alloc(max(4, 4 * n * len(inputs))), mem.alloc(4 * n * n_out)
    if inputs:
        mem.write(src, np.concatenate([np.asarray(x, np.uint32) for x in inputs]))
    run_kernel(prog, mem, (1, 1, 1), (n, 1, 1), prog.pack_kernarg([src, dst], (1, 1, 1), (n, 1, 1)), mode=mode)
    return np.frombuffer(mem.read(dst, 4 * n * n_out), np.uint32).reshape(n_out, n).copy()


def test_split_counters_th_scope_and_cache_ops_run_in_program_order():
    body = """\tv_add_nc_u32_e32 v20, 1, v10
\tglobal_store_b32 v1, v20, s[6:7] th:TH_STORE_NT scope:SCOPE_SYS
\ts_wait_storecnt 0x0
\tglobal_wb scope:SCOPE_SYS
\tglobal_inv scope:SCOPE_SE
\tglobal_load_b32 v21, v1, s[6:7] th:TH_LOAD_NT scope:SCOPE_SE
\ts_wait_loadcnt_dscnt 0x0
\ts_wait_alu depctr_sa_sdst(0)
\ts_wait_expcnt 0x0
\ts_wait_samplecnt 0x0
\ts_wait_bvhcnt 0x0
\tv_add_nc_u32_e32 v20, v21, v21"""
    x = np.arange(32, dtype=np.uint32)
    assert np.array_equal(run_lanes12(body, [x])[0], 2 * (x + 1))


def test_returning_atomic_is_marked_by_th_atomic_return():
    body = """\tv_mov_b32_e32 v2, 0
\tv_mov_b32_e32 v3, 1
\tglobal_atomic_add_u32 v20, v2, v3, s[4:5] th:TH_ATOMIC_RETURN scope:SCOPE_SYS
\tglobal_atomic_add_u32 v2, v3, s[4:5] offset:4 scope:SCOPE_SYS
\ts_wait_loadcnt 0x0"""
    out = run_lanes12(body, [np.zeros(32, np.uint32)])[0]
    assert sorted(out.tolist()) == list(range(32))           # each lane saw the running count


def test_split_barrier_is_a_workgroup_rendezvous():
    """Wave 1 writes LDS; after signal/wait wave 0 reads it (both waves in one workgroup)."""
    body = """\tv_lshlrev_b32_e32 v2, 2, v0
\tv_xor_b32_e32 v3, 0x80, v2
\tds_store_b32 v2, v10
\ts_wait_dscnt 0x0
\ts_barrier_signal -1
\ts_barrier_wait -1
\tds_load_b32 v20, v3
\ts_wait_dscnt 0x0"""
    x = np.arange(64, dtype=np.uint32) * 3
    for mode in ("batched", "per_wave"):
        out = run_lanes12(body, [x], waves=2, lds=256, mode=mode)[0]
        assert np.array_equal(out, np.concatenate([x[32:], x[:32]]))


def test_named_barriers_are_not_modelled():
    with pytest.raises(EmulatorFault, match="only the workgroup barrier -1"):
        run_lanes12("\ts_barrier_signal 1\n\ts_barrier_wait 1", [np.zeros(32)])


def test_workgroup_ids_come_from_ttmp9_and_ttmp7():
    body = LOADS + """\tv_mov_b32_e32 v1, ttmp9
\ts_and_b32 s8, ttmp7, 0xffff
\ts_lshr_b32 s9, ttmp7, 16
\ts_mul_i32 s10, s9, 6
\ts_mul_i32 s11, s8, 3
\ts_add_co_i32 s10, s10, s11
\ts_add_co_i32 s10, s10, ttmp9
\ts_lshl_b32 s10, s10, 4
\tv_mov_b32_e32 v0, s10
\tv_mov_b32_e32 v2, s8
\tv_mov_b32_e32 v3, s9
\tv_mov_b32_e32 v4, 7
\tglobal_store_b128 v0, v[1:4], s[4:5]
\ts_endpgm"""
    prog = gfx(asm_kernel(body, nargs=1, wg_ids=(1, 1, 1)))
    mem = GlobalMemory()
    out = mem.alloc(16 * 12)
    run_kernel(prog, mem, (3, 2, 2), (1, 1, 1), prog.pack_kernarg([out], (3, 2, 2), (1, 1, 1)))
    got = np.frombuffer(mem.read(out, 16 * 12), np.uint32).reshape(12, 4)
    want = [(x, y, z, 7) for z in range(2) for y in range(2) for x in range(3)]
    assert got.tolist() == [list(w) for w in want]


def test_renamed_and_new_scalar_and_vector_rows():
    body = """\ts_mov_b32 s8, 0xffffffff
\ts_mov_b32 s9, 1
\ts_mov_b32 s10, 1
\ts_mov_b32 s11, 0
\ts_add_nc_u64 s[12:13], s[8:9], s[10:11]
\ts_sub_nc_u64 s[14:15], s[10:11], s[8:9]
\ts_mul_u64 s[16:17], s[8:9], s[8:9]
\ts_add_co_u32 s18, s8, 2
\ts_add_co_ci_u32 s19, 0, 0
\ts_addk_co_i32 s19, 0x10
\tv_mad_co_u64_u32 v[20:21], null, v10, v10, s[8:9]
\tv_mov_b32_e32 v22, s12
\tv_mov_b32_e32 v23, s13
\tv_mov_b32_e32 v24, s14
\tv_mov_b32_e32 v25, s15
\tv_mov_b32_e32 v26, s16
\tv_mov_b32_e32 v27, s17
\tv_mov_b32_e32 v28, s18
\tv_mov_b32_e32 v29, s19"""
    x = np.arange(32, dtype=np.uint32) * 0x10001
    out = run_lanes12(body, [x], n_out=10)
    a = 0x1FFFFFFFF
    r = (x.astype(np.uint64) * x + a) & 0xFFFFFFFFFFFFFFFF
    assert np.array_equal(out[0], (r & 0xFFFFFFFF).astype(np.uint32))
    assert np.array_equal(out[1], (r >> 32).astype(np.uint32))
    sub, mul = (1 - a) % 2 ** 64, (a * a) % 2 ** 64
    assert [int(out[k][0]) for k in range(2, 10)] == [
        0, 2, sub & 0xFFFFFFFF, sub >> 32, mul & 0xFFFFFFFF, mul >> 32, 1, 0x11]


def test_v_maximum_minimum_propagate_nan_and_order_signed_zeros():
    body = "\tv_maximum_f32 v20, v10, v11\n\tv_minimum_f32 v21, v10, v11"
    a = np.array([1.0, np.nan, 2.0, -0.0, 0.0, -3.0] + [0.0] * 26, np.float32)
    b = np.array([2.0, 1.0, np.nan, 0.0, -0.0, -4.0] + [0.0] * 26, np.float32)
    mx, mn = (as_f32(o) for o in run_lanes12(body, [f32(a), f32(b)], n_out=2))
    assert np.isnan(mx[1]) and np.isnan(mx[2]) and np.isnan(mn[1]) and np.isnan(mn[2])
    assert mx[0] == 2.0 and mn[0] == 1.0 and mx[5] == -3.0 and mn[5] == -4.0
    assert not np.signbit(mx[3]) and not np.signbit(mx[4]) and np.signbit(mn[3]) and np.signbit(mn[4])


def _wmma_kernel(instr: str, a_regs: int, b_regs: int) -> str:
    loads = [f"\tglobal_load_b32 v{40 + r}, v1, s[4:5] offset:{128 * r}" for r in range(a_regs + b_regs + 8)]
    stores = [f"\tglobal_store_b32 v1, v{60 + r}, s[6:7] offset:{128 * r}" for r in range(8)]
    a, b, c = f"v[40:{39 + a_regs}]", f"v[{40 + a_regs}:{39 + a_regs + b_regs}]", \
        f"v[{40 + a_regs + b_regs}:{47 + a_regs + b_regs}]"
    body = LOADS + "\tv_and_b32_e32 v1, 0x3ff, v0\n\tv_lshlrev_b32_e32 v1, 2, v1\n" + "\n".join(loads) + \
        f"\n\ts_wait_loadcnt 0x0\n\t{instr} v[60:67], {a}, {b}, {c}\n" + "\n".join(stores) + "\n\ts_endpgm"
    return asm_kernel(body)


@pytest.mark.parametrize("instr,bits,regs", [("v_wmma_f32_16x16x16_fp8_bf8", 8, 2),
                                             ("v_wmma_f32_16x16x16_f16", 16, 4)])
def test_wmma_through_the_executor(instr, bits, regs, rng):
    ta, tb = ("fp8", "bf8") if bits == 8 else ("f16", "f16")
    enc = {"fp8": numerics.f32_to_fp8_e4m3, "bf8": numerics.f32_to_bf8_e5m2, "f16": numerics.f32_to_f16_bits}
    dec = {"fp8": numerics.fp8_e4m3_to_f32, "bf8": numerics.bf8_e5m2_to_f32, "f16": numerics.f16_bits_to_f32}
    a = dec[ta](enc[ta](rng.integers(-8, 9, (1, 16, 16)) / 4.0)).astype(np.float64)
    b = dec[tb](enc[tb](rng.integers(-8, 9, (1, 16, 16)) / 4.0)).astype(np.float64)
    c = rng.integers(-8, 9, (1, 16, 16)).astype(np.float32)
    regs_in = np.concatenate([pack_ab(enc[ta](a), bits, True), pack_ab(enc[tb](b), bits, False),
                              pack_c32(c.view(np.uint32))], axis=-1)[0]          # (32, n)
    prog = gfx(_wmma_kernel(instr, regs, regs))
    mem = GlobalMemory()
    src, dst = mem.alloc(regs_in.size * 4), mem.alloc(32 * 8 * 4)
    mem.write(src, np.ascontiguousarray(regs_in.T))
    run_kernel(prog, mem, (1, 1, 1), (32, 1, 1), prog.pack_kernarg([src, dst], (1, 1, 1), (32, 1, 1)))
    d = np.frombuffer(mem.read(dst, 32 * 8 * 4), np.uint32).reshape(8, 32).T[None]
    assert np.array_equal(unpack_c32(d).view(np.float32)[0], (a @ b + c)[0])


@pytest.mark.parametrize("arch,line,msg", [
    ("gfx1201", "s_barrier", "illegal instruction s_barrier for gfx1201"),
    ("gfx1200", "s_waitcnt_vscnt null, 0x0", "illegal instruction s_waitcnt_vscnt for gfx1200"),
    ("gfx1100", "s_wait_loadcnt 0x0", "illegal instruction s_wait_loadcnt for gfx1100"),
    ("gfx1151", "s_barrier_wait -1", "illegal instruction s_barrier_wait for gfx1151"),
    ("gfx1100", "global_inv scope:SCOPE_SE", "illegal instruction global_inv for gfx1100"),
    ("gfx1100", "s_add_co_i32 s8, s8, 1", "illegal instruction s_add_co_i32 for gfx1100"),
    ("gfx1100", "v_wmma_f32_16x16x16_fp8_fp8 v[0:7], v[8:9], v[10:11], v[0:7]",
     "v_wmma_f32_16x16x16_fp8_fp8 for gfx1100: only gfx12 targets have it"),
    ("gfx1201", "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]", "A must be 4 VGPRs"),
    ("gfx1100", "v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]", "A must be 8 VGPRs"),
])
def test_each_family_faults_on_the_other_familys_encodings(arch, line, msg):
    prog = gfx(asm_kernel(f"\t{line}\n\ts_endpgm"), arch)
    with pytest.raises(EmulatorFault, match=msg.replace("[", r"\[")):
        run_kernel(prog, GlobalMemory(), (1, 1, 1), (32, 1, 1), prog.pack_kernarg([0, 0], (1, 1, 1), (32, 1, 1)))


def test_subdword_and_b96_scalar_loads():
    body = LOADS + """\ts_mov_b32 s12, 1
\ts_load_u8 s8, s[4:5], s12 offset:0x2
\ts_load_i8 s9, s[4:5], 0x3
\ts_load_u16 s10, s[4:5], 0x2
\ts_load_i16 s11, s[4:5], 0x2
\ts_load_b96 s[16:18], s[4:5], 0x4
\ts_wait_kmcnt 0x0
\tv_mov_b32_e32 v0, 0
""" + "\n".join(f"\tv_mov_b32_e32 v{1 + i}, s{r}" for i, r in enumerate((8, 9, 10, 11, 16, 17, 18))) + \
        "\n\tglobal_store_b128 v0, v[1:4], s[6:7]\n\tglobal_store_b96 v0, v[5:7], s[6:7] offset:16\n\ts_endpgm"
    prog = gfx(asm_kernel(body))
    mem = GlobalMemory()
    src, dst = mem.alloc(16), mem.alloc(28)
    mem.write(src, np.array([0x80F1E2D3, 11, 12, 13], np.uint32))
    run_kernel(prog, mem, (1, 1, 1), (1, 1, 1), prog.pack_kernarg([src, dst], (1, 1, 1), (1, 1, 1)))
    got = np.frombuffer(mem.read(dst, 28), np.uint32).tolist()
    assert got == [0x80, 0xFFFFFF80, 0x80F1, 0xFFFF80F1, 11, 12, 13]
