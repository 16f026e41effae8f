"""The content-addressed cache: hits, corruption detection, atomic entries."""
import json

from wmma_gen.compiler import KernelCache
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule

D, P = GemmDirective("f16"), GemmProblem(32, 32, 32)
S = Schedule(block_m=32, block_n=32, block_k=16, waves_m=1, waves_n=1)


def test_second_compile_hits_cache(tmp_path):
    cache = KernelCache(tmp_path)
    first = compile_gemm(D, S, "gfx1100", P, cache=cache).compiled
    second = compile_gemm(D, S, "gfx1100", P, cache=cache).compiled
    assert first.cache == "miss" and second.cache == "hit"
    assert second.hsaco == first.hsaco and second.isa == first.isa
    assert second.metadata == first.metadata and second.key == first.key


def test_different_arch_is_a_different_entry(tmp_path):
    cache = KernelCache(tmp_path)
    a = compile_gemm(D, S, "gfx1100", P, cache=cache).compiled
    b = compile_gemm(D, S, "gfx1151", P, cache=cache).compiled
    assert a.key != b.key and b.cache == "miss"


def test_corrupt_entry_is_rebuilt_not_loaded(tmp_path):
    cache = KernelCache(tmp_path)
    good = compile_gemm(D, S, "gfx1100", P, cache=cache).compiled
    path = cache.path(good.key)
    entry = json.loads(path.read_text())
    entry["payload"]["name"] = entry["payload"]["name"] + "_rot"   # bit rot: the digest no longer matches
    path.write_text(json.dumps(entry))
    again = compile_gemm(D, S, "gfx1100", P, cache=cache).compiled
    assert again.cache == "rebuilt"
    assert again.isa == good.isa
    assert compile_gemm(D, S, "gfx1100", P, cache=cache).compiled.cache == "hit"


def test_truncated_entry_is_rebuilt(tmp_path):
    cache = KernelCache(tmp_path)
    good = compile_gemm(D, S, "gfx1100", P, cache=cache).compiled
    path = cache.path(good.key)
    path.write_bytes(path.read_bytes()[:100])
    assert compile_gemm(D, S, "gfx1100", P, cache=cache).compiled.cache == "rebuilt"


def test_no_temp_files_left(tmp_path):
    cache = KernelCache(tmp_path)
    compile_gemm(D, S, "gfx1100", P, cache=cache)
    leftovers = [p for p in tmp_path.rglob("*") if p.name.startswith(".tmp")]
    assert leftovers == []


def test_entry_holds_the_code_object_not_isa_text(tmp_path):
    """The hsaco is the cached artifact; a hit decodes the same listing from the same bytes."""
    cache = KernelCache(tmp_path)
    k = compile_gemm(D, S, "gfx1100", P, cache=cache).compiled
    payload = json.loads(cache.path(k.key).read_text())["payload"]
    assert sorted(payload) == ["hsaco", "metadata", "name"]
    again = compile_gemm(D, S, "gfx1100", P, cache=cache).compiled
    assert again.cache == "hit" and again.hsaco == k.hsaco and again.isa == k.isa


def test_older_entry_layout_is_a_miss_not_corrupt(tmp_path):
    cache = KernelCache(tmp_path)
    k = compile_gemm(D, S, "gfx1100", P, cache=cache).compiled
    path = cache.path(k.key)
    entry = json.loads(path.read_text())
    entry["version"] = 1                          # written by a wmma_gen that also stored ISA text
    path.write_text(json.dumps(entry))
    assert cache.load(k.key) == ("miss", None)
