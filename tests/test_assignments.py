"""Tests of ldpbook.assignments without nbgrader's commands: the source transformations, what is withheld, the graded
tests and their set-up cell, the assignment notebook `make` writes, the repair of submissions, the code the grader
runs, the modules kept from the student, and the `check` command. The nbgrader workflow end to end, with every
attack, is in test_grading_e2e.py."""
import ast
import contextlib
import copy
import io
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from ldpbook.assignments import (_nbgrader_metadata, answer_parts, answering_helpers, blocked_modules,
                                 chapter_module, exported_functions, graded_tests, main, make_assignment,
                                 mark_solutions, own_helpers, remove_solutions, repair, student_code, visible_setup,
                                 write_config)

ROOT = Path(__file__).resolve().parents[1]
CHAPTER1 = ROOT / "nbs" / "01_spr.ipynb"

TESTS = '''
"""Graded tests of spr_channel for these tests."""
import numpy as np

from ldpbook.assignments import StudentError, grades
from ldpbook.foundations import randomized_response

E = np.e


def expected_channel():
    "Q(j|x) for the blocks [[0, 2], [1]] at eps = 1, written out."
    return np.array([[E, 1], [1, E], [E, 1]]) / (E + 1)


def block_channel(blocks, k, eps):
    "Randomized response on the block labels."
    label = np.empty(k, dtype=int)
    for j, block in enumerate(blocks):
        label[list(block)] = j
    return randomized_response(len(blocks), eps)[label]


@grades("spr_channel", points=2)
def test_entries(spr_channel):
    "The entries for two blocks."
    assert np.allclose(np.asarray(spr_channel([[0, 2], [1]], 3, 1.0), dtype=float), expected_channel())


@grades("spr_channel", hidden=True)
def test_against_labels(spr_channel):
    assert np.allclose(spr_channel([[1], [0, 2]], 3, 2.0), block_channel([[1], [0, 2]], 3, 2.0))
'''


def cli(*args, cwd=ROOT):
    "The command line in a process of its own, as a user runs it."
    return subprocess.run([sys.executable, "-m", "ldpbook.assignments", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def command(capsys, *args):
    "The command line's `main` in this process (what it prints and returns is what `cli` sees, minus the start-up)."
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out.out, out.err)


def chapter(*sources):
    "A small chapter notebook from code cell sources."
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in ("#| default_exp mini", *sources)])


def _meta(cell):
    return cell.metadata.get("nbgrader", {})


@pytest.fixture(scope="module")
def tests_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("tests") / "graded_spr.py"
    path.write_text(TESTS)
    return path


def test_mark_solutions_keeps_signature_docstring_decorators_and_neighbours():
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
    ''')
    marked, done = mark_solutions(source, {"f", "g"})
    assert done == {"f"}                            # g has no body to write
    released = re.sub(r"( *)### BEGIN SOLUTION\n.*?### END SOLUTION", r"\1raise NotImplementedError()", marked,
                      flags=re.S)                    # what nbgrader's release does
    funcs = {n.name: n for n in ast.parse(released).body if isinstance(n, ast.FunctionDef)}
    assert ast.get_docstring(funcs["f"]) == "Docstring." and funcs["f"].decorator_list
    assert isinstance(funcs["f"].body[-1], ast.Raise) and "z = x + y" not in released and "CONSTANT = 3" in released
    assert ast.dump(ast.parse(marked)) == ast.dump(ast.parse(source))     # markers are comments: code unchanged


def test_remove_solutions_handles_both_fences_and_keeps_exercises():
    text = "````{exercise}\n:label: e1\nDo it.\n````\n\n````{solution} e1\nanswer = 42\n````\n\n" \
           ":::{solution} e2\nSecret.\n:::\nAfter.\n"
    out = remove_solutions(text)
    assert "Do it." in out and "After." in out and "answer" not in out and "Secret" not in out


def test_reading_chapters():
    nb = nbformat.read(CHAPTER1, as_version=4)
    assert chapter_module(nb) == "spr" and {"divergence_optimal", "spr_channel"} <= set(exported_functions(nb))
    with pytest.raises(ValueError, match="default_exp"):
        chapter_module(nbformat.v4.new_notebook())


def test_own_helpers_are_the_private_ones_nothing_else_uses():
    nb = chapter("#| export\ndef _a(x):\n    return _b(x)\n\ndef _b(x):\n    return x\n\ndef _c(x):\n    return x",
                 "#| export\ndef _d(x):\n    return x\n\nTABLE = _d(3)",
                 "#| export\ndef f(x):\n    return _a(x) + _c(x) + _d(x)",
                 "#| export\ndef g(x):\n    return _c(x)")
    assert own_helpers(nb, "f") == ["_a", "_b"] and own_helpers(nb, "g") == []


def test_answer_parts_are_what_a_function_reaches_with_its_own_inputs():
    nb = chapter("#| export\nENGINES = {}\n\ndef _slow(p, q, eps):\n    return p\n\ndef solve(p, q, eps, ell=None):\n"
                 "    return ENGINES.get('f', _slow)(p, q, eps)\n\ndef _check(p):\n    return p",
                 "#| export\ndef f(p, q, eps):\n    return solve(_check(p), q, eps)\n\ndef other(p, q, eps):\n"
                 "    return 0",
                 "#| export\ndef _fast(p, q, eps, workspace=None):\n    return p\n\nENGINES['f'] = _fast")
    assert answer_parts(nb, "f") == ["_slow", "solve", "_fast"]   # other is not reached, _check takes other inputs
    assert answer_parts(nb, "f", assigned=["solve"]) == ["_slow", "_fast"]
    parts = answer_parts(nbformat.read(CHAPTER1, as_version=4), "divergence_optimal")
    assert {"spr_dp", "_engine_solution"} <= set(parts) and "spr_channel" not in parts


def test_graded_tests_read_the_decorators(tests_file, tmp_path):
    found = graded_tests(tests_file)
    assert [(t.function, t.name, t.points, t.hidden) for t in found] == [
        ("spr_channel", "test_entries", 2, False), ("spr_channel", "test_against_labels", 1, True)]
    assert found[0].source.startswith('@grades("spr_channel", points=2)\ndef test_entries(spr_channel):')
    assert graded_tests(tests_file, ["divergence_optimal"]) == []
    bad = tmp_path / "graded_bad.py"
    bad.write_text('from ldpbook.assignments import grades\n\n@grades("f")\ndef test_x(g):\n    pass\n')
    with pytest.raises(ValueError, match="one parameter, named 'f'"):
        graded_tests(bad)


def test_the_set_up_cell_holds_only_what_visible_tests_use(tests_file):
    setup = visible_setup(tests_file, graded_tests(tests_file))
    assert "def expected_channel" in setup and "E = np.e" in setup and "import numpy as np" in setup
    assert "from ldpbook.assignments import StudentError, grades" in setup
    assert "block_channel" not in setup and "randomized_response" not in setup      # only the hidden test uses them


def test_helpers_that_answer_are_found(tests_file):
    nb = nbformat.read(CHAPTER1, as_version=4)
    assert answering_helpers(tests_file.read_text(), nb, "spr_channel") == ["block_channel"]
    same_inputs = "def best(p, q, eps, kind='kl'):\n    return max(p)\n"
    assert answering_helpers(same_inputs, nb, "divergence_optimal") == ["best"]
    assert answering_helpers("def mass(x):\n    return sum(x)\n", nb, "divergence_optimal") == []


@pytest.fixture(scope="module")
def made(tmp_path_factory, tests_file):
    course = tmp_path_factory.mktemp("course")
    source = make_assignment(CHAPTER1, "spr_channel", course, name="hw1", hidden_tests=True, tests=tests_file)
    return course, source


def test_made_assignment_is_an_nbgrader_source_notebook(made):
    from nbgrader.nbgraderformat import MetadataValidator
    course, source = made
    assert source == course / "source" / "hw1" / CHAPTER1.name
    nb = nbformat.read(source, as_version=4)
    nbformat.validate(nb)
    MetadataValidator().validate_nb(nb)
    ids = [_meta(c)["grade_id"] for c in nb.cells if _meta(c)]
    assert len(ids) == len(set(ids)) and ids[0] == "instructions"
    graded = {_meta(c)["grade_id"]: c for c in nb.cells if _meta(c).get("grade")}
    assert list(graded) == ["spr_channel-test_entries", "spr_channel-test_against_labels"]
    assert [_meta(c)["points"] for c in graded.values()] == [2, 1] and all(_meta(c)["locked"] for c in graded.values())
    assert "def test_entries(spr_channel):" in graded["spr_channel-test_entries"].source
    assert "block_channel" not in graded["spr_channel-test_against_labels"].source
    assert not any("block_channel" in c.source for c in nb.cells)                  # the hidden test's helper
    solutions = [c for c in nb.cells if _meta(c).get("solution")]
    assert len(solutions) == 1 and "def spr_channel(" in solutions[0].source
    assert "### BEGIN SOLUTION" in solutions[0].source
    assert not any(c.get("outputs") or "#| export" in c.source for c in nb.cells if c.cell_type == "code")
    stored = course / "source" / ".grading" / "hw1"
    assert (stored / "graded_spr.py").read_text() == TESTS and (stored / "01_spr.json").is_file()
    assert "nbgrader_preprocessors()" in (course / "nbgrader_config.py").read_text()


def test_make_withholds_what_answers_and_gives_what_it_is_told(tmp_path):
    tests = tmp_path / "graded_spr.py"
    tests.write_text('from ldpbook.assignments import grades\n\n\n@grades("divergence_optimal")\n'
                     'def test_runs(divergence_optimal):\n    divergence_optimal([0.5, 0.5], [0.2, 0.8], 1.0)\n')
    source = make_assignment(CHAPTER1, "divergence_optimal", tmp_path / "a", tests=tests)
    nb = nbformat.read(source, as_version=4)
    spr_dp = next(c for c in nb.cells if "def spr_dp(" in c.source)
    assert _meta(spr_dp)["solution"] and "### BEGIN SOLUTION" in spr_dp.source and "`spr_dp`" in nb.cells[0].source
    given = make_assignment(CHAPTER1, "divergence_optimal", tmp_path / "b", tests=tests, give="spr_dp")
    spr_dp = next(c for c in nbformat.read(given, as_version=4).cells if "def spr_dp(" in c.source)
    assert "### BEGIN SOLUTION" not in spr_dp.source.split("def spr_dp(")[1].split("\ndef ")[0]


def test_make_refuses_a_visible_helper_that_answers(tmp_path, tests_file):
    shown = tmp_path / "graded_spr.py"
    shown.write_text(TESTS.replace('@grades("spr_channel", hidden=True)', '@grades("spr_channel")'))
    with pytest.raises(ValueError, match="block_channel .it computes what spr_channel computes"):
        make_assignment(CHAPTER1, "spr_channel", tmp_path / "c", tests=shown)
    make_assignment(CHAPTER1, "spr_channel", tmp_path / "c", tests=shown, give="block_channel")
    with pytest.raises(ValueError, match="give"):
        make_assignment(CHAPTER1, "spr_channel", tmp_path / "d", tests=shown, give="block_channel,nothing")
    empty = tmp_path / "graded_empty.py"
    empty.write_text("")
    with pytest.raises(ValueError, match="no visible test"):
        make_assignment(CHAPTER1, "spr_channel", tmp_path / "e", tests=empty)


def test_make_errors_are_one_line_with_exit_code_2(tmp_path, capsys, tests_file):
    bad = cli("make", CHAPTER1, "--functions", "no_such_function", "--course", tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no_such_function" in bad.stderr
    a_file = tmp_path / "file.txt"
    a_file.write_text("")
    for args, word in [(("--functions", " , "), "functions"), (("--functions", "spr_channel", "--name", "a b"), "name"),
                       (("--functions", "spr_channel", "--timeout", "0"), "timeout"),
                       (("--functions", "spr_channel", "--budget", "-5"), "budget"),
                       (("--functions", "spr_channel", "--budget", "inf"), "budget"),
                       (("--functions", "spr_channel", "--tests", tmp_path / "none.py"), "none.py")]:
        run = command(capsys, "make", CHAPTER1, "--course", tmp_path / "c", *args)
        assert run.returncode == 2 and word in run.stderr and run.stderr.count("\n") == 1, (args, run.stderr)
    run = command(capsys, "make", CHAPTER1, "--functions", "spr_channel", "--course", a_file, "--tests", tests_file)
    assert run.returncode == 2 and "is a file" in run.stderr
    run = command(capsys, "make", tmp_path / "missing.ipynb", "--functions", "f", "--course", tmp_path)
    assert run.returncode == 2 and "chapter: no file" in run.stderr
    plain = tmp_path / "plain.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), plain)
    run = command(capsys, "make", plain, "--functions", "f", "--course", tmp_path)
    assert run.returncode == 2 and "default_exp" in run.stderr


def test_course_commands_refuse_what_is_not_a_course(tmp_path, capsys):
    a_file = tmp_path / "file.txt"
    a_file.write_text("")
    for args in (("scores", "hw9", "--course", tmp_path), ("autograde", "hw9", "--course", tmp_path),
                 ("review", "hw9", "--course", tmp_path), ("autograde", "hw9", "--course", a_file),
                 ("review", "hw9", "--course", tmp_path / "missing"), ("feedback", "hw9", "--course", tmp_path),
                 ("feedback", "hw9", "--course", a_file), ("feedback", "hw9", "--course", tmp_path, "--jobs", 0)):
        run = command(capsys, *args)
        assert run.returncode == 2 and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, (args, run.stderr)
    assert not (tmp_path / "gradebook.db").exists()                 # nothing created by asking


def test_marks_per_function_count_alike_reasons_together():
    from ldpbook.assignments import distribution_table, mark_distribution
    rows = [{"student": s, "function": f, "score": score, "max_score": 3.0, "reason": why} for s, f, score, why in [
        ("a", "f", 3.0, ""), ("b", "f", 3.0, ""), ("c", "f", 1.0, "test_x: assertion failed: assert 0.1 == 0.2"),
        ("d", "f", 0.0, "test_x: assertion failed: assert 7 == 2"), ("a", "g", 0.0, "test_y: g raised ValueError: no")]]
    found = {one["function"]: one for one in mark_distribution(rows)}
    assert found["f"]["marks"] == {3.0: 2, 1.0: 1, 0.0: 1} and found["f"]["reasons"] == {"test_x: assertion failed": 2}
    assert found["g"]["reasons"] == {"test_y: g raised ValueError": 1}
    assert distribution_table(rows).splitlines()[:2] == ["f (of 3 points): 2 x 3, 1 x 1, 1 x 0",
                                                         "      2  test_x: assertion failed"]


def test_grading_before_the_release_is_refused(made, capsys):
    course, _ = made
    run = command(capsys, "autograde", "hw1", "--course", course)
    assert run.returncode == 2 and "generate_assignment hw1" in run.stderr and run.stderr.count("\n") == 1


def test_an_existing_configuration_gets_the_grading_lines(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.course_id = 'mine'\n")
    text = write_config(tmp_path).read_text()
    assert "course_id = 'mine'" in text and text.count("nbgrader_preprocessors()") == 1
    assert write_config(tmp_path).read_text() == text


def test_the_command_runs_the_module_that_nbgrader_imports(monkeypatch):
    """`python -m ldpbook.assignments` runs the file as `__main__`, and the course's nbgrader configuration imports
    `ldpbook.assignments`: the command must run that module's `main`, or the results `autograde` keeps for nbgrader's
    step sit in another copy of the module, and every submission is graded twice."""
    import runpy
    import warnings

    import ldpbook.assignments
    called = []
    monkeypatch.setattr(ldpbook.assignments, "main", lambda argv=None: called.append(argv) or 7)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    with pytest.raises(SystemExit) as done, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)        # runpy: the module is imported already
        runpy.run_module("ldpbook.assignments", run_name="__main__")
    assert done.value.code == 7 and called == [None]


def _release(source: Path) -> nbformat.NotebookNode:
    "The student's copy, as `nbgrader generate_assignment` makes it: solutions removed."
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells:
        cell.source = re.sub(r"( *)### BEGIN SOLUTION\n.*?### END SOLUTION", r"\1raise NotImplementedError()",
                             cell.source, flags=re.S)
    return nb


def test_repair_puts_the_release_back_around_the_students_code(made):
    release = _release(made[1])
    solution = next(i for i, c in enumerate(release.cells) if _meta(c).get("solution"))
    graded = [i for i, c in enumerate(release.cells) if _meta(c).get("grade")]
    given = next(i for i, c in enumerate(release.cells) if _meta(c).get("grade_id", "").startswith("given-"))
    submitted = copy.deepcopy(release)
    submitted.cells[solution].source = "def spr_channel(partition, k, eps):\n    return 'mine'"
    submitted.cells[solution].metadata["nbgrader"]["grade_id"] = "renamed"          # found by its cell id
    submitted.cells[graded[0]].metadata["nbgrader"]["grade"] = False
    submitted.cells[graded[0]].source = "pass"
    submitted.cells[given].source = "def randomized_response(*args):\n    return 'answer'"
    added = nbformat.v4.new_code_cell("def helper():\n    return 1")
    submitted.cells.insert(solution + 1, added)
    del submitted.cells[graded[1] + 1]
    repaired, problems = repair(submitted, release)
    assert problems == {}
    assert [_meta(c) for c in repaired.cells if _meta(c)] == [_meta(c) for c in release.cells if _meta(c)]
    assert repaired.cells[solution].source.endswith("return 'mine'")
    assert repaired.cells[solution + 1].source == added.source and not _meta(repaired.cells[solution + 1])
    assert repaired.cells[graded[0] + 1].source == release.cells[graded[0]].source
    assert repaired.cells[given].source == release.cells[given].source
    markdown = copy.deepcopy(release)
    markdown.cells[solution] = nbformat.v4.new_markdown_cell(markdown.cells[solution].source,
                                                             metadata=markdown.cells[solution].metadata)
    markdown.cells[solution].id = release.cells[solution].id
    assert "markdown" in repair(markdown, release)[1][_meta(release.cells[solution])["grade_id"]]
    gone = copy.deepcopy(release)
    del gone.cells[solution]
    assert "deleted" in repair(gone, release)[1][_meta(release.cells[solution])["grade_id"]]


def test_student_code_runs_each_cell_on_its_own():
    cells = [nbformat.v4.new_code_cell(s) for s in ("def f():\n    return 1", "def g(:\n    pass",
                                                   "%timeit f()\ndef h():\n    return f() + 1", "raise SystemExit(3)")]
    cells[0].metadata.update(_nbgrader_metadata("solution-1", solution=True))
    cells[1].metadata.update(_nbgrader_metadata("solution-2", solution=True))
    cells.append(nbformat.v4.new_code_cell("def hidden():\n    return 0"))
    cells[4].metadata.update(_nbgrader_metadata("f-test", grade=True, locked=True, points=1))
    code, errors = student_code(nbformat.v4.new_notebook(cells=cells))
    space = {}
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(code, space)
    assert space["h"]() == 2 and "g" not in space and "hidden" not in space
    assert list(errors) == ["solution-2"] and "SyntaxError" in errors["solution-2"]
    assert printed.getvalue() == "solution-2: SyntaxError: invalid syntax (solution-2, line 1)\n" \
                                 "added cell 3: SystemExit: 3\n"
    assert space["f"].__code__.co_filename == "solution-1"          # a cell's code keeps its label as its file


def test_student_code_sends_each_cell_compiled_as_the_child_would_compile_it():
    """The cells go compiled (marshal), with the flags the child would use (postponed annotations, asserts kept),
    so that no test's child compiles them again; a cell that does not compile goes as source."""
    import marshal
    sources = ("def f(x: undefined_name) -> int:\n    assert x > 0, 'x'\n    return x", "def g(:\n    pass")
    cells = [nbformat.v4.new_code_cell(s) for s in sources]
    code, _ = student_code(nbformat.v4.new_notebook(cells=cells))
    listed = next(node.iter for node in ast.walk(ast.parse(code)) if isinstance(node, ast.For))
    (first, source, compiled), (second, _, none) = ast.literal_eval(listed)
    assert (first, source, second, none) == ("added cell 0", sources[0], "added cell 1", None)
    space = {}
    exec(marshal.loads(compiled), space)
    assert space["f"].__annotations__ == {"x": "undefined_name", "return": "int"}
    with pytest.raises(AssertionError, match="x"):
        space["f"](-1)


def test_the_blocked_modules_are_the_references_and_the_grader():
    blocked = blocked_modules(["spr_channel"])
    assert {"ldpbook.spr", "ldpbook.assignments"} <= set(blocked) and "ldpbook.foundations" not in blocked


def test_check_runs_the_visible_tests_on_the_students_code(made, tmp_path, capsys):
    "The command as a student runs it (a notebook named from its folder), then its other answers in this process."
    _, source = made
    correct = tmp_path / "correct.ipynb"
    correct.write_bytes(source.read_bytes())
    run = cli("check", correct.name, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"^spr_channel\s+1/1\s+2/2\s+PASS", run.stdout, re.M), run.stdout
    stub = tmp_path / "stub.ipynb"
    nbformat.write(_release(source), stub)
    run = command(capsys, "check", stub)
    assert run.returncode == 1 and re.search(r"^spr_channel\s+0/1\s+0/2\s+FAIL\s+test_entries: .*NotImplementedError",
                                              run.stdout, re.M), run.stdout + run.stderr
    broken = _release(source)
    next(c for c in broken.cells if _meta(c).get("solution")).source += "\ndef oops(:\n"
    nbformat.write(broken, tmp_path / "broken.ipynb")
    run = command(capsys, "check", tmp_path / "broken.ipynb")
    assert run.returncode == 3 and "SyntaxError" in run.stdout, run.stdout + run.stderr
    for bad in (tmp_path / "missing.ipynb", tmp_path / "broken.txt"):
        if bad.suffix == ".txt":
            bad.write_text("not a notebook")
        run = command(capsys, "check", bad)
        assert run.returncode == 2 and run.stderr.count("\n") == 1 and "notebook" in run.stderr


CHAPTERS = {"foundations": "00_foundations", "spr": "01_spr", "egamma": "02_egamma", "sparse": "03_sparse_kernels",
            "closeness": "04_closeness", "adaptive": "05_adaptivity", "chernoff": "06_chernoff"}


@pytest.mark.parametrize("module", sorted(CHAPTERS))
def test_every_chapter_can_be_assigned_with_its_graded_tests(module, tmp_path):
    "`make` accepts the project's graded tests of each chapter, every function they grade assigned at once."
    tests = ROOT / "tests" / "grading" / f"graded_{module}.py"
    functions = sorted({t.function for t in graded_tests(tests)})
    assert functions
    source = make_assignment(ROOT / "nbs" / f"{CHAPTERS[module]}.ipynb", functions, tmp_path, hidden_tests=True)
    graded = [c for c in nbformat.read(source, as_version=4).cells if _meta(c).get("grade")]
    assert {_meta(c)["grade_id"].split("-")[0] for c in graded} == set(functions)
