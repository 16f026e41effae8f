"""`wmma-gen targets`: the target table."""
from __future__ import annotations

from ..targets import TARGETS
from .options import add_json, emit


def register(sub) -> None:
    p = sub.add_parser("targets", help="list supported GPUs, their WMMA dtypes and peak rates")
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    rows = []
    for t in TARGETS.values():
        rows.append({"arch": t.arch, "name": t.name, "family": t.family, "cus": t.cus, "boost_ghz": t.boost_ghz,
                     "sustained_ghz": t.sustained_ghz or None, "sustained_source": t.sustained_source or None,
                     "mem_bw_gbs": t.mem_bw_gbs, "lds_bytes": t.lds_bytes, "vgprs_per_simd": t.vgprs_per_simd,
                     "vgpr_granule": t.vgpr_granule,
                     "wmma": {f"{d}/{a}": i.mnemonic for (d, a), i in t.wmma.items()},
                     "peak_tflops": {d: round(t.peak_tflops(d), 1) if t.peak_known(d) else None for d in t.dtypes},
                     "sustained_peak_tflops": ({d: round(t.sustained_peak_tflops(d), 1) for d in t.dtypes}
                                               if t.sustained_ghz else None)})
    lines = [f"{'arch':8} {'name':28} {'CUs':>4} {'boost':>5} {'sust.':>5} {'GB/s':>6}  "
             "peak dense TFLOP/s (TOP/s for ints): nominal/sustained"]
    for r in rows:
        sus = r["sustained_peak_tflops"] or {}
        peaks = " ".join(f"{d}={'?' if v is None else v}/{sus.get(d, '-')}" for d, v in r["peak_tflops"].items())
        ghz = f"{r['sustained_ghz']:.2f}" if r["sustained_ghz"] else "-"
        cus, boost, bw = (("?" if r[k] is None else r[k]) for k in ("cus", "boost_ghz", "mem_bw_gbs"))
        lines.append(f"{r['arch']:8} {r['name'][:28]:28} {cus:>4} {boost:>5} {ghz:>5} {bw:>6}  {peaks}")
    lines.append("GHz: boost (product page) and sustained WMMA clock, calibrated on others' published measurements "
                 "(targets.py [CALIB], results/model_calibration.md); '-' = no published point, the model uses boost; "
                 "'?'/None = no public figure for the part (targets.py [UNKNOWN]): no peak, no model estimate")
    emit(args, rows, "\n".join(lines))
    return 0
