"""Paged decode attention swept, exported and looked up (ops/paged_attention/{tuning,lookup}.py):
`wmma-gen sweep --op paged_attention --trials 2` on two batch buckets of one tiny
specialization, decode (Sq 1, L 256) and one chunked-prefill step (--chunks 4 against
--prefixes 32: Sq 4, L 36) (gate on the emulator, model figures), `wmma-gen export`, then
wmma_gen.paged_attention() runs the exported schedule of the nearest bucket and says so under
WMMA_GEN_LOG=schedules; a chunk call (and a packed varlen one) picks the chunk's entry."""
import json

import numpy as np
import pytest

import wmma_gen
from wmma_gen import schedule_files as sf
from wmma_gen.cli.main import main
from wmma_gen.ops.paged_attention import api, lookup
from wmma_gen.ops.paged_attention.check import random_paged
from wmma_gen.ops.paged_attention.defaults import default_schedule
from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective
from wmma_gen.ops.paged_attention.schedule import PagedSchedule

ARCH = "gfx1100"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("paged_sweep")
    # one cache kind, two batch buckets (the op's --kv-dtypes / --batches sweep axes), decode and one
    # chunked-prefill step (--chunks / --prefixes): 4 studies x 2 trials
    rc = main(["sweep", "--arch", ARCH, "--op", "paged_attention", "--trials", "2", "--device", "emu",
               "--dtypes", "f16", "--head-dims", "64", "--seqs", "256", "--causal", "on", "--kv-dtypes", "same",
               "--batches", "1,16", "--chunks", "4", "--prefixes", "32", "--results", str(root / "results"),
               "--no-progress"])
    assert rc == 0
    rc = main(["export", "--arch", ARCH, "--from", str(root / "results"), "--out", str(root / "schedules")])
    assert rc == 0
    return root / "schedules"


def test_export_has_one_validated_entry_per_bucket(exported):
    doc = json.loads((exported / f"{ARCH}-paged_attention-f16.json").read_text())
    assert doc["op"] == "paged_attention" and doc["arch"] == ARCH
    buckets = sorted((e["bucket"]["seq"], e["bucket"]["batch"], e["bucket"]["seq_q"]) for e in doc["entries"])
    assert buckets == [(36, 1, 4), (36, 16, 4), (256, 1, 1), (256, 16, 1)]
    for e in doc["entries"]:
        assert e["validated"] and e["source"] == "model" and e["tflops"] > 0
        assert (e["head_dim"], e["kv_dtype"], e["block_size"], e["group"], e["causal"]) == (64, "f16", 16, 4, True)
    assert len(lookup.load_file(exported / f"{ARCH}-paged_attention-f16.json")) == 4   # reads back validated


def test_paged_attention_runs_the_exported_schedule(exported, monkeypatch, capfd):
    entries = lookup.load_file(exported / f"{ARCH}-paged_attention-f16.json")
    want = {e["batch"]: e["schedule"] for e in entries if e["seq_q"] == 1}
    monkeypatch.setenv(sf.ENV_DIRS, str(exported))
    monkeypatch.setenv("WMMA_GEN_LOG", "schedules")
    sf.forget_logged()
    used = []
    real = api.compile_paged
    monkeypatch.setattr(api, "compile_paged", lambda d, s, arch: used.append(s) or real(d, s, arch))
    problem = dict(batch=2, heads=4, kv_heads=1, seq_q=1, head_dim=64, seq_lens=[70, 1])
    q, ((k, _), (v, _)), table, lens = random_paged(problem, "f16", seed=1)
    table = np.pad(table, ((0, 0), (0, 16 - table.shape[1])))        # the table holds 256 keys: bucket seq 256
    wmma_gen.paged_attention(q, k, v, table, lens, dtype="f16", arch=ARCH, device="emu")
    assert used == [want[1]]                                         # batch 2 is nearer 1 than 16 (log2)
    err = capfd.readouterr().err
    assert "paged_attention gfx1100 f16" in err and str(exported) in err and "batch=1 seq_q=1" in err
    d = PagedAttentionDirective("f16", 64)
    big = dict(batch=12, heads=32, kv_heads=8, seq_q=1, max_blocks=16)
    assert lookup.choose_schedule(d, big, ARCH) == want[16]


def test_a_prefill_chunk_picks_the_chunk_entry(exported, monkeypatch, tmp_path):
    """Sq ranks before the context length: a 4-token chunk against 256 cached keys takes the
    chunk study's entry (L 36), a decode step the decode entry; a packed varlen call of the same
    key falls back to the chunk's dense-form entry, checked against its own directive. The
    exported file alone (no shipped files): across files the best-matching bucket wins, and the
    shipped chunk buckets (Sq up to 16) are nearer to the packed call's Sq 200."""
    entries = lookup.load_file(exported / f"{ARCH}-paged_attention-f16.json")
    by = {(e["seq_q"], e["batch"]): e["schedule"] for e in entries}
    monkeypatch.setenv(sf.ENV_DIRS, str(exported))
    monkeypatch.setattr(lookup, "DEFAULT_DIR", tmp_path)       # the paged lookup's shipped dir
    d = PagedAttentionDirective("f16", 64)
    chunk = dict(batch=1, heads=32, kv_heads=8, seq_q=4, max_blocks=16)
    assert lookup.lookup(ARCH, d, chunk) == by[(4, 1)]
    assert lookup.lookup(ARCH, d, {**chunk, "seq_q": 1}) == by[(1, 1)]
    packed = PagedAttentionDirective("f16", 64, varlen=True)
    assert lookup.lookup(ARCH, packed, {**chunk, "seq_q": 200}) == by[(4, 1)]


def test_without_a_matching_entry_the_default_runs(exported, monkeypatch):
    monkeypatch.setenv(sf.ENV_DIRS, str(exported))
    d = PagedAttentionDirective("f16", 64, kv_dtype="fp8e4m3")     # no fp8 study was swept
    p = dict(batch=1, heads=32, kv_heads=8, seq_q=1, max_blocks=16)
    assert lookup.lookup(ARCH, d, p) is None
    assert lookup.choose_schedule(d, p, ARCH) == default_schedule(d, ARCH, 4, 256, batch=1, kv_heads=8)


def test_a_bad_entry_is_refused_naming_the_field(tmp_path):
    doc = {"schema": sf.SCHEMA, "schema_version": sf.SCHEMA_VERSION, "arch": ARCH, "op": "paged_attention",
           "dtype": "f16", "entries": [{"head_dim": 64, "kv_dtype": "f16", "block_size": 16, "group": 4,
                                        "causal": True, "bucket": {"seq": 256, "batch": 1, "seq_q": 1},
                                        "schedule": PagedSchedule(block_n=32).to_dict(), "tflops": 1.0,
                                        "unit": "TFLOP/s", "source": "model", "validated": True}]}
    with pytest.raises(sf.ScheduleFileError, match=r"entries\[0\]\.schedule.*block_n=32 must divide block_size=16"):
        lookup.parse(doc, tmp_path / f"{ARCH}-paged_attention-f16.json")
    doc["entries"][0]["bucket"] = {"seq": 256}
    with pytest.raises(sf.ScheduleFileError, match=r"entries\[0\]\.bucket"):
        lookup.parse(doc, tmp_path / f"{ARCH}-paged_attention-f16.json")


def test_softcap_and_chunk_axes_cross_the_studies():
    """--softcap off,on doubles the studies (names gain -softcap); --chunks x --prefixes adds
    (Sq, prefix + Sq) steps after the decode ones; a chunk over 16 tokens is refused naming it."""
    from wmma_gen.cli.main import parser
    from wmma_gen.cli.sweep_cmd import config_from
    from wmma_gen.ops.registry import tuning
    args = parser("sweep").parse_args(["sweep", "--op", "paged_attention", "--arch", ARCH, "--dtypes", "f16",
                                       "--head-dims", "64", "--seqs", "256", "--causal", "on", "--kv-dtypes", "same",
                                       "--batches", "1", "--softcap", "off,on", "--chunks", "4,16",
                                       "--prefixes", "32"])
    cfg = config_from(args, "paged_attention")
    t = tuning("paged_attention")
    got = [(d.softcap, p["seq_q"], p["seq_len"]) for d, p in t.items(cfg)]
    assert got == [(cap, sq, L) for cap in (False, True) for sq, L in ((1, 256), (4, 36), (16, 48))]
    names = {t.study_name(cfg, d, p) for d, p in t.items(cfg)}
    assert len(names) == 6 and sum(n.endswith("-b1") and "-softcap-" in n for n in names) == 3
    with pytest.raises(SystemExit):
        parser("sweep").parse_args(["sweep", "--arch", ARCH, "--op", "paged_attention", "--chunks", "17"])
