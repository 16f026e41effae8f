"""The paged lookup takes an entry only when what changes the kernel matches exactly: another GQA
group or fp8 Q bytes (q_dtype) get no entry (the default runs); block size / sizes only rank."""
import json

import pytest

from wmma_gen.ops.paged_attention import lookup
from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective

ARCH = "gfx1201"


def _file(tmp_path, group):
    doc = {"schema": lookup.SCHEMA, "schema_version": lookup.SCHEMA_VERSION, "op": "paged_attention", "arch": ARCH,
           "dtype": "f16", "entries": [{"head_dim": 64, "kv_dtype": "fp8e4m3", "block_size": 16, "group": group,
                                        "causal": True, "window": False, "softcap": False, "fp8_wmma": True,
                                        "bucket": {"seq": 1024, "batch": 1, "seq_q": 1},
                                        "schedule": {"block_n": 16, "load_bits": 128, "split_kv": 2, "waves": 1,
                                                     "frags_q": 1, "q_in": "regs", "prefetch": False},
                                        "tflops": 1.0, "unit": "TFLOP/s", "source": "model", "validated": True}]}
    (tmp_path / lookup.file_name(ARCH, "f16")).write_text(json.dumps(doc))
    return tmp_path


P = dict(heads=8, kv_heads=2, seq_q=1, batch=1, max_blocks=64)   # group 4


@pytest.mark.parametrize("group, q_dtype, found", [(4, "", True), (2, "", False), (4, "fp8e4m3", False)])
def test_group_and_q_dtype_are_exact(tmp_path, group, q_dtype, found):
    d = PagedAttentionDirective("f16", 64, 16, "fp8e4m3", True, fp8_wmma=True, q_dtype=q_dtype)
    got = lookup.lookup(ARCH, d, P, directory=_file(tmp_path, group))
    assert (got is not None) == found


def _entry(**kw):
    e = {"head_dim": 64, "kv_dtype": "fp8e4m3", "block_size": 16, "group": 4, "causal": True, "window": False,
         "softcap": False, "fp8_wmma": True, "bucket": {"seq": 1024, "batch": 1, "seq_q": 1},
         "schedule": {"block_n": 16, "load_bits": 128, "split_kv": 2, "waves": 1, "frags_q": 1, "q_in": "regs",
                      "prefetch": False}, "tflops": 1.0, "unit": "TFLOP/s", "source": "model", "validated": True}
    return {**e, **kw}


def _doc(*entries):
    return {"schema": lookup.SCHEMA, "schema_version": lookup.SCHEMA_VERSION, "op": "paged_attention", "arch": ARCH,
            "dtype": "f16", "entries": list(entries)}


@pytest.mark.parametrize("q_dtype, found", [("fp8e4m3", True), ("fp8e5m2", False), ("", False)])
def test_an_fp8_q_entry_serves_only_its_q_format(tmp_path, q_dtype, found):
    (tmp_path / lookup.file_name(ARCH, "f16")).write_text(json.dumps(_doc(_entry(q_dtype="fp8e4m3"))))
    d = PagedAttentionDirective("f16", 64, 16, "fp8e4m3", True, fp8_wmma=True, q_dtype=q_dtype)
    assert (lookup.lookup(ARCH, d, P, directory=tmp_path) is not None) == found


def test_q_dtype_read_back_and_its_default(tmp_path):
    old, new = lookup.parse(_doc(_entry(), _entry(q_dtype="fp8e5m2")), tmp_path / lookup.file_name(ARCH, "f16"))
    assert (old["q_dtype"], new["q_dtype"]) == ("f16", "fp8e5m2")    # absent: the file's dtype


@pytest.mark.parametrize("kw, allowed", [({"q_dtype": "bf16"}, "the file's dtype"),
                                         ({"q_dtype": "fp8e4m3", "fp8_wmma": False}, "with fp8_wmma true")])
def test_a_bad_q_dtype_is_refused_naming_it(tmp_path, kw, allowed):
    with pytest.raises(lookup.ScheduleFileError, match=rf"entries\[0\]\.q_dtype.*{allowed}"):
        lookup.parse(_doc(_entry(**kw)), tmp_path / lookup.file_name(ARCH, "f16"))


def _ladder_row(**kw):
    from autotune.ladder import columns
    from wmma_gen.ops.paged_attention.schedule import PagedSchedule
    row = dict.fromkeys(columns("paged_attention"), "")
    row.update({"arch": ARCH, "op": "paged_attention", "dtype": "f16", "kv_dtype": "fp8e4m3", "head_dim": 64,
                "block_size": 16, "causal": True, "window": False, "softcap": False, "batch": 1, "heads": 8,
                "kv_heads": 2, "seq_q": 1, "seq_len": 1024, "fp8_wmma": True, "q_dtype": "", "study": "s",
                "trial": 0, "rank": 1, **PagedSchedule().to_dict(), "tflops": 1.5, "unit": "TFLOP/s",
                "source": "model", "validated": True, "vgprs": 100, "lds_bytes": 4096, "isa_hash": "h",
                "toolchain_mlir": "m", "toolchain_lld": "l"})
    return {**row, **kw}


def test_export_writes_q_dtype_and_fp8_wmma_that_read_back():
    """An fp8-Q study's rank-1 row and a 16-bit-Q one (q_dtype "" in the ladder) export with their
    q_dtype and fp8_wmma, and the document reads back through the lookup's validators."""
    import pandas as pd
    from wmma_gen.ops.paged_attention.tuning import documents
    df = pd.DataFrame([_ladder_row(), _ladder_row(q_dtype="fp8e4m3", study="t")])
    doc = documents(df, ARCH)[lookup.file_name(ARCH, "f16")]
    assert sorted((e["q_dtype"], e["fp8_wmma"]) for e in doc["entries"]) == [("f16", True), ("fp8e4m3", True)]
    assert sorted(e["q_dtype"] for e in lookup.parse(doc)) == ["f16", "fp8e4m3"]


def test_a_ladder_from_before_the_columns_exports_the_dtype_and_no_fp8_wmma():
    import pandas as pd
    from wmma_gen.ops.paged_attention.tuning import documents
    df = pd.DataFrame([_ladder_row(fp8_wmma=False)]).drop(columns=["q_dtype", "fp8_wmma"])
    (e,) = documents(df, ARCH)[lookup.file_name(ARCH, "f16")]["entries"]
    assert (e["q_dtype"], e["fp8_wmma"]) == ("f16", False)
