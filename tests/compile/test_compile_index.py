"""The compile index verifies what it serves (issue 37 item 2): an entry pointing at another
valid object, an empty or renamed kernel list, or an entry answering another request is not
served -- the set is rebuilt (the right objects), the entry rewritten, one warning line."""
from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass

import pytest

from wmma_gen.ops import compile_op as co

KERNEL = """
module attributes {gpu.container_module} {
gpu.module @m [#rocdl.target<chip = "gfx1100">] {
  gpu.func @NAME(%A: memref<16xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %tid = gpu.thread_id x
    %c16 = arith.constant 16 : index
    %row = arith.remui %tid, %c16 : index
    %v = arith.constant VALUE : f32
    memref.store %v, %A[%row] : memref<16xf32>
    gpu.return
  }
}
}
"""


@dataclass(frozen=True)
class Src:
    mlir: str


@dataclass(frozen=True)
class Tiny:
    """A two-kernel op: what compile_op needs of a directive and schedule (to_json)."""
    value: float

    def to_json(self) -> str:
        return json.dumps({"value": self.value})


class Spec:
    name = "tiny_index_op"

    def __init__(self):
        self.builds = 0

    def build(self, d, s, target, key):
        self.builds += 1
        return {n: Src(KERNEL.replace("NAME", f"k_{n}").replace("VALUE", f"{d.value + i:.1f}"))
                for i, n in enumerate(("paged", "combine"))}


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(co, "_LRU", OrderedDict())
    spec = Spec()
    d, s = Tiny(1.0), Tiny(0.0)
    first = co.compile_op(spec, d, s, None, "gfx1100")
    co._LRU.clear()
    path = co._index_path(co.memory_key(spec, d, s, None, "gfx1100"), spec)
    assert path.is_file() and spec.builds == 1
    return spec, d, s, first, path


def _again(spec, d, s):
    co._LRU.clear()
    return co.compile_op(spec, d, s, None, "gfx1100")


def _symbols(cs) -> dict:
    return {n: ck.name for n, ck in cs.compiled}


def test_a_valid_entry_is_served_without_building(fresh):
    spec, d, s, first, path = fresh
    again = _again(spec, d, s)
    assert spec.builds == 1 and _symbols(again) == {"paged": "k_paged", "combine": "k_combine"}
    assert [ck.sha256 for _, ck in again.compiled] == [ck.sha256 for _, ck in first.compiled]


def _tamper(path, edit, redigest: bool = True):
    entry = json.loads(path.read_text())
    edit(entry)
    if redigest:
        entry["digest"] = co._entry_digest(entry)
    path.write_text(json.dumps(entry))


def test_an_entry_pointing_at_another_valid_object_is_rebuilt(fresh, capsys):
    spec, d, s, first, path = fresh
    other = dict((n, ck.key) for n, ck in first.compiled)["combine"]
    _tamper(path, lambda e: e["kernels"][0].__setitem__(1, other))        # "paged" -> combine's object
    again = _again(spec, d, s)
    assert spec.builds == 2 and _symbols(again)["paged"] == "k_paged"
    err = capsys.readouterr().err
    assert err.count("warning: compile index entry") == 1 and "not the one indexed" in err
    _again(spec, d, s)                                                     # the entry was rewritten
    assert spec.builds == 2


@pytest.mark.parametrize("edit, why", [
    (lambda e: e.__setitem__("kernels", []), "empty"),
    (lambda e: e["kernels"][0].__setitem__(0, "renamed"), "digest"),
])
def test_an_empty_or_renamed_kernel_list_is_rebuilt(fresh, capsys, edit, why):
    spec, d, s, first, path = fresh
    _tamper(path, edit, redigest=why == "empty")
    again = _again(spec, d, s)
    assert spec.builds == 2 and set(again.names) == {"paged", "combine"}
    assert again.kernel("paged").name == "k_paged"                         # no KeyError: 'paged'
    err = capsys.readouterr().err
    assert err.count("warning: compile index entry") == 1 and why in err


def test_an_entry_answering_another_request_is_rebuilt(fresh, capsys):
    spec, d, s, first, path = fresh
    _tamper(path, lambda e: e["request"].__setitem__(1, json.dumps({"value": 7.0})))
    again = _again(spec, d, s)
    assert spec.builds == 2 and _symbols(again)["paged"] == "k_paged"
    assert "another request" in capsys.readouterr().err
