"""The `qwen-engine` command: every chapter that has something to run is reachable (a bench missing from the list once cost a
GPU call)."""
import ast, pathlib
import pytest
from qwen_engine import cli

PKG = pathlib.Path(cli.__file__).parent


def _defines(path, name):
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.parse(path.read_text()).body)


def test_every_module_with_commands_is_listed():
    have = {p.stem for p in PKG.glob("*.py") if _defines(p, "cli_register") or _defines(p, "bench_register")}
    assert have == set(cli.CHAPTERS), have ^ set(cli.CHAPTERS)


def test_bench_lists_every_gpu_chapter(capsys):
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["bench", "--help"])
    out = capsys.readouterr().out
    for name in ("norms", "gemv", "attention", "gdn", "decode"):
        assert name in out


def test_bench_decode_options():
    a = cli.parser().parse_args(["bench", "decode", "--no-peer", "--tiny", "--record", "x"])
    assert a.no_peer and a.tiny and a.record == "x" and callable(a.func)


def test_bench_without_gpu_is_one_clear_line(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "decode"])
    assert "needs a CUDA GPU" in str(e.value)
