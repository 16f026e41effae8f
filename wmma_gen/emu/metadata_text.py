"""The `amdhsa.kernels` metadata of an ISA text (`.amdgpu_metadata` ... `.end_amdgpu_metadata`,
a YAML document; AMDGPUUsage "Code Object V3+ Metadata"), for the text front end. Code objects
carry the same document as MessagePack (decode/codeobject.py)."""
from __future__ import annotations

import yaml


def loads(text: str):
    """Parse one metadata YAML document (anything after the `...` end marker is ignored)."""
    end = text.find("\n...")
    return yaml.safe_load(text[:end] if end >= 0 else text)
