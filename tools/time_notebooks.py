"""Time the execution of every chapter notebook in a fresh kernel (on a copy: nothing is written back).

Usage: python tools/time_notebooks.py [nbs/*.ipynb]   — prints a Markdown table for the reproducibility page.
"""
import glob
import os
import platform
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def seconds_to_run(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def main(paths):
    paths = [Path(p) for p in (paths or sorted(glob.glob("nbs/[0-9]*.ipynb")))]
    print(f"Measured on {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}.\n")
    print("| notebook | execution time (s) |\n|---|---|")
    for path in paths:
        print(f"| `{path.as_posix()}` | {seconds_to_run(path):.1f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
