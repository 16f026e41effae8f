"""The model's calibration band (est_low / est_high, results/model_calibration.md) is printed
wherever a model estimate is: `wmma-gen analyze` for every op and the sweep's end-of-run table."""
import json
import re

import pandas as pd
import pytest

from wmma_gen.cli.main import main
from wmma_gen.cli.sweep_cmd import summarize, table

BAND = re.compile(r"([\d.]+) TFLOP/s \(band ([\d.]+)-([\d.]+),")


@pytest.mark.parametrize("argv", [
    ["--op", "gemm", "--dtype", "f16", "--shape", "1024x1024x1024"],
    ["--op", "attention", "--dtype", "f16", "--head-dim", "64", "--heads", "8", "--kv-heads", "8",
     "--seq-q", "1024", "--seq-k", "1024"],
    ["--op", "attention_bwd", "--dtype", "f16", "--head-dim", "64", "--heads", "8", "--kv-heads", "8",
     "--seq-q", "1024", "--seq-k", "1024", "--causal"],
], ids=lambda a: a[1])
def test_analyze_prints_the_band_around_the_estimate(capsys, argv):
    assert main(["analyze", "--arch", "gfx1100", *argv]) == 0
    text = capsys.readouterr().out
    m = BAND.search(text)
    assert m and "source=model" in text, text
    tflops, low, high = map(float, m.groups())
    assert low < tflops < high
    assert main(["analyze", "--arch", "gfx1100", *argv, "--json"]) == 0
    e = json.loads(capsys.readouterr().out)["estimate"]
    assert e["est_low"] < e["tflops"] < e["est_high"] and e["source"] == "model"


class _Study:
    def __init__(self, name):
        self.study_name = name
        self.user_attrs = {"op": "gemm", "unit": "TFLOP/s",
                           "directive": {"dtype": "f16", "m": 1024, "n": 1024, "k": 1024}}

    def get_trials(self, deepcopy=False):
        return []


def _ladder(**band):
    return pd.DataFrame([{"study": "s1", "rank": 1, "tflops": 63.55, "fraction_of_peak": 0.517, "source": "model",
                          "trial": 11, "block_m": 256, "block_n": 64, "block_k": 32, "waves_m": 4, "waves_n": 1,
                          "lds": "ab", "load_bits": 64, "raster": "row", "split_k": 1, **band}])


def test_sweep_summary_carries_and_prints_the_band_of_the_best_model_row():
    result = type("R", (), {"studies": [_Study("s1")]})()
    rows = summarize(result, _ladder(est_low=44.49, est_high=88.34))
    assert (rows[0]["est_low"], rows[0]["est_high"]) == (44.49, 88.34)
    text = table(rows)
    assert "band (model)" in text.splitlines()[0] and "44.5-88.3" in text


def test_sweep_summary_without_a_band_prints_a_dash():
    result = type("R", (), {"studies": [_Study("s1")]})()
    rows = summarize(result, _ladder(est_low=float("nan"), est_high=float("nan")))   # a hip row: no band
    assert rows[0]["est_low"] is None and " - " in table(rows).splitlines()[-1]
