"""Shipped schedules reach an installed package: a wheel built from this tree holds
wmma_gen/schedules/*.json (the repository's schedules/, via the wmma_gen/schedules link and
pyproject package-data), and the installed reader finds them there."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from wmma_gen import schedule_files as sf

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(importlib.util.find_spec("setuptools") is None,
                    reason="building a wheel offline (no build isolation) needs setuptools installed")
def test_wheel_ships_the_schedules_and_the_reader_finds_them(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info")
    for name in ("wmma_gen", "autotune", "schedules"):
        shutil.copytree(ROOT / name, src / name, symlinks=True, ignore=ignore)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    shipped = sorted(p.name for p in (ROOT / "schedules").glob("*.json"))
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert sorted(n.split("/")[-1] for n in names if n.startswith("wmma_gen/schedules/")) == shipped
        z.extractall(tmp_path / "site")
    # the installed package (not this checkout) resolves its shipped dir inside itself and reads every file
    probe = ("import sys; from wmma_gen import schedule_files as sf; "
             "print(sf.SHIPPED_DIR); print(sorted(p.name for p in sf.SHIPPED_DIR.glob('*.json')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    where, files = out.stdout.splitlines()
    assert Path(where) == tmp_path / "site" / "wmma_gen" / "schedules" and not Path(where).is_symlink()
    assert eval(files) == shipped


def test_checkout_link_points_at_the_top_level_schedules():
    link = ROOT / "wmma_gen" / "schedules"
    assert link.is_symlink() and link.resolve() == (ROOT / "schedules").resolve()
    assert sf.SHIPPED_DIR.resolve() == (ROOT / "schedules").resolve()
