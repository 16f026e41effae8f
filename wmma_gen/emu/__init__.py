"""wmma_gen.emu: a functional emulator of the gfx11 (RDNA3/RDNA3.5) and gfx12 (RDNA4) wave32
ISA that runs the machine code of a code object (hsaco), the bytes a GPU would run.

    prog = Program.from_code_object(hsaco)        # or Program.load(path)
    mem = GlobalMemory(); a = mem.alloc(n); mem.write(a, array)
    stats = run_kernel(prog, mem, grid=(gx, gy, gz), block=(bx, by, bz), kernarg=bytes)

Layout, the way data flows:
  decode/  code object -> Program, read by wmma_gen.codeobj (ELF, kernel descriptor, metadata
           note, machine code -> Instr); program (Program, kernarg packing); asm (LLVM
           assembly text -> Instr: test oracle and hand-written kernels); roles_export (writes
           codeobj's operand-role table from the isa rows)
  isa/     semantics as table rows by instruction class, gfx11 and gfx12 rows side by side:
           sop, sop_float, vop_int, vop_float, vopc, vop3p, lane, dpp, ds, global_smem,
           wmma11, wmma12 (+ ieee helpers); table (row type, faults, signals), opcodes (OPS)
  run/     bind (Instr -> closure, once per program: bind_alu, bind_vec, bind_mem, bind_ds over
           operands), state (register files of a wave group), device_memory, scheduler (groups
           of waves sharing a PC), launch (ABI, batching)
  api      launch any code object on numpy buffers (`wmma-gen emu run`)
"""
from .decode.program import KernArg, Program
from .run.device_memory import GlobalMemory
from .run.launch import RunStats, run_kernel

__all__ = ["Program", "GlobalMemory", "run_kernel", "RunStats", "KernArg"]
