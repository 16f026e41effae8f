"""The content-addressed cache: hits, corruption detection, atomic entries."""
import json

from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.compiler import KernelCache
from wmma_gen.directive import GemmDirective
from wmma_gen.schedule import Schedule

D = GemmDirective("f16", 32, 32, 32)
S = Schedule(block_m=32, block_n=32, block_k=16, waves_m=1, waves_n=1)


def test_second_compile_hits_cache(tmp_path):
    cache = KernelCache(tmp_path)
    first = compile_gemm(D, S, "gfx1100", cache=cache).compiled
    second = compile_gemm(D, S, "gfx1100", cache=cache).compiled
    assert first.cache == "miss" and second.cache == "hit"
    assert second.hsaco == first.hsaco and second.isa == first.isa
    assert second.metadata == first.metadata and second.key == first.key


def test_different_arch_is_a_different_entry(tmp_path):
    cache = KernelCache(tmp_path)
    a = compile_gemm(D, S, "gfx1100", cache=cache).compiled
    b = compile_gemm(D, S, "gfx1151", cache=cache).compiled
    assert a.key != b.key and b.cache == "miss"


def test_corrupt_entry_is_rebuilt_not_loaded(tmp_path):
    cache = KernelCache(tmp_path)
    good = compile_gemm(D, S, "gfx1100", cache=cache).compiled
    path = cache.path(good.key)
    entry = json.loads(path.read_text())
    entry["payload"]["isa"] = entry["payload"]["isa"].replace("v_wmma", "v_nope", 1)  # bit rot
    path.write_text(json.dumps(entry))
    again = compile_gemm(D, S, "gfx1100", cache=cache).compiled
    assert again.cache == "rebuilt"
    assert again.isa == good.isa
    assert compile_gemm(D, S, "gfx1100", cache=cache).compiled.cache == "hit"


def test_truncated_entry_is_rebuilt(tmp_path):
    cache = KernelCache(tmp_path)
    good = compile_gemm(D, S, "gfx1100", cache=cache).compiled
    path = cache.path(good.key)
    path.write_bytes(path.read_bytes()[:100])
    assert compile_gemm(D, S, "gfx1100", cache=cache).compiled.cache == "rebuilt"


def test_no_temp_files_left(tmp_path):
    cache = KernelCache(tmp_path)
    compile_gemm(D, S, "gfx1100", cache=cache)
    leftovers = [p for p in tmp_path.rglob("*") if p.name.startswith(".tmp")]
    assert leftovers == []


def test_hsaco_is_linked_on_first_use_and_then_cached(tmp_path):
    cache = KernelCache(tmp_path)
    k = compile_gemm(D, S, "gfx1100", cache=cache).compiled
    assert k.hsaco_bytes is None                      # ISA-only until someone needs the code object
    obj = k.hsaco                                     # links now; checks note == ISA metadata
    assert obj[:4] == b"\x7fELF" and k.hsaco_bytes is obj
    again = compile_gemm(D, S, "gfx1100", cache=cache).compiled
    assert again.cache == "hit" and again.hsaco_bytes == obj   # stored back into the entry


def test_eager_hsaco(tmp_path):
    k = compile_gemm(D, S, "gfx1100", cache=False, eager_hsaco=True).compiled
    assert k.hsaco_bytes is not None and k.hsaco_bytes[:4] == b"\x7fELF"
