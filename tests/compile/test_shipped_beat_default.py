"""Every shipped schedule entry beats (or is) the op's built-in default on its bucket problem,
under the model (issue 25 item 3): the shipped files never make a call slower than no file.

Both figures are the registry's model estimate (source=model) of the compiled kernels on the
bucket's problem -- the same problem a sweep study of that bucket ranks (ops/<op>/tuning.py: GEMM
M x N x K batch 1; attention batch 1, 16 heads, Sq = Sk = the bucket's seq; paged decode the
bucket's batch, Sq and context length, 8 kv heads x the entry's group). The default is the
one the op uses when no file has an entry (autotune.ladder.builtin_default). A model-ranked
entry's win must also survive every one-at-a-time variation (x0.5, x2) of the model's guessed
parameters (model/robustness.py), as export requires, and a model-ranked entry that is not the default
must beat it by more than the model's resolution (autotune/model_tie.py: a tie keeps the default).
"""
import json

import pytest

from autotune import model_tie
from autotune.ladder import builtin_default
from autotune.loop_density import bucket_problem, entry_directive
from wmma_gen import schedule_files as sf
from wmma_gen.compiler import toolchain
from wmma_gen.model import robustness
from wmma_gen.ops import registry


problem, directive = bucket_problem, entry_directive     # the export rule's helpers (autotune/loop_density.py)


def entries():
    out = []
    for path in sorted(sf.SHIPPED_DIR.glob("*.json")):
        doc = json.loads(path.read_text())
        for i, e in enumerate(doc["entries"]):
            out.append(pytest.param(doc["arch"], doc["op"], doc["dtype"], e, id=f"{path.stem}[{i}]"))
    return out


def _distribution(mlir: str) -> str:
    return mlir.split("==")[0]          # "mlir-gml==0.0.4 (mlir, LLVM 23.0.0git)" -> "mlir-gml"


@pytest.mark.parametrize("arch, op, dtype, entry", entries())
def test_shipped_entry_is_at_least_the_default_under_the_model(arch, op, dtype, entry):
    tuned_with, loaded = _distribution(entry["toolchain"]["mlir"]), _distribution(toolchain.mlir_version())
    if tuned_with != loaded:
        # the model ranks the compiled ISA, and each provider's LLVM compiles its own defaults (e.g.
        # LLVM 24's attention-forward `fence`): the claim holds under the toolchain the entry was
        # tuned with (docs/mlir_providers.md, "The default": shipped files are mlir-gml's)
        pytest.skip(f"entry tuned with {tuned_with}, {loaded} loaded")
    spec = registry.get(op)
    d, p, default = builtin_default(op, directive(op, dtype, entry), arch, problem(op, entry))
    tuned = spec.schedule.from_dict(entry["schedule"])
    mine = spec.estimate_of(d, tuned, p, arch)
    base = spec.estimate_of(d, default, p, arch)
    assert mine.source == base.source == "model"
    assert mine.tflops >= base.tflops * (1 - 1e-9), (tuned, mine, default, base)
    if entry["source"] == "model" and tuned != default:
        # a model tie keeps the default (autotune/model_tie.py): a different schedule must win by more than 1%
        assert model_tie.beats(mine.tflops, base.tflops), (tuned, mine.tflops, default, base.tflops)
        flips = robustness.flips(arch, lambda: (spec.estimate_of(d, tuned, p, arch).tflops,
                                                spec.estimate_of(d, default, p, arch).tflops))
        assert not flips, f"{tuned} beats the default only at the model's guessed values: {flips}"
