"""The real PostgreSQL server the distributed-sweep tests use, and their worker processes.

Server: $WMMA_GEN_TEST_PG_URL (.ci/run starts one from Debian's packages and exports it). Without
it, the session starts its own (initdb in a temp dir, loopback, a random free port; as the
`postgres` user when run as root) and stops it at the end; only when that is impossible are the
tests skipped, with the reason. Each test gets a database of its own (`pg_url`).

Workers: `spawn(...)` starts a sweep process like `wmma-gen sweep` on one small GEMM study, with
`Fake` as its objective (it suggests the schedule as the real one does, then sleeps instead of
compiling, and records every ladder attribute), so what is under test is coordination. Every
evaluation is appended to a log file, so "run exactly once" is checked outside the database.
"""
from __future__ import annotations

import functools
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
from pathlib import Path

import optuna
import pytest
from sweep_helpers import ARCH, SHAPE

from wmma_gen.tuner.space import suggest_schedule
from autotune.study import Hooks, SweepConfig, run_sweep
from wmma_gen.ops.gemm.schedule import SPACE, Schedule
from wmma_gen.targets import get_target

ENV = "WMMA_GEN_TEST_PG_URL"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


# ---- the server ----------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(Path(d).parent.name))
    return Path(dirs[-1]) if dirs else None


def _enterable(d: Path) -> bool:
    """d and every directory above it can be entered by any user (o+x), and d is writable here."""
    d = d.resolve()
    return d.is_dir() and os.access(d, os.W_OK) and all(p.stat().st_mode & 0o001 for p in (d, *d.parents))


def _enterable_parent() -> str:
    """Where the root-run server's directory goes: pytest's temp dirs (and the tempdir that
    tests/conftest.py points at them) are 0700 root's, which `postgres` cannot enter ("could not
    access directory ... Permission denied", issue 37), so a system temp dir every user can
    enter -- the server's own dir inside it is then chowned to `postgres` and closed to others."""
    for d in (os.environ.get("WMMA_GEN_PG_TMP", ""), "/tmp", "/var/tmp", "/dev/shm"):
        if d and _enterable(Path(d)):
            return d
    raise RuntimeError("running as root and no temp dir the `postgres` user can enter (/tmp, /var/tmp, /dev/shm; "
                       "or set WMMA_GEN_PG_TMP)")


def start_server() -> tuple[str, callable]:
    """(url, stop) of a throwaway server; raises RuntimeError saying why it cannot."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise RuntimeError("psycopg is not installed (pip install -e '.[test]')") from None
    bindir = _pg_bin()
    if bindir is None:
        raise RuntimeError("no initdb on PATH or in /usr/lib/postgresql/*/bin (apt-get install postgresql)")
    run_as: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="wmma-pg-", dir=_enterable_parent() if os.geteuid() == 0 else None))
    if os.geteuid() == 0:              # initdb refuses root: run the server as `postgres`
        if shutil.which("runuser") is None or subprocess.run(["id", "postgres"], capture_output=True).returncode:
            shutil.rmtree(base, ignore_errors=True)
            raise RuntimeError("running as root and there is no `postgres` user to run the server as")
        shutil.chown(base, "postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    port = _free_port()

    def pg(*args, **kw):
        return subprocess.run(run_as + [str(bindir / args[0]), *args[1:]], capture_output=True, text=True, **kw)
    r = pg("initdb", "-D", str(base / "data"), "-A", "trust", "-U", "wmma", "-E", "UTF8", "--no-sync")
    if r.returncode:
        shutil.rmtree(base, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
    opts = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    r = pg("pg_ctl", "-D", str(base / "data"), "-l", str(base / "log"), "-w", "-t", "60", "-o", opts, "start")
    if r.returncode:
        log = (base / "log").read_text()[-500:] if (base / "log").exists() else r.stderr
        shutil.rmtree(base, ignore_errors=True)
        raise RuntimeError(f"pg_ctl start failed: {log.strip()}")

    def stop():
        pg("pg_ctl", "-D", str(base / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)
    return f"postgresql://wmma@127.0.0.1:{port}/postgres", stop


@pytest.fixture(scope="session")
def pg_server():
    url = os.environ.get(ENV)
    if url:
        yield url
        return
    try:
        url, stop = start_server()
    except RuntimeError as e:
        pytest.skip(f"no PostgreSQL server: ${ENV} is not set and one could not be started here ({e})")
    try:
        yield url
    finally:
        stop()


def _admin(server: str):
    import psycopg
    return psycopg.connect(server.replace("postgresql+psycopg://", "postgresql://"), autocommit=True)


@pytest.fixture
def pg_url(pg_server):
    """A fresh database on the test server (dropped afterwards)."""
    from sqlalchemy.engine import make_url
    name = f"wmma_t_{uuid.uuid4().hex[:12]}"
    with _admin(pg_server) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    yield make_url(pg_server).set(database=name).render_as_string(hide_password=False)
    with _admin(pg_server) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def with_options(url: str, **opts) -> str:
    return url + ("&" if "?" in url else "?") + "&".join(f"{k}={v}" for k, v in opts.items())


# ---- workers ---------------------------------------------------------------------------------
class Fake:
    """Stands in for the real Objective (same constructor shape): illegal schedules are pruned
    as the real one prunes them; legal ones (or all, `pause_all`) sleep `pause` s and record what
    a validated trial records (source=model), so ladders and exports can be rebuilt from the
    storage. The `hang_at`-th evaluation writes its trial number to `mark` and sleeps until
    killed; with `meet`, the first one waits for `parties` workers (`_rendezvous`)."""

    def __init__(self, d, p, arch, device, domains=None, pause=0.0, hang_at=0, mark="", log="", pause_all=False,
                 meet="", parties=0, **_):
        self.d, self.p, self.target, self.domains = d, p, get_target(arch), domains
        self.pause, self.hang_at, self.mark, self.log, self.calls = pause, hang_at, mark, log, 0
        self.pause_all = pause_all          # sleep for illegal schedules too (the bench: every trial costs `pause`)
        self.meet, self.parties = meet, parties

    def _rendezvous(self):
        """Before the first evaluation, wait until `parties` workers got there (in directory `meet`),
        so every worker takes part however slowly each one started."""
        Path(self.meet, str(os.getpid())).touch()
        deadline = time.time() + 300
        while len(os.listdir(self.meet)) < self.parties and time.time() < deadline:
            time.sleep(0.05)

    def __call__(self, trial):
        s = suggest_schedule(trial, self.domains, SPACE, Schedule)
        trial.set_user_attr("schedule", s.to_dict())
        trial.set_user_attr("evaluated_by", os.getpid())
        self.calls += 1
        if self.meet and self.calls == 1:
            self._rendezvous()
        if self.log:
            with open(self.log, "a") as f:
                f.write(json.dumps({"pid": os.getpid(), "trial": trial.number, "key": s.to_json()}) + "\n")
        if self.calls == self.hang_at:
            # written whole, then renamed: the test polls for the file and reads it at once
            Path(self.mark + ".part").write_text(str(trial.number))
            os.replace(self.mark + ".part", self.mark)
            time.sleep(600)
        if self.pause_all:
            time.sleep(self.pause)
        if s.problems(self.d, self.target, self.p):
            raise optuna.TrialPruned("validate")
        if not self.pause_all:
            time.sleep(self.pause)
        tflops = 1.0 + zlib.crc32(s.to_json().encode()) % 1000 / 10
        peak = self.target.peak_tflops(self.d.dtype)
        for k, v in {"isa_hash": f"{zlib.crc32(s.to_json().encode()):08x}", "vgprs": 96, "lds_bytes": 8192,
                     "toolchain": {"mlir": "fake", "lld": "fake"}, "wmma_gen_version": "test", "occupancy": 8,
                     "validated": True, "gate_source": "emulator", "gate_max_abs": 0.0,
                     "seconds": 2 * self.p["m"] * self.p["n"] * self.p["k"] * self.p["batch"] / tflops / 1e12, "tflops": tflops, "source": "model",
                     "fraction_of_peak": tflops / peak, "limiter": "fake", "timestamp": time.time()}.items():
            trial.set_user_attr(k, v)
        return tflops


def config(storage: str, results, trials: int, seed: int = 5) -> SweepConfig:
    return SweepConfig(arch=ARCH, dtypes=("f16",), shapes=(SHAPE,), trials=trials, device="emu",
                       storage=storage, results=str(results), progress=False, seed=seed)


def drive(storage: str, results: str, trials: int, host: str = "", seed: int = 5, **fake) -> None:
    """One sweep process (spawned by the tests through `python -c`). A StorageError ends it the
    way the CLI does: its one line on stderr, exit 2."""
    from autotune import reconcile
    from autotune.storage import StorageError
    if host:
        reconcile.host = lambda: host          # play another machine
    cpu = time.process_time()
    try:
        r = run_sweep(config(storage, Path(results), trials, seed), Hooks(objective=functools.partial(Fake, **fake)))
    except StorageError as e:
        print(f"wmma-gen sweep: error: {e}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps({"recovered": r.recovered, "cpu": time.process_time() - cpu}))


def spawn(storage, results, trials, **kw) -> subprocess.Popen:
    args = json.dumps([storage, str(results), trials])
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r}); from test_postgres_server import drive; "
            f"drive(*json.loads({args!r}), **json.loads({json.dumps(kw)!r}))")
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(p: subprocess.Popen, timeout: float = 180) -> dict:
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def wait_for(path: Path, procs, what: str, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while not path.exists():
        for p in procs:
            assert p.poll() is None, p.stderr.read()[-3000:]
        assert time.time() < deadline, f"never reached: {what}"
        time.sleep(0.05)


def kill9(p: subprocess.Popen) -> None:
    os.kill(p.pid, signal.SIGKILL)
    p.wait()


def evaluations(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def the_study(url: str) -> optuna.Study:
    from autotune.storage import open_storage
    st = open_storage(url)
    (name,) = optuna.get_all_study_names(st)
    return optuna.load_study(study_name=name, storage=st)


# ---- the server itself -----------------------------------------------------------------------
def test_the_server_is_a_real_postgresql_and_each_test_gets_its_own_database(pg_url):
    from autotune.storage import check, open_storage
    check(pg_url)                                     # reachable, driver present
    with _admin(pg_url) as c:
        version = c.execute("SHOW server_version").fetchone()[0]
        tables = c.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()[0]
    assert int(version.split(".")[0]) >= 12 and tables == 0
    open_storage(pg_url)                              # Optuna's schema and the claims table
    with _admin(pg_url) as c:
        names = {r[0] for r in c.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert {"studies", "trials", "trial_heartbeats", "wmma_gen_claims"} <= names
