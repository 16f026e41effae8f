"""decode: the emulator's front end -- a Program from a code object (machine code, read by
wmma_gen.codeobj) or from LLVM assembly text.

    program.Program.from_code_object / from_isa / load
    asm.parse_instruction(line)          LLVM assembly line -> Instr (the same Instr codeobj decodes)
    roles_export                         writes codeobj/operand_roles.py from the semantic rows
"""
