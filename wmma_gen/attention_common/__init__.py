"""What the dense attention ops share, below the op folders (issue 39 item 2): the directive, the
Problem, the float64 reference, argument checks, the correctness check and the problems-file,
recorded-call, calibration and sweep readings that attention, attention_bwd and paged_attention
each name through their own small module. No op folder imports another; these modules import no
op folder (an op's public function is looked up through ops/registry.py)."""
