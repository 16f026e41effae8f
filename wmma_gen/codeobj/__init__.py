"""codeobj: the code-object reader both the compiler and the emulator import (it imports neither).

    codeobject.load_code_object(bytes)   ELF sections and symbols, kernel descriptors, the
                                         NT_AMDGPU_METADATA note (msgpack)
    descriptor.decode_descriptor(raw)    the 64-byte kernel descriptor as `.amdhsa_*` names
    machine.decode(code, family)         machine code -> Instr list (formats, optables, valu, roles)
    text.render(instr)                   LLVM assembly text of a decoded instruction
    listing.listing(hsaco)               the whole code object as LLVM assembly (CompiledKernel.isa)

The decoder's operand roles (operand_roles.py) are written from the emulator's semantic rows
(emu/decode/roles_export.py) and checked against them by tests/emu/test_operand_roles_sync.py.
"""
from .codeobject import CodeObject, CodeObjectError, Kernel, load_code_object, parse_target_id
from .descriptor import decode_descriptor
from .family import Family
from .listing import listing
from .machine import decode

__all__ = ["CodeObject", "CodeObjectError", "Kernel", "load_code_object", "parse_target_id",
           "decode_descriptor", "Family", "listing", "decode"]
