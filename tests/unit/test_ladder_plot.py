"""The ladder plot (issue 25 item 5): a panel per dtype, y from 0, peak, band, default vs tuned, best labelled."""
import sys

import pandas as pd

from autotune import ladder
from autotune.plot import figure


def rows():
    out = []
    for dt, unit, peak in (("f16", "TFLOP/s", 122.88), ("i8", "TOP/s", 122.88)):
        for i, n in enumerate((1024, 2048)):
            tf = 50.0 + 20 * i
            out.append(dict(arch="gfx1100", op="gemm", dtype=dt, acc="f32" if dt == "f16" else "i32", layout="NN",
                            m=n, n=n, k=n, batch=1, study=f"{dt}{n}", trial=0, rank=1, block_m=128, block_n=64,
                            block_k=32, waves_m=2, waves_n=2, lds="ab", buffers=2, lds_pad=0, lds_store_bits=16,
                            load_bits=128, k_unroll=1, raster="row", group_m=4, split_k=1, seconds=1e-3, tflops=tf,
                            unit=unit, peak_tflops=peak, fraction_of_peak=tf / peak, source="model",
                            est_low=tf * 0.7, est_high=tf * 1.3, default_tflops=tf - 5, default_source="model",
                            validated=True, vgprs=100, lds_bytes=0, isa_hash="ab", ladder_rows=4))
    return pd.DataFrame(out, columns=ladder.COLUMNS)


def test_one_panel_per_dtype_from_zero_with_peak_band_default_and_best_label():
    fig = figure(rows(), "gfx1100", "gemm", {"f16": 122.88, "i8": 122.88})
    try:
        axes = fig.axes
        assert [a.get_title() for a in axes] == ["f16", "i8"]
        for ax, unit in zip(axes, ("TFLOP/s", "TOP/s")):
            assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] > 122.88 and ax.get_ylabel() == unit
            labels = [l.get_label() for l in ax.get_lines()] + [c.get_label() for c in ax.collections]
            assert any("peak 123" in s for s in labels) and any("default (model)" in s for s in labels)
            assert any("model band" in s for s in labels) and any("tuned (model)" in s for s in labels)
            (best,) = [t.get_text() for t in ax.texts]
            assert best.startswith("best: 128x64x32 w2x2") and "70.0" in best
    finally:
        import matplotlib.pyplot as plt
        plt.close(fig)


def test_baselines_are_drawn_in_their_dtype_panel():
    fig = figure(rows(), "gfx1100", "gemm", {"f16": 122.88}, baselines={"f16": [(1024.0, 80.0, "torch.matmul (hip)")]})
    try:
        f16, i8 = fig.axes
        assert any(l.get_label() == "torch.matmul (hip)" for l in f16.get_lines())
        assert not any(l.get_label() == "torch.matmul (hip)" for l in i8.get_lines())
    finally:
        import matplotlib.pyplot as plt
        plt.close(fig)


def test_importing_the_ladder_does_not_import_matplotlib():
    import subprocess
    code = "import sys, autotune.ladder, autotune.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
