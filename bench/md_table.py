"""A DataFrame as a Markdown table (results/*.md), without pandas' optional tabulate dependency."""
from __future__ import annotations


def markdown_table(df) -> str:
    """Header, separator and one row per DataFrame row; cells are str() of the values."""
    head = "| " + " | ".join(map(str, df.columns)) + " |\n|" + "---|" * len(df.columns) + "\n"
    return head + "".join("| " + " | ".join(map(str, r)) + " |\n" for r in df.itertuples(index=False))
