"""Every notebooks/*.ipynb runs top to bottom: a failing cell fails the test.

The notebooks are committed with their outputs, so that they read as documents
when browsed; `python docs/run_notebooks.py` re-runs them and strips the
volatile metadata (timestamps, the kernel's version).
"""

import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks/*.ipynb found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=300,
                                     resources={"metadata": {"path": str(ROOT)}})
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first failing cell
    print(f"\n{path.name}: {time.perf_counter() - start:.1f} s")
    # committed with its outputs (to read on GitHub without running it), no volatile metadata
    committed = nbformat.read(path, as_version=4)
    code = [c for c in committed.cells if c.cell_type == "code"]
    assert any(c.get("outputs") for c in code), f"{path.name} is committed without outputs"
    assert all("execution" not in c.metadata for c in code)
    assert set(committed.metadata) <= {"kernelspec"}
