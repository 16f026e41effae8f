"""decode: code object bytes -> kernels -> instructions (the emulator's front end).

    codeobject.load_code_object(bytes)   ELF, symbols, kernel descriptors, metadata note
    descriptor.decode_descriptor(raw)    the 64-byte kernel descriptor as `.amdhsa_*` names
    machine.decode(code, family)         machine code -> Instr list (formats, optables, valu, roles)
    text.render(instr)                   LLVM assembly text of a decoded instruction
"""
from .codeobject import CodeObject, CodeObjectError, Kernel, load_code_object, parse_target_id
from .descriptor import decode_descriptor
from .machine import decode

__all__ = ["CodeObject", "CodeObjectError", "Kernel", "load_code_object", "parse_target_id",
           "decode_descriptor", "decode"]
