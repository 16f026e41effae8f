"""`wmma-gen bench --vs torch` (issue 25 item 5): without a ROCm GPU it says so in one line, exit 2."""
import pytest

from wmma_gen.cli import bench_cmd
from wmma_gen.cli.main import main


def test_without_a_gpu_one_line_and_exit_2(capsys):
    torch, why = bench_cmd.gpu_torch()
    if torch is not None:
        pytest.skip("a ROCm GPU is visible: the no-GPU path does not apply")
    assert main(["bench", "--vs", "torch"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("wmma-gen bench: --vs torch needs a GPU: ") and why in err and "nothing was timed" in err


def test_vs_is_required_and_only_torch(capsys):
    with pytest.raises(SystemExit) as e:
        main(["bench", "--vs", "cublas"])
    assert e.value.code == 2 and "invalid choice" in capsys.readouterr().err
