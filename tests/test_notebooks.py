"Every notebook of the book, run as nbdev runs it (cells flagged `gpu` or `notest` are skipped on this machine)."
import os
from pathlib import Path
import pytest
from nbdev.test import test_nb as run_notebook   # renamed so pytest does not collect it
from nbdev.config import get_config

ROOT = Path(__file__).resolve().parent.parent
NBS = sorted(p for p in (ROOT / "nbs").glob("*.ipynb") if not p.name.startswith("_"))

@pytest.mark.parametrize("nb", NBS, ids=[p.stem for p in NBS])
def test_notebook(nb, monkeypatch):
    monkeypatch.chdir(ROOT)
    flags = get_config().tst_flags.split()
    ok, secs = run_notebook(nb, skip_flags=flags, force_flags=[], do_print=False, showerr=True)
    assert ok, f"{nb.name} failed (see the traceback above)"
