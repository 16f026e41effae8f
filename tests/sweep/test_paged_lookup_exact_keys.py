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
