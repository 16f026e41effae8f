"""The import arrows run one way (issue 39): every module under wmma_gen/ is parsed (ast; imports
inside functions count too) and no module imports from a package in a higher layer, except the
package's lazy re-export (wmma_gen/__init__.py); and no op folder imports another op folder."""
from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "wmma_gen"

# low -> high; a module may import its own layer and any lower one. `ops` is the shared op
# machinery (contract, registry, compile_op, plans, device_calls); `op` an op's own folder.
LAYERS = (
    {"errors", "dtype_bits", "numerics", "targets", "knobs", "layouts", "userdirs", "cachedir", "cachetrim", "compare",
     "hostdata", "schedule_files"},
    {"codeobj"},
    {"compiler", "emu", "model"},
    {"kernels", "device"},
    {"ops"},
    {"tuner"},
    {"attention_common"},  # what the attention op folders share (directive, problem, reference, checks)
    {"op"},
    {"torch"},
    {"integrations"},
    {"autotune"},          # the repository's sweep machinery (studies, storage, ladder, export)
    {"cli"},
)
RANK = {name: i for i, group in enumerate(LAYERS) for name in group}
LAZY_REEXPORT = {"wmma_gen"}          # wmma_gen/__init__.py: PEP 562 re-export of the user functions

def _op_folders() -> set[str]:
    return {p.parent.name for p in (PKG / "ops").glob("*/spec.py")}


OPS = _op_folders()


def _module(path: Path) -> tuple[str, str]:
    """(dotted module name, the package its relative imports start from)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def _from_target(node: ast.ImportFrom, pkg: str) -> str:
    """The dotted module a `from ... import` names, its relative dots resolved from `pkg`."""
    if not node.level:
        return node.module or ""
    base = pkg.split(".")[:len(pkg.split(".")) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path):
    name, pkg = _module(path)
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom):
            target = _from_target(node, pkg)
            yield node.lineno, target
            for a in node.names:        # `from . import x` / `from ..ops import gemm`: x may be a module
                yield node.lineno, f"{target}.{a.name}"


def _layer(module: str) -> str | None:
    """The layer name of a dotted module (None: outside wmma_gen/autotune, or the package root)."""
    parts = module.split(".")
    if parts[0] == "autotune":
        return "autotune"
    if parts[0] != "wmma_gen" or len(parts) < 2:
        return None
    if parts[1] == "ops" and len(parts) > 2 and parts[2] in OPS:
        return "op"
    return parts[1] if parts[1] in RANK else None


def _op_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["wmma_gen", "ops"] and parts[2] in OPS else None


@functools.cache
def _all_imports() -> tuple:
    return tuple((path.relative_to(ROOT), _module(path)[0], line, target)
                 for path in sorted(PKG.rglob("*.py")) for line, target in _imports(path))


def test_the_scan_sees_every_layer_and_the_op_folders():
    seen = {_layer(name) for _, name, _, _ in _all_imports()} - {None}
    assert {"ops", "op", "tuner", "cli", "torch", "kernels"} <= seen
    assert {"gemm", "attention", "attention_bwd", "paged_attention"} <= OPS
    unknown = sorted({p.name for p in PKG.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
                     - {f"{n}.py" for n in RANK} - set(RANK) - {"__init__.py", "schedules"})
    assert not unknown, f"wmma_gen/{unknown} has no layer in LAYERS: add it where its imports put it"


def test_no_module_imports_from_a_higher_layer():
    up = []
    for rel, name, line, target in _all_imports():
        if name in LAZY_REEXPORT:
            continue
        src, dst = _layer(name), _layer(target)
        if src is None or dst is None:
            continue
        if RANK[dst] > RANK[src]:
            up.append(f"{rel}:{line} ({src}) imports {target} ({dst})")
    assert not up, "imports running up the layers:\n" + "\n".join(up)


def test_no_op_folder_imports_another():
    found = [f"{rel}:{line} imports {target}" for rel, name, line, target in _all_imports()
             if _op_of(name) and _op_of(target) and _op_of(name) != _op_of(target)]
    assert not found, "an op folder imports another (share it below ops/<op>/, e.g. attention_common/, or look " \
                      "the other op up through ops/registry.py):\n" + "\n".join(found)


# An op folder reaching another op through the registry (its public API, or a module beside its
# spec) at call time; each is a dependency on that op's public surface, listed here so the list is
# read in review and only shrinks (an entry that no longer occurs fails the test).
REGISTRY_LOOKUPS = {
    ("attention.api", "paged_attention"),          # dtype fp8: the paged kernel runs dense fp8 (dense_fp8.py)
    ("attention.varlen_gate", "attention_bwd"),    # the varlen gate of the backward runs its public API
    ("attention_bwd.spec", "attention"),           # the forward's varlen gate and timer (OpSpec.gate_check, gpu_time)
    ("attention_bwd.tuning", "attention"),         # the forward's Tuning: study names, ladder columns, documents
    ("paged_attention.spec", "attention"),         # the dense forward's split-KV combine kernel
}


def _registry_lookups():
    """(importer module under ops/, looked-up op) for every `registry.get/sibling("<op>", ...)` whose
    op is not the importer's own."""
    found = set()
    for path in sorted((PKG / "ops").rglob("*.py")):
        name = _module(path)[0]
        own = _op_of(name)
        if own is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("get", "sibling") and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "registry" and node.args and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value in OPS and node.args[0].value != own):
                found.add((name.split(".", 2)[2], node.args[0].value))
    return found


def test_registry_lookups_of_another_op_are_the_listed_ones():
    found = _registry_lookups()
    assert not found - REGISTRY_LOOKUPS, f"an op folder looks another op up (list it, or share the piece): " \
                                         f"{sorted(found - REGISTRY_LOOKUPS)}"
    assert not REGISTRY_LOOKUPS - found, f"no longer looked up (remove from REGISTRY_LOOKUPS): " \
                                         f"{sorted(REGISTRY_LOOKUPS - found)}"


def _import_graph() -> dict[str, set[str]]:
    """module -> the wmma_gen modules it imports (anywhere in the file). `from p import a, b` names
    the submodules p.a, p.b when each is one, else p itself; an import of the module's own parent
    package (its __init__ runs first anyway) and of the lazy re-export (wmma_gen) are not arrows."""
    modules = {_module(p)[0]: p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        pkg = _module(path)[1]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                target = _from_target(node, pkg)
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
                targets = subs if len(subs) == len(node.names) else [target, *subs]
            else:
                continue
            graph[name] |= {t for t in targets if t in modules and t != name and t not in LAZY_REEXPORT
                            and not name.startswith(t + ".")}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_circle_scan_finds_a_circle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(g) == [["a", "b", "c"]]


def test_no_import_circle():
    graph = _import_graph()
    assert len(graph) > 100 and graph["wmma_gen.ops.gemm.spec"], "the scan sees the package's modules and imports"
    circles = _circles(graph)
    assert not circles, "import circles (move the shared piece into a module both import, or pass it in):\n" + \
        "\n".join(" <-> ".join(c) + "   [" + "; ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) + "]"
                  for c in circles)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _helpers(folder: Path) -> list[Path]:
    """tests/'s helper modules (stubs, peers, shared fixtures' code): not test files or conftest."""
    return [p for p in folder.rglob("*.py") if not p.name.startswith("test_") and p.name != "conftest.py"]


SCANNED = (PKG, ROOT / "autotune", ROOT / "bench")   # plus tests/'s helper modules (_helpers)
# Private imports left on purpose, each with its reason; the set only shrinks.
PRIVATE_LEFT = {
    # the file and wmma_gen/model/ are another engineer's this session (cleanup6's brief): left for them
    "bench/calibration_peer_kernels.py imports _LABEL from wmma_gen.model.isa_loop",
}


def _private_imports() -> list[str]:
    """`from <module> import _name` (or through a `_private` module) where <module> belongs to
    another package than the importer (a subpackage is another package; bench/ scripts and tests/
    helpers own no wmma_gen or autotune package); dunder names excepted."""
    ours = [p for root in (PKG, ROOT / "autotune") for p in root.rglob("*.py")]
    modules = {_module(p)[0] for p in ours}
    packages = {_module(p)[0] for p in ours if p.name == "__init__.py"} | {"autotune"}
    found = []
    for path in sorted([p for root in SCANNED for p in root.rglob("*.py")] + _helpers(ROOT / "tests")):
        name, pkg = _module(path)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = _from_target(node, pkg)
            if target.split(".")[0] not in ("wmma_gen", "autotune"):
                continue
            owner = target if target in packages else target.rpartition(".")[0]
            for a in node.names:
                via = [c for c in target.split(".") if _private(c)]
                sub = f"{target}.{a.name}" in modules          # `from pkg import module`: owned by pkg
                if (_private(a.name) or via) and (target if sub else owner) != pkg:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name} imports {a.name} from {target}")
    return found


def _unplaced(finding: str) -> str:
    """A finding without its line number and importer module: "<path> imports <name> from <module>"."""
    path, rest = finding.split(" ", 1)
    return f"{path.rsplit(':', 1)[0]} imports {rest.split(' imports ', 1)[1]}"


def test_no_private_name_is_imported_from_another_package():
    found = [f for f in _private_imports() if _unplaced(f) not in PRIVATE_LEFT]
    left = {_unplaced(f) for f in _private_imports()}
    assert not PRIVATE_LEFT - left, f"no longer imported (remove from PRIVATE_LEFT): {sorted(PRIVATE_LEFT - left)}"
    assert not found, "private names imported across packages (give them a public name where they are " \
                      "defined):\n" + "\n".join(found)
