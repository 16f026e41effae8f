"""A worker that loses its database connection (issue #16): it retries with backoff and carries
on when the server comes back; when it does not, it stops after the bound with one line.

The connection runs through `Cut`, a TCP forwarder on loopback in front of the real server:
cut() drops every connection and refuses new ones until restore(), as a restart or a network
outage would. The server itself is never touched."""
from __future__ import annotations

import socket
import threading
import time

from sqlalchemy.engine import make_url

from test_postgres_server import evaluations, pg_server, pg_url, spawn, the_study, with_options  # noqa: F401
from test_postgres_sweep import assert_every_schedule_once


class Cut:
    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.up, self.closed = True, False
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.lock = threading.Lock()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            if not self.up:
                client.close()
                continue
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.pairs.append((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a, b):
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self):
        self.up = False
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
                except OSError:
                    pass

    def restore(self):
        self.up = True

    def close(self):
        self.closed = True
        self.cut()
        self.server.close()


def through(url: str, cut: Cut, **opts) -> str:
    u = make_url(url).set(host="127.0.0.1", port=cut.port)
    return with_options(u.render_as_string(hide_password=False), **opts)


def _until(pred, proc, what: str, timeout: float = 120):
    deadline = time.time() + timeout
    while not pred():
        assert proc.poll() is None, proc.stderr.read()[-3000:]
        assert time.time() < deadline, f"never reached: {what}"
        time.sleep(0.1)


def test_an_outage_shorter_than_the_bound_is_retried_and_the_sweep_completes(pg_url, tmp_path):
    u = make_url(pg_url)
    cut = Cut(u.host, u.port)
    try:
        url = through(pg_url, cut, reconnect=60, heartbeat=1, grace=60)
        budget, log = 8, tmp_path / "evals.log"
        p = spawn(url, tmp_path / "r", budget, pause=0.5, log=str(log))
        _until(lambda: len(evaluations(log)) >= 2, p, "two evaluations")
        cut.cut()
        time.sleep(4)
        cut.restore()
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-3000:]
        assert "warning: lost the connection to storage" in err and "connection back after" in err
        assert "secret" not in err
    finally:
        cut.close()
    assert_every_schedule_once(the_study(pg_url).get_trials(), log, budget)


def test_an_outage_longer_than_the_bound_stops_the_worker_with_one_line(pg_url, tmp_path):
    u = make_url(pg_url)
    cut = Cut(u.host, u.port)
    try:
        url = through(pg_url, cut, reconnect=1)     # retries at +0.25 s and +0.75 s, then gives up
        log = tmp_path / "evals.log"
        p = spawn(url, tmp_path / "r", 50, pause=0.5, log=str(log))
        _until(lambda: len(evaluations(log)) >= 1, p, "one evaluation")
        cut.cut()
        t0 = time.time()
        _, err = p.communicate(timeout=120)
        waited = time.time() - t0
    finally:
        cut.close()
    assert p.returncode == 2, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("wmma-gen sweep: error: lost the connection to storage postgresql://")
    assert "gave up after" in last and "run the same command again" in last
    assert "Traceback" not in err
    assert waited < 60                                   # the bound (1 s) plus one trial, not forever
