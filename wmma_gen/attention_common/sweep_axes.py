"""The attention ops' sweep axes (`wmma-gen sweep --op attention / attention_bwd / paged_attention`):
one study per (dtype, head dim, mask, softcap, Sq = Sk). Each op's spec module
picks its SWEEP_AXES from these. Light: read by the sweep's parser (ops/contract.py SweepAxis)."""
from ..ops.contract import SweepAxis

HEAD_DIMS = SweepAxis("head_dims", "--head-dims", "head_dim", "head dims", "attention: head dims (default 64,128)")
SEQS = SweepAxis("seqs", "--seqs", "seq", "sequence lengths",
                 "attention: sequence lengths Sq = Sk (default 1024,4096; --quick 1024)")
CAUSAL = SweepAxis("causal", "--causal", "on_off", "masks",
                   "attention: masks to tune, comma-separated from off,on (default off,on; --quick off)")
SOFTCAP = SweepAxis("softcap", "--softcap", "on_off", "softcap flags",
                    "attention, paged_attention: logit softcap (c * tanh(s / c)) to tune, comma-separated from "
                    "off,on (default off)")
SHARED = (HEAD_DIMS, SEQS, CAUSAL)   # the backward's axes (its studies take no softcap flag yet)
