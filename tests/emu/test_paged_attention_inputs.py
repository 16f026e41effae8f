"""paged_attention refuses bad input before compiling anything, naming the argument, the value
and what is allowed (no emulator run: every case fails in inputs.py or the schedule checks)."""
import numpy as np
import pytest

from wmma_gen import paged_attention
from wmma_gen.errors import ScheduleError
from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective
from wmma_gen.ops.paged_attention.schedule import PagedSchedule
from wmma_gen.targets import get_target


def _args(B=2, Sq=1, H=4, Hkv=2, D=64, bs=16, nb=6, width=3, lens=(20, 5)):
    q = np.zeros((B, Sq, H, D), np.float16)
    k = np.zeros((nb, bs, Hkv, D), np.float16)
    table = np.arange(B * width, dtype=np.int32).reshape(B, width) % nb
    return [q, k, k.copy(), table, np.array(lens, np.int32)]


def _refused(match, *args, **kw):
    with pytest.raises(ScheduleError, match=match):
        paged_attention(*args, arch="gfx1100", device="emu", **kw)


def test_negative_seq_len_named():
    a = _args(lens=(20, -1))
    _refused(r"seq_lens.*-1.*0 <= seq_len", *a)


def test_seq_len_beyond_table_named():
    a = _args(width=2, lens=(33, 5))         # 2 blocks of 16 hold 32 keys
    _refused(r"seq_lens.*33.*max_blocks \* block_size = 32", *a)


def test_table_and_lens_dtype_and_batch():
    a = _args()
    a[3] = a[3].astype(np.int64)
    _refused(r"block_table.dtype.*int64.*int32", *a)
    a = _args()
    a[4] = np.array([1, 2, 3], np.int32)
    _refused(r"seq_lens.shape\[0\].*3.*batch 2", *a)


def test_shapes():
    a = _args(Sq=17)
    _refused(r"q.shape\[1\].*17.*1..16", *a)
    a = _args(H=3, Hkv=2)
    _refused(r"k_cache.shape\[2\].*2.*divisor", *a)
    a = _args()
    a[2] = a[2][:, :, :1]
    _refused(r"v_cache.shape", *a)
    a = _args(bs=8)
    _refused(r"k_cache.shape\[1\].*8.*block size", *a)
    a = _args(D=40)
    _refused(r"q.shape\[3\].*40", *a)


def test_options():
    _refused(r"window.*\(5,\).*left, right", *_args(), window=(5,))
    _refused(r"softcap.*-2.*positive", *_args(), softcap=-2.0)
    _refused(r"k_scale.*None unless kv_dtype", *_args(), k_scale=0.5)
    _refused(r"k_cache.dtype.*float16.*uint8", *_args(), kv_dtype="fp8e4m3")
    _refused(r"kv_dtype.*int8", *_args(), kv_dtype="int8")


def test_fp8_scale_shape():
    a = _args()
    a[1] = np.zeros(a[1].shape, np.uint8)
    a[2] = a[1].copy()
    _refused(r"v_scale.*per kv head \(shape \(2,\)\)", *a, kv_dtype="fp8e5m2", v_scale=[1.0, 2.0, 3.0])


def test_schedule_tile_must_fit_block():
    d = PagedAttentionDirective("f16", 64, block_size=16)
    with pytest.raises(ScheduleError, match=r"block_n=32 must divide block_size=16"):
        PagedSchedule(block_n=32).validate(d, get_target("gfx1100"))


def test_directive_fields():
    with pytest.raises(ScheduleError, match=r"kv_dtype.*bf16"):
        PagedAttentionDirective("f16", 64, kv_dtype="bf16")
    with pytest.raises(ScheduleError, match=r"block_size.*24"):
        PagedAttentionDirective("f16", 64, block_size=24)


@pytest.mark.parametrize("bad", [4, -1, 2 ** 20, 2 ** 27, -2 ** 28, -2 ** 31])
def test_out_of_range_block_id_is_refused_on_the_host(bad):
    """The numpy API sees the table: an id outside [0, num_blocks) that a sequence reads is
    refused naming the entry, the id and the range; entries past the length may hold anything."""
    q, k = np.zeros((1, 1, 2, 64), np.float16), np.zeros((4, 16, 1, 64), np.float16)
    _refused(rf"block_table\[0, 1\]={bad} is not allowed: a block id in \[0, num_blocks=4\)",
             q, k, k, np.array([[0, bad]], np.int32), np.array([20], np.int32))


def test_unread_table_entries_are_not_checked():
    q, k = np.zeros((1, 1, 2, 64), np.float16), np.zeros((4, 16, 1, 64), np.float16)
    o = paged_attention(q, k, k, np.array([[0, -1, 2 ** 30]], np.int32), np.array([16], np.int32),
                        arch="gfx1100", device="emu")
    assert o.shape == q.shape and np.isfinite(o).all()


@pytest.mark.parametrize("bad", [4, -1, 2 ** 20, 2 ** 27, -2 ** 28, -2 ** 31])
def test_out_of_range_block_id_faults_in_the_kernel(bad):
    """Where the host does not check (the device path), the kernel's block offset is 64-bit
    (cache_tiles.block_tensor): no id wraps into the cache -- ids 2**20 and 2**27 x a 2 KiB block
    were multiples of 2**32 bytes in 32-bit math and read block 0 -- so the emulator faults."""
    from wmma_gen.device.select import get_device
    from wmma_gen.errors import EmulatorFault
    from wmma_gen.ops.paged_attention.api import run_paged
    from wmma_gen.ops.paged_attention.inputs import paged_inputs
    q, k = np.zeros((1, 1, 2, 64), np.float16), np.zeros((4, 16, 1, 64), np.float16)
    inp = paged_inputs(q, k, k, np.array([[0, 1]], np.int32), np.array([20], np.int32))
    inp.arrays["block_table"][0, 1] = bad              # past the host check, as a device table would be
    with pytest.raises(EmulatorFault, match=r"global access .* outside every allocation.*kernel=paged_"):
        run_paged(inp, "gfx1100", get_device("emu"))


def test_scale_zero_huge_fp8_scale_and_mixed_cache_dtypes_are_refused():
    a = _args()
    _refused(r"scale=0.0 is not allowed: a finite non-zero real number", *a, scale=0.0)
    f8 = np.zeros(a[1].shape, np.uint8)
    _refused(r"k_scale=1e\+39 is not allowed: a positive finite float within the f32 range", a[0], f8, f8, *a[3:],
             kv_dtype="fp8e4m3", k_scale=1e39)
    _refused(r"v_scale=1e-50 is not allowed", a[0], f8, f8, *a[3:], kv_dtype="fp8e4m3", v_scale=1e-50)
    for v in (a[2].astype(np.float32), a[2].view(np.uint16)):
        _refused(rf"v_cache.dtype='{v.dtype}' is not allowed: k_cache's dtype float16", a[0], a[1], v, *a[3:])
