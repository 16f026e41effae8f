"""Property suite for the attention forward: random (arch, dtype, head_dim, causal, window, varlen,
layout, LSE, legal schedule from the SPACE table) x several random problems (batch, GQA/MQA head
counts, Sq != Sk both ways, window sizes, scale, varlen lengths with empty and length-1
sequences), run through wmma_gen.attention() on the emulator against the float64 reference
(wmma_gen/attention_common/reference.py).

Cost: one compile per drawn (arch, directive, schedule) -- the api.py memo keeps the code object --
and PROBLEMS problems on it, each tiny (<= 40 queries, <= 80 keys), so 90 examples give 270
(schedule x problem) cases in about 100 s with a cold compile cache on two cores. Fixed seed
(derandomize).

Tolerances (tests/emu/attention_fwd_helpers.py states the derivation), with u the unit roundoff
of the input dtype (f16 2**-11, bf16 2**-8): |O - O_ref| <= 3u * max(max|V|, 1) per element (P
is rounded to the input dtype before the second WMMA, O once to the output dtype; the f32 sums
add ~D * 2**-24); LSE relative error <= 1e-5 (f32 scores of exactly representable inputs);
rows that see no key give O == 0 exactly and LSE == -inf.

Drawn schedules span the knob table (block sizes capped at 64, waves at 4 and split_kv at 4 for
emulator speed); illegal points are filtered by the schedule's own constraints, and a legal one
whose code object spills (scratch is not emulated; legality bounds VGPRs only from below) is
skipped, as in the GEMM and backward property suites. A quarter of the draws use the arch's
default schedule (what attention() runs untuned)."""
import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
from attention_fwd_helpers import UNIT, rounded  # noqa: E402

import wmma_gen  # noqa: E402
from wmma_gen import numerics  # noqa: E402
from wmma_gen.device.emu import EmuDevice  # noqa: E402
from wmma_gen.ops.attention.api import compile_attention  # noqa: E402
from wmma_gen.ops.attention.defaults import default_schedule  # noqa: E402
from wmma_gen.attention_common.directive import AttentionDirective  # noqa: E402
from wmma_gen.attention_common.reference import attention_forward  # noqa: E402
from wmma_gen.ops.attention.schedule import SPACE, AttentionSchedule  # noqa: E402
from wmma_gen.targets import get_target  # noqa: E402

ARCHS = ("gfx1100", "gfx1151", "gfx1201")
HEAD_DIMS = (32, 64, 64, 80, 96, 128, 128, 256)   # repeats weight the common head dims
CAPS = {"block_m": 64, "block_n": 64, "waves": 4, "split_kv": 4}
PROBLEMS = 3
EXAMPLES = 90
SETTINGS = dict(derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
DEVICE = EmuDevice()


@st.composite
def space_schedules(draw, d: AttentionDirective, arch: str) -> AttentionSchedule:
    """A legal point of SPACE for (d, arch), or the arch's default schedule."""
    t = get_target(arch)
    if draw(st.integers(0, 3)) == 0:
        return default_schedule(t, d)
    knobs = {k.name: draw(st.sampled_from([v for v in k.domain if k.name not in CAPS or v <= CAPS[k.name]]))
             for k in SPACE}
    s = AttentionSchedule(**knobs)
    assume(not s.problems(d, t))
    return s


@st.composite
def kernels(draw):
    arch = draw(st.sampled_from(ARCHS))
    varlen = draw(st.integers(0, 3)) == 0
    d = AttentionDirective(draw(st.sampled_from(["f16", "bf16"])), draw(st.sampled_from(HEAD_DIMS)),
                           causal=draw(st.booleans()), window=draw(st.integers(0, 2)) == 0, varlen=varlen,
                           return_lse=draw(st.booleans()),
                           layout="bshd" if varlen else draw(st.sampled_from(["bshd", "bhsd"])))
    return arch, d, draw(space_schedules(d, arch))


@st.composite
def problems(draw, d: AttentionDirective) -> dict:
    """Run-time sizes for directive d (its flags fix which keywords exist)."""
    kv = draw(st.integers(1, 2))
    p = {"kv_heads": kv, "heads": kv * draw(st.integers(1, 3)), "scale": draw(st.sampled_from([None, 0.3]))}
    if d.window:
        side = st.one_of(st.just(-1), st.integers(0, 24))
        p["window"] = (draw(side), draw(side))
    if d.varlen:
        p["lens"] = draw(st.lists(st.tuples(st.integers(0, 33), st.integers(0, 70)), min_size=1, max_size=3)
                         .filter(lambda x: sum(a for a, _ in x) > 0 and sum(b for _, b in x) > 0))
    elif draw(st.booleans()):   # decode-like: few queries, more keys
        p.update(batch=draw(st.integers(1, 2)), sq=draw(st.integers(1, 4)), sk=draw(st.integers(1, 80)))
    else:
        p.update(batch=draw(st.integers(1, 2)), sq=draw(st.integers(1, 40)), sk=draw(st.integers(1, 48)))
    return p


def _inputs(rng, d: AttentionDirective, p: dict):
    """(q, k, v as attention() takes them, their float64 values, cu_seqlens or None)."""
    D, H, Hk = d.head_dim, p["heads"], p["kv_heads"]
    if d.varlen:
        tq, tk = sum(a for a, _ in p["lens"]), sum(b for _, b in p["lens"])
        shapes = [(tq, H, D), (tk, Hk, D), (tk, Hk, D)]
        cu = [np.concatenate([[0], np.cumsum([x[i] for x in p["lens"]])]).astype(np.int32) for i in (0, 1)]
    else:
        B, sq, sk = p["batch"], p["sq"], p["sk"]
        if d.layout == "bhsd":
            shapes = [(B, H, sq, D), (B, Hk, sk, D), (B, Hk, sk, D)]
        else:
            shapes = [(B, sq, H, D), (B, sk, Hk, D), (B, sk, Hk, D)]
        cu = None
    arrays, exact = [], []
    for shape in shapes:
        stored, f64 = rounded(rng, shape, d.dtype)
        arrays.append(stored if d.dtype == "f16" else numerics.bf16_bits_to_f32(stored))
        exact.append(f64)
    return arrays, exact, cu


def check_case(arch: str, d: AttentionDirective, s: AttentionSchedule, p: dict, seed: int) -> None:
    (q, k, v), (qf, kf, vf), cu = _inputs(np.random.default_rng(seed), d, p)
    kw = dict(causal=d.causal, window=p.get("window"), scale=p["scale"], layout=d.layout)
    if cu is not None:
        kw.update(cu_seqlens_q=cu[0], cu_seqlens_k=cu[1])
    got = wmma_gen.attention(q, k, v, return_lse=d.return_lse, dtype=None if d.dtype == "f16" else "bf16",
                             arch=arch, device=DEVICE, schedule=s, **kw)
    o, lse = got if d.return_lse else (got, None)
    ro, rl = attention_forward(qf, kf, vf, **kw)
    o = np.asarray(o, dtype=np.float64)
    assert not np.isnan(o).any(), "NaN in O"
    tol = 3 * UNIT[d.dtype] * max(np.abs(vf).max(initial=0.0), 1.0)
    err = np.abs(o - ro).max(initial=0.0)
    assert err <= tol, f"O max error {err} > {tol}"
    seen = np.isfinite(rl)                       # LSE layout: (B, H, Sq), varlen (H, total)
    dead = (~seen).T if d.varlen else (~seen if d.layout == "bhsd" else (~seen).transpose(0, 2, 1))
    assert np.all(o[np.broadcast_to(dead[..., None], o.shape)] == 0), "rows that see no key must be exactly 0"
    if lse is not None:
        assert np.array_equal(np.isneginf(lse), ~seen), "LSE -inf rows differ"
        rel = np.abs(lse[seen] - rl[seen]) / (1 + np.abs(rl[seen]))
        assert rel.max(initial=0.0) <= 1e-5, f"LSE relative error {rel.max()}"


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(kernel=kernels(), data=st.data())
def test_forward_matches_reference(kernel, data):
    arch, d, s = kernel
    _, ck = compile_attention(d, s, arch)
    assume(ck.metadata.scratch_bytes == 0)
    for i in range(PROBLEMS):
        p = data.draw(problems(d), label=f"problem {i}")
        check_case(arch, d, s, p, seed=data.draw(st.integers(0, 2 ** 16), label=f"seed {i}"))
