"""Export applies the shipped files' loop-density rule to new entries (issue 38 item 2,
autotune/loop_density.py): a model-ranked entry whose main loop issues fewer v_wmma per instruction than
the default's is dropped even when its model figure beats the default; a GPU-measured one (source hip) is
kept; a bucket the default leaves CUs idle on is not judged by density."""
import json
import math

import pandas as pd
import pytest

from autotune import export, ladder, model_tie
from autotune.ladder import builtin_default
from wmma_gen.ops import registry

SPEC = registry.get("gemm")
D = SPEC.directive("f16", acc="", layout="NN")
# issue 38's tile: the model rated it 107.1 over the default's 96.8 TFLOP/s at gfx1100 4096^3 through wave
# quantisation, at 0.201 v_wmma per issued instruction against the default's 0.275
LOOSE = SPEC.schedule.from_dict(dict(block_m=256, block_n=64, block_k=32, waves_m=4, waves_n=2, lds="ab", buffers=1,
                                     lds_pad=8, lds_store_bits=16, load_bits=32, k_unroll=2, raster="row", group_m=4,
                                     split_k=1))


@pytest.fixture(autouse=True)
def _density_rule_alone(monkeypatch):
    """The rows' figures are issue 38's (the model of that day: LOOSE at 107.1 over the default's 96.8);
    today's model re-estimates LOOSE below the default, so the model-tie gate (autotune/model_tie.py,
    tests/sweep/test_model_tie.py) would drop it before the density rule is asked. Here: the density rule."""
    monkeypatch.setattr(model_tie, "no_model_tie", lambda docs, note: docs)


def row(study, size, schedule, tflops, dflt, source):
    m, n, k = size
    return dict(arch="gfx1100", op="gemm", dtype="f16", acc="f32", layout="NN", m=m, n=n, k=k, batch=1, study=study,
                trial=0, rank=1, **schedule.to_dict(), seconds=1e-3, tflops=tflops, unit="TFLOP/s", peak_tflops=122.88,
                fraction_of_peak=tflops / 122.88, source=source, est_low=math.nan, est_high=math.nan,
                default_tflops=dflt, default_source=source, validated=True, gate_source="emulator", gate_max_abs=0.0,
                vgprs=100, lds_bytes=0, occupancy=4.0, limiter="wmma_issue", isa_hash="ab" * 16, toolchain_mlir="m",
                toolchain_lld="l", wmma_gen_version="0", timestamp="2026-01-01 00:00:00")


def run(tmp_path, *rows):
    lines = []
    written = export.export(pd.DataFrame(list(rows), columns=ladder.COLUMNS).assign(ladder_rows=len(rows)),
                            "gfx1100", tmp_path, note=lines.append)
    entries = [e for p in written for e in json.loads(p.read_text())["entries"]]
    return {(e["bucket"]["m"], e["source"]): SPEC.schedule.from_dict(e["schedule"]) for e in entries}, lines


def test_a_looser_model_winner_is_dropped_and_a_measured_one_kept(tmp_path):
    kept, lines = run(tmp_path, row("model", (4096, 4096, 4096), LOOSE, 107.1, 96.8, "model"),
                      row("hip", (4096, 4096, 8192), LOOSE, 107.1, 96.8, "hip"))
    assert kept == {(4096, "hip"): LOOSE}
    (drop,) = [x for x in lines if x.startswith("dropped gemm gfx1100 f16 m=4096 n=4096 k=4096")]
    mine, base = (float(x.split()[0]) for x in drop.split("main-loop density ")[1].split("< the default's "))
    assert mine < base


def test_the_default_itself_and_a_small_bucket_are_kept(tmp_path):
    _, _, default = builtin_default("gemm", D.to_dict(), "gfx1100", dict(m=4096, n=4096, k=8192, batch=1))
    kept, lines = run(tmp_path, row("default", (4096, 4096, 8192), default, 96.8, 96.8, "model"),   # no shipped bucket
                      row("small", (256, 256, 256), LOOSE, 20.0, 10.0, "model"))   # 2 default workgroups, 96 CUs
    assert kept == {(4096, "model"): default, (256, "model"): LOOSE}
    assert not any("main-loop density" in x for x in lines)
