"""wmma_gen.torch.record_problems (issue 25 item 2): the distinct problems one forward and
backward of a model issues -- GEMM layouts from linear's backward, attention forward and
backward -- written as a problems file that `wmma-gen sweep --problems` tunes."""
import json
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))        # tests/torch_lane -> block
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # tests/ -> hipstub

from block import Block  # noqa: E402

from autotune.problems import load  # noqa: E402
from wmma_gen.cli.main import main, parser  # noqa: E402
from wmma_gen.cli.sweep_cmd import problem_configs  # noqa: E402
from wmma_gen.ops import plans  # noqa: E402
from wmma_gen.torch import linear, record_problems  # noqa: E402


def gemm(layout, m, n, k, bias=False, activation=None, out="f16"):
    p = {"op": "gemm", "dtype": "f16", "layout": layout, "batch": 1, "m": m, "n": n, "k": k,
         "epilogue": {"bias": bias, "activation": activation}}
    return {**p, "out_dtype": out} if out else p


def attention(op):
    return {"op": op, "dtype": "f16", "head_dim": 32, "batch": 1, "heads": 2, "kv_heads": 1, "seq_q": 16, "seq_k": 16,
            "causal": True, "window": None, "varlen": False, "layout": "bshd"}


# Block(d_model=64, heads=2, kv_heads=1, head_dim=32) on 16 tokens: four linears (qkv 64->128,
# proj 64->64, up 64->256 + GELU, down 256->64), Y = X W^T ("NT"); backward dX = dY W ("NN"),
# dW = dY^T X ("TN"), and GELU's input recomputed by one f32-output NT GEMM
EXPECTED = [gemm("NT", 16, 128, 64, bias=True), attention("attention"), gemm("NT", 16, 64, 64, bias=True),
            gemm("NT", 16, 256, 64, bias=True, activation="gelu"), gemm("NT", 16, 64, 256, bias=True),
            gemm("NN", 16, 256, 64), gemm("TN", 64, 256, 16),                       # down
            gemm("NT", 16, 256, 64, bias=True, out=None),                           # GELU's input, f32
            gemm("NN", 16, 64, 256), gemm("TN", 256, 64, 16),                       # up
            gemm("NN", 16, 64, 64), gemm("TN", 64, 64, 16),                         # proj
            attention("attention_bwd"),
            gemm("NN", 16, 64, 128), gemm("TN", 128, 64, 16)]                       # qkv


def key(p: dict) -> str:
    return json.dumps(p, sort_keys=True)


@pytest.fixture(scope="module")
def recorded():
    torch.manual_seed(0)
    model = Block()
    x = torch.randn(1, 16, 64, dtype=torch.float16, requires_grad=True)
    model(x).float().sum().backward()               # the plans exist before the block: still recorded
    with record_problems() as rec:
        for _ in range(2):                          # a repeated step adds nothing
            model(x).float().sum().backward()
    return rec


def test_forward_and_backward_problems_are_recorded_once_each(recorded):
    assert sorted(map(key, recorded.problems)) == sorted(map(key, EXPECTED))
    assert recorded.archs == {"gfx1100"} and len(recorded) == len(EXPECTED)
    assert plans.observers == []


def test_the_file_round_trips_through_sweep_problems(recorded, tmp_path):
    path = recorded.save(tmp_path / "model.yaml")
    problems = load(path, "gfx1100")
    assert [p.to_dict() for p in problems] == recorded.problems
    args = parser("sweep").parse_args(["sweep", "--problems", str(path), "--arch", "gfx1100", "--trials", "1",
                                       "--results", str(tmp_path / "r")])
    configs = problem_configs(args)
    assert [c.op for c in configs] == ["gemm", "attention", "attention_bwd"]
    got = {(c.op, key(p.to_dict())) for c in configs for p in c.problems}
    assert got == {(p["op"], key(p)) for p in recorded.problems}
    nt_gelu = [(d, p) for d, p in configs[0].items() if d.activation]
    assert [(d.layout, p["m"], p["n"], p["k"], d.bias, d.out_dtype) for d, p in nt_gelu] == [("NT", 16, 256, 64, "n", "f16")]
    json_path = recorded.save(tmp_path / "model.json")
    assert load(json_path) == problems
    assert main(["sweep", "--problems", str(json_path), "--op", "attention", "--arch", "gfx1100", "--device", "emu",
                 "--trials", "1", "--results", str(tmp_path / "r"), "--no-progress", "--json"]) == 0
    import pandas as pd
    df = pd.read_parquet(tmp_path / "r" / "gfx1100" / "attention_ladder.parquet")
    assert set(zip(df["head_dim"], df["heads"], df["kv_heads"], df["seq_q"], df["seq_k"], df["causal"])) == \
        {(32, 2, 1, 16, 16, True)}


def test_the_hook_is_removed_when_the_block_raises():
    with pytest.raises(RuntimeError), record_problems():
        assert len(plans.observers) == 1
        raise RuntimeError("stop")
    assert plans.observers == []


def test_calls_that_skip_planning_are_recorded(stub):
    """On a HIP device repeat calls of a known shape skip planning (device_calls' remembered call
    shapes); entering the block forgets them, so the shape is recorded."""
    from wmma_gen.device.hip import HipDevice
    from wmma_gen.device.select import routed
    dev = HipDevice()                     # over tests/conftest.py's stand-in (`stub`)
    try:
        x, w = torch.randn(32, 64).half(), torch.randn(48, 64).half()
        with routed(dev):
            linear(x, w)
            linear(x, w)                                          # remembered: no plan request
            with record_problems() as rec:
                linear(x, w)
                linear(x, w)
        assert rec.problems == [gemm("NT", 32, 48, 64)]
    finally:
        dev.close()
