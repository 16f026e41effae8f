"""The attention backward's row of a problems file: the forward's (ops/attention/problem_file.py)."""
from ..attention.problem_file import (FIELDS, RENAMED, REQUIRED, AttentionRow, from_fields,  # noqa: F401
                                      read)
