"""wmma_gen.emu: a functional emulator of the gfx11 (RDNA3/RDNA3.5) and gfx12 (RDNA4) wave32
ISA (the family is taken from the ISA text's `.amdgcn_target`) that runs
the machine code of one compilation, given as LLVM's ISA text (the same codegen as the
hsaco; tests/emu/test_emu_objdump.py checks the two agree instruction by instruction).

    prog = Program.from_isa(isa_text)
    mem = GlobalMemory(); a = mem.alloc(n); mem.write(a, array)
    stats = run_kernel(prog, mem, grid=(gx, gy, gz), block=(bx, by, bz), kernarg=bytes)

Layout: asm (parse) -> program (kernel, descriptor, metadata) -> opcodes (tables of
sop, sop12, smem, vop_int, vop_float(12), vopc, vop3p, lane, ds, mem, ops_wmma (gfx11) and
ops_wmma12 (gfx12) rows; binders in
executor, exec_vec, exec_mem) -> scheduler (groups of waves) -> launch (ABI, batching).
"""
from .launch import RunStats, run_kernel
from .memory import GlobalMemory
from .program import KernArg, Program

__all__ = ["Program", "GlobalMemory", "run_kernel", "RunStats", "KernArg"]
