"""Opcode tables of both families: TABLES[family][encoding class][opcode] -> mnemonic."""
from .optables_gfx11 import TABLE as GFX11
from .optables_gfx12 import TABLE as GFX12

TABLES = {"gfx11": GFX11, "gfx12": GFX12}
