"""The schedule files' optional key fields for tuned real problems (issue 25 item 2): GEMM
bucket.batch and epilogue, attention bucket.seq_q, window and varlen. Files without them read
and rank as before; with them the lookup prefers the entry tuned on the same kind of call."""
import json

import pytest

from wmma_gen import schedule_files as sf
from wmma_gen.ops.attention import lookup as attn
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention_bwd import lookup as bwd
from wmma_gen.ops.gemm import lookup as gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule

A = Schedule(block_m=32, block_n=32, block_k=16, waves_m=1, waves_n=2)
B = Schedule(block_m=64, block_n=64, block_k=32, waves_m=2, waves_n=2, lds="ab")
C = Schedule(block_m=64, block_n=32, block_k=32, waves_m=2, waves_n=1)
FWD = [{"block_m": bm, "block_n": 64, "waves": w, "kv_buffers": 1, "q_in": "regs", "load_bits": 128, "split_kv": 1,
        "sched": "default"} for bm, w in ((128, 8), (64, 4), (32, 2))]
BWD = [{"block_m": 32, "block_n": 64, "waves": 4, "d_split": 1, "dq_block_m": bm, "dq_block_n": 32, "dq_waves": w,
        "dq_d_split": 1, "buffering": 1, "dq": "separate", "prepass_rows": 128}
       for bm, w in ((64, 4), (32, 2), (128, 8))]


def write(tmp_path, op: str, entries: list) -> object:
    doc = {"schema": sf.SCHEMA, "schema_version": sf.SCHEMA_VERSION, "arch": "gfx1100", "op": op, "dtype": "f16",
           "toolchain": {"mlir": "x", "lld": "y"},
           "entries": [{**e, "tflops": 10.0, "unit": "TFLOP/s", "source": "model", "validated": True} for e in entries]}
    path = tmp_path / sf.file_name("gfx1100", op, "f16")
    path.write_text(json.dumps(doc))
    return path


def g(s: Schedule, layout="NT", batch=None, epilogue=None, m=256) -> dict:
    bucket = {"m": m, "n": 256, "k": 256, **({"batch": batch} if batch is not None else {})}
    return {"bucket": bucket, "acc": "f32", "layout": layout, "schedule": s.to_dict(),
            **({"epilogue": epilogue} if epilogue is not None else {})}


def d(batch=1, bias="", activation="", m=256, layout="NT") -> tuple[GemmDirective, GemmProblem]:
    """A call: its directive and problem."""
    return GemmDirective("f16", layout=layout, bias=bias, activation=activation), GemmProblem(m, 256, 256, batch)


def test_gemm_batch_and_epilogue_pick_the_entry_tuned_on_them(tmp_path):
    write(tmp_path, "gemm", [g(A), g(B, batch=8), g(C, epilogue={"bias": "n", "activation": "gelu"})])
    assert gemm.lookup("gfx1100", *d(), tmp_path) == A
    assert gemm.lookup("gfx1100", *d(batch=8), tmp_path) == B
    assert gemm.lookup("gfx1100", *d(batch=6), tmp_path) == B             # nearest batch
    assert gemm.lookup("gfx1100", *d(bias="n", activation="gelu"), tmp_path) == C
    assert gemm.lookup("gfx1100", *d(bias="n"), tmp_path) in (A, C)        # one field off either way
    assert gemm.lookup("gfx1100", *d(layout="NN"), tmp_path) is None        # no NN entry: the default (a tile
                                                                            # tuned on one layout is not another's)


def test_gemm_shape_still_ranks_before_the_epilogue(tmp_path):
    write(tmp_path, "gemm", [g(A, m=4096), g(C, epilogue={"bias": "n", "activation": "relu"})])
    assert gemm.lookup("gfx1100", *d(m=4096, bias="n", activation="relu"), tmp_path) == A


def test_an_older_gemm_file_reads_and_ranks_as_before(tmp_path):
    path = write(tmp_path, "gemm", [g(A, m=64), g(B, m=4096)])
    (e1, e2) = gemm.load_file(path)
    assert (e1.problem.batch, e1.directive.bias, e1.directive.activation) == (1, "", "")
    for call, want in ((d(m=100), A), (d(m=2048, batch=4, bias="n", activation="silu"), B)):
        assert gemm.lookup("gfx1100", *call, tmp_path) == want


@pytest.mark.parametrize("entry, field", [
    (g(A, batch=0), "entries[0].bucket.batch"),
    (g(A, epilogue={"bias": "x"}), "entries[0].epilogue.bias"),
    (g(A, epilogue={"activation": "tanh"}), "entries[0].epilogue.activation"),
    (g(A, epilogue={"scale": 1}), "entries[0].epilogue"),
    ({**g(A), "bucket": {"m": 1, "n": 1, "k": 1, "heads": 2}}, "entries[0].bucket"),
])
def test_bad_gemm_key_fields_are_refused_naming_the_field(tmp_path, entry, field):
    path = write(tmp_path, "gemm", [entry])
    with pytest.raises(gemm.ScheduleFileError, match=f"'{field.replace('[', '.').replace(']', '.')}'"):
        gemm.load_file(path)


def a(schedule: dict, seq=1024, seq_q=None, **flags) -> dict:
    return {"head_dim": 64, "causal": True, "bucket": {"seq": seq, **({"seq_q": seq_q} if seq_q else {})},
            "schedule": schedule, **flags}


def test_attention_seq_q_window_and_varlen_pick_the_entry_tuned_on_them(tmp_path):
    write(tmp_path, "attention", [a(FWD[0]), a(FWD[1], seq_q=128), a(FWD[2], window=True)])
    fwd = AttentionDirective("f16", 64, causal=True)
    s = [attn.AttentionSchedule.from_dict(x) for x in FWD]
    assert attn.lookup("gfx1100", fwd, 1024, tmp_path) in (s[0], s[1])        # Sq not given: Sk only, as before
    assert attn.lookup("gfx1100", fwd, 1024, tmp_path, seq_q=1024) == s[0]
    assert attn.lookup("gfx1100", fwd, 1000, tmp_path, seq_q=100) == s[1]
    windowed = AttentionDirective("f16", 64, causal=True, window=True)
    assert attn.lookup("gfx1100", windowed, 8192, tmp_path, seq_q=128) == s[2]   # the flag ranks first


def test_an_older_attention_file_reads_and_ranks_as_before(tmp_path):
    path = write(tmp_path, "attention", [a(FWD[0], seq=512), a(FWD[1], seq=4096)])
    assert [(e["seq_q"], e["window"], e["varlen"]) for e in attn.load_file(path)] == [(512, False, False),
                                                                                       (4096, False, False)]
    win = AttentionDirective("f16", 64, causal=True, window=True, varlen=True)
    assert attn.lookup("gfx1100", win, 3000, tmp_path) == attn.AttentionSchedule.from_dict(FWD[1])


def test_attention_backward_takes_the_same_keys(tmp_path):
    write(tmp_path, "attention_bwd", [a(BWD[0]), a(BWD[1], seq_q=64), a(BWD[2], varlen=True)])
    s = [bwd.AttentionBwdSchedule.from_dict(x) for x in BWD]
    assert bwd.lookup("gfx1100", "f16", 64, True, 1024, tmp_path, seq_q=1024) == s[0]
    assert bwd.lookup("gfx1100", "f16", 64, True, 1024, tmp_path, seq_q=64) == s[1]
    assert bwd.lookup("gfx1100", "f16", 64, True, 1024, tmp_path, varlen=True) == s[2]


@pytest.mark.parametrize("entry, field", [
    (a(FWD[0], seq_q=-1), "entries[0].bucket.seq_q"),
    (a(FWD[0], window="yes"), "entries[0].window"),
    (a(FWD[0], varlen=1), "entries[0].varlen"),
    ({**a(FWD[0]), "bucket": {"seq": 64, "heads": 2}}, "entries[0].bucket"),
])
def test_bad_attention_key_fields_are_refused_naming_the_field(tmp_path, entry, field):
    path = write(tmp_path, "attention", [entry])
    with pytest.raises(attn.ScheduleFileError) as err:
        attn.load_file(path)
    assert f"field '{field}'" in str(err.value)


def test_the_log_line_names_the_new_key_fields(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WMMA_GEN_LOG", "schedules")
    sf.forget_logged()
    path = write(tmp_path, "gemm", [g(B, batch=8, epilogue={"bias": "n", "activation": "gelu"})])
    gemm.lookup("gfx1100", *d(batch=8, bias="n", activation="gelu"), tmp_path)
    assert capsys.readouterr().err.splitlines() == [
        "wmma_gen schedules: gemm gfx1100 f16 m=256 n=256 k=256 acc=f32 layout=NT batch=8 bias=n activation=gelu "
        f"-> {path} (given) bucket m=256 n=256 k=256 acc=f32 layout=NT batch=8 bias=n activation=gelu"]


def _ladder_rows(op: str, rows: list[dict]):
    """Rank-1 validated ladder rows of `op` with its EXTRA_COLUMNS (as a ladder carrying them would)."""
    import pandas as pd

    from autotune import ladder
    from wmma_gen.ops.registry import tuning as adapter
    ad = adapter(op)
    common = dict(arch="gfx1100", op=op, dtype="f16", rank=1, seconds=1e-3, tflops=5.0, unit="TFLOP/s",
                  peak_tflops=122.88, fraction_of_peak=0.04, source="model", validated=True, vgprs=64,
                  lds_bytes=0, occupancy=4.0, isa_hash="ab" * 16, toolchain_mlir="m", toolchain_lld="l",
                  timestamp="2026-01-01 00:00:00", study="s", trial=0)
    assert set(ad.extra_columns) <= set(ladder.columns(op))      # the ladder carries them
    return pd.DataFrame([{**common, **r} for r in rows], columns=ladder.columns(op))


def test_documents_export_the_extra_key_fields_when_the_ladder_carries_them(tmp_path):
    from wmma_gen.ops.registry import tuning as adapter
    g = _ladder_rows("gemm", [dict(acc="f32", layout="NT", m=256, n=256, k=256, batch=4, bias="n", activation="gelu",
                                   **C.to_dict()),
                              dict(acc="f32", layout="NT", m=256, n=256, k=256, batch=4, bias="", activation="",
                                   **A.to_dict())])
    (doc,) = adapter("gemm").documents(g, "gfx1100").values()
    assert [(e["bucket"], e["epilogue"]) for e in doc["entries"]] == [
        ({"m": 256, "n": 256, "k": 256, "batch": 4}, {"bias": "", "activation": ""}),
        ({"m": 256, "n": 256, "k": 256, "batch": 4}, {"bias": "n", "activation": "gelu"})]
    (tmp_path / "gfx1100-gemm-f16.json").write_text(json.dumps(doc))
    assert gemm.lookup("gfx1100", *d(batch=4, bias="n", activation="gelu"), tmp_path) == C
    assert gemm.lookup("gfx1100", *d(batch=4), tmp_path) == A
    a_ = _ladder_rows("attention", [dict(head_dim=64, causal=True, batch=1, heads=4, kv_heads=2, seq_q=128,
                                         seq_k=1024, window=True, varlen=False, **FWD[2])])
    (doc,) = adapter("attention").documents(a_, "gfx1100").values()
    (e,) = doc["entries"]
    assert (e["bucket"], e.get("window"), "varlen" in e) == ({"seq": 1024, "seq_q": 128}, True, False)
    attn.parse(doc)


def test_rows_give_the_extra_key_fields():
    from wmma_gen.ops.registry import tuning as adapter
    assert set(adapter("gemm").extra_columns) <= set(adapter("gemm").row(*d(bias="n", activation="silu")))
    p = {"batch": 1, "heads": 2, "kv_heads": 1, "seq_q": 8, "seq_k": 8}
    r = adapter("attention_bwd").row(AttentionDirective("f16", 64, window=True, op="attention_bwd"), p)
    assert (r["window"], r["varlen"]) == (True, False)
