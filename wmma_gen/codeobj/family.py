"""The family a decoder reads an instruction stream with: the encoding family of everything but
WMMA, plus the family of its WMMA rows, which differ on gfx1170/gfx1171 ("RDNA 4m": GFX11
encoding, GFX12 WMMA; llvm PR #180731, FeatureWMMA128bInsts; wmma_gen.targets Target.encoding
and Target.family)."""
from __future__ import annotations


class Family(str):
    """An encoding family name ('gfx11' / 'gfx12'; compares and hashes as that string) that
    also names the family of its WMMA instructions (`wmma`): 'gfx12' on gfx1170/gfx1171."""
    __slots__ = ("wmma",)

    def __new__(cls, name: str, wmma: str = ""):
        self = super().__new__(cls, name)
        self.wmma = wmma or name
        return self

    def __reduce__(self):
        return Family, (str(self), self.wmma)
