"""Execute notebooks in place, reproducibly, so that strict nbval can compare their stored outputs.

Usage: python tools/run_nb.py nbs/00_foundations.ipynb [more.ipynb ...]

The kernel runs from the notebook's folder (as nbval's does). Volatile metadata (timings, widget
state, execution records) is dropped and every cell keeps a stable id, so re-running an unchanged
notebook on the same machine rewrites it byte for byte.
"""
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

VOLATILE_CELL_KEYS = ("execution", "collapsed", "scrolled", "ExecuteTime")


def merge_streams(outputs):
    "Join consecutive stdout (or stderr) chunks: how a kernel splits its output depends on timing."
    merged = []
    for out in outputs:
        if (out.get("output_type") == "stream" and merged and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def tidy(nb):
    """Drop volatile metadata, merge stream chunks and make sure every cell has a stable id."""
    nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                   "language_info": {"name": "python"}}
    for cell in nb.cells:
        for key in VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)
    nbformat.validator.normalize(nb)
    return nb


def run(path, timeout=600):
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    nb.nbformat_minor = max(nb.nbformat_minor, 5)
    for cell in nb.cells:           # nbformat 4.5 cell ids: keep existing ones, add missing
        if "id" not in cell:
            cell["id"] = nbformat.v4.new_code_cell().id
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    nbformat.write(tidy(nb), path)
    print(f"executed {path}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python tools/run_nb.py NOTEBOOK.ipynb [...]")
    for arg in sys.argv[1:]:
        run(arg)
