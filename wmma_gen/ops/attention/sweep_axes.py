"""Attention's sweep axes (`wmma-gen sweep --op attention`, registry.sibling): the shared ones
(attention_common/sweep_axes.py) and --softcap."""
from ...attention_common.sweep_axes import SHARED, SOFTCAP

SWEEP_AXES = SHARED + (SOFTCAP,)
