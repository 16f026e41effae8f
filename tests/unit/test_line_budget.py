"""Files stay small (STYLE rule 14): a per-file line budget, checked like tinygrad's sz.py."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUDGET = 400


def test_every_source_file_is_within_the_line_budget():
    over = {}
    for folder in ("wmma_gen", "autotune", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            n = len(path.read_text().splitlines())
            if n > BUDGET:
                over[str(path.relative_to(ROOT))] = n
    assert not over, f"files over {BUDGET} lines: {over}"
