"""The sweep's search space at head dims above 256 (no compile): the attention tuning module's
per-directive domains (d_split 1 up to 256, so those sweeps search what they did; 2/4/8 with
kv_buffers 1 above) reach the studies through autotune.study.study_domains, a sweep's own
--domains override them, and every baseline of a large head dim is legal and inside the space
(an enqueued baseline outside it would be skipped and the default never ranked)."""
import pytest

from wmma_gen.tuner.space import params_of
from autotune.study import SweepConfig, study_domains
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.schedule import SPACE
from wmma_gen.ops.attention.tuning import baselines
from wmma_gen.targets import get_target


def test_study_domains_split_the_head_dim_only_above_256():
    cfg = SweepConfig(arch="gfx1201", op="attention")
    assert study_domains(cfg, AttentionDirective("f16", 128)) == {"d_split": (1,)}
    assert study_domains(cfg, AttentionDirective("f16", 512)) == {"d_split": (2, 4, 8), "kv_buffers": (1,)}
    narrowed = SweepConfig(arch="gfx1201", op="attention", domains={"d_split": (4,)})
    assert study_domains(narrowed, AttentionDirective("f16", 512)) == {"d_split": (4,), "kv_buffers": (1,)}


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("head_dim", [272, 400, 512])
def test_large_head_dim_baselines_are_legal_and_in_the_space(arch, head_dim):
    cfg = SweepConfig(arch=arch, op="attention")
    d = AttentionDirective("bf16", head_dim, causal=True)
    out = baselines(d, {"batch": 1, "heads": 16, "kv_heads": 16, "seq_q": 1024, "seq_k": 1024}, arch)
    assert len(out) >= 2 and all(s.d_split > 1 for s in out)
    for s in out:
        assert s.problems(d, get_target(arch)) == [], s
        params_of(s, study_domains(cfg, d), SPACE)


def test_backward_studies_keep_lds_operands_up_to_256():
    from wmma_gen.attention_common.directive import AttentionDirective as D
    cfg = SweepConfig(arch="gfx1100", op="attention_bwd")
    assert study_domains(cfg, D("f16", 128, op="attention_bwd"))["operands"] == ("lds",)
    assert study_domains(cfg, D("f16", 512, op="attention_bwd")) == {"operands": ("global",)}
