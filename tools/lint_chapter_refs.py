"""No chapter number written by hand: prose refers to a chapter by a link that takes its number from `_toc.yml`.

Usage: python tools/lint_chapter_refs.py [--self-test] nbs/*.ipynb nbs/*.md README.md tests/*.py benchmarks/*.py

The reader sees the chapters numbered 1, 2, ... in the order of the numbered part of `_toc.yml`, on the site and in
the PDF; the notebooks' file names start at 00 (`nbs/01_spr.ipynb` is chapter 2). A number typed into the text
drifts from one or the other, so the book writes none: a chapter is cited as {numref}`chapter %s <chapter-spr>`
(the label `chapter-<name>` of its title, given by tools/ldpbook_sphinx.py from the toc; the reader sees
"chapter 2"), and where a role does not render (docstrings, messages, code comments, README.md, the tests and the
benchmarks) by its name or module ("the SPR chapter", `ldpbook.spr`, "the SPR notebook, nbs/01_spr.ipynb"): in
a test's docstring "chapter 1" would be read as the notebook 01 by one reader and the book's chapter 1 by another.
This check fails on

- a chapter number in the text: "chapter 1", "Chapter 4's", "chapter-6", "chapters 4–5", "ch. 6",
  {doc}`Chapter 1 <01_spr>`, in every cell of a notebook (markdown and code: docstrings, comments and messages
  reach the API page, `--help` and error text) and in every other file given (a Python file of the tests or the
  benchmarks whole: its docstrings, comments and messages); a chapter of a cited book
  ("chapter 11 of {cite}`...`") is not this book's and passes;
- a `chapter-<name>` label that names no chapter of the toc;
- a {numref} in a heading of the prose (the page's table of contents shows the heading's source: "chapters %s").

Exits 1 and lists every finding with its place.
"""
import argparse
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ldpbook_sphinx import chapter_label, numbered_chapters  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CHAPTER_NUMBER = re.compile(r"(?<![\w-])(?:[Cc]hapters?|[Cc]h\.)(?:-|[ \t]*\n?[ \t]*)(?:\d+)(?!\d)")
ANOTHER_BOOK = re.compile(r"\s+of\s+(?:\{cite|\[|the paper|the book)")
CHAPTER_LABEL = re.compile(r"<(chapter-[\w-]+)>`")
NUMREF_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t].*\{numref\}", re.M)
CHAPTER_IDENTIFIER = re.compile(r"(?i)chapters?_\d+")          # test_chapter_3_kernels, chapter_4s_functions


def findings(text: str, place: str, labels: set, prose: bool = True) -> list:
    """Every hand-written chapter number and unknown chapter label in `text`, and (in prose) every heading with a
    {numref}, as '<place> line <n>: <what>'."""
    found = []
    for match in CHAPTER_NUMBER.finditer(text):
        if ANOTHER_BOOK.match(text, match.end()):
            continue
        line = text.count("\n", 0, match.start()) + 1
        found.append(f"{place} line {line}: a chapter number written by hand: {' '.join(match[0].split())!r}")
    for match in CHAPTER_IDENTIFIER.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        found.append(f"{place} line {line}: a chapter number in a name: {match[0]!r}")
    for match in CHAPTER_LABEL.finditer(text):
        if match[1] not in labels:
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"{place} line {line}: {match[1]!r} is the label of no chapter of _toc.yml")
    for match in NUMREF_HEADING.finditer(text) if prose else ():
        line = text.count("\n", 0, match.start()) + 1
        found.append(f"{place} line {line}: a {{numref}} in a heading (the page's contents show it as '%s')")
    return found


def file_findings(path: Path, labels: set, notebook=None, text=None) -> list:
    """The findings of one file: a notebook cell by cell, any other file whole (a Python file as code: a `#` line
    is a comment, not a heading)."""
    if path.suffix != ".ipynb":
        text = text if text is not None else path.read_text(encoding="utf-8")
        return findings(text, str(path), labels, prose=path.suffix != ".py")
    notebook = notebook if notebook is not None else nbformat.read(path, as_version=4)
    found = []
    for index, cell in enumerate(notebook.cells):
        found += findings(cell.source, f"{path} cell {index} ({cell.get('id', '?')}, {cell.cell_type})", labels,
                          prose=cell.cell_type == "markdown")
    return found


def chapter_labels(root: Path = ROOT) -> dict:
    "Label -> (number the reader sees, document), for the chapters of the numbered part of the toc."
    return {chapter_label(doc): (number, doc) for number, doc in enumerate(numbered_chapters(root), 1)}


def self_test(labels: set):
    v4 = nbformat.v4
    markdown = ("## Symbols of {numref}`chapter %s <chapter-spr>`\n"
                "Chapter 1 showed it; {doc}`Chapter 1 <01_spr>` and chapter 1's program (chapters 4–5, ch. 6,\n"
                "Ch.7). Not: {numref}`chapter %s <chapter-spr>`, this chapter, §3.4, Chapter 11 of {cite}`cover`,\n"
                "{numref}`Chapter %s <chapter-nosuch>`, chapter_label, a chapter\n"
                "3 split over two lines.")
    code = ('"""The sum of chapter 4\'s terms."""\nx = 1  # the chapter-4 formula\n'
            '# {numref}`chapter %s <chapter-spr>` in a comment line is not a heading')
    notebook = v4.new_notebook(cells=[v4.new_markdown_cell(markdown, id="planted-md"),
                                      v4.new_code_cell(code, id="planted-code")])
    found = file_findings(Path("planted.ipynb"), labels, notebook)
    expected = [("cell 0", "'Chapter 1'"), ("cell 0", "'Chapter 1'"), ("cell 0", "'chapter 1'"),
                ("cell 0", "'chapters 4'"), ("cell 0", "'ch. 6'"), ("cell 0", "'Ch.7'"), ("cell 0", "'chapter 3'"),
                ("cell 0", "'chapter-nosuch'"), ("cell 0 (planted-md, markdown) line 1: a {numref} in a heading", ""),
                ("cell 1", "'chapter 4'"), ("cell 1", "'chapter-4'")]
    if len(found) != len(expected) or not all(c in f and w in f for (c, w), f in zip(expected, found)):
        sys.exit("lint_chapter_refs: the self-test failed:\n  " + "\n  ".join(found))
    python = ('"""Tests of ldpbook.spr (chapter 1): against brute force."""\n'
              '# ---- chapter-2: the closed form; ldpbook.egamma, the E_gamma chapter, chapter_label()\n'
              'def test_chapter_3_kernels():  # {numref}`chapter %s <chapter-spr>` in a comment is not a heading\n'
              '    assert True, "see Chapter 4 of {cite}`cover` and chapters 5-6"\n')
    found = file_findings(Path("tests/test_planted.py"), labels, text=python)
    in_python = [("line 1", "'chapter 1'"), ("line 2", "'chapter-2'"), ("line 4", "'chapters 5'"),
                 ("line 3", "'chapter_3'")]
    if len(found) != len(in_python) or not all(c in f and w in f for (c, w), f in zip(in_python, found)):
        sys.exit("lint_chapter_refs: the self-test failed on a planted Python file:\n  " + "\n  ".join(found))
    if "chapter-spr" not in labels:
        sys.exit(f"lint_chapter_refs: the self-test failed: no label chapter-spr among {sorted(labels)}")
    print(f"lint_chapter_refs: self-test passed ({len(expected)} planted chapter numbers, unknown labels and headings "
          f"are found in a notebook, {len(in_python)} chapter numbers in a Python file)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    chapters = chapter_labels()
    if args.self_test:
        self_test(set(chapters))
    found = []
    for path in args.files:
        found += file_findings(path, set(chapters))
    if found:
        table = ", ".join(f"{number} {label}" for label, (number, _) in chapters.items())
        sys.exit(f"lint_chapter_refs: {len(found)} chapter reference(s) to fix — cite a chapter with "
                 f"{{numref}}`chapter %s <chapter-name>` in prose, by name in code and README ({table}):\n  "
                 + "\n  ".join(found))
    if args.files:
        print(f"lint_chapter_refs: no chapter number written by hand, every chapter label is in the toc "
              f"({len(args.files)} file(s))")


if __name__ == "__main__":
    main()
