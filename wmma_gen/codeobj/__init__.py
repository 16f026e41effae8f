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
import importlib

# Imported on first use (PEP 562): a cached kernel's launch reads a code object's metadata
# (codeobject.py) and must not load the decoder's opcode tables (machine, listing: tens of ms).
_FROM = {"CodeObject": "codeobject", "CodeObjectError": "codeobject", "Kernel": "codeobject",
         "load_code_object": "codeobject", "parse_target_id": "codeobject",
         "decode_descriptor": "descriptor", "Family": "family", "listing": "listing", "decode": "machine"}
__all__ = list(_FROM)


def __getattr__(name):
    mod = _FROM.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_FROM))
