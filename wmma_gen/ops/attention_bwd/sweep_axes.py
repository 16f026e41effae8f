"""The attention backward's sweep axes: the forward's shared ones (ops/attention/sweep_axes.py;
its studies take no --softcap yet)."""
from ..attention.sweep_axes import SHARED as SWEEP_AXES  # noqa: F401
