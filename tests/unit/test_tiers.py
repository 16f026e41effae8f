"""The slow/fast split (tests/tiers.py, applied by tests/conftest.py at collection) as collected in
this run: every rule of the table still names a collected test (a renamed test would otherwise drop
out of its tier silently), every grouped file is covered by one rule (its tests share one tier), and
every test folder collected in this run keeps tests in the fast tier."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tiers  # noqa: E402

TIERS = tiers.STASH


def test_every_rule_names_a_collected_test(request):
    seen = request.config.stash[TIERS]
    stale = [r for r in tiers.SLOW if r.split("::")[0] in seen["files"] and r not in seen["rules"]]
    assert not stale, f"tests/tiers.py rules that match no collected test: {stale}"


def test_grouped_tests_are_one_tier():
    """A group's tests all slow (a rule without fast cases) or all unruled: a group split across the
    tiers would run its reading test without the tests that fill what it reads."""
    by_file = {}
    for g in tiers.GROUPS:
        f, _, name = g.partition("::")
        rule, fast = tiers.rule_for(f, name or "<any test of the file>")
        if not name and rule is None:      # a whole file: no function of it may have a rule either
            rule = next((r for r in tiers.SLOW if r.startswith(f + "::")), None)
            fast = tiers.SLOW.get(rule)
        by_file.setdefault(f, set()).add((rule is not None, fast is None))
    for f, kinds in by_file.items():
        assert len(kinds) == 1 and kinds <= {(True, True), (False, True)}, (f, kinds)


def test_every_shared_setup_file_is_collected(request):
    """A renamed file in tiers.SHARED_SETUP would silently go back to building its fixture per worker."""
    seen = request.config.stash[TIERS]
    whole = set(_whole_folders(seen))
    missing = [f for f in tiers.SHARED_SETUP if f.split("/")[0] in whole and f not in seen["files"]]
    assert not missing, f"tests/tiers.py SHARED_SETUP names files this run did not collect: {missing}"


def test_every_collected_folder_keeps_fast_tests(request):
    """Judged on the folders this run collected whole (every test_*.py in them): `pytest -m "not slow"`
    runs something of every folder."""
    seen = request.config.stash[TIERS]
    empty = sorted(f for f in _whole_folders(seen) if seen["folders"][f]["fast"] == 0)
    assert not empty, f"test folders with no test outside the slow tier: {empty} ({seen['folders']})"


def _whole_folders(seen: dict) -> list[str]:
    """The folders this run collected whole (every test_*.py in them): a run of a few files of a
    folder says nothing about the folder's split."""
    root = Path(__file__).resolve().parents[1]
    return [f for f in seen["folders"]
            if {p.relative_to(root).as_posix() for p in (root / f).glob("test_*.py")} <= seen["files"]]


def test_the_slow_tier_holds_the_heavy_grids(request):
    """Judged on tests/compile when this run collected it whole."""
    seen = request.config.stash[TIERS]
    if "compile" in _whole_folders(seen):
        assert seen["folders"]["compile"]["slow"] > 0 and seen["folders"]["compile"]["fast"] > 0, \
            seen["folders"]["compile"]
