"""What the peers tests share: a bench/ script imported as a module (bench/ is not a package; its
scripts import their siblings by name, so bench/ sits on sys.path while the module is in use)."""
import importlib
import sys
from contextlib import contextmanager
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


@contextmanager
def bench_module(name: str):
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))
