"""End-to-end tests of ldpbook.assignments: make an assignment from a real chapter, grade it, grade the untouched
chapter, grade a chapter with a planted bug; plus the source transformations and every user error."""
import ast
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from ldpbook.assignments import (chapter_module, exported_functions, make_assignment, remove_solutions,
                                 stub_functions, functions_per_test)

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "nbs" / "00_foundations.ipynb"


def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "ldpbook.assignments", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=900)


def rows(stdout):
    "Parse the grade table into {function: (result, first failure)}."
    table = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[3] in ("PASS", "FAIL"):
            table[parts[0]] = (parts[3], " ".join(parts[4:]))
    return table


def test_assignment_from_real_chapter_fails_with_not_implemented(tmp_path):
    made = cli("make", CHAPTER, "--functions", "randomized_response,ldp_epsilon", "--out", tmp_path)
    assert made.returncode == 0, made.stderr
    student = nbformat.read(tmp_path / CHAPTER.name, as_version=4)
    assert not any("{solution}" in c.source for c in student.cells)
    assert sum("NotImplementedError" in c.source for c in student.cells if c.cell_type == "code") == 2
    graded = cli("grade", tmp_path / CHAPTER.name)
    assert graded.returncode == 1, graded.stdout + graded.stderr
    table = rows(graded.stdout)
    assert set(table) == {"randomized_response", "ldp_epsilon"}
    for result, failure in table.values():
        assert result == "FAIL" and "NotImplementedError" in failure


def test_unmodified_chapter_passes(tmp_path):
    shutil.copy(CHAPTER, tmp_path / CHAPTER.name)
    graded = cli("grade", tmp_path / CHAPTER.name, "--repo", ROOT)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    table = rows(graded.stdout)
    assert {"randomized_response", "divergence", "is_ldp", "privatize"} <= set(table)
    assert all(result == "PASS" for result, _ in table.values())


def test_planted_bug_fails_on_the_right_function(tmp_path):
    nb = nbformat.read(CHAPTER, as_version=4)
    planted = 0
    for cell in nb.cells:
        if "keep = 1.0 / (1.0 + (k - 1) * small)" in cell.source:     # an off-by-one in randomized response
            cell.source = cell.source.replace("(k - 1) * small", "k * small")
            planted += 1
    assert planted == 1
    nbformat.write(nb, tmp_path / CHAPTER.name)
    manifest = {"chapter": CHAPTER.name, "module": "foundations", "source": str(CHAPTER),
                "functions": ["randomized_response", "check_distribution", "ldp_epsilon"]}
    (tmp_path / "assignment.json").write_text(json.dumps(manifest))
    graded = cli("grade", tmp_path / CHAPTER.name)
    assert graded.returncode == 1
    table = rows(graded.stdout)
    assert table["randomized_response"][0] == "FAIL"
    assert table["check_distribution"][0] == "PASS"


def test_stub_keeps_signature_docstring_decorators_and_neighbours():
    source = textwrap.dedent('''
        import functools

        @functools.lru_cache
        def f(x: int, *, y=2) -> int:
            """Docstring."""
            z = x + y
            return z

        def g(x):
            "only a docstring"

        CONSTANT = 3

        def h(x):
            def inner():
                return 1
            return inner() + x
    ''')
    new, done = stub_functions(source, {"f", "g", "h"})
    assert done == {"f", "g", "h"}
    tree = ast.parse(new)
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert ast.get_docstring(funcs["f"]) == "Docstring." and funcs["f"].decorator_list
    assert ast.unparse(funcs["f"].args) == "x: int, *, y=2"
    assert ast.get_docstring(funcs["g"]) == "only a docstring"
    for fn in funcs.values():
        assert isinstance(fn.body[-1], ast.Raise)
    assert "CONSTANT = 3" in new and "inner" not in new


def test_remove_solutions_handles_both_fences_and_keeps_exercises():
    text = textwrap.dedent('''
        ````{exercise}
        :label: e1
        Do it.
        ````

        ````{solution} e1
        :class: dropdown
        ```python
        answer = 42
        ```
        ````

        :::{solution} e2
        Secret.
        :::
        After.
    ''')
    out = remove_solutions(text)
    assert "{exercise}" in out and "Do it." in out and "After." in out
    assert "answer" not in out and "Secret" not in out and "{solution}" not in out


def test_reading_chapters():
    nb = nbformat.read(CHAPTER, as_version=4)
    assert chapter_module(nb) == "foundations"
    assert {"divergence", "privatize", "is_ldp"} <= set(exported_functions(nb))
    with pytest.raises(ValueError, match="default_exp"):
        chapter_module(nbformat.v4.new_notebook())


def test_tests_are_credited_through_helpers(tmp_path):
    path = tmp_path / "test_x.py"
    path.write_text("def helper():\n    return a()\n\ndef test_one():\n    helper()\n\ndef test_two():\n    b()\n")
    assert functions_per_test(path, ["a", "b"]) == {"test_one": {"a"}, "test_two": {"b"}}


def test_user_errors_are_one_line_with_exit_code_2(tmp_path):
    bad = cli("make", CHAPTER, "--functions", "no_such_function", "--out", tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no_such_function" in bad.stderr
    empty = cli("make", CHAPTER, "--functions", " , ", "--out", tmp_path)
    assert empty.returncode == 2 and "functions" in empty.stderr
    plain = tmp_path / "plain.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), plain)
    graded = cli("grade", plain)
    assert graded.returncode == 2 and "default_exp" in graded.stderr
    with pytest.raises(ValueError, match="not exported functions"):
        make_assignment(CHAPTER, ["nope"], tmp_path)
