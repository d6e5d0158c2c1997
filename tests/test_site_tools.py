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
