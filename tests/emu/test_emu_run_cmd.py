"""`wmma-gen emu run` and wmma_gen.emu.api.run_code_object on a code object whose body is
hand-written assembly (LLVM inline asm, assembled by the in-process LLVM into the hsaco):
each lane writes tid+7 to its private segment (scratch_store, SV mode), reads it back, stores it
to *dynamic* LDS (the kernel declares no LDS, so it needs --lds-dynamic), reads it back and
writes 2*(tid+7) to the output buffer."""
from __future__ import annotations

import numpy as np
import pytest

from mlir_helper import wrap
from wmma_gen.cli.main import main
from wmma_gen.emu.api import run_code_object
from wmma_gen.errors import EmulatorFault

WAIT = {"gfx1100": ("s_waitcnt vmcnt(0)", "s_waitcnt lgkmcnt(0)"),
        "gfx1201": ("s_wait_loadcnt 0x0", "s_wait_dscnt 0x0")}


def _asm(arch: str) -> str:
    vm, lgkm = WAIT[arch]
    return "\\n".join([
        "v_add_nc_u32 v40, 7, $0",
        "scratch_store_b32 $1, v40, off offset:4",
        "v_mov_b32 v40, 0",
        "scratch_load_b32 v41, $1, off offset:4",
        vm,
        "v_lshlrev_b32 v42, 2, $0",
        "ds_store_b32 v42, v41",
        lgkm,
        "ds_load_b32 v43, v42",
        lgkm,
        "v_add_nc_u32 v43, v43, v43",
        "global_store_b32 v42, v43, $2",
    ])


def _kernel(arch: str) -> str:
    return f"""
gpu.func @handwritten(%out: !llvm.ptr<1>) kernel {{
  %c16 = llvm.mlir.constant(16 : i32) : i32
  %tid = gpu.thread_id x
  %t = arith.index_cast %tid : index to i32
  %priv = llvm.alloca %c16 x i32 : (i32) -> !llvm.ptr<5>
  %poff = llvm.ptrtoint %priv : !llvm.ptr<5> to i32
  llvm.inline_asm has_side_effects "{_asm(arch)}", "v,v,s,~{{v40}},~{{v41}},~{{v42}},~{{v43}}" %t, %poff, %out : (i32, i32, !llvm.ptr<1>) -> ()
  gpu.return
}}
"""


@pytest.fixture(scope="module", params=["gfx1100", "gfx1201"])
def hsaco(request, tmp_path_factory):
    from wmma_gen.compiler import compile_mlir
    ck = compile_mlir(wrap(_kernel(request.param), request.param), request.param)
    path = tmp_path_factory.mktemp("co") / f"handwritten_{request.param}.hsaco"
    path.write_bytes(ck.hsaco)
    return path


def test_python_api_runs_scratch_and_dynamic_lds(hsaco):
    res = run_code_object(hsaco, "handwritten", grid=(1, 1, 1), block=(32, 1, 1),
                          args=[np.zeros(32, np.int32)], dynamic_lds=128)
    assert res.program.private_segment_size >= 64
    np.testing.assert_array_equal(res.buffers[0], 2 * (np.arange(32) + 7))


def test_without_dynamic_lds_the_ds_store_faults(hsaco):
    with pytest.raises(EmulatorFault, match="LDS access"):
        run_code_object(hsaco, None, grid=1, block=32, args=[np.zeros(32, np.int32)])


def test_cli_emu_run(hsaco, tmp_path, capsys):
    rc = main(["emu", "run", str(hsaco), "--kernel", "handwritten", "--grid", "2", "--block", "32",
               "--lds-dynamic", "128", "--args", "i32[32]", "--out", str(tmp_path), "--disassemble"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "scratch_store_b32" in out and "wave-instructions" in out
    np.testing.assert_array_equal(np.load(tmp_path / "arg0.npy"), 2 * (np.arange(32) + 7))


def test_cli_bad_inputs(hsaco, tmp_path, capsys):
    assert main(["emu", "run", str(hsaco), "--args", "i32[32]"]) == 2          # no dynamic LDS
    assert "LDS access" in capsys.readouterr().err
    bad = tmp_path / "bad.hsaco"
    bad.write_bytes(b"\x7fELF\x02\x01" + bytes(20))
    assert main(["emu", "run", str(bad), "--args", "i32[32]"]) == 2            # truncated ELF
    assert "truncated" in capsys.readouterr().err
    bad.write_bytes(b"not an elf at all")
    assert main(["emu", "run", str(bad)]) == 2
    assert "not an ELF" in capsys.readouterr().err
    assert main(["emu", "run", str(hsaco), "--args", "f99[3]"]) == 2
    assert "is not allowed" in capsys.readouterr().err
    assert main(["emu", "run", str(hsaco), "--grid", "0"]) == 2
    assert "--grid" in capsys.readouterr().err
