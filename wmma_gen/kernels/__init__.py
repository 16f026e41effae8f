"""Kernel builders: directive + schedule + target -> MLIR module (never compile here)."""
