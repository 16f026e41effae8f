"""GPU-less performance model: what every op's estimate is built from (source="model", never a
measurement). The op-specific estimates live with their ops (ops/gemm/model.py, ops/attention*/model.py
via loop_kernel.py) and reach the tools through the registry's `estimate`.
"""
from .estimate import LIMITERS, Estimate, Resources, loop_stats, vmem_clocks
from .isa_loop import LoopStats, find_main_loop
from .occupancy import Occupancy, occupancy
from .params import PARAMS, SOURCES, ModelParams, params_for, wmma_cycles

__all__ = ["LIMITERS", "Estimate", "Resources", "loop_stats", "vmem_clocks", "LoopStats", "find_main_loop",
           "Occupancy", "occupancy", "PARAMS", "SOURCES", "ModelParams", "params_for", "wmma_cycles"]
