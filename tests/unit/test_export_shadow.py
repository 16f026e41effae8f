"""Export keeps an entry only if it beats the entry of the same bucket it would shadow in another
schedule file (shipped or user), measured the same way, and says what it kept and dropped
(autotune/shadow.py, issue 37: the README's job once exported a user gemm 1024^3 entry rated 63.5
TFLOP/s over the shipped 67.7)."""

import pytest
from test_schedule_files import BIG, MID, SMALL, doc, write

from autotune.shadow import against_shadowed
from wmma_gen import schedule_files as sf
from wmma_gen.ops.gemm import lookup as gemm
from wmma_gen.ops.registry import tuning


def _entry(schedule, m, tflops, source="model"):
    e = doc("gemm", schedule)["entries"][0]
    return {**e, "bucket": {"m": m, "n": m, "k": m}, "tflops": tflops, "source": source}


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    d = tmp_path / "shipped"
    monkeypatch.setattr(sf, "SHIPPED_DIR", d)
    monkeypatch.setattr(gemm, "DEFAULT_DIR", d)
    base = doc("gemm")
    base["entries"] = [_entry(BIG, 1024, 67.7), _entry(MID, 256, 20.0, source="hip")]
    write(d, base)
    return d


def test_an_entry_is_kept_only_if_it_beats_the_one_it_shadows(shipped, tmp_path):
    new = doc("gemm")
    new["entries"] = [_entry(MID, 1024, 63.5),           # slower than the shipped 1024 entry: dropped
                      _entry(SMALL, 256, 30.0),           # the shipped 256 figure is hip, this one model: dropped
                      _entry(MID, 2048, 50.0),            # no other file has 2048: kept
                      _entry(SMALL, 1024 * 8, 10.0)]      # nor 8192: kept
    lines = []
    out = against_shadowed([(sf.file_name("gfx1100", "gemm", "f16"), new, tuning("gemm"))], tmp_path / "user",
                           lines.append)
    kept = [e["bucket"]["m"] for e in out[0][1]["entries"]]
    assert kept == [2048, 8192]
    assert lines[0].startswith("dropped gemm gfx1100 f16 m=1024 n=1024 k=1024 acc=f32 layout=NN: 63.5 TFLOP/s (model): "
                               "does not beat the entry it would shadow, 67.7 TFLOP/s (model) in ")
    assert "measured another way" in lines[1] and lines[2].startswith("kept gemm gfx1100 f16 m=2048")
    faster = doc("gemm")
    faster["entries"] = [_entry(MID, 1024, 70.0)]
    lines.clear()
    out = against_shadowed([(sf.file_name("gfx1100", "gemm", "f16"), faster, tuning("gemm"))], tmp_path / "user",
                           lines.append)
    assert len(out[0][1]["entries"]) == 1 and "beats the entry it shadows, 67.7" in lines[0]


def test_a_file_of_only_dropped_entries_is_not_written_and_replacing_a_file_ignores_its_old_self(shipped, tmp_path):
    new = doc("gemm")
    new["entries"] = [_entry(MID, 1024, 60.0)]
    lines = []
    assert against_shadowed([(sf.file_name("gfx1100", "gemm", "f16"), new, tuning("gemm"))], tmp_path / "u",
                            lines.append) == []
    assert lines[-1] == "not writing gfx1100-gemm-f16.json: every entry was dropped"
    # re-exporting into the shipped dir itself replaces that file: it is not compared with itself
    out = against_shadowed([(sf.file_name("gfx1100", "gemm", "f16"), new, tuning("gemm"))], shipped, lines.append)
    assert len(out[0][1]["entries"]) == 1
