"""The ```python snippet under README.md's "## PyTorch" heading runs as written (on CPU
tensors: the emulator) and does what it says."""
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def pytorch_snippet(readme: Path) -> str:
    text = readme.read_text()
    m = re.search(r"^## PyTorch\s*$(.*?)(?=^## )", text + "\n## ", re.M | re.S)
    assert m, f"{readme} has no '## PyTorch' section"
    code = re.search(r"^```python\n(.*?)^```", m.group(1), re.M | re.S)
    assert code, f"the '## PyTorch' section of {readme} has no ```python block"
    return code.group(1)


def test_readme_pytorch_snippet_runs(capsys):
    scope: dict = {}
    exec(compile(pytorch_snippet(README), f"{README}:PyTorch", "exec"), scope)
    assert scope["q"].grad is not None and scope["w"].grad is not None
    assert scope["y"].shape == (1, 64, 128) and "torch.Size" in capsys.readouterr().out
