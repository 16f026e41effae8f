"""Attention's row of a problems file (registry.sibling): the dense row both attention ops read
(attention_common/problem_file.py)."""
from ...attention_common.problem_file import (FIELDS, RENAMED, REQUIRED, AttentionRow, from_fields,  # noqa: F401
                                              read)
