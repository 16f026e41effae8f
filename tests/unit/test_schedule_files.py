"""Schedule files (wmma_gen/schedule_files.py): one reader for every op refuses each bad field
naming file, field, value and what is allowed; the search path is WMMA_GEN_SCHEDULES > user dir
> shipped; WMMA_GEN_LOG=schedules prints one line per new key."""
from __future__ import annotations

import json
import os

import pytest

from wmma_gen import schedule_files as sf, userdirs
from wmma_gen.ops.attention import lookup as attn
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention_bwd import lookup as bwd
from wmma_gen.ops.gemm import lookup as gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule

SMALL = Schedule(block_m=32, block_n=32, block_k=16, waves_m=1, waves_n=2)
MID = Schedule(block_m=64, block_n=64, block_k=32, waves_m=2, waves_n=2, lds="ab")
BIG = Schedule(block_m=128, block_n=128, block_k=32, waves_m=2, waves_n=2, lds="ab", buffers=2)
ATTN = {"block_m": 128, "block_n": 64, "waves": 8, "kv_buffers": 1, "q_in": "regs", "load_bits": 128,
        "split_kv": 1, "sched": "default"}
BWD = {"block_m": 32, "block_n": 64, "waves": 4, "d_split": 1, "dq_block_m": 64, "dq_block_n": 32, "dq_waves": 4,
       "dq_d_split": 1, "buffering": 1, "dq": "separate", "prepass_rows": 128}
MODULES = {"gemm": gemm, "attention": attn, "attention_bwd": bwd}


def doc(op: str, schedule=None, arch="gfx1100", dtype="f16", **entry_kw) -> dict:
    if op == "gemm":
        e = {"bucket": {"m": 64, "n": 64, "k": 64}, "acc": "f32", "layout": "NN",
             "schedule": (schedule or SMALL).to_dict()}
    else:
        e = {"head_dim": 64, "causal": op == "attention_bwd", "bucket": {"seq": 1024},
             "schedule": dict(schedule or (ATTN if op == "attention" else BWD))}
    e.update({"tflops": 10.0, "unit": "TFLOP/s", "source": "model", "validated": True}, **entry_kw)
    return {"schema": sf.SCHEMA, "schema_version": sf.SCHEMA_VERSION, "arch": arch, "op": op, "dtype": dtype,
            "toolchain": {"mlir": "x", "lld": "y"}, "entries": [e]}


def write(directory, d: dict, name: str | None = None, text: str | None = None):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (name or sf.file_name(d["arch"], d["op"], d["dtype"]))
    path.write_text(text if text is not None else json.dumps(d))
    return path


def call(op: str, directory=None):
    """The op's lookup for a gfx1100 f16 call its test file has an entry for."""
    if op == "gemm":
        return gemm.lookup("gfx1100", GemmDirective("f16"), GemmProblem(64, 64, 64), directory)
    if op == "attention":
        return attn.lookup("gfx1100", AttentionDirective("f16", 64), 1024, directory)
    return bwd.lookup("gfx1100", "f16", 64, True, 1024, directory)


@pytest.mark.parametrize("op", list(MODULES))
def test_a_valid_file_of_every_op_is_read(tmp_path, op):
    path = write(tmp_path, doc(op))
    assert len(MODULES[op].load_file(path)) == 1
    assert call(op, tmp_path) is not None


def _set(path_keys, value):
    def mutate(d):
        *keys, last = path_keys
        target = d
        for k in keys:
            target = target[k]
        target[last] = value
    return mutate


# (id, mutation of a valid document or raw text, the field named in the error)
BAD = [
    ("root-not-object", lambda d: [], "<root>"),
    ("schema", _set(["schema"], "other/format"), "schema"),
    ("schema-version", _set(["schema_version"], 2), "schema_version"),
    ("schema-version-bool", _set(["schema_version"], True), "schema_version"),
    ("op", _set(["op"], "conv"), "op"),
    ("arch-unknown", _set(["arch"], "gfx906"), "arch"),
    ("arch-not-a-string", _set(["arch"], ["gfx1100"]), "arch"),
    ("arch-contradicts-name", _set(["arch"], "gfx1201"), "arch"),
    ("dtype-contradicts-name", _set(["dtype"], "bf16"), "dtype"),
    ("dtype-unknown", _set(["dtype"], "f64"), "dtype"),
    ("toolchain-not-object", _set(["toolchain"], "llvm"), "toolchain"),
    ("entries-not-list", _set(["entries"], {}), "entries"),
    ("entry-not-object", _set(["entries", 0], 3), "entries[0]"),
    ("not-validated", _set(["entries", 0, "validated"], False), "entries[0].validated"),
    ("source", _set(["entries", 0, "source"], "guess"), "entries[0].source"),
    ("tflops-nan", _set(["entries", 0, "tflops"], float("nan")), "entries[0].tflops"),
    ("tflops-inf", _set(["entries", 0, "tflops"], float("inf")), "entries[0].tflops"),
    ("tflops-negative", _set(["entries", 0, "tflops"], -1.0), "entries[0].tflops"),
    ("tflops-text", _set(["entries", 0, "tflops"], "fast"), "entries[0].tflops"),
    ("nan-anywhere", _set(["entries", 0, "fraction_of_peak"], float("nan")), "entries[0].fraction_of_peak"),
    ("bucket-missing", _set(["entries", 0, "bucket"], None), "entries[0].bucket"),
    ("schedule-not-object", _set(["entries", 0, "schedule"], [1, 2]), "entries[0].schedule"),
]


@pytest.mark.parametrize("op", list(MODULES))
@pytest.mark.parametrize("mutate,field", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_each_bad_field_is_refused_naming_file_field_and_allowed(tmp_path, op, mutate, field):
    d = doc(op)
    name = sf.file_name("gfx1100", op, "f16")
    out = mutate(d)
    path = write(tmp_path, out if out is not None else d, name=name)   # json.dumps writes NaN/Infinity literals
    with pytest.raises(sf.ScheduleFileError) as err:
        MODULES[op].load_file(path)
    text = str(err.value)
    assert text.startswith(f"{path}: field '{field}' = ") and "is not allowed: " in text, text
    with pytest.warns(sf.ScheduleFileWarning, match=str(path)):
        assert call(op, tmp_path) is None


@pytest.mark.parametrize("op", list(MODULES))
@pytest.mark.parametrize("text,field", [
    ("[" * 100_000 + "]" * 100_000, "<json>"),
    ('{"schema": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001, "<json>"),
    ("{not json", "<json>"),
    ("", "<json>"),
], ids=["deep-list", "deep-object", "not-json", "empty"])
def test_unreadable_json_is_one_clear_error_never_a_recursion_error(tmp_path, op, text, field):
    path = write(tmp_path, {}, name=sf.file_name("gfx1100", op, "f16"), text=text)
    with pytest.raises(sf.ScheduleFileError) as err:
        MODULES[op].load_file(path)
    assert f"{path}: field '{field}'" in str(err.value)
    with pytest.warns(sf.ScheduleFileWarning):
        assert call(op, tmp_path) is None


def test_not_utf8_and_too_large_are_refused(tmp_path, monkeypatch):
    path = tmp_path / "gfx1100-gemm-f16.json"
    path.write_bytes(b'{"schema": "\xff\xfe"}')
    with pytest.raises(sf.ScheduleFileError, match="'<file>'.*UTF-8"):
        gemm.load_file(path)
    write(tmp_path, doc("gemm"))
    monkeypatch.setattr(sf, "MAX_BYTES", 100)
    with pytest.raises(sf.ScheduleFileError, match="'<file>'.*at most 100 bytes"):
        gemm.load_file(path)


def test_strings_with_brackets_do_not_count_as_nesting(tmp_path):
    d = doc("gemm")
    d["entries"][0]["study"] = "[" * 1000 + "{" * 1000 + '"\\"['
    assert len(gemm.load_file(write(tmp_path, d))) == 1


def test_older_attention_schema_names_are_read_but_only_for_their_op(tmp_path):
    for op, legacy in (("attention", "wmma_gen/attention_schedules"),
                       ("attention_bwd", "wmma_gen/attention_bwd_schedules")):
        d = {**doc(op), "schema": legacy}
        del d["op"]                                  # the older files named the op by their schema
        assert len(MODULES[op].load_file(write(tmp_path, d, name=sf.file_name("gfx1100", op, "f16")))) == 1
    with pytest.raises(sf.ScheduleFileError, match="field 'schema'"):
        gemm.load_file(write(tmp_path, {**doc("gemm"), "schema": "wmma_gen/attention_schedules"}))


def test_attention_dtype_is_the_ops_own_list(tmp_path):
    path = write(tmp_path, doc("attention", dtype="i8"))
    with pytest.raises(sf.ScheduleFileError, match="field 'dtype' = 'i8' is not allowed: one of f16, bf16"):
        attn.load_file(path)


# ---- search path ------------------------------------------------------------------------------
@pytest.fixture
def dirs(tmp_path, monkeypatch):
    """Three places and their precedence: env (two dirs), user, shipped -- all under tmp_path."""
    env1, env2, shipped = tmp_path / "env1", tmp_path / "env2", tmp_path / "shipped"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(sf.ENV_DIRS, os.pathsep.join([str(env1), str(tmp_path / "missing"), str(env2)]))
    for mod in MODULES.values():
        monkeypatch.setattr(mod, "DEFAULT_DIR", shipped)
    return {"env1": env1, "env2": env2, "user": userdirs.schedules_dir(), "shipped": shipped}


def test_search_path_order(dirs, tmp_path):
    assert userdirs.schedules_dir() == tmp_path / "xdg" / "wmma_gen" / "schedules"
    got = [(str(d), origin) for d, origin in sf.search_dirs(dirs["shipped"])]
    assert got == [(str(dirs["env1"]), sf.ENV_DIRS), (str(tmp_path / "missing"), sf.ENV_DIRS),
                   (str(dirs["env2"]), sf.ENV_DIRS), (str(dirs["user"]), "user"), (str(dirs["shipped"]), "shipped")]


def test_env_beats_user_beats_shipped(dirs):
    d, p = GemmDirective("f16"), GemmProblem(128, 128, 64)
    paths = {}
    for where, s in (("shipped", SMALL), ("user", MID), ("env2", BIG)):
        paths[where] = write(dirs[where], doc("gemm", s))
    assert gemm.lookup("gfx1100", d, p) == BIG
    paths["env2"].unlink()
    assert gemm.lookup("gfx1100", d, p) == MID
    paths["user"].unlink()
    assert gemm.lookup("gfx1100", d, p) == SMALL
    paths["shipped"].unlink()
    assert gemm.lookup("gfx1100", d, p) is None


def test_a_refused_file_falls_through_to_the_next(dirs):
    write(dirs["shipped"], doc("gemm", SMALL))
    bad = doc("gemm", MID)
    bad["entries"][0]["tflops"] = float("nan")
    path = write(dirs["user"], bad)
    with pytest.warns(gemm.ScheduleFileWarning, match=f"{path}: field 'entries\\[0\\]\\.tflops' = nan"):
        assert gemm.lookup("gfx1100", GemmDirective("f16"), GemmProblem(64, 64, 64)) == SMALL


def test_a_call_the_first_file_has_no_entry_for_uses_the_next(dirs):
    """User file tuned for head_dim 128 only: a head_dim 64 call uses the shipped entry."""
    write(dirs["shipped"], doc("attention", ATTN))
    user = doc("attention", {**ATTN, "block_n": 32})
    user["entries"][0]["head_dim"] = 128
    write(dirs["user"], user)
    assert attn.lookup("gfx1100", AttentionDirective("f16", 64), 1024).block_n == 64
    assert attn.lookup("gfx1100", AttentionDirective("f16", 128), 1024).block_n == 32


def test_shipped_files_are_the_repositorys_schedules_folder():
    """The package's shipped dir is the top-level schedules/ (a link in the checkout, copied
    into wheels: tests/unit/test_schedule_packaging.py)."""
    repo = sf.SHIPPED_DIR.parents[1] / "schedules"
    assert sf.SHIPPED_DIR.is_dir() and gemm.DEFAULT_DIR == sf.SHIPPED_DIR
    assert sorted(p.name for p in sf.SHIPPED_DIR.glob("*.json")) == sorted(p.name for p in repo.glob("*.json"))
    for p in sf.SHIPPED_DIR.glob("*.json"):
        from wmma_gen.ops.paged_attention import lookup as paged
        assert len({**MODULES, "paged_attention": paged}[sf.name_parts(p)[1]].load_file(p)) >= 1, p


def test_the_nearest_bucket_across_all_files_wins_precedence_breaks_ties(dirs, monkeypatch, capsys):
    """Issue 37: a user file with a 2048 entry no longer shadows a shipped 4096 entry for a 4096
    call; an equally near bucket in a higher-precedence file wins; the log says why a file lost."""
    d = GemmDirective("f16")
    shipped = doc("gemm", BIG)
    shipped["entries"][0]["bucket"] = {"m": 4096, "n": 4096, "k": 4096}
    user = doc("gemm", MID)
    user["entries"][0]["bucket"] = {"m": 2048, "n": 2048, "k": 2048}
    sp, up = write(dirs["shipped"], shipped), write(dirs["user"], user)
    monkeypatch.setenv("WMMA_GEN_LOG", "schedules")
    sf.forget_logged()
    assert gemm.lookup("gfx1100", d, GemmProblem(4096, 4096, 4096)) == BIG
    assert gemm.lookup("gfx1100", d, GemmProblem(2048, 2048, 2048)) == MID
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith(f"-> {sp} (shipped) bucket m=4096 n=4096 k=4096 acc=f32 layout=NN")
    assert err[1].endswith(f"-- not {up} (user): its best bucket m=2048 n=2048 k=2048 acc=f32 layout=NN matches "
                           "the call less well")
    assert err[2].endswith(f"-> {up} (user) bucket m=2048 n=2048 k=2048 acc=f32 layout=NN")
    user["entries"].append({**user["entries"][0], "bucket": {"m": 4096, "n": 4096, "k": 4096},
                            "schedule": SMALL.to_dict()})
    write(dirs["user"], user)
    sf.forget_logged()
    assert gemm.lookup("gfx1100", d, GemmProblem(4096, 4096, 4096)) == SMALL    # a tie: the user file first
    err = capsys.readouterr().err.splitlines()
    assert err[1].endswith(f"-- not {sp} (shipped): its bucket m=4096 n=4096 k=4096 acc=f32 layout=NN matches as "
                           "well; the winner's file comes first in the search path")


# ---- WMMA_GEN_LOG=schedules -------------------------------------------------------------------
def test_log_prints_one_line_per_new_key(dirs, monkeypatch, capsys):
    path = write(dirs["user"], doc("gemm", SMALL))
    sf.forget_logged()
    gemm.lookup("gfx1100", GemmDirective("f16"), GemmProblem(64, 64, 64))
    assert capsys.readouterr().err == ""                       # off unless asked for
    monkeypatch.setenv("WMMA_GEN_LOG", "other,schedules")
    sf.forget_logged()
    for _ in range(3):
        gemm.lookup("gfx1100", GemmDirective("f16"), GemmProblem(64, 64, 64))
    gemm.lookup("gfx1100", GemmDirective("f16"), GemmProblem(96, 64, 64))
    gemm.lookup("gfx1100", GemmDirective("bf16"), GemmProblem(64, 64, 64))
    gemm.lookup("gfx1100", GemmDirective("bf16"), GemmProblem(64, 64, 64))
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"wmma_gen schedules: gemm gfx1100 f16 m=64 n=64 k=64 acc=f32 layout=NN -> {path} (user) "
        "bucket m=64 n=64 k=64 acc=f32 layout=NN",
        f"wmma_gen schedules: gemm gfx1100 f16 m=96 n=64 k=64 acc=f32 layout=NN -> {path} (user) "
        "bucket m=64 n=64 k=64 acc=f32 layout=NN",
        lines[2]]
    assert lines[2].startswith("wmma_gen schedules: gemm gfx1100 bf16 m=64 n=64 k=64 acc=f32 layout=NN -> default (no "
                               "gfx1100-gemm-bf16.json in ")


def test_log_names_attention_keys_and_defaults(dirs, monkeypatch, capsys):
    monkeypatch.setenv("WMMA_GEN_LOG", "schedules")
    sf.forget_logged()
    path = write(dirs["shipped"], doc("attention_bwd"))
    bwd.lookup("gfx1100", "f16", 64, True, 2000)
    bwd.lookup("gfx1100", "f16", 64, True, 2000)
    bwd.lookup("gfx1100", "f16", 64, False, 2000)
    assert capsys.readouterr().err.splitlines() == [
        f"wmma_gen schedules: attention_bwd gfx1100 f16 head_dim=64 causal=True seq_k=2000 -> {path} (shipped) "
        "bucket head_dim=64 causal=True seq=1024",
        "wmma_gen schedules: attention_bwd gfx1100 f16 head_dim=64 causal=False seq_k=2000 -> default "
        "(no entry for this call in 1 file(s))"]
