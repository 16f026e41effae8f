"""The first call in a process (issue 36 item 5): importing the compiler does not import torch
(flydsl's package __init__ runs only when something uses it), and a GEMM served by the compile
index gets its Signature without an MLIR build -- the same Signature the builder declares."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

import pytest

from wmma_gen.compiler import mlir_api

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(mlir_api.NAME != "flydsl", reason="the bare-parent import concerns the flydsl provider")
def test_the_compiler_imports_without_torch_and_flydsl_still_imports_whole():
    code = ("import sys; import wmma_gen.compiler; print('torch' in sys.modules); "
            "import flydsl; print(callable(flydsl.autotune), flydsl.__version__ != '')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "True"]


def test_an_index_served_gemm_has_its_signature_without_building_mlir(tmp_path, monkeypatch):
    from wmma_gen.ops import compile_op
    from wmma_gen.ops.gemm import kernel as gemm_kernel
    from wmma_gen.ops.gemm.api import default_schedule
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.problem import GemmProblem
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(compile_op, "_LRU", OrderedDict())
    d, p = GemmDirective("f16", layout="NT"), GemmProblem(40, 24, 32)
    s = default_schedule(d, "gfx1100", p)
    built = compile_gemm(d, s, "gfx1100", p).signature                # builds MLIR (a cold cache)
    compile_op._LRU.clear()
    builds = []
    original = gemm_kernel.build_gemm
    monkeypatch.setattr(gemm_kernel, "build_gemm", lambda *a, **k: builds.append(a) or original(*a, **k))
    kern = compile_gemm(d, s, "gfx1100", p)                            # served by the index
    sig = kern.signature
    assert not builds and "sources" not in kern.kernels._memo
    assert sig.kernel == built.kernel == kern.compiled.name
    assert [(a.name, a.role, a.dtype) for a in sig.args] == [(a.name, a.role, a.dtype) for a in built.args]
    sizes = p.as_dict()
    assert sig.grid(sizes) == built.grid(sizes) and sig.block == built.block
    assert sig.shapes(sizes) == built.shapes(sizes)


class _Sizes(dict):
    """Any size a shape, grid or value function asks for (7 unless given): the two signatures
    are compared as functions, whatever problem keys an op reads."""

    def __missing__(self, key):
        return 7


def _described(sig, sizes) -> tuple:
    args = tuple((a.name, a.role, a.dtype, a.strides, a.init, a.offset_bits,
                  tuple(a.shape(sizes)) if a.shape else None, a.value(sizes) if a.value else None) for a in sig.args)
    return sig.kernel, args, sig.grid(sizes), sig.block


@pytest.mark.parametrize("op", ["gemm", "attention", "attention_bwd", "paged_attention"])
def test_each_ops_signatures_hook_declares_what_its_builder_declares(op):
    """OpSpec.signatures (a cached launch's Signatures, no MLIR) against the builder's own, for
    the op's selftest directives (split-KV attention included: its combine kernel)."""
    from wmma_gen.ops import registry
    from wmma_gen.targets import get_target
    spec, t = registry.get(op), get_target("gfx1100")
    rows = list(spec.selftest("gfx1100"))
    cases = [(d, spec.default_schedule(d, "gfx1100", p), p) for d, p in rows[:2]]
    if op == "attention":
        from wmma_gen.ops.attention.defaults import default_schedule
        d = rows[0][0]
        cases.append((d, default_schedule(t, d, split_kv=2), rows[0][1]))
    sizes = _Sizes(scale=0.5, softcap=3.0)
    for d, s, p in cases:
        key = spec.key_of(d, s, p)
        built = {n: src.signature for n, src in dict(spec.build(d, s, t, key)).items()}
        hooked = spec.signatures(d, s, t, key, {n: sig.kernel for n, sig in built.items()})
        assert list(hooked) == list(built)
        for n in built:
            assert _described(hooked[n], sizes) == _described(built[n], sizes), (op, n, d, s)


# What a cached kernel's first launch must not load (issue 36 item 5): the MLIR provider and its
# package, the compile stages, the decoder's listing, the op builders, the sweep's libraries.
NOT_ON_A_CACHED_LAUNCH = ("wmma_gen.compiler.mlir_api", "flydsl", "flydsl._mlir", "mlir", "wmma_gen.compiler.compile",
                          "wmma_gen.compiler.pipeline", "wmma_gen.codeobj.listing", "wmma_gen.ops.gemm.kernel",
                          "wmma_gen.ops.attention.kernel", "pandas", "optuna", "torch")


def test_a_cached_kernels_first_launch_in_a_fresh_process_imports_no_mlir():
    """A GEMM and an attention forward compiled (or found) by one process in the session's
    cache; a fresh process then launches both on the emulator from the disk index: no MLIR
    built, none of NOT_ON_A_CACHED_LAUNCH imported, and no source file read to key the index
    (the source digests are remembered under the files' stats: compiler/disk_memo.py)."""
    code = ("import sys, json, numpy as np, wmma_gen; from wmma_gen.ops import compile_op\n"
            "from wmma_gen.compiler import disk_memo\n"
            "a = np.ones((20, 16), np.float16); q = np.ones((1, 8, 1, 64), np.float16)\n"
            "assert abs(float(wmma_gen.gemm(a, a.T.copy(), layout='NN')[0, 0]) - 16) < 1e-3\n"
            "assert np.isfinite(wmma_gen.attention(q, q, q)[0].astype(np.float32)).all()\n"
            f"print(json.dumps([compile_op.STATS['built'], disk_memo.FILES_HASHED[0], "
            f"[m for m in {NOT_ON_A_CACHED_LAUNCH!r} if m in sys.modules]]))")
    env = {**__import__("os").environ, "WMMA_GEN_ARCH": "gfx1100"}     # the session's cache dir (conftest)
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    built, hashed, loaded = json.loads(runs[1].stdout.strip().splitlines()[-1])   # the second: index hits
    assert (built, hashed, loaded) == (0, 0, [])


def test_a_first_build_imports_no_generated_llvm_rocdl_gpu_op_modules(tmp_path):
    """lean_ops.py builds the LLVM/ROCDL/GPU ops; the bindings' automatic import of those dialect
    modules meets placeholders, which become the real modules on first use by anyone else."""
    pkg = mlir_api._PACKAGE[mlir_api.NAME]
    code = f"""
import sys, json
from wmma_gen.ops.gemm.defaults import fitted_default
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.kernel import build_gemm
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.signature import spec_key
from wmma_gen.targets import get_target
d, p, t = GemmDirective("f16", layout="NT"), GemmProblem(40, 24, 32), get_target("gfx1100")
s = fitted_default(d, t, p)
text = build_gemm(d, s, t, spec_key(d, s, p.as_dict())).mlir
gen = sorted(m for m in sys.modules if m.endswith(("_llvm_ops_gen", "_rocdl_ops_gen", "_gpu_ops_gen")))
from {pkg}.dialects import rocdl
whole = hasattr(rocdl, "PermlaneX16Op") and "{pkg}.dialects._rocdl_ops_gen" in sys.modules
print(json.dumps([gen, all(op in text for op in ("gpu.func", "gpu.block_id", "llvm.getelementptr", "llvm.load")), whole]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**__import__("os").environ, "WMMA_GEN_CACHE_DIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [[], True, True]


@pytest.mark.parametrize("op", ["gemm", "attention", "attention_bwd", "mla", "paged_attention"])
def test_a_first_compile_in_a_fresh_interpreter_imports_no_numpy(op, tmp_path):
    """What the bench's "first compile's imports" row times (bench/first_call.py): the op's spec,
    its default schedule, key, MLIR build and compile to a code object, cold cache -- with no
    numpy (it was ~80 ms CPU of a bare interpreter's first compile: the bindings' ir module,
    numerics' dtype table, the signature's dtypes, the spec's host-side fields)."""
    code = f"""
import sys, json
from wmma_gen.ops import registry
from wmma_gen.ops.compile_op import compile_op
spec = registry.get({op!r})
d, p = spec.selftest("gfx1100")[0]
s = spec.default_schedule(d, "gfx1100", p)
cs = compile_op(spec, d, s, spec.key_of(d, s, p), "gfx1100")
built = sys.modules["wmma_gen.ops.compile_op"].STATS["built"]
print(json.dumps([sorted(m for m in sys.modules if m.split(".")[0] == "numpy"), built,
                  all(len(k.hsaco) > 0 for _, k in cs.compiled)]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**__import__("os").environ, "WMMA_GEN_CACHE_DIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [[], 1, True]     # built here, no numpy


def test_the_bindings_elements_attr_builders_work_after_importing_ir_without_numpy():
    """compiler/ir_without_numpy.py: the four ElementsAttr builders upstream registers only when
    numpy imports are registered lazily, and build what upstream's build (numpy imported then)."""
    pkg = mlir_api._PACKAGE[mlir_api.NAME]
    code = f"""
import sys, json
from wmma_gen.compiler.mlir_api import ir
before = "numpy" in sys.modules
from {pkg}.ir import AttrBuilder
with ir.Context() as ctx:
    built = [str(AttrBuilder.get(k)([3, 1, 2], ctx))
             for k in ("F64ElementsAttr", "I32ElementsAttr", "I64ElementsAttr", "IndexElementsAttr")]
print(json.dumps([before, built]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, [
        "dense<[3.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<3xf64>", "dense<[3, 1, 2]> : tensor<3xi32>",
        "dense<[3, 1, 2]> : tensor<3xi64>", "dense<[3, 1, 2]> : tensor<3xindex>"]]
