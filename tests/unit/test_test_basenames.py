"""Test modules are imported by basename (rootdir-relative, no packages under tests/), so two files
with one name in different folders collide: the whole run reports "import file mismatch" and
collects neither -- a clash that single-file runs never show (it happened with
test_attention_bwd_large_hd.py in tests/compile and tests/emu)."""
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_its_own_basename():
    by_name = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        by_name[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"test modules sharing a basename (rename one): {clashes}"
