"""Where the tests' kernel cache lives (tests/conftest.py, docs/testing.md): by default in pytest's
per-user temp root, kept across runs (the cache is content-keyed); $WMMA_GEN_TEST_CACHE names another
directory, or `fresh` for a cold cache inside the run's own temp dir (also the fallback under
--basetemp, where no pytest-of-<user> root exists)."""
import os
from pathlib import Path

import pytest

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


@pytest.fixture
def place(request):
    mod = next(p for p in request.config.pluginmanager.get_plugins()
               if Path(getattr(p, "__file__", "") or "").resolve() == ROOT_CONFTEST)
    return mod._session_cache_dir


def _worker(monkeypatch, worker):
    if worker:
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
    else:
        monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)


class _Factory:
    def __init__(self, base: Path):
        self.base = base

    def getbasetemp(self) -> Path:
        return self.base


def test_this_run_uses_the_place_the_rule_names():
    d = Path(os.environ["WMMA_GEN_CACHE_DIR"])
    want = os.environ.get("WMMA_GEN_TEST_CACHE", "").strip()
    if want and want != "fresh":
        assert d == Path(want).expanduser()
    else:
        assert d.name in ("wmma_gen-test-cache", "kernel_cache"), d
    assert d.is_dir()


@pytest.mark.parametrize("worker", [None, "gw1"])
def test_default_is_the_pytest_temp_root_kept_across_runs(place, tmp_path, monkeypatch, worker):
    monkeypatch.delenv("WMMA_GEN_TEST_CACHE", raising=False)
    _worker(monkeypatch, worker)
    run = tmp_path / "pytest-of-someone" / "pytest-7"
    base = run / "popen-gw1" if worker else run
    base.mkdir(parents=True)
    d = place(_Factory(base))
    assert d == tmp_path / "pytest-of-someone" / "wmma_gen-test-cache" and d.is_dir()


@pytest.mark.parametrize("worker", [None, "gw0"])
def test_fresh_and_basetemp_give_a_cold_cache_in_the_run_dir(place, tmp_path, monkeypatch, worker):
    _worker(monkeypatch, worker)
    run = tmp_path / "pytest-of-someone" / "pytest-3"
    base = run / "popen-gw0" if worker else run
    base.mkdir(parents=True)
    monkeypatch.setenv("WMMA_GEN_TEST_CACHE", "fresh")
    assert place(_Factory(base)) == run / "kernel_cache"
    monkeypatch.delenv("WMMA_GEN_TEST_CACHE")
    given = tmp_path / "my_basetemp"                     # --basetemp: not a numbered dir of pytest-of-<user>
    gbase = given / "gw0" if worker else given
    gbase.mkdir(parents=True)
    assert place(_Factory(gbase)) == given / "kernel_cache"


def test_a_named_directory_wins(place, tmp_path, monkeypatch):
    monkeypatch.setenv("WMMA_GEN_TEST_CACHE", str(tmp_path / "mine"))
    base = tmp_path / "pytest-of-someone" / "pytest-1"
    base.mkdir(parents=True)
    assert place(_Factory(base)) == tmp_path / "mine" and (tmp_path / "mine").is_dir()
