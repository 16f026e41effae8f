"""GPU-less performance model: estimate from the compiled kernel + target facts.

Every figure it produces is an estimate (source="model"), never a measurement.
    estimate(kernel, directive, schedule, target) -> Estimate
"""
from .estimate import LIMITERS, Estimate, Resources, estimate, estimate_from
from .isa_loop import LoopStats, find_main_loop
from .occupancy import Occupancy, occupancy
from .params import PARAMS, SOURCES, ModelParams, params_for, wmma_cycles
from .traffic import Traffic, traffic

__all__ = ["LIMITERS", "Estimate", "Resources", "estimate", "estimate_from", "LoopStats", "find_main_loop",
           "Occupancy", "occupancy", "PARAMS", "SOURCES", "ModelParams", "params_for", "wmma_cycles",
           "Traffic", "traffic"]
