"""The attention backward's sweep axes: the forward's (ops/attention/sweep_axes.py)."""
from ..attention.sweep_axes import SWEEP_AXES  # noqa: F401
