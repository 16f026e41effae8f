"""Shared fixtures: the tests' kernel cache (content-keyed, kept across runs, shared by pytest-xdist workers), user dirs
and tmp dir per test session, the emulator-backed HIP stand-in (tests/hipstub) built once per session
for every test folder, the slow/fast tiers of tests/tiers.py applied at collection, and the cyclic
garbage collector kept off what earlier tests left alive."""
import atexit
import gc
import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))   # tests/ -> `import hipstub`


CACHE_ENV = "WMMA_GEN_TEST_CACHE"     # a directory, or "fresh" for a cold per-run cache (docs/testing.md)
CACHE_NAME = "wmma_gen-test-cache"   # in pytest's per-user temp root, beside its numbered pytest-N dirs


def _session_cache_dir(tmp_path_factory) -> Path:
    """The kernel cache of the run, shared by every test that builds the same kernel and kept
    across runs: the cache is content-addressed (the MLIR text, arch, pipeline, toolchain and the
    compiler's sources are the key of an object; the op-level index adds the sources of the whole
    package), so an entry is only ever served for the bytes a compile would produce now. It sits in
    pytest's per-user temp root (/tmp/pytest-of-$USER/, which pytest's retention never prunes:
    it removes numbered pytest-N dirs only), so tests still write only under pytest's tmp dirs.
    $WMMA_GEN_TEST_CACHE names another directory, or `fresh` for a cold cache in the run's own temp
    dir (also the fallback under --basetemp). Under pytest-xdist the workers share the directory; an
    entry is written to a temp file and os.replace'd, so concurrent writers never leave a partial one.
    Tests that count compiles or cache misses set their own WMMA_GEN_CACHE_DIR."""
    want = os.environ.get(CACHE_ENV, "").strip()
    if want and want != "fresh":
        d = Path(want).expanduser()
    else:
        base = tmp_path_factory.getbasetemp()
        run = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base   # above the workers' dirs
        numbered = re.fullmatch(r"pytest-\d+", run.name) and run.parent.name.startswith("pytest-of-")
        d = run.parent / CACHE_NAME if numbered and want != "fresh" else run / "kernel_cache"
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    # Cache location only; compiled bytes never depend on it.
    d = _session_cache_dir(tmp_path_factory)
    old = os.environ.get("WMMA_GEN_CACHE_DIR")
    os.environ["WMMA_GEN_CACHE_DIR"] = str(d)
    yield d
    if old is None:
        os.environ.pop("WMMA_GEN_CACHE_DIR", None)
    else:
        os.environ["WMMA_GEN_CACHE_DIR"] = old


@pytest.fixture(scope="session", autouse=True)
def _isolated_user_dirs(tmp_path_factory):
    # The schedule lookup reads $WMMA_GEN_SCHEDULES and the user data dir before the shipped
    # files, and export/sweep write to the user data dir by default: point both at a session
    # tmp dir so a user's own exported schedules never change a test, and tests write nothing
    # outside pytest's tmp dirs (issue 24 item 7). WMMA_GEN_LOG is cleared for the same reason.
    d = tmp_path_factory.mktemp("xdg_data")
    saved = {k: os.environ.get(k) for k in ("XDG_DATA_HOME", "WMMA_GEN_SCHEDULES", "WMMA_GEN_LOG")}
    os.environ["XDG_DATA_HOME"] = str(d)
    os.environ.pop("WMMA_GEN_SCHEDULES", None)
    os.environ.pop("WMMA_GEN_LOG", None)
    yield d
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session", autouse=True)
def _isolated_tmp(tmp_path_factory, _isolated_cache):
    # Issue 24 item 7: a test run leaves nothing in /tmp. torch.compile (inductor) builds ~28 .so
    # files into $TMPDIR/torchinductor_$USER, and the toolkit folder, failed-pass MLIR dumps and
    # subprocesses use tempfile's dir: point all of them at one session dir under pytest's tmp.
    # Inductor's and Triton's caches are content-keyed like ours: they sit beside the kernel cache
    # and are kept with it (the inductor test compiles ~45 s of C++ cold).
    import tempfile
    d = tmp_path_factory.mktemp("tmp")
    keys = ("TMPDIR", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
    saved, saved_tempdir = {k: os.environ.get(k) for k in keys}, tempfile.tempdir
    os.environ.update(TMPDIR=str(d), TORCHINDUCTOR_CACHE_DIR=str(_isolated_cache / "torchinductor"),
                      TRITON_CACHE_DIR=str(_isolated_cache / "triton"))
    tempfile.tempdir = str(d)
    yield d
    tempfile.tempdir = saved_tempdir
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def stub_library(tmp_path_factory):
    pytest.importorskip("hip", reason="hip-python is not installed: pip install 'wmma-gen[hip]'")
    from hipstub import StubLibrary, build, find_c_compiler
    cc, why = find_c_compiler()
    if cc is None:
        pytest.skip(f"the emulator-backed HIP stub cannot be built: {why}")
    return StubLibrary(build(tmp_path_factory.mktemp("hipstub"), cc))


@pytest.fixture
def stub(stub_library, request):
    """A fresh EmuHipRuntime behind libamdhip64.so for one test: gfx1100, or the arch given by
    `@pytest.mark.parametrize("stub", ["gfx1201"], indirect=True)`."""
    from hipstub import EmuHipRuntime
    runtime = EmuHipRuntime(getattr(request, "param", "gfx1100"))
    stub_library.install(runtime)
    ok, why = stub_library.connected()
    if not ok:
        stub_library.uninstall()
        pytest.skip(why)
    yield runtime
    stub_library.uninstall()
    assert not runtime.crashes, "stub callbacks raised:\n" + "\n".join(runtime.crashes)


@pytest.fixture
def hip_dev(stub):
    from wmma_gen.device.hip import HipDevice
    dev = HipDevice()
    yield dev
    dev.close()


# ---- test tiers (tests/tiers.py; docs/testing.md) ---------------------------------------------
def pytest_configure(config):
    # Under pytest-xdist (`-n auto`, the README's command) the files in tiers.GROUPS must run in one
    # worker: `loadgroup` honours their xdist_group mark and distributes every other test as `load`
    # does, so plain `-n N` (whose default is `load`) is upgraded to it. A worker parses the command
    # line itself (where `-n` alone means no --dist), so the controller tells it through workerinput:
    # the worker then names each grouped test `<nodeid>@<group>`, which the scheduler groups by.
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
    if getattr(config, "workerinput", {}).get("wmma_loadgroup"):
        config.option.loadgroup = True


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput["wmma_loadgroup"] = node.config.option.dist == "loadgroup"


@pytest.hookimpl(tryfirst=True)     # before `-m` deselects: the marks added here count
def pytest_collection_modifyitems(config, items):
    import tiers
    root = Path(__file__).resolve().parent
    seen = {"rules": set(), "folders": {}, "files": set()}
    for item in items:
        path = Path(str(item.path)).resolve()
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            continue
        seen["files"].add(rel)
        name = getattr(item, "originalname", None) or item.name
        params = getattr(getattr(item, "callspec", None), "params", {})
        rule, slow = tiers.is_slow(rel, name, params)
        if rule is not None:
            seen["rules"].add(rule)
        if slow and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
        folder = rel.split("/")[0]
        counts = seen["folders"].setdefault(folder, {"fast": 0, "slow": 0})
        counts["slow" if item.get_closest_marker("slow") else "fast"] += 1
        group = tiers.group_of(rel, name)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    config.stash[tiers.STASH] = seen


# ---- the garbage collector between tests (docs/testing.md, "Where the time goes") ------------
@pytest.hookimpl(hookwrapper=True, trylast=True)   # innermost: bench/pytest_cpu.py counts it in the test
def pytest_runtest_protocol(item, nextitem):
    # A worker keeps millions of objects alive across tests (the shared emulator device's decoded
    # programs and their bound closures, torch, the collected items), and every full collection
    # traverses all of them: ~0.1-0.8 s each, about a quarter of a worker's CPU. After each test,
    # collect what it left in cycles (a full pass over the objects created since the last freeze
    # only), then freeze the survivors so later passes skip them. Frozen objects that die later
    # are still freed by their reference counts; only a cycle among them stays until the end.
    yield
    gc.collect()
    gc.freeze()


# At exit, the interpreter's last collection must see everything again: a frozen binding object
# outliving it is reported as a leak (nanobind's "leaked N instances" for Triton's IR objects).
atexit.register(gc.unfreeze)
