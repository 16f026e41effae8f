"""docs/cli.md is the real parser's help (issue 39): regenerated in memory, it equals the committed file.
When this fails, a command's flags changed: run `python -m wmma_gen.cli.docs` and commit docs/cli.md."""
from wmma_gen.cli import docs
from wmma_gen.cli.main import COMMANDS


def test_cli_md_matches_the_parser():
    committed = docs.DOC.read_text()
    assert docs.render() == committed, "docs/cli.md is stale: run `python -m wmma_gen.cli.docs`"


def test_cli_md_names_every_command_and_flag():
    text = docs.render()
    from wmma_gen.cli.main import parser
    import argparse
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) <= set(COMMANDS)
    for name, sp in sub.choices.items():
        assert f"## `wmma-gen {name}`" in text
        for action in sp._actions:
            for flag in action.option_strings:
                assert flag in text, (name, flag)


def test_check_mode_reports_a_stale_file(tmp_path, capsys):
    stale = tmp_path / "cli.md"
    stale.write_text(docs.render().replace("--json", "--jsn", 1))
    assert docs.main(["--check", "--out", str(stale)]) == 1
    assert docs.main(["--out", str(stale)]) == 0
    assert docs.main(["--check", "--out", str(stale)]) == 0
    assert "in sync" in capsys.readouterr().out
