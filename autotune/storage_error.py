"""The tuner's storage error, in its own module so storage.py, rdb.py and claims.py all raise it
without importing each other."""
from __future__ import annotations

from wmma_gen.errors import WmmaGenError


class StorageError(WmmaGenError):
    """A storage file or URL cannot be used; the message names it and says what to do."""
