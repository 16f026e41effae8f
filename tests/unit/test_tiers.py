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


def test_grouped_files_are_one_tier():
    for f in tiers.GROUPS:
        assert f in tiers.SLOW and tiers.SLOW[f] is None or not any(r.startswith(f + "::") for r in tiers.SLOW), f


def test_every_collected_folder_keeps_fast_tests(request):
    folders = request.config.stash[TIERS]["folders"]
    assert folders, "nothing collected"
    empty = sorted(f for f, c in folders.items() if f.endswith(".py") is False and c["fast"] == 0)
    assert not empty, f"test folders with no test outside the slow tier: {empty} ({folders})"


def test_the_slow_tier_holds_the_heavy_grids(request):
    folders = request.config.stash[TIERS]["folders"]
    if "compile" in folders:
        assert folders["compile"]["slow"] > 0 and folders["compile"]["fast"] > 0, folders["compile"]
