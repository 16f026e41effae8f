"""The attention backward's sweep axes (registry.sibling): the shared ones
(attention_common/sweep_axes.py; its studies take no --softcap yet)."""
from ...attention_common.sweep_axes import SHARED as SWEEP_AXES  # noqa: F401
