"""compiler/disk_memo.py: a source tree's digest is read from disk while its files' names, sizes
and mtimes are unchanged, recomputed (from the bytes) when one changes, and still computed when
the cache directory cannot be used."""
from __future__ import annotations

import hashlib
import os

from wmma_gen.compiler import disk_memo


def _digest(folder) -> str:
    """Written from the definition: sha256 over each .py file's relative path and bytes, by path."""
    files = sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)
    h = hashlib.sha256()
    for p in sorted(files, key=lambda p: p.relative_to(folder).as_posix()):
        h.update(p.relative_to(folder).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _fresh(folder) -> tuple[str, int]:
    """(digest, files read) as a new process would see it (the in-process cache cleared)."""
    disk_memo.tree_hash.cache_clear()
    before = disk_memo.FILES_HASHED[0]
    return disk_memo.tree_hash(str(folder)), disk_memo.FILES_HASHED[0] - before


def test_tree_digest_is_remembered_until_a_file_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "pkg"
    (src / "sub" / "__pycache__").mkdir(parents=True)
    (src / "a.py").write_text("x = 1\n")
    (src / "sub" / "b.py").write_text("y = 2\n")
    (src / "sub" / "__pycache__" / "c.py").write_text("ignored\n")
    (src / "notes.txt").write_text("not python\n")
    first = _fresh(src)
    assert first == (_digest(src), 2)
    assert _fresh(src) == (first[0], 0)                       # remembered: no file read
    st = os.stat(src / "a.py")
    (src / "a.py").write_text("x = 3\n")                      # same size: the mtime tells
    os.utime(src / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    changed = _fresh(src)
    assert changed == (_digest(src), 2) and changed[0] != first[0]
    disk_memo.tree_hash.cache_clear()


def test_an_unusable_cache_directory_still_answers(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(blocker))
    calls = []
    assert disk_memo.remembered("k", "facts", lambda: calls.append(1) or "answer") == "answer"
    assert disk_memo.remembered("k", "facts", lambda: calls.append(1) or "answer") == "answer"
    assert len(calls) == 2                                    # nothing stored, computed each time
