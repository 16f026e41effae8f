"""Compile once (issue 15 item 3): one LLVM code generation per candidate on every path, the
ISA text is the listing decoded from the hsaco, and the emulator runs the bytes that are
exported and hashed.

Every test starts from an empty disk cache and empty in-process memos, so a candidate that
was compiled earlier in the session cannot hide a code generation (or a second one)."""
from __future__ import annotations

import hashlib
import json
from collections import Counter

import numpy as np
import pytest

from wmma_gen.compiler import CODEGENS, KernelCache, compile_mlir, listing, llvm_isa, lower, mlir_api
from wmma_gen.emu import Program
from wmma_gen.model.isa_loop import classify, find_main_loop, kernel_lines

ONE_WMMA = """
module attributes {gpu.container_module} {
gpu.module @m [#rocdl.target<chip = "gfx1100">] {
  gpu.func @one_wmma(%A: memref<16x16xf16>, %B: memref<16x16xf16>, %C: memref<16x16xf32>) kernel
      attributes {known_block_size = array<i32: 32, 1, 1>} {
    %tid = gpu.thread_id x
    %c16 = arith.constant 16 : index
    %c0 = arith.constant 0 : index
    %row = arith.remui %tid, %c16 : index
    %a = vector.load %A[%row, %c0] : memref<16x16xf16>, vector<16xf16>
    %b = vector.load %B[%row, %c0] : memref<16x16xf16>, vector<16xf16>
    %z = arith.constant dense<0.0> : vector<8xf32>
    %d = amdgpu.wmma 16x16x16 %a * %b + %z : vector<16xf16>, vector<16xf16>, vector<8xf32>
    %e = vector.extract %d[0] : f32 from vector<8xf32>
    memref.store %e, %C[%row, %c0] : memref<16x16xf32>
    gpu.return
  }
}
}
"""


@pytest.fixture
def cold(tmp_path, monkeypatch):
    """Empty disk cache and memos; returns a function giving the codegens run since the start."""
    from collections import OrderedDict

    from wmma_gen.ops import compile_op
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(compile_op, "_LRU", OrderedDict())     # the one in-memory set of every op
    start = dict(CODEGENS)
    return lambda: {k: CODEGENS[k] - start.get(k, 0) for k in ("bin", "isa")}


@pytest.fixture
def ran(monkeypatch):
    """Code objects the emulator decodes (and then runs), in order."""
    seen: list[bytes] = []
    original = Program.from_code_object.__func__

    def spy(cls, data, kernel_name=None):
        seen.append(bytes(data))
        return original(cls, data, kernel_name)
    monkeypatch.setattr(Program, "from_code_object", classmethod(spy))
    return seen


def test_compile_mlir_runs_one_codegen_and_a_hit_none(cold, tmp_path):
    k = compile_mlir(ONE_WMMA, "gfx1100")
    assert cold() == {"bin": 1, "isa": 0}
    assert k.hsaco[:4] == b"\x7fELF" and k.cache == "miss"
    again = compile_mlir(ONE_WMMA, "gfx1100")
    assert again.cache == "hit" and again.hsaco == k.hsaco
    assert cold() == {"bin": 1, "isa": 0}          # the hit ran no codegen
    assert "v_wmma_f32_16x16x16_f16" in again.isa  # decoded from the cached bytes


def test_isa_is_the_listing_of_the_hsaco(cold):
    k = compile_mlir(ONE_WMMA, "gfx1100")
    assert k.isa == listing(k.hsaco)
    # the listing carries what the emulator decodes, instruction for instruction
    text, mc = Program.from_isa(k.isa, k.name), Program.from_code_object(k.hsaco, k.name)
    assert [(i.mnemonic, i.operands) for i in text.instrs] == [(i.mnemonic, i.operands) for i in mc.instrs]
    assert cold() == {"bin": 1, "isa": 0}          # reading .isa decoded, it did not recompile


def _model_view(isa: str):
    loop = find_main_loop(isa)
    whole = [op for op in (classify(line) for line in kernel_lines(isa)) if op is not None]
    return loop.found, loop.ops, loop.outside, whole


def _gemm(arch: str, dtype: str):
    from wmma_gen.ops.gemm import default_schedule
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.problem import GemmProblem
    d, p = GemmDirective(dtype), GemmProblem(4096, 4096, 4096)
    return compile_gemm(d, default_schedule(d, arch, p), arch, p, cache=False).compiled


def _attention(arch: str):
    from wmma_gen.ops.attention.defaults import default_schedule
    from wmma_gen.attention_common.directive import AttentionDirective
    from wmma_gen.ops.attention.kernel import build_attention
    from wmma_gen.targets import get_target
    d, t = AttentionDirective("f16", 128), get_target(arch)
    return compile_mlir(build_attention(d, default_schedule(t, d), t).mlir, arch, cache=False)


@pytest.mark.parametrize("kind,arch,what", [("gemm", "gfx1100", "f16"), ("gemm", "gfx1201", "i8"),
                                            ("attention", "gfx1100", "f16")])
def test_model_sees_the_same_instructions_as_in_llvm_text(kind, arch, what):
    """The model's loop analysis of the decoded listing equals its analysis of LLVM's own
    text of the same module (a second, test-only codegen): same main loop, same waits."""
    k = _gemm(arch, what) if kind == "gemm" else _attention(arch)
    decoded, llvm = _model_view(k.isa), _model_view(llvm_isa(lower(k.mlir, arch), arch))
    assert decoded[0] and decoded[1]                         # a main loop was found
    assert decoded[:2] == llvm[:2]                           # the main loop, in order, with its waits
    assert any(op.kind == "waitcnt" and op.vm_wait >= 0 for op in decoded[3])   # waits kept their counts
    if mlir_api.NAME == "flydsl":
        # LLVM 24 (FlyDSL 0.5) is not deterministic outside the main loop within one long process:
        # the second codegen of the same module has ordered the prologue differently (2026-12-04,
        # second session) and chosen different instructions (third session: 39 vs 40 s_lshl_b32,
        # 6 vs 4 v_dual_mov_b32), while fresh processes agree every time. The loop (above) and the
        # WMMAs are what the model reads; the rest is compared exactly under LLVM 23.
        assert sum(op.kind == "wmma" for op in decoded[3]) == sum(op.kind == "wmma" for op in llvm[3])
        return
    assert Counter(decoded[2]) == Counter(llvm[2]) and Counter(decoded[3]) == Counter(llvm[3])


def test_compile_cli_exports_the_compiled_object_and_its_listing(cold, tmp_path, capsys):
    from wmma_gen.cli.main import main
    out = tmp_path / "k"
    assert main(["compile", "--arch", "gfx1100", "--dtype", "f16", "--shape", "64x64x64", "--out", str(out),
                 "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert cold() == {"bin": 1, "isa": 0}
    obj = (out / "kernel.hsaco").read_bytes()
    assert info["hsaco_sha256"] == hashlib.sha256(obj).hexdigest()
    assert (out / "kernel.s").read_text() == listing(obj)
    # the exported object is the cached one, i.e. what check / the tuner / the API would run
    status, payload = KernelCache().load(info["key"])
    assert status == "hit" and payload["hsaco"] == obj


def test_check_cli_compiles_once(cold, capsys):
    from wmma_gen.cli.main import main
    assert main(["check", "--arch", "gfx1100", "--dtype", "bf16", "--shape", "48x48x48", "--device", "emu"]) == 0
    capsys.readouterr()
    assert cold() == {"bin": 1, "isa": 0}


def test_gemm_api_runs_the_compiled_bytes(cold, ran):
    import wmma_gen
    from wmma_gen.device.emu import EmuDevice
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (32, 32)).astype(np.float16)
    b = rng.uniform(-1, 1, (32, 32)).astype(np.float16)
    out = wmma_gen.gemm(a, b, device=EmuDevice())
    # f16 products are exact in f32; 32 terms of size <= 1 accumulate < 32 * 2^-24 * 32 error
    assert np.abs(out - a.astype(np.float64) @ b.astype(np.float64)).max() <= 32 * 2.0 ** -24 * 32
    assert cold() == {"bin": 1, "isa": 0}
    from wmma_gen.ops import compile_op
    (cs,) = compile_op._LRU.values()
    compiled = cs.kernel("gemm")
    assert ran == [compiled.hsaco]


def test_attention_api_compiles_each_kernel_once(cold, ran):
    import wmma_gen
    from wmma_gen.device.emu import EmuDevice
    from wmma_gen.ops import compile_op
    rng = np.random.default_rng(1)
    q, k, v = (rng.uniform(-1, 1, (1, 16, 1, 64)).astype(np.float16) for _ in range(3))
    wmma_gen.attention(q, k, v, device=EmuDevice())
    kernels = [ck for cs in compile_op._LRU.values() for _, ck in cs.compiled]
    assert kernels and cold() == {"bin": len(kernels), "isa": 0}
    assert set(ran) == {ck.hsaco for ck in kernels}


def test_tuner_gates_the_object_it_hashes(cold, ran, tmp_path):
    import optuna

    from wmma_gen.ops.gemm.tuning import GemmObjective as Objective
    from wmma_gen.tuner.space import params_of
    from wmma_gen.device.emu import EmuDevice
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.problem import GemmProblem
    from wmma_gen.ops.gemm.schedule import SPACE, Schedule
    study = optuna.create_study(direction="maximize")
    study.enqueue_trial(params_of(Schedule(block_m=64, block_n=64), None, SPACE))
    study.optimize(Objective(GemmDirective("f16"), GemmProblem(256, 256, 256), "gfx1100", EmuDevice()), n_trials=1)
    trial = study.trials[0]
    assert trial.state.name == "COMPLETE", trial.user_attrs
    assert cold() == {"bin": 1, "isa": 0}
    # the gate ran exactly the bytes stored under the hash the ladder and export record
    status, payload = KernelCache().load(trial.user_attrs["isa_hash"])
    assert status == "hit" and ran and set(ran) == {payload["hsaco"]}
