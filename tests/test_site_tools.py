"""The build tooling in tools/: the site extension's cell cleaning and docstring escaping, and the round-off lint."""
import sys
from pathlib import Path

import nbformat
import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"
sys.path.insert(0, str(TOOLS))

import lint_outputs  # noqa: E402
import ldpbook_sphinx  # noqa: E402


@pytest.mark.parametrize("source, directives, code", [
    ("#| export\ndef f():\n    return 1", {"export": ""}, "def f():\n    return 1"),
    ("#|default_exp spr", {"default_exp": "spr"}, ""),
    ("# NBVAL_IGNORE_OUTPUT\n#| echo: false\n\nplt.show()", {"echo": "false"}, "plt.show()"),
    ("x = 1\n# NBVAL_SKIP\ny = 2", {}, "x = 1\ny = 2"),
    # a `#|` line that is not at the top is code (here, inside a string), not a directive
    ('s = """\n#| export\n"""', {}, 's = """\n#| export\n"""'),
])
def test_split_directives(source, directives, code):
    assert ldpbook_sphinx.split_directives(source) == (directives, code)


def test_top_level_names():
    code = "import numpy as np\nK: int = 3\ndef f(x):\n    y = 2\nclass C:\n    pass\nA = B = 1"
    assert ldpbook_sphinx.top_level_names(code) == ["K", "f", "C", "A", "B"]
    assert ldpbook_sphinx.top_level_names("%timeit f()") == []


def test_docstring_escaping_makes_plain_math_valid_rest():
    text = "Mass at |x − y| = k, with I_|k| the Bessel function; ``a|b`` is code."
    assert ldpbook_sphinx.rst_problems(text)                                   # raw: broken reST
    escaped = ldpbook_sphinx.escape_bars(text)
    assert ldpbook_sphinx.rst_problems(escaped) == []
    assert "``a|b``" in escaped                                                # code spans untouched


@pytest.mark.parametrize("url, ok", [("", True), ("https://github.com/owner/name", True),
                                     ("github.com/owner/name", False), ("https://github.com/owner", False)])
def test_repository_setting(tmp_path, url, ok):
    (tmp_path / "settings.ini").write_text(f"[DEFAULT]\ngit_url = {url}\nbranch = main\n")
    if ok:
        assert ldpbook_sphinx.repository_settings(tmp_path) == (url, "main")
    else:
        with pytest.raises(ValueError, match="git_url"):
            ldpbook_sphinx.repository_settings(tmp_path)


def _notebook(*cells):
    v4 = nbformat.v4
    return v4.new_notebook(cells=[v4.new_code_cell(source, outputs=[v4.new_output("stream", name="stdout", text=text)])
                                  for source, text in cells])


def test_lint_catches_planted_round_off_only_in_checked_cells():
    nb = _notebook(("print(err)", "max |attained − bound| = 3.3e-16\n"),
                   ("# NBVAL_IGNORE_OUTPUT\nprint(err)", "3.3e-16\n"),
                   ("print(ok)", "max error ≤ 1e-12: True; < 1e-14: True; 0.25; 2.5e-03\n"),
                   ("print(zero)", "difference 0.0e+00\n"))
    found = lint_outputs.lint(Path("planted.ipynb"), nb)
    assert len(found) == 2 and "cell 0 " in found[0] and "cell 3 " in found[1]


def test_lint_reads_the_tag_form_of_the_marker():
    nb = _notebook(("print(err)", "2.2e-16\n"))
    nb.cells[0].metadata["tags"] = ["nbval-ignore-output"]
    assert lint_outputs.lint(Path("tagged.ipynb"), nb) == []


# The site check sees what a reader sees. The two snippets are saved from pages as they were built when the SPR
# chapter's proof of Theorem 2.1 and the Chernoff chapter's theorem were shown as text (a backtick in a fence's title ends the
# fence's info string, so the fence was not a directive): the check must find them.
import check_site  # noqa: E402

BROKEN_PROOF = ('<p>```{prf:proof} of <a class="reference internal" href="#spr-thm-extreme">Theorem 2.1</a>\n'
                'Let <span class="math notranslate nohighlight">\\((u, v)\\)</span> be extreme, induced by '
                '<span class="math notranslate nohighlight">\\(Q\\)</span>;</p>')
BROKEN_THEOREM = ('<p>```{prf:theorem} Chernoff <span class="bibtex-citation" id="id3">[<a class="reference internal" '
                  'href="references.html#id37">Chernoff, 1952</a>]</span>; Theorem 11.9.1 of <span '
                  'class="bibtex-citation" id="id4">[<a href="references.html#id1">Cover and Thomas, 2006</a>]</span>\n'
                  ':label: ch-thm-exponent</p>\n<p>Let <span class="math notranslate nohighlight">\\(Y_1\\)</span> be '
                  'i.i.d.</p>')
PARSED = ('<div class="proof theorem admonition" id="spr-thm-extreme"><p class="admonition-title"><span '
          'class="caption-number">Theorem 2.1 </span></p><section class="theorem-content"><p>Every set '
          '<span class="math notranslate nohighlight">\\(\\{0, 1\\}\\)</span> and <code class="docutils literal">'
          '{prf:ref}`x`</code>, see <a href="#x">Theorem 2.1</a>: a {1, 2} set.</p></section></div>'
          '<div class="highlight"><pre>```{prf:proof}\n:label: in-code\n```</pre></div>')


@pytest.mark.parametrize("snippet, expected", [(BROKEN_PROOF, ["```{prf:proof}"]),
                                                (BROKEN_THEOREM, ["```{prf:theorem}", ":label:"]),
                                                ("<p>See {prf:ref}<code class=\"docutils literal\">spr-thm</code>"
                                                 " and {cite}<code>x</code>.</p>", ["{prf:ref}", "{cite}"]),
                                                ("<p>(spr-sec-dp)=</p>", ["(spr-sec-dp)="]),
                                                (PARSED, [])])
def test_unparsed_myst_is_found_in_prose_only(snippet, expected):
    found = check_site.unparsed_myst_in(f"<html><body>{snippet}</body></html>")
    assert len(found) == len(expected)
    assert all(e in f for e, f in zip(expected, found))


def test_overflow_needs_more_than_a_pixel():
    layout = {"code": [{"kind": "input", "scroll": 709, "client": 709, "line": "x"},
                       {"kind": "input", "scroll": 710, "client": 709, "line": "y"},
                       {"kind": "output", "scroll": 1012, "client": 709, "line": "z" * 120}],
              "display": [{"scroll": 1013, "client": 678, "tex": "A"}, {"scroll": 600, "client": 678, "tex": "B"}],
              "table": [{"scroll": 828, "client": 709, "head": "chapter"}, {"scroll": 710, "client": 709, "head": "k"}]}
    code, display, table = check_site.overflows(layout)
    assert [c["line"] for c in code] == ["z" * 120] and [d["tex"] for d in display] == ["A"]
    assert [t["head"] for t in table] == ["chapter"]


def test_measuring_copy_keeps_links_and_adds_the_script(tmp_path):
    page = tmp_path / "nbs" / "01_spr.html"
    copy = check_site.with_measurement(page, '<html><head lang="en"><title>t</title></head><body>x</body></html>')
    assert f'<head lang="en"><base href="{page.parent.as_uri()}/">' in copy
    assert copy.count("ldpbook-layout") == 1 and copy.endswith("</script></body></html>")


import lint_code_lines  # noqa: E402


def test_code_line_lint_reads_the_lines_a_reader_sees():
    v4 = nbformat.v4
    nb = v4.new_notebook(cells=[v4.new_code_cell("#| export\n# NBVAL_IGNORE_OUTPUT\nx = 1  # " + "a" * 111),  # 120
                                v4.new_code_cell("def f():\n    return 2  # " + "b" * 105),                   # 121
                                v4.new_code_cell("#| hide\nz = " + "c" * 200),
                                v4.new_code_cell("#| echo: false\nz = " + "c" * 200),
                                v4.new_markdown_cell("d" * 300)])
    found = lint_code_lines.long_lines(Path("planted.ipynb"), nb)
    assert len(found) == 1 and "cell 1 line 2: 121 characters" in found[0]
    assert lint_code_lines.long_lines(Path("planted.ipynb"), nb, limit=130) == []


def test_docstring_folds_after_the_first_paragraph():
    code = ('def f(x):\n    """Summary line\n    continues.\n\n    Parameters\n    ----------\n    x : int\n'
            '        The x.\n    """\n    return x\n\n\nclass C:\n    "Short."\n    def g(self):\n'
            '        """One.\n\n        a\n        b\n        c\n        """\n        pass\n\n    def h(self):\n'
            '        """Two paragraphs.\n\n        but a short rest\n        """\n')
    pieces = ldpbook_sphinx.docstring_folds(code)
    assert [folded for _, folded in pieces] == [False, True, False, True, False]
    assert pieces[0][0].endswith("continues.") and pieces[1][0].strip().startswith("Parameters")
    assert pieces[1][0].rstrip().endswith('"""') and pieces[2][0].lstrip().startswith("return x")
    assert "".join(text for text, _ in pieces).replace("\n", "") == code.replace("\n", "")   # nothing lost
    assert "but a short rest" in pieces[4][0]                                              # 2 lines: not folded
    assert ldpbook_sphinx.docstring_folds("x = 1\n") == [("x = 1\n", False)]
    assert ldpbook_sphinx.docstring_folds("%timeit f()") == [("%timeit f()", False)]


import check_pdf  # noqa: E402

# Lines as XeLaTeX writes them into ldpbook.log (wrapped at 79 characters), planted problems and harmless lines.
LATEX_LOG = """LaTeX Warning: Hyper reference `nbs/01_spr:spr-def-problem' on page 250 undefin
ed on input line 18572.

Overfull \\hbox (30.19893pt too wide) in paragraph at lines 36820--36820
Overfull \\hbox (41.5pt too wide) in paragraph at lines 940--940
Missing character: There is no ⧵ (U+29F5) in font [latinmodern-math.otf]/OT:script=math;language=dflt;!
Underfull \\hbox (badness 10000) in paragraph at lines 12--12
"""


def test_pdf_log_problems_are_found_across_wrapped_lines():
    problems = check_pdf.log_problems(check_pdf.joined_log(LATEX_LOG))
    assert len(problems) == 3
    assert problems[0] == "undefined reference or citation: nbs/01_spr:spr-def-problem"
    assert "⧵" in problems[1] and "42 pt into the margin" in problems[2]            # 30 pt is within the limit
    assert check_pdf.log_problems("Overfull \\hbox (35.9pt too wide) in paragraph at lines 1--1\n") == []


# A theorem and an exercise as the site shows them, and the LaTeX source of the PDF: with the numbers that
# sphinx-jupyterbook-latex's numfig_secnum_depth = 2 gave (chapter.section.n), and with the site's.
SITE_PAGE = ('<div class="proof theorem admonition" id="spr-thm-extreme">\n<p class="admonition-title"><span '
             'class="caption-number">Theorem 2.1 </span> (SPR optimality)</p>\n'
             '<div class="exercise admonition" id="spr-ex-1">\n\n<p class="admonition-title"><span '
             'class="caption-number">Exercise 2.1 </span></p>')
PDF_SOURCE = ("\\label{nbs/01_spr:spr-thm-extreme}\n\\begin{sphinxadmonition}{note}{Theorem 2.3.1 (SPR optimality)}\n"
              "By {\\hyperref[\\detokenize{nbs/01_spr:spr-thm-extreme}]{\\sphinxcrossref{Theorem 2.3.1}}} its ...\n"
              "\\phantomsection \\label{exercise:spr-ex-1}\n\n\\begin{sphinxadmonition}{note}{Exercise 2.11.1}\n")


def test_pdf_numbers_are_checked_against_the_site():
    site = check_pdf.site_numbers([SITE_PAGE])
    assert site == {"spr-thm-extreme": "Theorem 2.1", "spr-ex-1": "Exercise 2.1"}
    problems, headings, references = check_pdf.numbering_problems(site, PDF_SOURCE)
    assert headings == references == 0 and len(problems) == 4
    assert "the PDF's heading of spr-thm-extreme reads 'Theorem 2.3.1', the site's 'Theorem 2.1'" in problems
    assert "the PDF's reference of spr-thm-extreme reads 'Theorem 2.3.1', the site's 'Theorem 2.1'" in problems
    fixed = PDF_SOURCE.replace("Theorem 2.3.1", "Theorem 2.1").replace("Exercise 2.11.1", "Exercise 2.1")
    assert check_pdf.numbering_problems(site, fixed) == ([], 2, 1)
    # a result the site does not number, and a source in which no result is found, are problems too
    assert "is not a numbered result of the site" in check_pdf.numbering_problems({}, fixed)[0][0]
    assert check_pdf.numbering_problems(site, "no results")[0] == [
        "no labelled result of the site was found in the PDF's LaTeX source (has its form changed?)"]


def test_proof_boxes_get_a_title_in_the_pdf():
    from docutils import nodes

    def box(*children):
        return nodes.admonition("", nodes.paragraph("", "", *children), classes=["proof", "proof"])

    plain = box(nodes.Text("Proof. Singletons are sets."))
    ldpbook_sphinx.proof_title(plain)
    assert plain[0].astext() == "Proof" and plain[1].astext() == "Singletons are sets."
    of = box(nodes.Text("Proof. of "), nodes.reference("", "Theorem 2.1", refid="spr-thm-extreme"),
             nodes.Text("\nLet (u, v) be extreme."))
    ldpbook_sphinx.proof_title(of)
    assert of[0].astext() == "Proof of Theorem 2.1" and of[1].astext() == "Let (u, v) be extreme."
    assert isinstance(of[0][2], nodes.reference)          # a reference node (LaTeX sets it as text in a title)
    other = box(nodes.Text("Sketch: by induction."))                      # not sphinx-proof's form: left alone
    ldpbook_sphinx.proof_title(other)
    assert len(other) == 1 and other[0].astext() == "Sketch: by induction."


# The contents file of the PDF as the LaTeX build wrote it when the notation page was numbered 0 and the appendices
# went on with the chapters' numbers (OLD), and as a book has it (NEW); the chapter headings as pdftotext gives them.
PARTS = [("Getting started", "front", 1), ("Chapters", "main", 2), ("Appendix", "appendix", 2),
         ("Back matter", "back", 1)]
OLD_CONTENTS = r"""\contentsline {part}{I\hspace {1em}Getting started}{5}{part.1}%
\contentsline {chapter}{\numberline {0}Notation}{7}{chapter.0}%
\contentsline {part}{II\hspace {1em}Chapters}{13}{part.2}%
\contentsline {chapter}{\numberline {1}Foundations: local differential privacy}{15}{chapter.1}%
\contentsline {section}{\numberline {1.1}Channels}{16}{section.1.1}%
\contentsline {chapter}{\numberline {2}Sort, partition, randomize}{41}{chapter.2}%
\contentsline {part}{III\hspace {1em}Appendix}{297}{part.3}%
\contentsline {chapter}{\numberline {3}Teaching with the book}{299}{chapter.3}%
\contentsline {chapter}{\numberline {4}API reference}{387}{chapter.4}%
\contentsline {part}{IV\hspace {1em}Back matter}{443}{part.4}%
\contentsline {chapter}{\numberline {5}References}{445}{chapter.5}%
\contentsline {chapter}{Bibliography}{447}{chapter*.603}%
"""
NEW_CONTENTS = r"""\contentsline {part}{Getting started}{5}{section*.3}%
\contentsline {chapter}{Notation}{7}{chapter*.4}%
\contentsline {part}{I\hspace {1em}Chapters}{13}{part.1}%
\contentsline {chapter}{\numberline {1}Foundations: local differential privacy}{15}{chapter.1}%
\contentsline {section}{\numberline {1.1}Channels}{16}{section.1.1}%
\contentsline {chapter}{\numberline {2}Sort, partition, randomize}{41}{chapter.2}%
\contentsline {part}{II\hspace {1em}Appendix}{297}{part.2}%
\contentsline {chapter}{\numberline {A}Teaching with the book}{299}{appendix.A}%
\contentsline {chapter}{\numberline {B}API reference}{387}{appendix.B}%
\contentsline {part}{Back matter}{443}{section*.612}%
\contentsline {chapter}{References}{445}{appendix*.613}%
\contentsline {chapter}{Bibliography}{447}{appendix*.614}%
"""
OLD_HEADS = ["                  CHAPTER\n\n                   ZERO\n\n      NOTATION", "CHAPTER\n ONE\n", "CHAPTER\nTWO",
             "  CHAPTER\n  THREE", "CHAPTER\nFOUR", "CHAPTER\nFIVE"]
NEW_HEADS = ["      NOTATION", "CHAPTER\n ONE\n", "CHAPTER\nTWO", "  APPENDIX\n\n  A\n", "APPENDIX\nB", "REFERENCES"]


def test_pdf_structure_is_a_books():
    problems, summary = check_pdf.structure_problems(NEW_CONTENTS, NEW_HEADS, PARTS)
    assert problems == []
    assert summary == "Getting started: 1 unnumbered; Chapters: 1–2; Appendix: A–B; Back matter: 1 unnumbered"
    problems, _ = check_pdf.structure_problems(OLD_CONTENTS, OLD_HEADS, PARTS)
    assert problems == [
        "the front part 'Getting started' is numbered 0 in the PDF's contents, not unnumbered",
        "the appendix part 'Appendix' is numbered 3, 4 in the PDF's contents, not A, B",
        "the back part 'Back matter' is numbered 5 in the PDF's contents, not unnumbered",
        "the chapter headings read 'CHAPTER ZERO CHAPTER ONE CHAPTER TWO CHAPTER THREE CHAPTER FOUR CHAPTER FIVE', "
        "not 'CHAPTER ONE CHAPTER TWO APPENDIX A APPENDIX B'"]
    # a part of the toc missing from the contents, and a part without a kind, are problems too
    problems, _ = check_pdf.structure_problems(NEW_CONTENTS.replace("Back matter", "Other"), NEW_HEADS, PARTS)
    assert problems == ["the part 'Back matter' of _toc.yml is not in the PDF's contents"]
    problems, _ = check_pdf.structure_problems(NEW_CONTENTS, NEW_HEADS, [("Chapters", "?", 2)])
    assert problems[0].startswith("the part 'Chapters' has no kind") and len(problems) == 2   # + the headings


def test_part_kinds_are_checked():
    kinds = {"Getting started": "front", "Chapters": "main", "Appendix": "appendix", "Back matter": "back"}
    assert ldpbook_sphinx.part_matter(["Chapters", "Appendix"], kinds) == {"Chapters": "main", "Appendix": "appendix"}
    with pytest.raises(ValueError, match=r"parts without one: \['Extra'\]"):
        ldpbook_sphinx.part_matter(["Chapters", "Extra"], kinds)
    with pytest.raises(ValueError, match=r"invalid kinds: \{'Chapters': 'middle'\}"):
        ldpbook_sphinx.part_matter(["Chapters"], {"Chapters": "middle"})


@pytest.mark.parametrize("tex, html", [
    (r"E_\gamma", "E<sub>γ</sub>"),
    (r"E^\star_{\gamma}(\varepsilon)", "E<sup>⋆</sup><sub>γ</sub>(ε)"),
    (r"\ell_r", "ℓ<sub>r</sub>"),
    (r"x_{12}^2", "x<sub>12</sub><sup>2</sup>"),
    (r"\chi^2\,\text", None),                           # a command with no Unicode form
    (r"\frac{a}{b}", None),
    ("a_", None),                                       # a subscript of nothing
    ("a_{b", None),                                     # an unclosed group
    ("a}", None),
])
def test_title_math_as_unicode(tex, html):
    from docutils import nodes

    def as_html(children):
        tags = {nodes.subscript: "sub", nodes.superscript: "sup"}
        return "".join(f"<{tags[type(n)]}>{n.astext()}</{tags[type(n)]}>" if type(n) in tags else n.astext()
                       for n in children)

    if html is None:
        with pytest.raises(ValueError, match="title formula"):
            ldpbook_sphinx.tex_to_nodes(tex)
    else:
        assert as_html(ldpbook_sphinx.tex_to_nodes(tex)) == html
        title = nodes.title("", "", nodes.Text("The "), nodes.math(tex, tex), nodes.Text(" closed form"))
        assert as_html(ldpbook_sphinx.plain_title(title)) == f"The {html} closed form"


import check_site  # noqa: E402

# A chapter page's titles as the site showed them when the E_γ chapter's title leaked its TeX (trimmed), and now.
LEAKY_TITLES = """<html><head><title>3. The E_γ closed form: testing &#8212; ldpbook</title></head><body>
<div class="sidebar-primary-item"><nav class="bd-links bd-docs-nav" aria-label="Main">
<li class="toctree-l1"><a class="reference internal" href="02_egamma.html">3. The E_γ closed form: testing</a></li>
<li class="toctree-l1"><a class="reference internal" href="92_figures.html">Figures: <code class="docutils literal">
<span class="pre">ldpbook.figures_x</span></code></a></li>
<li class="toctree-l1"><a class="reference internal" href="99_x.html">The <span class="math">\\(\\chi^2\\)</span> test</a></li>
</nav></div>
<div id="jb-print-docs-body" class="onlyprint">
    <h1>The $E_\\gamma$ closed form: testing</h1></div>
<p class="prev-next-title"><span class="section-number">3. </span>The E_γ closed form: testing</p>
<h1>Figures: <code class="docutils literal"><span class="pre">ldpbook.figures_x</span></code></h1>
</body></html>"""


def test_tex_in_titles_is_found_outside_inline_code():
    found = check_site.tex_in_titles_of(LEAKY_TITLES)
    assert [f.split(":")[0] for f in found] == ["<title>", "the print heading", "a sidebar entry", "a sidebar entry",
                                                 "a previous/next link"]
    assert "'3. The E_γ closed form: testing'" in found[2] and "chi" in found[3]
    fixed = (LEAKY_TITLES.replace("E_γ", "E<sub>γ</sub>").replace("$E_\\gamma$", "Eγ")
             .replace('<span class="math">\\(\\chi^2\\)</span>', "χ<sup>2</sup>"))
    assert check_site.tex_in_titles_of(fixed) == []             # inline code may hold an underscore
    assert check_site.tex_in_titles_of(fixed.replace("<title>", "<title>ldpbook.figures_x ")) == []
    assert check_site.tex_in_titles_of(fixed.replace("<title>", "<title>a_b ")) == ["<title>: 'a_b 3. The Eγ closed "
                                                                                   "form: testing — ldpbook'"]
