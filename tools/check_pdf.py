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
  with a figure are rendered, and each must have ink;
- a structure that is not a book's: the contents (`ldpbook.toc`) must list the parts of `_toc.yml` in order, each
  with its pages, the front and back matter (the notation, the references; `ldpbook_latex_matter` in
  `_config.yml`) unnumbered, the chapters numbered 1, 2, ... as on the site, the appendices lettered A, B, ...; and
  the chapter headings must read "Chapter One" ... and "Appendix A" ... (never "Chapter Zero", and no appendix
  numbered as a chapter 9+);
- when the site is built (`_build/html`, or --html; not older than the notebooks): a labelled theorem, lemma,
  definition, exercise, ... whose number in the PDF (its heading, or the text of a reference to it) is not the
  site's ("Theorem 2.1" on both, not "Theorem 2.3.1" in the PDF).
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ldpbook_sphinx  # noqa: E402

OVERFULL_LIMIT_PT = 36.0          # half of the 1-inch margin: a wider line runs toward the page's edge
UNDEFINED = re.compile(r"(?:Reference|Citation|Hyper reference) [`'‘]([^'’]+)['’] on page \d+ undefined")
OVERFULL = re.compile(r"^Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\) (.*?)(?:lines? (\d+)(?:--(\d+))?)?$", re.M)
INCLUDE = re.compile(r"\\sphinxincludegraphics(?:\[[^\]]*\])?\{(\{[^{}]+\}[^{}]*|[^{}]+)\}")


# A numbered result on the site: <div class="proof theorem admonition" id="LABEL"><p class="admonition-title">
# <span class="caption-number">Theorem 2.1 </span>; the same for exercises (sphinx-exercise).
SITE_RESULT = re.compile(r'<div class="(?:proof \w+|exercise) admonition" id="(?P<label>[^"]+)">\s*'
                         r'<p class="admonition-title"><span class="caption-number">(?P<name>[A-Z]\w* \d+(?:\.\d+)*) ')
# In the LaTeX source: \label{nbs/01_spr:LABEL} (or \label{exercise:LABEL}) then the box's title "Theorem 2.1 ...",
# and every reference \hyperref[\detokenize{nbs/01_spr:LABEL}]{\sphinxcrossref{Theorem 2.1}}.
PDF_HEADING = re.compile(r'\\label\{(?P<label>[^{}]+)\}\s*\\begin\{sphinxadmonition\}\{note\}'
                         r'\{(?P<name>[A-Z]\w* \d+(?:\.\d+)*)\b')
PDF_REFERENCE = re.compile(r'\\hyperref\[\\detokenize\{(?P<label>[^{}]+)\}\]'
                           r'\{\\sphinxcrossref\{(?P<name>[A-Z]\w* \d+(?:\.\d+)*)\}\}')


def site_numbers(pages) -> dict:
    "Label -> 'Theorem 2.1' for every numbered result in the site's HTML pages (texts)."
    return {m["label"]: m["name"] for page in pages for m in SITE_RESULT.finditer(page)}


def numbering_problems(site: dict, source: str) -> tuple:
    """(problems, headings compared, references compared): every labelled result's heading in the LaTeX source and
    every numbered reference to one must read as on the site; a result of the PDF that the site lacks is reported."""
    problems, headings, references = [], 0, 0
    for kind, pattern in (("heading", PDF_HEADING), ("reference", PDF_REFERENCE)):
        for match in pattern.finditer(source):
            label = match["label"].rsplit(":", 1)[-1]
            if label not in site:
                problems.append(f"{match['name']} ({label}) is in the PDF but is not a numbered result of the site")
            elif site[label] != match["name"]:
                problems.append(f"the PDF's {kind} of {label} reads {match['name']!r}, the site's {site[label]!r}")
            else:
                headings, references = (headings + 1, references) if kind == "heading" else (headings,
                                                                                              references + 1)
    if site and not headings:
        problems.append("no labelled result of the site was found in the PDF's LaTeX source (has its form changed?)")
    return problems, headings, references


def site_is_current(html: Path, root: Path) -> bool:
    "The site is built and newer than the notebooks and the book's configuration."
    index = html / "index.html"
    if not index.is_file():
        return False
    sources = [*(root / "nbs").glob("*.ipynb"), root / "_toc.yml", root / "_config.yml"]
    return all(path.stat().st_mtime <= index.stat().st_mtime for path in sources if path.exists())


def run(*command) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def chapter_titles(root: Path) -> dict:
    "Chapter file -> its H1 title (the first line of the notebook's first markdown cell), for the numbered chapters."
    titles = {}
    for path in sorted((root / "nbs").glob("[0-9]*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"]).splitlines()[0]
        titles[path.stem] = plain_text(first.lstrip("# ").strip())
    return titles


def plain_text(title: str) -> str:
    "A title with its inline math ($E_\\gamma$) as the Unicode text the PDF shows (Eγ), as in the site's navigation."
    return re.sub(r"\$([^$]+)\$", lambda m: "".join(n.astext() for n in ldpbook_sphinx.tex_to_nodes(m[1])), title)


def squashed(text: str) -> str:
    "Text compared without spaces and with math letters as plain ones (pdftotext gives 𝛾, U+1D6FE, for γ)."
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


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


# The contents file: \contentsline {part}{II\hspace {1em}Chapters}{13}{part.2}% and
# \contentsline {chapter}{\numberline {1}Foundations: ...}{15}{chapter.1}% (no \numberline when unnumbered)
CONTENTS_LINE = re.compile(r"^\\contentsline \{(?P<level>part|chapter)\}\{(?P<entry>.*)\}\{(?P<page>[^{}]*)\}"
                           r"\{(?P<anchor>[^{}]*)\}%?$", re.M)
NUMBERLINE = re.compile(r"^\\numberline \{(?P<number>[^{}]*)\}")
# fncychap's Bjarne style: "CHAPTER" over the number as a word ("ONE"), "APPENDIX" over the letter
CHAPTER_HEAD = re.compile(r"(?m)^\s*(CHAPTER|APPENDIX)\s*\n(?:\s*\n)*\s*([A-Z]+)\s*$")
NUMBER_WORDS = ("ZERO ONE TWO THREE FOUR FIVE SIX SEVEN EIGHT NINE TEN ELEVEN TWELVE THIRTEEN FOURTEEN FIFTEEN "
                "SIXTEEN SEVENTEEN EIGHTEEN NINETEEN").split()


def book_parts(root: Path) -> list:
    "[(caption, kind, number of chapters)] for the parts of _toc.yml; kind from `ldpbook_latex_matter`."
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    kinds = ((config.get("sphinx") or {}).get("config") or {}).get("ldpbook_latex_matter") or {}
    return [(part["caption"], kinds.get(part["caption"], "?"), len(part.get("chapters", [])))
            for part in toc.get("parts", [])]


def structure_problems(contents: str, page_texts: list, parts: list) -> tuple:
    """(problems, summary) of the book's structure: `contents` is the LaTeX contents file, `page_texts` the PDF's
    pages as pdftotext gives them (lines kept), `parts` what `book_parts` gives."""
    entries = [(m["level"], m["entry"]) for m in CONTENTS_LINE.finditer(contents)]
    problems, summary, position = [], [], 0
    for caption, kind, count in parts:
        while position < len(entries) and not (entries[position][0] == "part"
                                               and entries[position][1].endswith(caption)):
            position += 1
        if position == len(entries):
            problems.append(f"the part {caption!r} of _toc.yml is not in the PDF's contents")
            continue
        chapters = []
        for level, entry in entries[position + 1:]:
            if level == "part" or len(chapters) == count:
                break
            number = NUMBERLINE.match(entry)
            chapters.append(number["number"] if number else None)
        expected = {"front": [None] * count, "back": [None] * count, "main": [str(i) for i in range(1, count + 1)],
                    "appendix": [chr(ord("A") + i) for i in range(count)]}.get(kind)
        if expected is None:
            problems.append(f"the part {caption!r} has no kind front/main/appendix/back in _config.yml "
                            f"(ldpbook_latex_matter)")
        elif chapters != expected:
            shown = ", ".join(n or "unnumbered" for n in chapters)
            want = ", ".join(n or "unnumbered" for n in expected)
            problems.append(f"the {kind} part {caption!r} is numbered {shown} in the PDF's contents, not {want}")
        summary.append(f"{caption}: " + (f"{chapters[0]}–{chapters[-1]}" if chapters and chapters[0] else
                                         f"{len(chapters)} unnumbered"))
        position += 1
    heads = [(word, number) for text in page_texts for word, number in CHAPTER_HEAD.findall(text)]
    main = sum(count for _, kind, count in parts if kind == "main")
    appendices = sum(count for _, kind, count in parts if kind == "appendix")
    want = ([("CHAPTER", NUMBER_WORDS[i]) for i in range(1, main + 1)]
            + [("APPENDIX", chr(ord("A") + i)) for i in range(appendices)])
    if heads != want:
        problems.append(f"the chapter headings read {' '.join(w + ' ' + n for w, n in heads)!r}, not "
                        f"{' '.join(w + ' ' + n for w, n in want)!r}")
    return problems, "; ".join(summary)


def check(build: Path, root: Path, pages_dir: Path | None = None, html: Path | None = None) -> list:
    problems = []
    tex, log, pdf = (build / f"ldpbook.{ext}" for ext in ("tex", "log", "pdf"))
    for path in (tex, log, pdf):
        if not path.is_file() or path.stat().st_size == 0:
            return [f"{path} is missing or empty (did `jupyter-book build . --builder pdflatex` run?)"]
    source = tex.read_text(encoding="utf-8")
    log_text = joined_log(log.read_text(encoding="utf-8", errors="replace"))
    raw_pages = run("pdftotext", "-layout", str(pdf), "-").split("\f")
    pages = [normalise(p) for p in raw_pages]
    text = " ".join(pages)

    # every chapter, and where it starts
    starts, squashed_pages = {}, [squashed(page) for page in pages]
    for stem, title in chapter_titles(root).items():
        key = squashed(normalise(title))[:34]
        found = [i for i, page in enumerate(squashed_pages) if key in page]
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
    contents = build / "ldpbook.toc"
    found, structure = structure_problems(contents.read_text(encoding="utf-8") if contents.is_file() else "",
                                          raw_pages, book_parts(root))
    problems += found
    # the numbers of theorems, definitions, exercises, ... and of the references to them are the site's
    html = build.parent / "html" if html is None else html
    if site_is_current(html, root):
        site = site_numbers(page.read_text(encoding="utf-8") for page in sorted(html.rglob("*.html")))
        found, headings, references = numbering_problems(site, source)
        problems += found
        numbering = (f"{headings} labelled results and {references} references numbered against the site's "
                     f"{len(site)}")
    else:
        numbering = f"numbers not compared with the site ({html} is not built, or older than the notebooks)"
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
          f"{len(to_render)} pages rendered, {len(blank)} blank; {numbering}; contents: {structure}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="_build/latex", type=Path)
    parser.add_argument("--root", default=".", type=Path)
    parser.add_argument("--pages-dir", type=Path, help="also save a few rendered pages as PNG here")
    parser.add_argument("--html", type=Path, help="the site's build, whose numbers the PDF must have "
                                                   "(default: html beside the LaTeX build)")
    args = parser.parse_args()
    problems = check(args.build, args.root, args.pages_dir, args.html)
    if problems:
        sys.exit(f"check_pdf: {len(problems)} problem(s):\n  " + "\n  ".join(problems[:40]))
    print("check_pdf: every chapter, its figures, theorems and references are in the PDF; nothing runs off a page")


if __name__ == "__main__":
    main()
