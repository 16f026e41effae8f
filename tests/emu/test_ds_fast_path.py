"""bind_ds's fast LDS paths (every lane active, every access inside its workgroup's segment and
aligned, words moved straight between the LDS and the VGPRs) leave the same registers and LDS
and raise the same faults as the general paths (_lds_index + gather / write_loaded, store_bytes +
scatter), for every ds_load / ds_store row, one- and two-address forms."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from wmma_gen.codeobj.instr import Instr, Operand
from wmma_gen.emu.isa.ds import DS
from wmma_gen.emu.isa.table import Fault
from wmma_gen.emu.run import bind_ds

W, WPW, SEG = 8, 2, 4096          # 8 waves, 2 per workgroup, 4 KiB group segment
KINDS = ("ds_load", "ds_store", "ds_load2", "ds_store2")
NAMES = [n for n, r in DS.items() if r.kind in KINDS]
STORE = ("ds_store", "ds_store2")


def _instr(name, dst=8, off=0, off1=None):
    """name with vaddr v2, data / destination from v[dst] (second source v[dst + 8])."""
    r = DS[name]
    n = max(1, r.args["size"] // 4)
    mods = {"offset": off} if off1 is None else {"offset0": off, "offset1": off1}
    vaddr = Operand("v", 2)
    ops = {"ds_load": (Operand("v", dst, n), vaddr), "ds_store": (vaddr, Operand("v", dst, n)),
           "ds_load2": (Operand("v", dst, 2 * n), vaddr),
           "ds_store2": (vaddr, Operand("v", dst, n), Operand("v", dst + 8, n))}[r.kind]
    return bind_ds.BINDERS[r.kind](r, Instr(name, ops, mods))


def _state(lane_addr, seg=SEG, wg=None, exec_bits=None):
    """VGPRs random except v2 = lane_addr (W, 32); the LDS of W / WPW workgroups random."""
    rng = np.random.default_rng(7)
    v = rng.integers(0, 2 ** 32, (32, W, 32), dtype=np.uint64).astype(np.uint32)
    v[2] = lane_addr
    mask = np.ones((W, 32), bool) if exec_bits is None else exec_bits
    wg = np.repeat(np.arange(W // WPW), WPW) if wg is None else wg
    g = SimpleNamespace(v=v, s=np.zeros((256, W), np.uint32), mask=mask, exec_all=bool(mask.all()),
                        W=W, wg=wg, priv=None)
    n_wg = int(wg.max()) + 1
    lds = rng.integers(0, 256, -(-n_wg * seg // 4) * 4, dtype=np.uint8)
    return g, SimpleNamespace(lds=lds, lds_size=seg, mem=None)


def _both(name, lane_addr, monkeypatch, groups=1, **kw):
    """[general path, fast path], each (VGPRs, LDS) after running `name` on `groups` fresh
    groups one after another (same state each), or the fault as (message, wave, lane,
    address, VGPRs); plus the fast path's verdicts."""
    state_kw = {k: kw.pop(k) for k in ("seg", "wg", "exec_bits") if k in kw}
    out, taken = [], []
    fast = {"_fast_load": bind_ds._fast_load, "_fast_store": bind_ds._fast_store}
    for use_fast in (False, True):
        with monkeypatch.context() as m:
            for fn, real in fast.items():
                m.setattr(bind_ds, fn, (lambda *a, real=real: taken.append(real(*a)) or taken[-1])
                          if use_fast else (lambda *a: False))
            run = _instr(name, **kw)
            for _ in range(groups):
                g, ctx = _state(lane_addr, **state_kw)
                try:
                    run(g, ctx)
                    res = (g.v, ctx.lds)
                except Fault as e:
                    res = (e.message, e.wave, e.lane, e.address, g.v)
        out.append(res)
    return out, taken


def _same(general, fast):
    assert type(general[0]) is type(fast[0])
    if isinstance(general[0], str):
        assert general[:4] == fast[:4]
        assert np.array_equal(general[4], fast[4])   # registers written before the fault too
    else:
        assert np.array_equal(general[0], fast[0]) and np.array_equal(general[1], fast[1])


def _aligned(seed=1, top=SEG - 2048):   # room for 3 * 512 bytes of stride64 offset
    return (np.random.default_rng(seed).integers(0, top // 16, (W, 32)) * 16).astype(np.uint32)


def _fast_kind(name) -> bool:
    return DS[name].args["size"] != 12   # b96 has no word: always the general path


@pytest.mark.parametrize("name", NAMES)
def test_fast_path_equals_general_path(name, monkeypatch):
    two = DS[name].kind in ("ds_load2", "ds_store2")
    kw = {"off": 1, "off1": 3} if two else {"off": 32}
    addr = _aligned()
    if DS[name].kind in STORE:   # one address stored by three lanes of one workgroup: the last wins
        addr[2, 7] = addr[3, 30] = addr[3, 0]
    (general, fast), taken = _both(name, addr, monkeypatch, **kw)
    _same(general, fast)
    g0, ctx0 = _state(addr)
    if DS[name].kind in STORE:
        assert not np.array_equal(general[1], ctx0.lds)   # the store wrote the LDS
    else:
        assert not np.array_equal(general[0], g0.v)       # the load wrote registers
    assert taken == [_fast_kind(name)]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", ["unaligned_addr", "unaligned_offset", "dst_is_addr", "wrap",
                                  "odd_segment", "unsorted_wg", "masked", "two_groups"])
def test_other_forms_equal_general_path(name, case, monkeypatch):
    two = DS[name].kind in ("ds_load2", "ds_store2")
    kw = {"off": 1, "off1": 3} if two else {"off": 32}
    addr = _aligned()
    if case == "unaligned_addr":
        addr = addr + np.uint32(2)
    elif case == "unaligned_offset":
        kw["off"] = 1 if two else 6
    elif case == "dst_is_addr":
        kw["dst"] = 2
    elif case == "wrap":   # vaddr + offset wraps to a small address, which is in range
        addr[1, 3] = 2 ** 32 - (DS[name].args["size"] * DS[name].args["stride"] if two else 16)
    elif case == "odd_segment":   # a segment of 4 * odd bytes: only words of <= 4 bytes align
        kw["seg"] = SEG - 12
    elif case == "unsorted_wg":
        kw["wg"] = np.array([3, 0, 3, 1, 2, 0, 1, 2])
    elif case == "masked":
        kw["exec_bits"] = np.random.default_rng(5).random((W, 32)) < 0.7
    elif case == "two_groups":   # a second group with the same wg array (the cached segments)
        kw["groups"], kw["wg"] = 2, np.repeat(np.arange(W // WPW), WPW)
    (general, fast), taken = _both(name, addr, monkeypatch, **kw)
    _same(general, fast)
    if case == "masked":
        assert taken == []
    elif case == "two_groups":
        assert taken == [_fast_kind(name)] * 2


def test_segment_words_follow_a_new_wg_array(monkeypatch):
    """The same instruction on a group whose wg array is another one (same shape): the fast path
    indexes the new group's segments."""
    addr = _aligned()
    wgs = (np.repeat(np.arange(W // WPW), WPW), np.array([3, 3, 2, 2, 1, 1, 0, 0]))
    for name in ("ds_load_b128", "ds_store_b16_d16_hi"):
        results = []
        for use_fast in (False, True):
            with monkeypatch.context() as m:
                if not use_fast:
                    m.setattr(bind_ds, "_fast_load", lambda *a: False)
                    m.setattr(bind_ds, "_fast_store", lambda *a: False)
                run = _instr(name, off=32)
                for wg in wgs:
                    g, ctx = _state(addr, wg=wg)
                    run(g, ctx)
                    results.append((g.v, ctx.lds))
        for (gv, gl), (fv, fl) in zip(results[:2], results[2:]):
            assert np.array_equal(gv, fv) and np.array_equal(gl, fl)


@pytest.mark.parametrize("name", ["ds_load_b128", "ds_load_u8", "ds_load_i16", "ds_load_u16_d16_hi",
                                  "ds_load_2addr_b64", "ds_load_2addr_stride64_b32", "ds_store_b16",
                                  "ds_store_b16_d16_hi", "ds_store_b128", "ds_store_2addr_b32"])
@pytest.mark.parametrize("case", ["past_end", "second_offset_past_end", "last_wave", "below_zero"])
def test_fast_path_faults_like_general_path(name, case, monkeypatch):
    r = DS[name]
    two = r.kind in ("ds_load2", "ds_store2")
    scale = r.args["size"] * (r.args["stride"] or 1)
    addr = np.full((W, 32), 256, np.uint32)
    kw = {"off": 0, "off1": 2} if two else {"off": 16}
    if case == "past_end":
        addr[2, 9] = SEG - r.args["size"] + 16
    elif case == "second_offset_past_end":   # the first address is in range, the second not
        if not two:
            pytest.skip("one address")
        kw["off1"] = (SEG - 256) // scale + 1
    elif case == "below_zero":   # a negative offset takes one lane below 0: it wraps past the end
        if two:
            pytest.skip("offset0 / offset1 are unsigned")
        addr[4, 0], kw["off"] = 0, -16
    else:
        addr[W - 1, 31] = SEG
    (general, fast), _ = _both(name, addr, monkeypatch, **kw)
    assert isinstance(general[0], str)
    assert general[0].startswith(f"LDS access of {r.args['size']} bytes outside the {SEG}-byte group segment")
    _same(general, fast)
