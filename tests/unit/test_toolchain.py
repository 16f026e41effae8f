"""ld.lld discovery order: $ROCM_PATH (or /opt/rocm), then ld.lld on PATH, then ziglang."""
import os
import stat

from wmma_gen.compiler import toolchain


def _fake_lld(path, version):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{version}'\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _find(monkeypatch, rocm=None, path=None):
    monkeypatch.setenv("ROCM_PATH", str(rocm) if rocm else "/nonexistent-rocm")
    monkeypatch.setenv("PATH", str(path) if path else "/nonexistent-bin")
    return toolchain.find_linker.__wrapped__()


def test_rocm_wins(tmp_path, monkeypatch):
    _fake_lld(tmp_path / "rocm/llvm/bin/ld.lld", "LLD 19.0.0 (rocm)")
    _fake_lld(tmp_path / "bin/ld.lld", "LLD 14.0.6")
    ln = _find(monkeypatch, tmp_path / "rocm", tmp_path / "bin")
    assert ln.provider == "rocm" and ln.version == "LLD 19.0.0 (rocm)"
    assert ln.toolkit == str(tmp_path / "rocm")


def test_path_before_ziglang(tmp_path, monkeypatch):
    _fake_lld(tmp_path / "bin/ld.lld", "LLD 14.0.6")
    ln = _find(monkeypatch, None, tmp_path / "bin")
    assert ln.provider == "path" and ln.version == "LLD 14.0.6"
    assert os.path.exists(os.path.join(ln.toolkit, "llvm", "bin", "ld.lld"))


def test_ziglang_last(monkeypatch):
    ln = _find(monkeypatch)
    assert ln.provider == "ziglang" and ln.version.startswith("LLD")
