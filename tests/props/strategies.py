"""Hypothesis strategies derived from the one knob table (wmma_gen.ops.gemm.schedule.SPACE)."""
from hypothesis import strategies as st

from wmma_gen.ops.gemm.directive import ACTIVATIONS, LAYOUTS, GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import SPACE, Schedule
from wmma_gen.targets import get_target


def schedules(max_block: int = 256) -> st.SearchStrategy[Schedule]:
    """Any point of SPACE (block sizes capped for emulator speed)."""
    fields = {}
    for k in SPACE:
        dom = [v for v in k.domain if not (k.name.startswith("block_") and v > max_block)]
        fields[k.name] = st.sampled_from(dom)
    return st.fixed_dictionaries(fields).map(lambda f: Schedule(**f))


@st.composite
def gemm_cases(draw, arch: str, max_size: int = 80, epilogues: bool = True) -> tuple[GemmDirective, GemmProblem]:
    """(directive, problem); drawn in the order the sized directive was, so the derandomized
    examples are the ones the suite always ran."""
    t = get_target(arch)
    dtype, acc = draw(st.sampled_from(sorted(t.wmma)))
    layout = draw(st.sampled_from(LAYOUTS))
    even = 2 if dtype == "i4" else 1  # packed i4 needs an even stored row length
    size = st.integers(1, max_size // even).map(lambda v: v * even)
    m, n, k = draw(size), draw(size), draw(size)
    kw = dict(acc=acc, layout=layout)
    p = GemmProblem(m, n, k, batch=draw(st.integers(1, 2)))
    if acc == "i32":
        kw["unsigned"] = draw(st.booleans())
    elif epilogues:
        kw["alpha"] = draw(st.sampled_from([1.0, 0.5, -2.0]))
        kw["beta"] = draw(st.sampled_from([0.0, 1.0, 0.25]))
        kw["bias"] = draw(st.sampled_from(["", "n", "m"]))
        kw["activation"] = draw(st.sampled_from(("",) + ACTIVATIONS))
        kw["out_dtype"] = draw(st.sampled_from(["", "f32", "f16", "bf16"]))
    return GemmDirective(dtype, **kw), p
