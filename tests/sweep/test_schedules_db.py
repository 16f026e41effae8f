"""Exported schedule files: nearest-bucket lookup, refusal of corrupt files, gemm() uses them."""
import json

import numpy as np
import pytest

import wmma_gen
from wmma_gen.ops.gemm import api as gemm_mod, lookup as schedules_db
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.lookup import ScheduleFileError, ScheduleFileWarning, load_file, lookup
from wmma_gen.ops.gemm.schedule import Schedule

SMALL = Schedule(block_m=32, block_n=32, block_k=16, waves_m=1, waves_n=2)
BIG = Schedule(block_m=128, block_n=128, block_k=32, waves_m=2, waves_n=2, lds="ab", buffers=2)


def entry(m, n, k, s, acc="f32", layout="NN", **kw):
    e = {"bucket": {"m": m, "n": n, "k": k}, "acc": acc, "layout": layout, "schedule": s.to_dict(),
         "tflops": 10.0, "unit": "TFLOP/s", "source": "model", "validated": True}
    e.update(kw)
    return e


def write(tmp_path, entries, dtype="f16", **top):
    doc = {"schema": schedules_db.SCHEMA, "schema_version": schedules_db.SCHEMA_VERSION, "arch": "gfx1100",
           "op": "gemm", "dtype": dtype, "toolchain": {"mlir": "x", "lld": "y"}, "entries": entries}
    doc.update(top)
    path = tmp_path / schedules_db.file_name("gfx1100", "gemm", dtype)
    path.write_text(json.dumps(doc))
    return path


def test_nearest_bucket_wins(tmp_path):
    write(tmp_path, [entry(64, 64, 64, SMALL), entry(4096, 4096, 4096, BIG)])
    assert lookup("gfx1100", GemmDirective("f16"), GemmProblem(100, 80, 64), tmp_path) == SMALL
    assert lookup("gfx1100", GemmDirective("f16"), GemmProblem(2048, 8192, 4096), tmp_path) == BIG
    assert lookup("gfx1100", GemmDirective("bf16"), GemmProblem(64, 64, 64), tmp_path) is None      # no bf16 file
    assert lookup("gfx1101", GemmDirective("f16"), GemmProblem(64, 64, 64), tmp_path) is None       # no gfx1101 file


def test_accumulator_and_layout_match_before_distance(tmp_path):
    write(tmp_path, [entry(64, 64, 64, SMALL), entry(4096, 4096, 4096, BIG, acc="f16", layout="NT")])
    assert lookup("gfx1100", GemmDirective("f16", acc="f16", layout="NT"), GemmProblem(256, 256, 256), tmp_path) == BIG


def test_illegal_for_the_directive_falls_to_next_bucket(tmp_path):
    write(tmp_path, [entry(64, 64, 64, SMALL), entry(4096, 4096, 4096, BIG)])
    # an `accept` predicate (e.g. what the builder can build) skips the nearest entry
    got = lookup("gfx1100", GemmDirective("f16"), GemmProblem(4096, 4096, 4096), tmp_path, accept=lambda s: s.lds == "none")
    assert got == SMALL


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["entries"][0]["schedule"].update(block_m=48), "entries[0].schedule.block_m"),
    (lambda d: d["entries"][0]["schedule"].update(waves_m=4), "entries[0].schedule"),      # illegal combination
    (lambda d: d["entries"][0].update(validated=False), "entries[0].validated"),
    (lambda d: d["entries"][0].update(source="guess"), "entries[0].source"),
    (lambda d: d["entries"][0]["bucket"].update(m=-4), "entries[0].bucket.m"),
    (lambda d: d.update(schema_version=99), "schema_version"),
    (lambda d: d.update(arch="gfx9000"), "arch"),
])
def test_corrupt_file_is_refused_naming_file_and_field(tmp_path, mutate, field):
    path = write(tmp_path, [entry(64, 64, 64, SMALL)])
    doc = json.loads(path.read_text())
    mutate(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ScheduleFileError) as err:
        load_file(path)
    assert str(path) in str(err.value) and f"'{field}'" in str(err.value)
    with pytest.warns(ScheduleFileWarning, match=field.replace("[", r"\[").replace("]", r"\]")):
        assert lookup("gfx1100", GemmDirective("f16"), GemmProblem(64, 64, 64), tmp_path) is None


def test_invalid_json_is_refused(tmp_path):
    path = write(tmp_path, [])
    path.write_text("{not json")
    with pytest.warns(ScheduleFileWarning, match="<json>"):
        assert lookup("gfx1100", GemmDirective("f16"), GemmProblem(64, 64, 64), tmp_path) is None


def test_shipped_schedule_files_are_valid():
    """Every shipped file passes its own op's reader (GEMM: schedules_db; attention: its lookup)."""
    import json

    from wmma_gen.ops.attention import lookup as attention_lookup
    from wmma_gen.ops.attention_bwd import lookup as bwd_lookup
    from wmma_gen.ops.paged_attention import lookup as paged_lookup
    readers = {"gemm": load_file, "attention": lambda f: attention_lookup.parse(json.loads(f.read_text()), f),
               "attention_bwd": lambda f: bwd_lookup.parse(json.loads(f.read_text()), f),
               "paged_attention": lambda f: paged_lookup.parse(json.loads(f.read_text()), f)}
    files = sorted(schedules_db.DEFAULT_DIR.glob("*.json"))
    ops = {f.name.split("-")[1] for f in files}      # <arch>-<op>-<dtype>.json
    assert ops == set(readers), ops
    for f in files:
        assert readers[f.name.split("-")[1]](f), f


class _Spy:
    def __init__(self, real):
        self.real, self.schedules = real, []

    def __call__(self, d, s, arch, *a, **kw):
        self.schedules.append(s)
        return self.real(d, s, arch, *a, **kw)


@pytest.fixture
def spy(monkeypatch):
    sp = _Spy(gemm_mod.compile_gemm)
    monkeypatch.setattr(gemm_mod, "compile_gemm", sp)
    return sp


def test_gemm_uses_the_exported_schedule_and_user_schedule_wins(tmp_path, monkeypatch, spy):
    write(tmp_path, [entry(64, 64, 32, SMALL)])
    monkeypatch.setattr(schedules_db, "DEFAULT_DIR", tmp_path)
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (64, 32)).astype(np.float16), rng.uniform(-1, 1, (32, 64)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    out = wmma_gen.gemm(a, b, device="emu")
    assert spy.schedules[-1] == SMALL and SMALL != gemm_mod.fit_schedule(GemmDirective("f16"), "gfx1100", GemmProblem(64, 64, 32))
    assert np.abs(out - ref).max() < 1e-2
    mine = Schedule(block_m=64, block_n=64, block_k=32, waves_m=2, waves_n=2, lds="ab")
    wmma_gen.gemm(a, b, device="emu", schedule=mine)
    assert spy.schedules[-1] == mine


def test_gemm_falls_back_to_default_on_corrupt_file(tmp_path, monkeypatch, spy):
    path = write(tmp_path, [entry(64, 64, 32, SMALL)])
    path.write_text(path.read_text().replace('"block_m": 32', '"block_m": "wide"'))
    monkeypatch.setattr(schedules_db, "DEFAULT_DIR", tmp_path)
    a = np.ones((64, 32), np.float16)
    with pytest.warns(ScheduleFileWarning, match=r"entries\[0\]\.schedule\.block_m"):
        out = wmma_gen.gemm(a, a.T.copy(), device="emu")
    assert spy.schedules[-1] == gemm_mod.fit_schedule(GemmDirective("f16"), "gfx1100", GemmProblem(64, 64, 32))
    assert np.all(out == 32)


def test_tile_larger_than_problem_is_not_applied(tmp_path):
    write(tmp_path, [entry(4096, 4096, 4096, BIG)])
    assert lookup("gfx1100", GemmDirective("f16"), GemmProblem(64, 512, 64), tmp_path) is None     # 128-row tile, 64 rows
    assert lookup("gfx1100", GemmDirective("f16"), GemmProblem(128, 128, 64), tmp_path) == BIG
