"""bench/peers.py without Triton: a message and exit 0, nothing written; its peer model
estimate (no Triton needed for the arithmetic) stays labelled source=model."""
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_peers_bench_skips_cleanly_without_triton(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "triton", None)     # import triton -> ImportError
    monkeypatch.syspath_prepend(str(BENCH))
    import peers
    assert peers.main(["--out", str(tmp_path / "out")]) == 0
    assert "Triton is not installed" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()


def test_peer_problems_cover_the_ladders_and_the_calibration_points(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import peers
    qs = peers.problems(peers.ARCHS)
    origins = " ".join(q["origin"] for q in qs)
    assert "gfx1100 ladder" in origins and "point lib-1100-torch-f16" in origins and "point fa-1201-aiter" in origins
    assert {q["arch"] for q in qs} == set(peers.ARCHS)
    assert len({peers.label(q) + q["arch"] for q in qs}) == len(qs)     # deduplicated
