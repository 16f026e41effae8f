"""The dummy op's sweep axis: vector lengths (`wmma-gen sweep --op dummy --lengths 300,4096`)."""
from wmma_gen.ops.contract import SweepAxis

SWEEP_AXES = (SweepAxis("lengths", "--lengths", "int", "vector lengths", "dummy: vector lengths n (default 100,4096)"),)
