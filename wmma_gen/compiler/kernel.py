"""CompiledKernel: what one compilation produced (compile.py makes it; the compile index in
ops/compile_op.py rebuilds it from the disk cache). Its own module so a cached kernel's launch
reads it without importing the compile stages (compile.py, pipeline.py, the MLIR provider)."""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field

from .metadata import KernelMetadata


@dataclass(frozen=True)
class CompiledKernel:
    """Every artifact of one compilation. `hsaco` is the code object that runs, is timed,
    hashed and exported; `metadata` comes from its note and `isa` is decoded from its bytes."""
    name: str
    arch: str
    mlir: str                 # the module as built (GPU dialect); "" when read through the compile index
                              # (ops/compile_op.py: the CompiledSet builds the text on demand, .sources)
    hsaco: bytes = field(repr=False)   # the linked code object (ELF): the one artifact
    metadata: KernelMetadata  # from the hsaco's NT_AMDGPU_METADATA note
    key: str                  # content address
    toolchain: dict = field(default_factory=dict)
    cache: str = "miss"       # how this object was obtained: miss | hit | rebuilt
    compile_seconds: float = 0.0

    @property
    def spilled(self) -> bool:
        return self.metadata.spills > 0

    @functools.cached_property
    def sha256(self) -> str:
        """sha256 of the code object's bytes: what the ladder and exported schedules record."""
        return hashlib.sha256(self.hsaco).hexdigest()

    @functools.cached_property
    def isa(self) -> str:
        """Assembly listing decoded from `hsaco` (decoded once, on first use; the decoder's
        tables load here, not on a cached kernel's launch)."""
        from ..codeobj.listing import listing
        return listing(self.hsaco)
