"""The shipped schedule files' entries beside the built-in default under today's model (issue 38 item 5).

    python bench/shipped_table.py --ops gemm attention attention_bwd     # -> results/shipped_sweeps.md
    python bench/shipped_table.py --ops paged_attention                  # -> results/paged_sweeps.md

results/shipped_sweeps.md and results/paged_sweeps.md record how the files in schedules/ were swept (the
commands, their date, the model of that day: history, written once). The table of their entries goes stale as
soon as the model or a re-rank (bench/rerank_shipped.py) moves, so this bench rewrites it -- and the file's
header line (bench/results_header.py) -- between the markers, from the files as shipped: per entry the
schedule (as its difference from the default the op would run on the bucket problem), the figure the file
stores, today's model estimate of it and of the default (source = model; ops' `estimate_of`, the judge of
tests/compile/test_shipped_beat_default.py) and both kernel sets' main-loop density (compiler output,
model/isa_loop.main_loop_density; tests/compile/test_shipped_density.py's rule).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))                 # this checkout's wmma_gen and autotune
sys.path.insert(0, str(Path(__file__).parent))

import results_header  # noqa: E402

BEGIN, END = "<!-- shipped_table.py: begin -->", "<!-- shipped_table.py: end -->"
OUT = {("gemm", "attention", "attention_bwd"): ROOT / "results" / "shipped_sweeps.md",
       ("paged_attention",): ROOT / "results" / "paged_sweeps.md"}
OPS = ("gemm", "attention", "attention_bwd", "paged_attention")


def bucket(op: str, e: dict) -> str:
    b = e["bucket"]
    if op == "gemm":
        return f"{e.get('layout', 'NN')} {b['m']}x{b['n']}x{b['k']}"
    if op == "paged_attention":
        return f"KV {e['kv_dtype']} D{e['head_dim']} g{e['group']} Sq{b['seq_q']} ctx{b['seq']} b{b['batch']}"
    return f"hd{e['head_dim']} {'causal' if e['causal'] else 'full'} S{b['seq']}"


def versus(tuned, default) -> str:
    """The shipped schedule as its difference from the default ("= default" when equal)."""
    t, d = tuned.to_dict(), default.to_dict()
    diff = [f"{k} {d.get(k)}->{v}" for k, v in t.items() if d.get(k) != v]
    return ", ".join(diff) if diff else "= default"


def rows(ops: tuple[str, ...]) -> list[dict]:
    from autotune.ladder import builtin_default
    from autotune.loop_density import bucket_problem, entry_directive, set_density
    from wmma_gen import schedule_files as sf
    from wmma_gen.ops import registry
    out = []
    for path in sorted(sf.SHIPPED_DIR.glob("*.json")):
        doc = json.loads(path.read_text())
        op, arch, dtype = doc["op"], doc["arch"], doc["dtype"]
        if op not in ops:
            continue
        spec = registry.get(op)
        for e in doc["entries"]:
            d, p, default = builtin_default(op, entry_directive(op, dtype, e), arch, bucket_problem(op, e))
            tuned = spec.schedule.from_dict(e["schedule"])
            mine, base = spec.estimate_of(d, tuned, p, arch), spec.estimate_of(d, default, p, arch)
            out.append({"file": path.name, "arch": arch, "op": op, "dtype": dtype, "bucket": bucket(op, e),
                        "schedule": versus(tuned, default), "source": e["source"], "stored": e["tflops"],
                        "today": mine.tflops, "default": base.tflops,
                        "density": set_density(spec, d, tuned, p, arch),
                        "density_default": set_density(spec, d, default, p, arch)})
    return out


def table(rs: list[dict]) -> list[str]:
    same = sum(r["schedule"] == "= default" for r in rs)
    ratios = [r["today"] / r["default"] for r in rs if r["schedule"] != "= default"]
    looser = sum(r["density"] < r["density_default"] - 1e-12 for r in rs)
    span = f"{min(ratios):.2f}-{max(ratios):.2f}x the default" if ratios else "none"
    lines = [f"{len(rs)} entries; {same} are the default's schedule; the others estimate {span} (source = model); "
             f"{looser} with a main loop looser than the default's (compiler output). \"stored\" = the figure "
             "the file holds (the model of its sweep or re-rank); \"today\" = this run's model.", "",
             "| file | bucket | shipped schedule (vs the default) | source | stored TFLOP/s | today TFLOP/s "
             "| default's TFLOP/s today | shipped / default | loop density shipped / default |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rs:
        lines.append(f"| {r['file']} | {r['bucket']} | {r['schedule']} | {r['source']} | {r['stored']:.2f} | "
                     f"{r['today']:.2f} | {r['default']:.2f} | {r['today'] / r['default']:.2f} | "
                     f"{r['density']:.3f} / {r['density_default']:.3f} |")
    return lines


def rewrite(path: Path, header: str, body: list[str]) -> None:
    """Put the header line after the title (replacing an older one) and the body between the markers."""
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path}: no {BEGIN} ... {END} markers to write the table between")
    i, j = text.index(BEGIN) + len(BEGIN), text.index(END)
    text = text[:i] + "\n" + "\n".join(body) + "\n" + text[j:]
    path.write_text(results_header.put(text, header))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="+", required=True, choices=OPS,
                    help="the ops of one results file: gemm attention attention_bwd, or paged_attention")
    a = ap.parse_args()
    ops = tuple(a.ops)
    if ops not in OUT:
        ap.error(f"--ops {' '.join(ops)}: not allowed; one of " + "; ".join(" ".join(k) for k in OUT))
    rs = rows(ops)
    rewrite(OUT[ops], results_header.line("model, compiler output"), table(rs))
    print(f"wrote {OUT[ops].relative_to(ROOT)}: {len(rs)} entries")


if __name__ == "__main__":
    main()
