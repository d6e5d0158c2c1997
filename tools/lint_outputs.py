"""Lint the stored outputs of checked notebook cells: no round-off may be printed.

Usage: python tools/lint_outputs.py [nbs/*.ipynb ...]

Strict nbval compares every stored output with a fresh one. A number such as `3.3e-16` is round-off: another
CPU's SIMD kernels (or numpy held to its baseline dispatch) print `2.2e-16` instead, and the test fails there.
This lint fails on any number written in scientific notation whose absolute value is below 1e-12 (zero included)
in the stored text outputs of a checked cell (a stated tolerance, the number right after `<`, `<=`, `≤`, `>`,
`>=` or `≥`, is not round-off), that is a cell that nbval compares: not marked `# NBVAL_IGNORE_OUTPUT`
or `# NBVAL_SKIP` (or tagged `nbval-ignore-output` / `nbval-skip`). A checked cell prints a verdict against a
stated tolerance (`max error <= 1e-12: True`) or rounds to meaningful digits instead.
"""
import glob
import re
import sys
from pathlib import Path

import nbformat

THRESHOLD = 1e-12
# a decimal mantissa followed by an exponent: 3.3e-16, -1E-20, 2.e-13, .5e-14 (not part of a word such as 0x1e5)
SCIENTIFIC = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+(?![\w.])")
# a stated tolerance is not round-off: the number right after a comparison (`max error <= 1e-14: True`)
STATED_TOLERANCE = re.compile(r"(?:<=?|>=?|≤|≥|<<|>>)\s*$")
# as nbval reads them: a comment line that is exactly the marker, or a cell tag
UNCHECKED_MARKERS = re.compile(r"^\s*#+\s*(?:NBVAL_IGNORE_OUTPUT|NBVAL_SKIP|PYTEST_VALIDATE_IGNORE_OUTPUT)\s*$", re.M)
UNCHECKED_TAGS = {"nbval-ignore-output", "nbval-skip", "pytest-validate-ignore-output"}
TEXT_MIME = ("text/plain", "text/html", "text/markdown", "text/latex")


def is_checked(cell) -> bool:
    "True for a code cell whose outputs strict nbval compares."
    if cell.cell_type != "code":
        return False
    tags = set(cell.get("metadata", {}).get("tags", []))
    return not (tags & UNCHECKED_TAGS or UNCHECKED_MARKERS.search(cell.source))


def output_texts(cell):
    "The text of every stored output of a cell that nbval compares (streams and text mime bundles)."
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            yield out.get("text", "")
        elif out.get("output_type") in ("execute_result", "display_data"):
            for mime in TEXT_MIME:
                value = out.get("data", {}).get(mime)
                if value:
                    yield value if isinstance(value, str) else "".join(value)


def round_off_numbers(text: str) -> list:
    "The numbers in scientific notation below the threshold in absolute value, as written."
    return [m.group(0) for m in SCIENTIFIC.finditer(text)
            if abs(float(m.group(0))) < THRESHOLD and not STATED_TOLERANCE.search(text[max(m.start() - 8, 0):m.start()])]


def lint(path, nb=None) -> list:
    "One message per checked cell of a notebook that prints round-off."
    nb = nbformat.read(path, as_version=4) if nb is None else nb
    problems = []
    for index, cell in enumerate(nb.cells):
        if not is_checked(cell):
            continue
        found = [number for text in output_texts(cell) for number in round_off_numbers(text)]
        if found:
            shown = ", ".join(found[:3]) + (" ..." if len(found) > 3 else "")
            problems.append(f"{path}: cell {index} (id {cell.get('id', '?')}) prints {len(found)} number(s) "
                            f"below {THRESHOLD:g} in scientific notation: {shown}")
    return problems


def self_test():
    "The lint catches a planted round-off print, and only in a checked cell, not in a stated tolerance."
    v4 = nbformat.v4
    def cell(source, text):
        return v4.new_code_cell(source, outputs=[v4.new_output("stream", name="stdout", text=text)])
    nb = v4.new_notebook(cells=[
        cell("print(err)", "max |attained - bound| = 3.3e-16\n"),                      # 0: planted round-off
        cell("# NBVAL_IGNORE_OUTPUT\nprint(err)", "3.3e-16\n"),                         # 1: not checked
        cell("print(ok)", "max error <= 1e-14: True; ≤ 1e-13: True; 2.5e-03; 1e-12\n"),  # 2: tolerance, big
        cell("x", ""),                                                                   # 3: empty output
        v4.new_code_cell("y", outputs=[v4.new_output("execute_result", data={"text/plain": "-0.0e+00"},
                                                     execution_count=1)]),               # 4: zero is round-off
    ])
    found = lint(Path("planted.ipynb"), nb)
    assert [m.split(": cell ")[1].split(" ")[0] for m in found] == ["0", "4"], found
    assert "3.3e-16" in found[0] and "-0.0e+00" in found[1], found
    print("lint_outputs: self-test passed (a planted 3.3e-16 is caught; an ignored cell and a stated "
          "tolerance are not)")


def main(paths):
    if paths == ["--self-test"]:
        return self_test()
    paths = paths or sorted(glob.glob("nbs/*.ipynb"))
    problems = [message for path in paths for message in lint(Path(path))]
    for message in problems:
        print(message)
    if problems:
        sys.exit(f"lint_outputs: {len(problems)} checked cell(s) print round-off; print a verdict against a "
                 f"stated tolerance or round to meaningful digits (see the design notes)")
    print(f"lint_outputs: no checked cell prints a number below {THRESHOLD:g} in scientific notation "
          f"({len(paths)} notebook(s))")


if __name__ == "__main__":
    main(sys.argv[1:])
