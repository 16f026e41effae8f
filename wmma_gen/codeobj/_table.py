"""Parse the compact `opcode:mnemonic` listings of optables_gfx11 / optables_gfx12."""
from __future__ import annotations


def parse(text: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for tok in text.split():
        op, _, name = tok.partition(":")
        out[int(op)] = name
    return out
