"""The journal lock after kill -9 (autotune/journal_lock.py): a lock whose owner on this host is
gone is broken at once with one line; a live owner blocks; another host's lock waits out the grace.
Every wait here has a grace period far longer than the test, so only the stale rule can end it."""
import os
import signal
import socket
import subprocess
import sys
import threading

import pytest

from autotune.journal_lock import LOCK_SUFFIX, OwnedLock, _boot_id
from autotune.runner import counted
from autotune.study import Hooks, run_sweep

NEVER = 3600.0     # a grace period no test waits out


def _hold(journal, then: str) -> subprocess.Popen:
    """A process that takes the lock, says so, then runs `then`."""
    code = (f"import os, signal, sys\nfrom autotune.journal_lock import OwnedLock\n"
            f"lock = OwnedLock({str(journal)!r}); lock.acquire(); print('held', flush=True)\n{then}\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, cwd=os.getcwd())
    assert proc.stdout.readline().strip() == "held"
    return proc


def _acquire_in_thread(lock):
    t = threading.Thread(target=lock.acquire, daemon=True)
    t.start()
    return t


def test_lock_of_a_killed_process_is_broken_at_once_with_one_line(tmp_path, capsys):
    journal = tmp_path / "optuna.journal"
    proc = _hold(journal, "os.kill(os.getpid(), signal.SIGKILL)")
    assert proc.wait() == -signal.SIGKILL
    assert os.path.exists(str(journal) + LOCK_SUFFIX)             # left behind
    lock = OwnedLock(str(journal), grace_period=NEVER)
    t = _acquire_in_thread(lock)
    t.join(timeout=60)
    assert not t.is_alive(), "the dead owner's lock was not broken"
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [lock.broken]
    assert f"left by pid {proc.pid} on {socket.gethostname()}, which is gone" in err[0]
    lock.release()
    assert not os.path.exists(str(journal) + LOCK_SUFFIX)


def test_lock_of_a_live_process_blocks_until_released(tmp_path, capsys):
    journal = tmp_path / "optuna.journal"
    proc = _hold(journal, "sys.stdin.read(); lock.release()")
    lock = OwnedLock(str(journal), grace_period=NEVER)
    t = _acquire_in_thread(lock)
    t.join(timeout=1.5)
    try:
        assert t.is_alive(), "took a lock a live process holds"
    finally:
        proc.stdin.close()                                         # the holder releases
        assert proc.wait(timeout=60) == 0
    t.join(timeout=60)
    assert not t.is_alive() and lock.broken is None and capsys.readouterr().err == ""
    lock.release()


def _planted(journal, line: str) -> None:
    with open(str(journal) + LOCK_SUFFIX, "w") as f:
        f.write(line)


def test_lock_naming_another_host_waits_out_the_grace_period(tmp_path, capsys):
    journal = tmp_path / "optuna.journal"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()                # a pid that is gone here
    _planted(journal, f"not-{socket.gethostname()} - {dead} - 0123\n")
    lock = OwnedLock(str(journal), grace_period=0.5)
    t = _acquire_in_thread(lock)
    t.join(timeout=60)
    assert not t.is_alive()
    assert lock.broken == (f"note: journal lock {journal}{LOCK_SUFFIX} held by pid {dead} on "
                           f"not-{socket.gethostname()} unchanged for 0.5 s; breaking it")
    assert capsys.readouterr().err.strip() == lock.broken
    lock.release()


def test_reused_pid_counts_as_gone(tmp_path):
    journal = tmp_path / "optuna.journal"
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc: a pid's start time is not known")
    _planted(journal, f"{socket.gethostname()} {_boot_id()} {os.getpid()} 1 0123\n")   # our pid, another start
    lock = OwnedLock(str(journal), grace_period=NEVER)
    t = _acquire_in_thread(lock)
    t.join(timeout=60)
    assert not t.is_alive() and "which is gone" in lock.broken
    lock.release()


def test_optunas_own_symlink_lock_and_ours_exclude_each_other(tmp_path):
    from optuna.storages.journal import JournalFileSymlinkLock
    journal = tmp_path / "optuna.journal"
    ours = OwnedLock(str(journal))
    ours.acquire()
    with pytest.raises(FileExistsError):           # what JournalFileSymlinkLock.acquire retries on
        os.symlink(str(journal), str(journal) + LOCK_SUFFIX)
    ours.release()
    theirs = JournalFileSymlinkLock(str(journal))
    theirs.acquire()
    lock = OwnedLock(str(journal), grace_period=NEVER)
    t = _acquire_in_thread(lock)
    t.join(timeout=1.0)
    assert t.is_alive(), "took a lock Optuna's own symlink lock holds"
    theirs.release()
    t.join(timeout=60)
    assert not t.is_alive() and lock.broken is None
    lock.release()


def test_many_waiters_on_a_dead_lock_break_it_once_and_hold_it_one_at_a_time(tmp_path, capsys):
    journal = tmp_path / "optuna.journal"
    proc = _hold(journal, "os.kill(os.getpid(), signal.SIGKILL)")
    proc.wait()
    inside, most, broke = [0], [0], []
    guard = threading.Lock()

    def work():
        lock = OwnedLock(str(journal), grace_period=NEVER)
        for _ in range(20):
            lock.acquire()
            with guard:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            with guard:
                inside[0] -= 1
            lock.release()
        broke.append(lock.broken)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert most[0] == 1
    assert len([b for b in broke if b]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_sweep_rerun_after_a_kill_inside_the_journal_lock_takes_it_and_finishes(tmp_path, capsys):
    """The sweep's own storage (autotune/storage.py) uses the lock: a re-run on a journal whose
    lock a killed sweep left behind finishes its budget and says once whose lock it took."""
    from test_crash_recovery import FakeObjective, config, trials_of
    results = tmp_path / "results"
    journal = results / "optuna.journal"
    run_sweep(config(str(journal), results, 2), Hooks(objective=FakeObjective))
    proc = _hold(journal, "os.kill(os.getpid(), signal.SIGKILL)")      # killed mid-append
    proc.wait()
    capsys.readouterr()
    r = run_sweep(config(str(journal), results, 4), Hooks(objective=FakeObjective))
    notes = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("note: journal lock")]
    assert len(notes) == 1 and f"left by pid {proc.pid}" in notes[0]
    assert not os.path.exists(str(journal) + LOCK_SUFFIX)
    assert sum(counted(t) for t in trials_of(str(journal))) == 4, r


def test_without_hard_links_the_owner_is_a_symlinks_target_and_still_read(tmp_path, monkeypatch):
    journal = tmp_path / "optuna.journal"

    def no_link(src, dst):
        raise PermissionError(1, "Operation not permitted")     # what link(2) gives on e.g. some FUSE mounts
    monkeypatch.setattr(os, "link", no_link)
    ours = OwnedLock(str(journal))
    ours.acquire()
    assert f" {os.getpid()} " in os.readlink(str(journal) + LOCK_SUFFIX)
    ours.release()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    os.symlink(f"{socket.gethostname()} {_boot_id()} {dead} - 0123", str(journal) + LOCK_SUFFIX)
    lock = OwnedLock(str(journal), grace_period=NEVER)
    t = _acquire_in_thread(lock)
    t.join(timeout=60)
    assert not t.is_alive() and f"left by pid {dead} on" in lock.broken
    lock.release()
