"""GEMM's sweep axes (`wmma-gen sweep --op gemm`): one study per (dtype, shape). Light: read by
the sweep's parser without loading the builder (ops/contract.py SweepAxis)."""
from ..contract import SweepAxis

SWEEP_AXES = (SweepAxis("shapes", "--shapes", "shape", "shapes",
                        "comma-separated sizes N (NxNxN) or MxNxK (default 1024,2048,4096; --quick: 1024,2048)",
                        file_flag="--shapes-file"),)
