"""Compile parity across the installed MLIR providers (issue 18; compiler/mlir_api.py).

Every op x arch family (and the main dtypes) is built and compiled to ISA once per installed
provider -- FlyDSL's embedded bindings and the upstream `mlir` package (mlir-gml) -- and the
providers must build the same MLIR text (apart from the #rocdl.target features each LLVM
version gets, kernels/module.FEATURES_BY_LLVM) and agree on v_wmma count (whole kernel and main
loop), spills and scratch (none) and LDS bytes; VGPRs must stay within the
budget of 256 and their difference is recorded, not asserted (two LLVM versions allocate
registers differently). Two MLIR native libraries cannot share a process, so each provider
compiles in its own interpreter: this file run as a script with WMMA_GEN_MLIR_PROVIDER set.

    python -m pytest -q tests/compile/test_providers.py
    python tests/compile/test_providers.py --table     # the table in docs/mlir_providers.md
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = {"flydsl": ("flydsl", "pip install flydsl"), "mlir": ("mlir", "pip install mlir-gml")}
# (op, dtype, arch): GEMM f16 on every arch family member the issue names, other dtypes once per
# family; attention forward (head dim 128, causal) and backward (prepass, dK/dV, dQ) per family.
CASES = ([("gemm", "f16", a) for a in ("gfx1100", "gfx1151", "gfx1201")]
         + [("gemm", "bf16", "gfx1100"), ("gemm", "i8", "gfx1100"), ("gemm", "bf16", "gfx1201"), ("gemm", "fp8", "gfx1201")]
         + [("attention", dt, a) for a in ("gfx1100", "gfx1201") for dt in ("f16", "bf16")]
         + [("attention_bwd", "f16", a) for a in ("gfx1100", "gfx1201")])
VGPR_BUDGET = 256


def _installed(name: str) -> bool:
    return importlib.util.find_spec(PROVIDERS[name][0]) is not None


# --- run inside one provider's process --------------------------------------------------------

def _sources(op: str, dtype: str, arch: str) -> dict[str, str]:
    """Kernel name -> MLIR text of the default schedule(s) for one case."""
    from wmma_gen.targets import get_target
    t = get_target(arch)
    if op == "gemm":
        from wmma_gen.ops.gemm.defaults import fitted_default
        from wmma_gen.ops.gemm.directive import GemmDirective
        from wmma_gen.ops.gemm.kernel import build_gemm
        from wmma_gen.ops.gemm.problem import GemmProblem
        from wmma_gen.ops.gemm.signature import spec_key
        d, p = GemmDirective(dtype, acc="i32" if dtype == "i8" else "f32"), GemmProblem(4096, 4096, 4096)
        s = fitted_default(d, t, p)
        return {"gemm": build_gemm(d, s, t, spec_key(d, s, p.as_dict())).mlir}
    if op == "attention":
        from wmma_gen.ops.attention.defaults import default_schedule
        from wmma_gen.attention_common.directive import AttentionDirective
        from wmma_gen.ops.attention.kernel import build_attention
        d = AttentionDirective(dtype, 128, causal=True, return_lse=True)
        s = default_schedule(t, d, llvm=0)    # one schedule for both: _LLVM_DEFAULTS differ by design
        return {"forward": build_attention(d, s, t).mlir}
    from wmma_gen.ops.attention_bwd import build_backward, default_schedule, make_spec
    ks = build_backward(make_spec(arch, dtype, 128, causal=True), default_schedule(arch, 128))
    return {name: src.mlir for name, src in ks.items()}


def _stats(op: str, dtype: str, arch: str) -> dict[str, dict]:
    import hashlib
    import re
    import time

    from wmma_gen.compiler import compile_mlir
    from wmma_gen.model.isa_loop import find_main_loop, kernel_lines
    out = {}
    for name, text in _sources(op, dtype, arch).items():
        t0 = time.perf_counter()
        k = compile_mlir(text, arch, cache=False)
        loop = find_main_loop(k.isa)
        m = k.metadata
        builder_text = re.sub(r', features = "[^"]*"', "", text)    # per-LLVM target features aside
        out[name] = {"mlir_sha256": hashlib.sha256(builder_text.encode()).hexdigest(),
                     "v_wmma": len(re.findall(r"^\s*v_wmma", k.isa, re.M)), "vgprs": m.vgpr_count,
                     "spills": m.spills, "scratch": m.scratch_bytes, "lds": m.lds_bytes,
                     "instructions": sum(1 for line in kernel_lines(k.isa) if line.split(";")[0].strip()
                                         and not line.strip().startswith(".") and not line.strip().endswith(":")),
                     "loop_instructions": len(loop.ops) if loop.found else 0,
                     "loop_v_wmma": loop.wmma if loop.found else 0, "seconds": round(time.perf_counter() - t0, 3)}
    return out


def _main_report() -> None:
    from wmma_gen.compiler import mlir_api
    p = mlir_api.provider()
    rows = {f"{op}/{dt}/{arch}": _stats(op, dt, arch) for op, dt, arch in CASES}
    print(json.dumps({"provider": p.name, "identity": p.identity, "cases": rows}))


# --- the pytest side -------------------------------------------------------------------------

_REPORTS: dict[str, dict] = {}


def _report(name: str) -> dict:
    """The JSON report of one provider's process (run once per test session)."""
    if name not in _REPORTS:
        env = dict(os.environ, WMMA_GEN_MLIR_PROVIDER=name,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        r = subprocess.run([sys.executable, __file__, "--report"], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=1800)
        if r.returncode != 0:
            raise AssertionError(f"provider {name}: the compile process failed\n{r.stderr[-4000:]}")
        _REPORTS[name] = json.loads(r.stdout.strip().splitlines()[-1])
    return _REPORTS[name]


def _require(name: str) -> dict:
    if not _installed(name):
        pytest.skip(f"MLIR provider '{name}' not installed ({PROVIDERS[name][1]} to compare it)")
    return _report(name)


def _case_id(case) -> str:
    return "-".join(case)


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_provider_compiles_every_case(provider):
    rep = _require(provider)
    assert rep["provider"] == provider, rep["identity"]
    for case, kernels in rep["cases"].items():
        for name, s in kernels.items():
            assert s["spills"] == 0 and s["scratch"] == 0, f"{provider} {case} {name}: {s}"
            assert s["vgprs"] <= VGPR_BUDGET, f"{provider} {case} {name}: {s}"
            if name != "prepass":
                assert s["v_wmma"] > 0 and s["loop_v_wmma"] > 0, f"{provider} {case} {name}: no WMMA loop"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_providers_agree(case):
    have = [p for p in PROVIDERS if _installed(p)]
    if len(have) < 2:
        missing = [f"{p} ({PROVIDERS[p][1]})" for p in PROVIDERS if p not in have]
        pytest.skip(f"one MLIR provider installed ({', '.join(have) or 'none'}); missing: {', '.join(missing)}")
    key = "/".join(case)
    stats = {p: _report(p)["cases"][key] for p in have}
    a, b = (stats[p] for p in have)
    assert a.keys() == b.keys()
    for name in a:
        for field in ("mlir_sha256", "v_wmma", "loop_v_wmma", "spills", "scratch", "lds"):
            assert a[name][field] == b[name][field], f"{key} {name} {field}: " + ", ".join(
                f"{p}={stats[p][name][field]}" for p in have)


# --- bad input and the cache key (in this process's provider) ---------------------------------

_BLOCK_PROVIDERS = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("mlir", "flydsl"):
            raise ImportError(f"{name} blocked for the test")
sys.meta_path.insert(0, _Block())
"""


def test_no_provider_installed_names_the_packages():
    code = _BLOCK_PROVIDERS + "import wmma_gen.compiler.mlir_api\n"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, WMMA_GEN_MLIR_PROVIDER="auto"))
    assert r.returncode != 0
    assert "MlirProviderError: no MLIR Python bindings found" in r.stderr
    assert "pip install mlir-gml" in r.stderr and "pip install flydsl" in r.stderr


def test_cli_reports_missing_provider_without_traceback(tmp_path):
    code = _BLOCK_PROVIDERS + "from wmma_gen.cli.main import main\nraise SystemExit(main(['compile', '--arch', 'gfx1100', '--dtype', 'f16', '--out', sys.argv[1]]))\n"
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out")], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "pip install mlir-gml" in r.stderr + r.stdout


def test_unknown_setting_lists_the_allowed_values(monkeypatch):
    from wmma_gen.compiler import mlir_api
    monkeypatch.setenv(mlir_api.SETTING, "llvm")
    with pytest.raises(mlir_api.MlirProviderError, match="WMMA_GEN_MLIR_PROVIDER='llvm' is not allowed: one of auto, flydsl, mlir"):
        mlir_api.requested()


def test_provider_without_rocdl_target_names_the_packages(monkeypatch):
    from wmma_gen.compiler import compile as compile_mod, mlir_api
    monkeypatch.setattr(mlir_api, "rocdl_problem", lambda: "operations not registered: amdgpu.wmma")
    with pytest.raises(mlir_api.MlirProviderError) as e:
        compile_mod.lower("this is not MLIR", "gfx1100")
    assert "cannot compile for AMD GPUs (no ROCDL target)" in str(e.value)
    assert "amdgpu.wmma" in str(e.value) and "pip install mlir-gml" in str(e.value) and "pip install flydsl" in str(e.value)


def test_cache_key_names_provider_and_llvm_version(monkeypatch):
    from dataclasses import replace

    from wmma_gen.compiler import compile_mlir, mlir_api, toolchain_info
    p = mlir_api.provider()
    assert mlir_api.rocdl_problem() == ""
    assert toolchain_info()["mlir"] == p.identity
    assert p.package in p.identity and f"LLVM {p.llvm_version}" in p.identity and p.llvm_version != "unknown"
    text = ('module attributes {gpu.container_module} { gpu.module @m [#rocdl.target<chip = "gfx1100">] { '
            'gpu.func @k() kernel { gpu.return } } }')
    key = compile_mlir(text, "gfx1100", cache=False).key
    other = replace(p, name="flydsl" if p.name == "mlir" else "mlir", llvm_version="99.0.0git")
    monkeypatch.setattr(mlir_api, "provider", lambda: other)
    assert compile_mlir(text, "gfx1100", cache=False).key != key


def _table() -> str:
    """Markdown table of every case with each installed provider side by side."""
    have = [p for p in PROVIDERS if _installed(p)]
    reps = {p: _report(p) for p in have}
    head = ["case", "kernel"] + [f"{f} {p}" for f in ("v_wmma", "VGPRs", "spills", "LDS", "instr", "loop instr")
                                 for p in have]
    lines = ["providers: " + "; ".join(f"`{p}` = {reps[p]['identity']}" for p in have), "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    fields = ("v_wmma", "vgprs", "spills", "lds", "instructions", "loop_instructions")
    for case in CASES:
        key = "/".join(case)
        for name in reps[have[0]]["cases"][key]:
            cells = [key, name] + [str(reps[p]["cases"][key][name][f]) for f in fields for p in have]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    if "--report" in sys.argv:
        _main_report()
    else:
        print(_table())
