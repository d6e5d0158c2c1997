"""Check the PDF of the book (`make pdf`): every chapter is in it, with its figures, math and theorem boxes, no
reference or citation is undefined, no glyph is missing, and no line runs off the page.

Usage: python tools/check_pdf.py [_build/latex] [--pages-dir DIR]

Reads `ldpbook.tex`, `ldpbook.log` and `ldpbook.pdf` in the LaTeX build folder and fails (exit 1) on:
- a chapter of `_toc.yml` whose title is not in the PDF's text, or a PDF with fewer theorem boxes than the chapters'
  `{prf:theorem}` directives;
- a figure the TeX source includes that is missing or empty, or a PDF with fewer embedded images than that;
- an undefined reference or citation in the LaTeX log, or "??" in the PDF's text;
- a missing character (a glyph the font lacks prints nothing);
- an Overfull \\hbox wider than 36 pt, half the 1-inch margin (text running toward the edge of the page);
- a rendered page (pdftoppm, 50 dpi) that is blank: the first page, the first page of each chapter and every page
  with a figure are rendered, and each must have ink.
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

OVERFULL_LIMIT_PT = 36.0          # half of the 1-inch margin: a wider line runs toward the page's edge
UNDEFINED = re.compile(r"(?:Reference|Citation|Hyper reference) [`'‘]([^'’]+)['’] on page \d+ undefined")
OVERFULL = re.compile(r"^Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\) (.*?)(?:lines? (\d+)(?:--(\d+))?)?$", re.M)
INCLUDE = re.compile(r"\\sphinxincludegraphics(?:\[[^\]]*\])?\{(\{[^{}]+\}[^{}]*|[^{}]+)\}")


def run(*command) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def chapter_titles(root: Path) -> dict:
    "Chapter file -> its H1 title (the first line of the notebook's first markdown cell), for the numbered chapters."
    titles = {}
    for path in sorted((root / "nbs").glob("[0-9]*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"]).splitlines()[0]
        titles[path.stem] = first.lstrip("# ").strip()
    return titles


def normalise(text: str) -> str:
    text = text.replace("\u00ad", "").replace("ﬁ", "fi").replace("ﬂ", "fl").replace("`", "")
    return re.sub(r"\s+", " ", text).strip()


def page_has_ink(png: Path) -> bool:
    "True if a rendered page (PPM/PNG read through pdftoppm's PGM output) has any dark pixel."
    data = png.read_bytes()
    header = data.split(b"\n", 3)                       # P5 / width height / maxval / pixels
    pixels = header[3]
    return sum(1 for b in pixels[::7] if b < 128) > 20


def render_pages(pdf: Path, pages: list, folder: Path) -> list:
    "The pages (1-based) that render blank at 50 dpi."
    blank = []
    for page in pages:
        stem = folder / f"page-{page}"
        subprocess.run(["pdftoppm", "-gray", "-r", "50", "-f", str(page), "-l", str(page), "-singlefile", str(pdf),
                        str(stem)], check=True, capture_output=True)
        image = stem.with_suffix(".pgm")
        if not page_has_ink(image):
            blank.append(page)
    return blank


def log_problems(log_text: str) -> list:
    "Undefined references or citations, missing glyphs and overfull lines beyond the limit in a (joined) LaTeX log."
    problems = [f"undefined reference or citation: {name}" for name in sorted(set(UNDEFINED.findall(log_text)))]
    missing = sorted(set(re.findall(r"Missing character: There is no (.+?) in font", log_text)))
    if missing:
        problems.append(f"{len(missing)} character(s) missing from the fonts: {', '.join(missing[:10])}")
    problems += [f"overfull line, {float(m.group(1)):.0f} pt into the margin: {m.group(0)[:120]}"
                 for m in OVERFULL.finditer(log_text) if float(m.group(1)) > OVERFULL_LIMIT_PT]
    return problems


def joined_log(raw: str) -> str:
    "A LaTeX log with TeX's 79-character line wrapping undone."
    return re.sub(r"(?m)^(.{79})\n", r"\1", raw)


def check(build: Path, root: Path, pages_dir: Path | None = None) -> list:
    problems = []
    tex, log, pdf = (build / f"ldpbook.{ext}" for ext in ("tex", "log", "pdf"))
    for path in (tex, log, pdf):
        if not path.is_file() or path.stat().st_size == 0:
            return [f"{path} is missing or empty (did `jupyter-book build . --builder pdflatex` run?)"]
    source = tex.read_text(encoding="utf-8")
    log_text = joined_log(log.read_text(encoding="utf-8", errors="replace"))
    pages = [normalise(p) for p in run("pdftotext", "-layout", str(pdf), "-").split("\f")]
    text = " ".join(pages)

    # every chapter, and where it starts
    starts = {}
    for stem, title in chapter_titles(root).items():
        key = normalise(title)[:40]
        found = [i for i, page in enumerate(pages) if key in page]
        if len(found) < 2:                   # once in the table of contents, then where the chapter starts
            problems.append(f"chapter {stem} ({title!r}) is not in the PDF")
        else:
            starts[stem] = found[1] + 1
    # theorem boxes: one per {prf:theorem} of the chapters
    theorems = sum(len(re.findall(r"[`:]{3,}\{prf:theorem\}", p.read_text(encoding="utf-8")))
                   for p in (root / "nbs").glob("[0-9]*.ipynb"))
    shown = len(re.findall(r"Theorem \d+\.\d+ \(|Theorem \d+\.\d+\b", text))
    if shown < theorems:
        problems.append(f"{theorems} theorems in the chapters but only {shown} theorem labels in the PDF")
    # figures
    figures = INCLUDE.findall(source)
    for name in figures:
        target = build / name.replace("{", "").replace("}", "")
        if not target.is_file() or target.stat().st_size == 0:
            problems.append(f"figure {name} is missing or empty")
    listing = run("pdfimages", "-list", str(pdf)).splitlines()[2:]
    image_pages = sorted({int(line.split()[0]) for line in listing if line.split()})
    if len(listing) < len(figures):
        problems.append(f"{len(figures)} figures in the TeX source but {len(listing)} images in the PDF")
    problems += log_problems(log_text)
    if "??" in text:
        where = [i + 1 for i, page in enumerate(pages) if "??" in page]
        problems.append(f"'??' (an unresolved reference) on page(s) {where[:10]}")
    # look at pages: the first, each chapter's first, every page with a figure
    to_render = sorted({1, *starts.values(), *image_pages})
    with tempfile.TemporaryDirectory() as folder:
        blank = render_pages(pdf, to_render, Path(folder))
    if blank:
        problems.append(f"blank rendered page(s): {blank}")
    if pages_dir is not None:
        pages_dir.mkdir(parents=True, exist_ok=True)
        for page in sorted({1, *list(starts.values())[:3]}):
            subprocess.run(["pdftoppm", "-png", "-r", "80", "-f", str(page), "-l", str(page), "-singlefile",
                            str(pdf), str(pages_dir / f"page-{page}")], check=True)
    count = int(re.search(r"Pages:\s+(\d+)", run("pdfinfo", str(pdf))).group(1))
    overfull = [float(m.group(1)) for m in OVERFULL.finditer(log_text)]
    print(f"check_pdf: {pdf}: {count} pages; {len(starts)} chapters (first pages {sorted(starts.values())}); "
          f"{len(figures)} figures, {len(listing)} images; {shown} theorem labels for {theorems} theorems; "
          f"{len(overfull)} overfull lines, the widest {max(overfull, default=0):.1f} pt (limit {OVERFULL_LIMIT_PT:g}); "
          f"{len(to_render)} pages rendered, {len(blank)} blank")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="_build/latex", type=Path)
    parser.add_argument("--root", default=".", type=Path)
    parser.add_argument("--pages-dir", type=Path, help="also save a few rendered pages as PNG here")
    args = parser.parse_args()
    problems = check(args.build, args.root, args.pages_dir)
    if problems:
        sys.exit(f"check_pdf: {len(problems)} problem(s):\n  " + "\n  ".join(problems[:40]))
    print("check_pdf: every chapter, its figures, theorems and references are in the PDF; nothing runs off a page")


if __name__ == "__main__":
    main()
