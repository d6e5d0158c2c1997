"""Chapter code lines must be seen whole: no line of a code cell, as the site shows it, is longer than 120 characters,
and no export cell is longer than 80 lines (a cell a student can read in one breath).

Usage: python tools/lint_code_lines.py [--max 120] [--self-test] nbs/*.ipynb

The site sets code at 13 px; a code cell with a line longer than the text column (about 90 characters at a 1366-px
window) is widened over the table-of-contents column and shows 125 characters there (tools/ldpbook_sphinx.py,
assets/ldpbook.css, measured by tools/check_site.py). The lines checked are those a reader sees: nbdev directives and
nbval markers are not shown, and neither are cells marked `#| hide`. Exits 1 and lists every longer line.
"""
import argparse
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ldpbook_sphinx import split_directives  # noqa: E402

MAX_CHARACTERS = 120
MAX_EXPORT_LINES = 80
EXPORT = {"export", "exports", "exporti"}


def long_lines(path: Path, notebook, limit: int = MAX_CHARACTERS) -> list:
    "Every '<notebook> cell <i> line <j>: <n> characters' of a shown code cell line longer than `limit`."
    found = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        directives, code = split_directives(cell.source)
        if "hide" in directives or directives.get("echo", "").lower() == "false":
            continue
        found += [f"{path} cell {index} line {number}: {len(line)} characters: {line.strip()[:50]}..."
                  for number, line in enumerate(code.splitlines(), 1) if len(line) > limit]
        if EXPORT & directives.keys() and len(code.splitlines()) > MAX_EXPORT_LINES:
            found.append(f"{path} cell {index}: an export cell of {len(code.splitlines())} lines "
                         f"(at most {MAX_EXPORT_LINES}: split it)")
    return found


def self_test():
    v4 = nbformat.v4
    notebook = v4.new_notebook(cells=[v4.new_code_cell("#| export\nx = 1  # " + "a" * 111),      # 120: fits
                                      v4.new_code_cell("y = 2  # " + "b" * 112),                 # 121: too long
                                      v4.new_code_cell("#| hide\nz = " + "c" * 200),              # hidden
                                      v4.new_code_cell("#| export\n" + "w = 1\n" * 81),           # 81 lines
                                      v4.new_markdown_cell("d" * 300)])
    found = long_lines(Path("planted.ipynb"), notebook)
    if len(found) != 2 or "cell 1 line 1: 121 characters" not in found[0] or "cell 3: an export cell of 81" not in found[1]:
        sys.exit(f"lint_code_lines: the self-test failed: {found}")
    print("lint_code_lines: self-test passed (a planted 121-character line and an 81-line export cell are found)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--max", type=int, default=MAX_CHARACTERS)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        self_test()
    found = []
    for path in args.notebooks:
        found += long_lines(path, nbformat.read(path, as_version=4), args.max)
    if found:
        sys.exit(f"lint_code_lines: {len(found)} code line(s) longer than {args.max} characters:\n  " + "\n  ".join(found))
    if args.notebooks:
        print(f"lint_code_lines: every shown code line is at most {args.max} characters and every export cell at most "
              f"{MAX_EXPORT_LINES} lines ({len(args.notebooks)} notebook(s))")


if __name__ == "__main__":
    main()
