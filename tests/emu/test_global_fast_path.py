"""bind_mem's fast GLOBAL paths (every lane active, one allocation, aligned words moved
straight between the arena and the VGPRs) leave the same registers and memory and raise the
same faults as the general paths (gather_bytes + write_loaded, store_bytes + scatter), for
every global_load / global_store row and address form."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from wmma_gen.emu import GlobalMemory
from wmma_gen.codeobj.instr import Instr, Operand
from wmma_gen.emu.isa.global_smem import GLOBAL
from wmma_gen.emu.isa.table import Fault
from wmma_gen.emu.run import bind_mem

W = 4
LOADS = [n for n, r in GLOBAL.items() if r.kind == "global_load"]
STORES = [n for n, r in GLOBAL.items() if r.kind == "global_store"]


def _group(rng, mem, form, lane_off, base):
    """VGPRs random except the address: s[10:11] + v2 (saddr forms) or the pair v[2:3] hold
    base (+ 64 * wave for the '_waves' forms) + lane_off (W, 32) bytes."""
    v = rng.integers(0, 2 ** 32, (24, W, 32), dtype=np.uint64).astype(np.uint32)
    s = np.zeros((16, W), np.uint32)
    wave_base = np.full(W, base, np.uint64)
    if form.endswith("_waves"):
        wave_base += np.uint64(64) * np.arange(W, dtype=np.uint64)
    if form.startswith("saddr"):
        s[10], s[11] = wave_base & np.uint64(0xFFFFFFFF), wave_base >> np.uint64(32)
        v[2] = lane_off
    else:
        full = wave_base[:, None] + lane_off.astype(np.uint64)
        v[2], v[3] = full & np.uint64(0xFFFFFFFF), full >> np.uint64(32)
    return SimpleNamespace(v=v, s=s, mask=np.ones((W, 32), bool), exec_all=True, W=W, priv=None)


def _memory():
    mem = GlobalMemory()
    mem.alloc(300)   # neighbours before and after the buffer under test
    buf = mem.alloc(4096)
    mem.alloc(300)
    mem.write(buf, np.random.default_rng(3).integers(0, 256, 4096, dtype=np.uint8))
    return mem, buf


def _both(name, form, lane_off, monkeypatch, dst=8, offset=0, base=None, edit=None):
    """[general path, fast path]: for a load the VGPR file after it, for a store the buffer's
    bytes; or the fault raised as (message, wave, lane, address); both from the same state."""
    out = []
    store = GLOBAL[name].kind == "global_store"
    fast_fn = "_fast_store" if store else "_fast_load"
    for fast in (False, True):
        mem, buf = _memory()
        g = _group(np.random.default_rng(7), mem, form, lane_off, buf if base is None else base)
        if edit:
            edit(g)
        saddr = Operand("s", 10, 2) if form.startswith("saddr") else Operand("off")
        vaddr = Operand("v", 2, 1 if saddr.kind == "s" else 2)
        ops = (vaddr, Operand("v", dst), saddr) if store else (Operand("v", dst), vaddr, saddr)
        bind = bind_mem.bind_global_store if store else bind_mem.bind_global_load
        run = bind(GLOBAL[name], Instr(name, ops, {"offset": offset}))
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(bind_mem, fast_fn, lambda *a: False)
            try:
                run(g, SimpleNamespace(mem=mem))
                out.append(mem.read(buf, 4096) if store else g.v)
            except Fault as e:
                out.append((e.message, e.wave, e.lane, e.address))
    return out


@pytest.mark.parametrize("form", ["saddr", "saddr_waves", "vpair", "vpair_waves"])
@pytest.mark.parametrize("name", LOADS)
def test_fast_path_registers_equal_general_path(name, form, monkeypatch):
    aligned = (np.random.default_rng(1).integers(0, (4096 - 512) // 16, (W, 32)) * 16).astype(np.uint32)
    taken = []
    fast_load = bind_mem._fast_load
    monkeypatch.setattr(bind_mem, "_fast_load", lambda *a: taken.append(fast_load(*a)) or taken[-1])
    general, fast = _both(name, form, aligned, monkeypatch)
    assert np.array_equal(general, fast)
    mem, buf = _memory()
    before = _group(np.random.default_rng(7), mem, form, aligned, buf).v
    assert not np.array_equal(general[8], before[8])    # the load wrote v8
    assert taken == [GLOBAL[name].args["size"] != 12]   # b96 has no fast path
    # no aligned word (the general path then reads it), the instruction offset, and a
    # destination that is also the address
    for lane_off, kw in ((aligned + 1, {}), (aligned + 2, {"offset": 6}), (aligned + 4, {"offset": -4}),
                         (aligned, {"dst": 2})):
        general, fast = _both(name, form, lane_off, monkeypatch, **kw)
        assert np.array_equal(general, fast), kw


def _other_high_word(g):
    g.v[3][1, 5] += 1


@pytest.mark.parametrize("form", ["saddr", "saddr_waves", "vpair"])
@pytest.mark.parametrize("name", ["global_load_d16_hi_b16", "global_load_i8", "global_load_b32",
                                  "global_load_b128"])
@pytest.mark.parametrize("case", ["past_end", "before_start", "int64_wrap", "other_high_word"])
def test_fast_path_faults_like_general_path(name, form, case, monkeypatch):
    size = GLOBAL[name].args["size"]
    lane_off = np.full((W, 32), 256, np.uint32)
    kw = {}
    if case == "past_end":
        lane_off[W - 1, 31] = 4096 - size + 16
    elif case == "before_start":
        kw["offset"] = -512
    elif case == "int64_wrap":   # base + lane crosses 2**63: the signed offset wraps negative
        kw["base"] = (1 << 63) - 128
    elif form == "vpair":
        kw["edit"] = _other_high_word
    else:
        pytest.skip("only a VGPR pair has a per-lane high word")
    general, fast = _both(name, form, lane_off, monkeypatch, **kw)
    assert isinstance(general, tuple) and general[0].startswith(f"global access of {size} bytes outside")
    assert fast == general


@pytest.mark.parametrize("form", ["saddr", "saddr_waves", "vpair", "vpair_waves"])
@pytest.mark.parametrize("name", STORES)
def test_fast_store_memory_equals_general_path(name, form, monkeypatch):
    aligned = (np.random.default_rng(1).integers(0, (4096 - 512) // 16, (W, 32)) * 16).astype(np.uint32)
    aligned[2, 7] = aligned[1, 30] = aligned[3, 0]   # one address stored by three lanes: the last wins
    taken = []
    fast_store = bind_mem._fast_store
    monkeypatch.setattr(bind_mem, "_fast_store", lambda *a: taken.append(fast_store(*a)) or taken[-1])
    general, fast = _both(name, form, aligned, monkeypatch)
    assert general == fast
    assert general != _memory()[0].read(_memory()[1], 4096)   # the store wrote the buffer
    assert taken == [GLOBAL[name].args["size"] != 12]          # b96 has no fast path
    for lane_off, kw in ((aligned + 1, {}), (aligned + 2, {"offset": 6}), (aligned + 4, {"offset": -4}),
                         (aligned, {"dst": 2})):
        general, fast = _both(name, form, lane_off, monkeypatch, **kw)
        assert general == fast, kw


@pytest.mark.parametrize("name", ["global_store_b8", "global_store_d16_hi_b16", "global_store_b128"])
@pytest.mark.parametrize("case", ["past_end", "before_start"])
def test_fast_store_faults_like_general_path(name, case, monkeypatch):
    size = GLOBAL[name].args["size"]
    lane_off = np.full((W, 32), 256, np.uint32)
    kw = {"offset": -512} if case == "before_start" else {}
    if case == "past_end":
        lane_off[W - 1, 31] = 4096 - size + 16
    general, fast = _both(name, "saddr_waves", lane_off, monkeypatch, **kw)
    assert isinstance(general, tuple) and general[0].startswith(f"global access of {size} bytes outside")
    assert fast == general
