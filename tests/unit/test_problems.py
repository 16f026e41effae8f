"""Problem files (autotune/problems.py): what `wmma-gen sweep --problems FILE` reads, and every
refusal naming the item, the field, the value and what is allowed (issue 25 item 2)."""
import json

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings, strategies as st

from autotune.problems import AttentionRow, GemmRow, ProblemFileError, load, parse
from wmma_gen.tuner.rows import dumps
from wmma_gen.cli.main import main

GEMM = {"op": "gemm", "dtype": "f16", "layout": "NT", "batch": 4, "m": 64, "n": 96, "k": 128,
        "epilogue": {"bias": True, "activation": "gelu"}}
ATTN = {"op": "attention", "dtype": "f16", "head_dim": 64, "batch": 2, "heads": 8, "kv_heads": 2, "seq_q": 128,
        "seq_k": 512, "causal": True, "window": [64, 0]}


def write(tmp_path, items, name="problems.yaml"):
    path = tmp_path / name
    path.write_text(json.dumps(items) if name.endswith(".json") else yaml.safe_dump(items))
    return path


@pytest.mark.parametrize("name", ["problems.yaml", "problems.json"])
def test_a_file_gives_its_problems_with_defaults_and_no_duplicates(tmp_path, name):
    bwd = {"op": "attention_bwd", "dtype": "bf16", "head_dim": 128, "heads": 4, "seq_q": 256, "seq_k": 256}
    got = load(write(tmp_path, [GEMM, ATTN, GEMM, bwd, {"op": "gemm", "dtype": "i8", "m": 32, "n": 32, "k": 64}],
                     name), "gfx1100")
    assert got == (GemmRow("f16", 64, 96, 128, layout="NT", batch=4, bias=True, activation="gelu"),
                   AttentionRow("attention", "f16", 64, 8, 128, 512, batch=2, kv_heads=2, causal=True,
                                window=(64, 0)),
                   AttentionRow("attention_bwd", "bf16", 128, 4, 256, 256),
                   GemmRow("i8", 32, 32, 64))
    assert got[2].kv_heads == 4 and got[2].window is None and got[2].layout == "bshd"
    d = got[0].directive()
    assert (d.layout, got[0].problem.batch, d.bias, d.activation, d.out_dtype) == ("NT", 4, "n", "gelu", "f32")
    a = got[1].directive()
    assert a.window and a.causal and a.return_lse and not got[2].directive().return_lse
    assert got[1].sizes() == {"batch": 2, "heads": 8, "kv_heads": 2, "seq_q": 128, "seq_k": 512,
                              "window_left": 64, "window_right": 0}


def test_a_row_carries_the_ops_one_problem():
    """Issue 26 item 1: a row's sizes are the op's own Problem class (ops/<op>/spec.py), the one the
    check and the kernels read -- no second Problem type in the problem-file readers."""
    from wmma_gen.ops.attention.spec import AttentionProblem
    from wmma_gen.ops.gemm.spec import GemmProblem
    gemm, attn = parse([GEMM, ATTN])
    assert gemm.problem == GemmProblem(64, 96, 128, 4) and type(gemm.problem) is GemmProblem
    assert attn.problem == AttentionProblem(batch=2, heads=8, kv_heads=2, seq_q=128, seq_k=512, window_left=64,
                                            window_right=0)
    assert type(attn.problem) is AttentionProblem


@pytest.mark.parametrize("name", ["p.yaml", "p.json"])
def test_dump_round_trips(tmp_path, name):
    problems = load(write(tmp_path, [GEMM, ATTN, {**ATTN, "varlen": True, "window": None, "op": "attention_bwd"}]))
    path = tmp_path / name
    path.write_text(dumps(problems, path))
    assert load(path) == problems
    assert [p.to_dict() for p in problems] == (json.loads if name.endswith("json") else yaml.safe_load)(
        path.read_text())


BAD = [
    ("gemm", {"op": "conv"}, "problems[0].op = 'conv' is not allowed: one of gemm, attention, attention_bwd"),
    ("gemm", {"M": 64}, "problems[0].M = 64 is not allowed: a field of gemm: one of op, dtype, layout, batch, m"),
    ("gemm", {"m": None}, "problems[0].m = None is not allowed: an integer >= 1"),
    ("gemm", {"layout": "XY"}, "problems[0].layout = 'XY' is not allowed: one of NN, NT, TN, TT"),
    ("gemm", {"batch": 0}, "problems[0].batch = 0 is not allowed: an integer >= 1"),
    ("gemm", {"k": True}, "problems[0].k = True is not allowed: an integer >= 1"),
    ("gemm", {"epilogue": {"activation": "tanh"}},
     "problems[0].epilogue.activation = 'tanh' is not allowed: '' or one of relu, gelu, gelu_tanh, silu"),
    ("gemm", {"epilogue": {"bias": "yes"}}, "problems[0].epilogue.bias = 'yes' is not allowed: true or false"),
    ("gemm", {"epilogue": {"scale": 2}}, "problems[0].epilogue.scale = 2 is not allowed: bias or activation"),
    ("gemm", {"epilogue": "gelu"}, "problems[0].epilogue = 'gelu' is not allowed: a mapping"),
    ("gemm", {"out_dtype": "i32"}, "problems[0].out_dtype = 'i32' is not allowed: one of f32, f16, bf16"),
    ("gemm", {"dtype": "fp8"}, "problems[0].dtype = 'fp8' is not allowed: gemm on gfx1100 takes f16, bf16, i8, i4"),
    ("gemm", {"m": 1 << 16, "k": 1 << 16}, "problems[0].m/n/k = [65536, 96, 65536] is not allowed: a problem the "
                                           "kernels can index"),
    ("attention", {"head_dim": 50}, "problems[0].head_dim = 50 is not allowed: one of "),
    ("attention", {"kv_heads": 3}, "problems[0].kv_heads = 3 is not allowed: a divisor of heads=8"),
    ("attention", {"window": [16]}, "problems[0].window = [16] is not allowed: None or a pair (left, right)"),
    ("attention", {"window": [-2, 0]}, "problems[0].window = [-2, 0] is not allowed: None or a pair"),
    ("attention", {"causal": "yes"}, "problems[0].causal = 'yes' is not allowed: true or false"),
    ("attention", {"varlen": True, "layout": "bhsd"}, "problems[0].layout = 'bhsd' is not allowed: 'bshd' when varlen"),
    ("attention", {"seq_q": 0}, "problems[0].seq_q = 0 is not allowed: an integer >= 1 and <= 1048576"),
    ("attention", {"dtype": "i8"}, "problems[0].dtype = 'i8' is not allowed: one of f16, bf16"),
    ("attention", {"m": 64}, "problems[0].m = 64 is not allowed: a field of attention: one of op, dtype, head_dim"),
]


@pytest.mark.parametrize("base, change, message", BAD, ids=[m.split(" = ")[0].split(".", 1)[1] + f"-{i}"
                                                             for i, (_, _, m) in enumerate(BAD)])
def test_a_bad_item_is_refused_naming_item_field_value_and_allowed(tmp_path, base, change, message):
    item = {**(GEMM if base == "gemm" else ATTN), **change}
    path = write(tmp_path, [item])
    with pytest.raises(ProblemFileError) as err:
        load(path, "gfx1100")
    assert str(err.value) == f"{path}: {message}" or str(err.value).startswith(f"{path}: {message}")
    assert "\n" not in str(err.value)


def test_a_missing_field_and_the_item_index_are_named(tmp_path):
    path = write(tmp_path, [GEMM, {k: v for k, v in ATTN.items() if k != "seq_k"}])
    with pytest.raises(ProblemFileError, match=r"problems\[1\]\.seq_k = None is not allowed: given: attention needs "
                                               r"dtype, head_dim, heads, seq_q, seq_k"):
        load(path)


@pytest.mark.parametrize("text, message", [
    ("op: gemm\n", "<root> = 'dict' is not allowed: a non-empty list of problems"),
    ("[]\n", "<root> = 'list' is not allowed: a non-empty list"),
    ("- [1, 2\n", "<yaml> = "),
    ("- 3\n", "problems[0] = 'int' is not allowed: a mapping of fields"),
])
def test_a_bad_file_is_refused_in_one_line(tmp_path, text, message):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(ProblemFileError) as err:
        load(path)
    assert str(err.value).startswith(f"{path}: {message}") and "\n" not in str(err.value)


def _alias_bomb(levels=12) -> str:
    """The 1 KB billion-laughs file: each level lists the previous one 9 times (9**12 leaves)."""
    lines = ['a0: &a0 ["lol"]'] + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_yaml_alias_bomb_is_refused_before_anything_expands(tmp_path):
    """Issue 37: a 1 KB alias bomb ran past 150 s; the expanded size is counted from the event
    stream (nothing constructed) and refused past MAX_NODES values."""
    path = tmp_path / "bomb.yaml"
    path.write_text(_alias_bomb())
    assert path.stat().st_size < 2048
    with pytest.raises(ProblemFileError, match=r"<yaml> = 'more than 640000 values once aliases are expanded"):
        load(path)


@pytest.mark.parametrize("text", ["- " + "[" * 100_000 + "]" * 100_000 + "\n",
                                  "".join("  " * i + "-\n" for i in range(100))])
def test_deep_nesting_is_refused_from_the_events(tmp_path, text):
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    with pytest.raises(ProblemFileError, match=r"<yaml> = 'nesting deeper than 8 at line \d+'"):
        load(path)


def test_aliases_that_stay_small_are_read(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("- &g {op: gemm, dtype: f16, m: 64, n: 64, k: 64}\n- *g\n- {op: gemm, dtype: f16, m: 32, n: 64, "
                    "k: 64, epilogue: &e {bias: true}}\n- {op: gemm, dtype: f16, m: 16, n: 64, k: 64, epilogue: *e}\n")
    assert [p.sizes()["m"] for p in load(path)] == [64, 32, 16]


def test_too_many_problems_are_refused_from_the_events(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("- {op: gemm, dtype: f16, m: 64, n: 64, k: 64}\n" * 10_001)
    with pytest.raises(ProblemFileError, match=r"more than 10000 problems"):
        load(path)


def test_dump_writes_no_aliases_even_for_shared_objects(tmp_path):
    shared = {"bias": True, "activation": "gelu"}
    text = dumps([{**GEMM, "epilogue": shared}, {**GEMM, "m": 128, "epilogue": shared}])
    assert "&id" not in text and "*id" not in text
    path = tmp_path / "p.yaml"
    path.write_text(text)
    assert len(load(path)) == 2


def test_parse_without_arch_skips_only_the_target_check():
    assert parse([{**GEMM, "dtype": "fp8"}])[0].dtype == "fp8"


def test_cli_refuses_a_bad_file_in_one_line_before_any_study(tmp_path, capsys):
    path = write(tmp_path, [GEMM, {**ATTN, "heads": 6, "kv_heads": 4}])
    assert main(["sweep", "--problems", str(path), "--arch", "gfx1100", "--results", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"wmma-gen sweep: error: {path}: problems[1].kv_heads = 4 is not allowed: a divisor of heads=6 "
                   "(grouped-query attention)")
    assert not (tmp_path / "r" / "gfx1100").exists()


@pytest.mark.parametrize("flags, named", [(["--shapes", "64"], "--shapes"), (["--dtypes", "f16"], "--dtypes"),
                                          (["--head-dims", "64"], "--head-dims"), (["--op", "attention_bwd"], "--op")])
def test_cli_refuses_flags_that_choose_problems_beside_the_file(tmp_path, capsys, flags, named):
    path = write(tmp_path, [GEMM, ATTN])
    assert main(["sweep", "--problems", str(path), "--arch", "gfx1100", "--results", str(tmp_path / "r"),
                 *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"wmma-gen sweep: error: {named}=") and "\n" not in err


_TOKENS = st.sampled_from(["1", "0x1f", "1_000", "017", "-3", "+2", "1.5", ".inf", "-.inf", ".nan", "1e3", "true",
                           "yes", "No", "off", "null", "Null", "NN", "f16", "gemm", "a.b", "1:30", "2001-12-14",
                           "x-y", "_", "-", "a b", "~", "'q'", "3.", "0o17", "1__2"])


def _flow(depth=0):
    """A flow value: a token, or a flow list / mapping of them, nested at most twice."""
    if depth >= 2:
        return _TOKENS
    return st.one_of(_TOKENS, st.lists(_flow(depth + 1), max_size=3).map(lambda v: "[" + ", ".join(v) + "]"),
                     st.lists(st.tuples(_TOKENS, _flow(depth + 1)), max_size=3)
                     .map(lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.tuples(_TOKENS, _flow()), min_size=1, max_size=4), min_size=1, max_size=4))
def test_the_flow_fast_path_reads_what_pyyaml_reads(items):
    """One `- {...}` flow mapping per line (what dumps writes) skips PyYAML's constructor; where it
    takes a text (else None: PyYAML reads it) the values are PyYAML's, scalar typing included."""
    import yaml
    from autotune.problems import _json_shaped
    text = "".join("- {" + ", ".join(f"{k}: {v}" for k, v in kv) + "}\n" for kv in items)
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        assert _json_shaped(text) is None
        return
    got = _json_shaped(text)
    if got is not None:
        assert repr(got) == repr(expected)            # repr: nan == nan, and 1 vs True vs 1.0 kept apart


def test_a_dumped_ten_thousand_problem_file_is_read_without_pyyamls_constructor(tmp_path, monkeypatch):
    """Issue 37 item 4 (< 1 s for any 1 MB input): a legal file of 10,000 flow-mapping problems
    took ~4 s in PyYAML's Python constructor; it now takes the flow fast path (yaml.load unused)."""
    import yaml
    path = tmp_path / "p.yaml"
    path.write_text("".join(f"- {{op: gemm, dtype: f16, m: {16 * (i + 1)}, n: 64, k: 64, layout: NN, "
                            f"epilogue: {{bias: {'true' if i % 2 == 0 else 'false'}, activation: null}}}}\n"
                            for i in range(10_000)))     # dumps' shape (its own writer is slow at 10,000)
    assert 0.5e6 < path.stat().st_size <= 1 << 20
    monkeypatch.setattr(yaml, "load", lambda *a, **k: pytest.fail("PyYAML's constructor ran"))
    got = load(path, "gfx1100")
    assert len(got) == 10_000 and got[1].sizes()["m"] == 32 and got[0].bias and not got[1].bias


_BLOCK_VALUES = st.one_of(_TOKENS, st.sampled_from(["[1, 2]", "[a b]", "{x: 1}", "{x: [1]}", "[1, 2] x", "1 # c", "a, b",
                                                    "{a: 1, b: 2}", "''", "[]", "{}"]))
_KEYS = st.sampled_from(["op", "m", "n", "k", "dtype", "epilogue", "window", "a_b", "1x"])


@st.composite
def _block_item(draw):
    """One `- key: ...` block mapping: scalar values, a nested mapping (indent 4) or a nested
    list (indent 2 or 4), sometimes a bare `key:`, sometimes a bad indent."""
    lines = []
    for i, key in enumerate(draw(st.lists(_KEYS, min_size=1, max_size=4))):
        lead = "- " if i == 0 else draw(st.sampled_from(["  ", "  ", "  ", "   ", " "]))
        kind = draw(st.sampled_from(["value", "value", "map", "seq", "bare"]))
        if kind == "value":
            lines.append(f"{lead}{key}: {draw(_BLOCK_VALUES)}")
        elif kind == "bare":
            lines.append(f"{lead}{key}:")
        elif kind == "map":
            lines.append(f"{lead}{key}:")
            lines += [f"    {k}: {draw(_BLOCK_VALUES)}" for k in draw(st.lists(_KEYS, min_size=1, max_size=2))]
        else:
            lines.append(f"{lead}{key}:")
            ind = draw(st.sampled_from(["  ", "    "]))
            lines += [f"{ind}- {draw(_BLOCK_VALUES)}" for _ in range(draw(st.integers(1, 2)))]
    return lines


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_block_item(), min_size=1, max_size=3))
@example([["- op: -"]])                       # a lone "-" value: a block sequence indicator, PyYAML refuses it
@example([["- op: x", "  l:", "  - -"]])       # as a list item: a nested [None], not the string "-"
def test_the_block_fast_path_reads_what_pyyaml_reads(items):
    """Block mappings of single-token values (what yaml.safe_dump writes) skip PyYAML's parser and
    constructor; where the fast path takes a text its values are PyYAML's, else it leaves it."""
    import yaml
    from autotune.problems import _json_shaped
    text = "".join(ln + "\n" for item in items for ln in item)
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        assert _json_shaped(text) is None
        return
    got = _json_shaped(text)
    if got is not None:
        assert repr(got) == repr(expected)


def test_a_block_style_ten_thousand_problem_file_is_read_without_pyyaml(tmp_path, monkeypatch):
    """The same 10,000 problems as yaml.safe_dump writes them (block style, 1 MB): the block fast path."""
    import yaml
    path = tmp_path / "p.yaml"
    items = [{"op": "gemm", "dtype": "f16", "m": 16 * (i + 1), "n": 64, "k": 64,
              "epilogue": {"bias": i % 2 == 0, "activation": None}} for i in range(10_000)]
    block = "".join(f"- dtype: f16\n  epilogue:\n    activation: null\n    bias: {'true' if i % 2 == 0 else 'false'}\n"
                    f"  k: 64\n  m: {16 * (i + 1)}\n  n: 64\n  op: gemm\n" for i in range(10_000))
    assert block.startswith(yaml.safe_dump(items[:2]))          # safe_dump's own shape (its writer is slow)
    path.write_text(block)
    assert 0.8e6 < path.stat().st_size <= 1 << 20
    monkeypatch.setattr(yaml, "load", lambda *a, **k: pytest.fail("PyYAML's constructor ran"))
    monkeypatch.setattr(yaml, "parse", lambda *a, **k: pytest.fail("PyYAML's parser ran"))
    got = load(path, "gfx1100")
    assert len(got) == 10_000 and got[1].sizes()["m"] == 32 and got[0].bias and not got[1].bias


def _widest_rows(n: int) -> list:
    """n distinct problems of the widest rows the ops record: GEMM with its epilogue, attention backward with
    every field, paged attention with all 19 (window, softcap, an fp8 cache)."""
    from wmma_gen.ops import registry
    from wmma_gen.tuner.rows import SpecProblem
    d = registry.get("paged_attention").directive("bf16", 128, 16, "fp8e4m3", True, window=True, softcap=True)
    paged = tuple((k, v) for k, v in d.to_dict().items() if k != "varlen")
    rows = []
    for i in range(n):
        if i % 4 == 0:
            rows.append({**GEMM, "dtype": "bf16", "m": 16 + i, "n": 14336, "k": 4096, "out_dtype": "bf16"})
        elif i % 4 == 1:
            rows.append({**ATTN, "op": "attention_bwd", "dtype": "bf16", "head_dim": 128, "seq_q": 1000 + i,
                         "seq_k": 4096 + i, "varlen": True, "layout": "bshd", "softcap": True})
        else:
            rows.append(SpecProblem("paged_attention", paged, tuple(dict(
                batch=1 + i, heads=32, kv_heads=8, seq_q=16, seq_len=131072, window_left=4096, window_right=0).items())))
    return rows


@pytest.mark.parametrize("name", ["p.yaml", "p.json"])
def test_a_ten_thousand_problem_dump_of_wide_rows_round_trips(tmp_path, name):
    """The limit is 10,000 problems, not 1 MiB: 10,000 attention / paged rows are 2.3 MB of YAML (2.7 MB of
    JSON) as dump writes them, which the 1 MiB cap refused."""
    from wmma_gen.tuner.rows import dump
    rows = _widest_rows(10_000)
    path = dump(rows, tmp_path / name)
    assert path.stat().st_size > 2 << 20
    got = load(path, "gfx1100")
    assert len(got) == 10_000
    assert got == parse([r.to_dict() if hasattr(r, "to_dict") else r for r in rows], arch="gfx1100")


def test_dump_past_the_problem_limit_names_the_argument_value_and_limit(tmp_path):
    from wmma_gen.errors import ScheduleError
    from wmma_gen.tuner.rows import dump
    with pytest.raises(ScheduleError, match=r"problems='10001 problems' is not allowed: at most 10000 per file"):
        dump([{**GEMM, "m": 16 + i} for i in range(10_001)], tmp_path / "p.yaml")
    assert not (tmp_path / "p.yaml").exists()


def test_a_file_past_the_byte_cap_names_file_size_and_cap(tmp_path, monkeypatch):
    from autotune import problems
    path = write(tmp_path, [GEMM] * 4)
    monkeypatch.setattr(problems, "MAX_BYTES", 64)
    with pytest.raises(ProblemFileError, match=rf"{path}: <file> = '{path.stat().st_size} bytes' is not allowed: "
                                               r"at most 64 bytes \(10000 problems of up to 1024 bytes each\)"):
        load(path)


_ROW_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), _TOKENS, st.text(max_size=6),
                        st.floats(allow_nan=False), st.lists(st.integers(0, 9), max_size=3))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.one_of(_TOKENS, st.text(min_size=1, max_size=4)),
                       st.one_of(_ROW_VALUES, st.dictionaries(_TOKENS, _ROW_VALUES, max_size=2)), min_size=1, max_size=5))
def test_the_row_writer_writes_what_pyyaml_writes(item):
    """dumps writes each row without PyYAML's emitter when every value is a plain token; the line is the
    emitter's own, byte for byte, and anything else goes through the emitter."""
    from wmma_gen.tuner.rows import _flow_line

    class _Plain(yaml.SafeDumper):
        def ignore_aliases(self, data):
            return True
    assert _flow_line(item) == yaml.dump(item, Dumper=_Plain, sort_keys=False, default_flow_style=True,
                                         width=1 << 16).rstrip("\n")
