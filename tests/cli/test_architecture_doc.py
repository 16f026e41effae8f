"""docs/architecture.md stays true to the tree (issue 39): every file or folder it names exists, and
every op it lists is the registry's. Paths are read relative to the repository or to wmma_gen/,
as the page says; templates such as ops/<op>/api.py are skipped."""
import re
from pathlib import Path

from wmma_gen.ops import registry

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
PATH = re.compile(r"`([A-Za-z_][\w./-]*(?:\.py|\.c|\.md|/))[`:\s]")


def named_paths(text: str) -> set[str]:
    return {m.group(1) for m in PATH.finditer(text) if "<" not in m.group(1) and "/" in m.group(1)}


def test_every_path_the_page_names_exists():
    text = DOC.read_text()
    paths = named_paths(text)
    assert len(paths) > 30, sorted(paths)          # the page does name the code it describes
    missing = [p for p in sorted(paths)
               if not any((base / p.rstrip("/")).exists() for base in (ROOT, ROOT / "wmma_gen", ROOT / "docs"))]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_the_registered_ops_are_the_ones_the_page_lists():
    text = DOC.read_text()
    m = re.search(r"Registered: (.*?)\.", text, re.S)
    assert m, "docs/architecture.md lists no registered ops"
    listed = re.findall(r"`(\w+)`", m.group(1))
    assert listed == list(registry.names())


def test_the_checker_sees_a_wrong_path():
    assert "ops/nowhere.py" in named_paths("see `ops/nowhere.py` and `x` ")
