"""The on-disk cache's size cap (wmma_gen/cachetrim.py, cleanup6 item 4): over $WMMA_GEN_CACHE_MAX
the least recently used entries go first (a hit refreshes an entry), only wmma_gen's rebuildable
folders are touched, a bad cap is refused naming the variable, and processes writing at once
leave only whole entries."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wmma_gen import cachetrim
from wmma_gen.compiler.cache import KernelCache

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cachetrim, "_since", [0])
    return tmp_path


def _file(path: Path, size: int, age: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    t = os.path.getmtime(path) - age
    os.utime(path, (t, t))
    return path


def test_the_least_recently_used_entries_go_first_down_to_the_low_water_mark(cache):
    old = [_file(cache / "kernels" / "ab" / f"{i}.json", 100, 1000 - i) for i in range(10)]   # 0 oldest
    idx = _file(cache / "index" / "cd" / "e.json", 100, 2000)            # the oldest of all ...
    cachetrim.used(idx)                                                   # ... but just used
    native = _file(cache / "native" / "wmma-1.so", 5000, 5000)            # not capped
    foreign = _file(cache / "triton" / "t.bin", 5000, 5000)               # not ours
    writing = _file(cache / "kernels" / "ab" / ".tmp-x.json", 100, 10)    # a write in progress
    total, removed = cachetrim.trim(cache, 800)
    assert total == 1100 and removed == 400                               # down to 0.9 * 800 = 720
    assert [p.exists() for p in old] == [False] * 4 + [True] * 6
    assert idx.exists() and native.exists() and foreign.exists() and writing.exists()
    assert cachetrim.trim(cache, 800) == (700, 0)                         # under the cap: nothing goes


def test_writes_through_the_kernel_cache_stay_under_the_cap_and_keep_what_is_read(cache, monkeypatch):
    monkeypatch.setenv(cachetrim.ENV, "8K")
    store = KernelCache()
    payload = {"name": "k", "hsaco": b"\0" * 700, "metadata": {}}
    keys = [f"{i:02x}" + "0" * 62 for i in range(40)]
    for i, key in enumerate(keys):
        assert store.store(key, payload) is not None
        t = 1_000_000 + i
        os.utime(store.path(key), (t, t))                                 # written in this order
        if i >= 1:
            assert store.load(keys[0])[0] == "hit"                        # read after every write
            os.utime(store.path(keys[0]), (t + 0.5, t + 0.5))
        os.utime(cache / cachetrim.STAMP, (0, 0))                         # a check is due at every write
    held = sum(p.stat().st_size for p in (cache / "kernels").rglob("*.json"))
    assert 0 < held <= 8 * 1024 and not store.disabled
    assert store.load(keys[0])[0] == "hit" and store.load(keys[-1])[0] == "hit"
    assert store.load(keys[1])[0] == "miss"                               # the oldest unread one went


def test_without_a_due_check_a_write_does_not_scan(cache, monkeypatch):
    monkeypatch.setenv(cachetrim.ENV, "1M")
    calls = []
    monkeypatch.setattr(cachetrim, "trim", lambda *a: calls.append(a))
    path = cache / "kernels" / "ab" / "k.json"
    cachetrim.wrote(path, 100)
    assert len(calls) == 1                                               # no stamp yet: the first check
    (cache / cachetrim.STAMP).touch()
    cachetrim.wrote(path, 100)
    assert len(calls) == 1                                               # checked just now
    cachetrim.wrote(path, 2 ** 20 // 16)
    assert len(calls) == 2                                               # wrote a sixteenth of the cap
    cachetrim.wrote(Path("/elsewhere/kernels/k.json"), 2 ** 20)
    assert len(calls) == 2                                               # a directory the caller named


@pytest.mark.parametrize("text, want", [("", cachetrim.DEFAULT), ("0", 0), ("4096", 4096), ("2G", 2 * 2 ** 30),
                                        ("500MiB", 500 * 2 ** 20), ("1.5k", 1536)])
def test_the_cap_reads_sizes(monkeypatch, text, want):
    monkeypatch.setenv(cachetrim.ENV, text)
    assert cachetrim.limit_bytes() == want


@pytest.mark.parametrize("text", ["lots", "-1", "2X", "1e9"])
def test_a_bad_cap_is_refused_naming_the_variable(monkeypatch, text):
    monkeypatch.setenv(cachetrim.ENV, text)
    with pytest.raises(ValueError, match=rf"WMMA_GEN_CACHE_MAX='{text}' is not allowed: a size in bytes"):
        cachetrim.limit_bytes()


def test_processes_writing_at_once_leave_only_whole_entries(cache):
    code = """
import os, sys
from wmma_gen import cachetrim
from wmma_gen.compiler.cache import KernelCache
store, n = KernelCache(), int(sys.argv[1])
for i in range(150):
    key = f"{(i * 7 + n) % 256:02x}{n:02x}" + "0" * 60
    assert store.store(key, {"name": f"k{n}-{i}", "hsaco": bytes([n]) * 600, "metadata": {}}) is not None
assert not store.disabled
"""
    env = {**os.environ, "WMMA_GEN_CACHE_DIR": str(cache), cachetrim.ENV: "16K", "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(n)], cwd=ROOT, env=env, stderr=subprocess.PIPE,
                              text=True) for n in range(3)]
    errs = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert all(rc == 0 and "warning" not in err for rc, err in errs), errs
    store, left = KernelCache(), [p for p in (cache / "kernels").rglob("*.json")]
    assert left and all(store.load(p.stem)[0] == "hit" for p in left)     # every entry left is whole
    held = sum(p.stat().st_size for p in left)
    assert held <= 16 * 1024 + 3 * 2 * 1200        # the cap, plus an entry or two per writer in flight (~1.1 KB each)
