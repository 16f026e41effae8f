"""Attention's sweep axes (`wmma-gen sweep --op attention`, and the backward's): one study per
(dtype, head dim, mask, Sq = Sk). Light: read by the sweep's parser (ops/contract.py SweepAxis)."""
from ..contract import SweepAxis

HEAD_DIMS = SweepAxis("head_dims", "--head-dims", "head_dim", "head dims", "attention: head dims (default 64,128)")
SEQS = SweepAxis("seqs", "--seqs", "seq", "sequence lengths",
                 "attention: sequence lengths Sq = Sk (default 1024,4096; --quick 1024)")
CAUSAL = SweepAxis("causal", "--causal", "on_off", "masks",
                   "attention: masks to tune, comma-separated from off,on (default off,on; --quick off)")
SWEEP_AXES = (HEAD_DIMS, SEQS, CAUSAL)
