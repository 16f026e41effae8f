"""Export keeps a model-ranked entry only if its main loop is no looser than the default's (issue 38 item 2).

Without a GPU the model is the only judge of a tuned entry, and it can prefer a tile whose main loop
issues fewer v_wmma per instruction than the built-in default (issue 38: gfx1100 f16 4096^3 256x64x32 at
0.201 vs the default's 0.275, ranked above it through wave quantisation) while every published
measurement on that GPU picks the denser tiles. So an exported entry whose figure is a model estimate
(source "model") and whose schedule is not the default is compiled beside the default on its bucket
problem and kept only if `model.isa_loop.main_loop_density` (compiler output, static) of its kernel set
is >= the default's, on a bucket where the default fills the GPU (`fills_the_gpu`). An entry measured on a GPU (source "hip") is the cited measurement that may
overrule the rule and is kept unchecked. One line per checked entry says kept or dropped, with both
figures (`note`).

The bucket problem and directive of an entry are those a sweep study of that bucket ranks
(ops/<op>/tuning.py); tests/compile/test_shipped_density.py applies the same rule to the shipped files.
"""
from __future__ import annotations

from typing import Callable

# the ops the rule checks; another op's model-ranked entries (mla) are kept with a line saying so
KNOWN = ("gemm", "attention", "attention_bwd", "paged_attention")


def bucket_problem(op: str, e: dict) -> dict:
    """The problem a sweep study of entry `e`'s bucket ranks (ops/<op>/tuning.py)."""
    if op == "gemm":
        return {**e["bucket"], "batch": 1}
    if op == "paged_attention":     # the study's problem (ops/paged_attention/tuning.items): L = the bucket's seq
        from wmma_gen.ops.paged_attention.tuning import AXIS
        b, kv_heads = e["bucket"], AXIS["kv_heads"].sweep[0]
        return dict(batch=b["batch"], heads=e["group"] * kv_heads, kv_heads=kv_heads, seq_q=b["seq_q"],
                    seq_len=b["seq"], window_left=-1, window_right=-1)
    if op == "mla":                 # ops/mla/tuning.items: L = the bucket's seq
        b = e["bucket"]
        return dict(batch=b["batch"], heads=b["heads"], seq_q=b["seq_q"], seq_len=b["seq"])
    from wmma_gen.ops.attention.tuning import BATCH, HEADS
    seq = e["bucket"]["seq"]
    return dict(batch=BATCH, heads=HEADS, kv_heads=HEADS, seq_q=seq, seq_k=seq)


def entry_directive(op: str, dtype: str, e: dict) -> dict:
    """The directive (as a dict) of entry `e` of an (op, dtype) schedule file."""
    from wmma_gen.ops import registry
    spec = registry.get(op)
    if op == "gemm":
        d = spec.directive(dtype, acc=e.get("acc", ""), layout=e.get("layout", "NN"))   # sizes: bucket_problem
    elif op == "paged_attention":
        d = spec.directive(dtype, e["head_dim"], e["block_size"], e["kv_dtype"], e["causal"], softcap=e["softcap"])
    elif op == "mla":
        d = spec.directive(dtype, e["head_dim"], e["head_dim_v"], e["block_size"], e["kv_dtype"], e["causal"])
    else:
        d = spec.directive(dtype, e["head_dim"], causal=e["causal"], **({"op": op} if op != "attention" else {}))
    return d.to_dict()


def set_density(spec, d, s, problem: dict, arch: str) -> float:
    """main_loop_density of schedule `s`'s compiled kernel set on `problem`."""
    from wmma_gen.model.isa_loop import main_loop_density
    from wmma_gen.ops.compile_op import compile_op
    cs = compile_op(spec, d, s, spec.key_of(d, s, spec.problem_from(problem)), arch)
    return main_loop_density(ck.isa for _, ck in cs.compiled)


def default_workgroups(op: str, d, default, problem: dict) -> int | None:
    """Workgroups the default launches on `problem` (its WMMA kernel's grid, as the op's model counts
    it); None for an op this does not know (then the rule applies)."""
    if op == "gemm":
        from wmma_gen.ops.gemm.problem import as_problem
        from wmma_gen.ops.gemm.traffic import workgroups
        return workgroups(d, default, as_problem(problem))
    if op == "attention":
        from wmma_gen.ops.attention.model import key_tile_trips
        return key_tile_trips(d, default, problem)[1]
    if op == "attention_bwd":      # the dK/dV kernel's grid (ops/attention_bwd/model.py)
        return -(-problem["seq_k"] // default.block_n) * problem["kv_heads"] * problem["batch"]
    if op == "paged_attention":    # ops/paged_attention/model.trips_and_keys: sequences x kv heads x row tiles x split
        from wmma_gen.ops.paged_attention.model import trips_and_keys
        return trips_and_keys(d, default, problem, [problem["seq_len"]] * problem["batch"])[1]
    return None


def fills_the_gpu(op: str, d, default, problem: dict, arch: str) -> bool:
    """Whether the default launches at least one workgroup per CU on `problem`. Below that (a GEMM
    of 256^3 runs 2 workgroups of the 128x256 default on 96 CUs; an attention forward at seq 512,
    16 heads, 64) a smaller, looser tile wins by parallelism, which the loop density does not see,
    so the rule does not apply."""
    from wmma_gen.targets import get_target
    n = default_workgroups(op, d, default, problem)
    return n is None or n >= get_target(arch).require("cus")


def densities(op: str, dtype: str, arch: str, e: dict):
    """(entry's density, default's density, default schedule) on the entry's bucket problem; the two
    densities are None when the entry's schedule is the default or the default does not fill the GPU
    (fills_the_gpu: the rule does not apply)."""
    from wmma_gen.ops import registry
    from .ladder import builtin_default
    spec = registry.get(op)
    d, p, default = builtin_default(op, entry_directive(op, dtype, e), arch, bucket_problem(op, e))
    tuned = spec.schedule.from_dict(e["schedule"])
    if tuned == default or not fills_the_gpu(op, d, default, p, arch):
        return None, None, default
    return set_density(spec, d, tuned, p, arch), set_density(spec, d, default, p, arch), default


def no_looser_than_default(docs: list, note: Callable[[str], None]) -> list:
    """`docs` [(file name, document, Tuning)] without the model-ranked entries whose main-loop density is
    below the default's on their bucket problem (module doc); documents left empty are removed."""
    from .shadow import key_text
    out = []
    for name, doc, ad in docs:
        kept = []
        for e in doc["entries"]:
            if e.get("source") != "model":
                kept.append(e)          # a GPU measurement is the citation that may overrule the rule
                continue
            if doc["op"] not in KNOWN:
                kept.append(e)
                note(f"kept {doc['op']} {doc['arch']} {doc['dtype']} {key_text(e)} unchecked: the loop-density rule "
                     f"knows the bucket problem of {', '.join(KNOWN)} only")
                continue
            mine, base, default = densities(doc["op"], doc["dtype"], doc["arch"], e)
            if mine is None:
                kept.append(e)          # the default itself, or a bucket the default leaves CUs idle on
                continue
            what = f"{doc['op']} {doc['arch']} {doc['dtype']} {key_text(e)}"
            if mine >= base - 1e-12:
                kept.append(e)
                note(f"kept {what}: main-loop density {mine:.3f} v_wmma per issued instruction >= the default's "
                     f"{base:.3f}")
            else:
                note(f"dropped {what}: main-loop density {mine:.3f} v_wmma per issued instruction < the default's "
                     f"{base:.3f} ({default}); the model's win ({e['tflops']} {e.get('unit', '')}) needs a GPU "
                     "measurement (source hip) to overrule the denser default (issue 38)")
        if kept:
            out.append((name, {**doc, "entries": kept}, ad))
        else:
            note(f"not writing {name}: every entry was dropped")
    return out
