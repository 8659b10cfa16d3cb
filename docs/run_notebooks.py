"""Run every notebook in place, keep its outputs, strip volatile metadata.

Run from the repository root: ``python docs/run_notebooks.py`` (about a minute).
"""

from pathlib import Path

import nbclient
import nbformat

for path in sorted(Path("notebooks").glob("*.ipynb")):
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=600,
                            resources={"metadata": {"path": str(Path.cwd())}}).execute()
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata.pop("language_info", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            for out in cell.get("outputs", []):
                out.get("metadata", {}).pop("execution", None)
    nbformat.write(nb, path)
    print("ran", path, flush=True)
