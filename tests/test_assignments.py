"""Tests of ldpbook.assignments without nbgrader's commands: the source transformations, the attribution of tests to
functions, the isolation scope, the assignment notebook `make` writes, and the `check` command on real and broken
notebooks. The nbgrader workflow end to end is in test_grading_e2e.py."""
import ast
import importlib.util
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import numpy as np
import pytest

from ldpbook.assignments import (chapter_module, exported_functions, grading_scope, graded_tests, main,
                                 make_assignment, mark_solutions, own_helpers, remove_solutions)

ROOT = Path(__file__).resolve().parents[1]
CHAPTER4 = ROOT / "nbs" / "04_closeness.ipynb"
GRADING = ROOT / "tests" / "grading"
FUNCTIONS = ("noisy_permutation_pvalue", "dp_permutation_decision", "dp_permutation_test")


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

        def h(x):
            def inner():
                return 1
            return inner() + x
    ''')
    marked, done = mark_solutions(source, {"f", "g", "h"})
    assert done == {"f", "h"}                       # g has no body to write
    released = re.sub(r"( *)### BEGIN SOLUTION\n.*?### END SOLUTION", r"\1raise NotImplementedError()", marked,
                      flags=re.S)                    # what nbgrader's release does
    funcs = {n.name: n for n in ast.parse(released).body if isinstance(n, ast.FunctionDef)}
    assert ast.get_docstring(funcs["f"]) == "Docstring." and funcs["f"].decorator_list
    assert ast.unparse(funcs["f"].args) == "x: int, *, y=2"
    assert all(isinstance(funcs[n].body[-1], ast.Raise) for n in ("f", "h"))
    assert "CONSTANT = 3" in released and "inner" not in released and "z = x + y" not in released
    assert ast.dump(ast.parse(marked)) == ast.dump(ast.parse(source))     # markers are comments: code unchanged


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
    nb = nbformat.read(CHAPTER4, as_version=4)
    assert chapter_module(nb) == "closeness"
    assert set(FUNCTIONS) <= set(exported_functions(nb))
    with pytest.raises(ValueError, match="default_exp"):
        chapter_module(nbformat.v4.new_notebook())


def test_own_helpers_are_the_private_ones_nothing_else_uses():
    nb = chapter("#| export\ndef _a(x):\n    return _b(x)\n\ndef _b(x):\n    return x\n\ndef _c(x):\n    return x",
                 "#| export\ndef _d(x):\n    return x\n\nTABLE = _d(3)",
                 "#| export\ndef f(x):\n    return _a(x) + _c(x) + _d(x)",
                 "#| export\ndef g(x):\n    return _c(x)\n\nclass K:\n    pass")
    assert own_helpers(nb, "f") == ["_a", "_b"]          # _c is shared with g, _d with a module-level statement
    assert own_helpers(nb, "g") == []
    assert own_helpers(nb, "f", assigned=["g"]) == ["_a", "_b"]


def test_graded_tests_credit_one_function_each(tmp_path):
    path = tmp_path / "graded_mini.py"
    path.write_text(textwrap.dedent('''
        import pytest
        from hypothesis import given, strategies as st
        from ldpbook.mini import f, g

        POINTS = {"test_f_one": 3}
        HIDDEN = {"test_g_given"}

        def helper():
            return f(1)

        def test_f_one():
            assert helper() == 1

        def test_f_two():
            assert f(2) == 2

        def test_both():
            assert f(1) == g(1)

        @given(st.integers())
        def test_g_given(x):
            assert g(x) == x

        @pytest.mark.parametrize("x", [1, 2])
        def test_g_param(x):
            assert g(x) == x

        def test_g_fixture(tmp_path):
            assert g(1) == 1

        def test_nothing():
            assert True
    '''))
    found = {t.name: t for t in graded_tests(path, "mini", ["f", "g"], hidden_tests=True)}
    assert set(found) == {"test_f_one", "test_f_two", "test_g_given"}
    assert found["test_f_one"].function == "f" and found["test_f_one"].points == 3 and found["test_f_two"].points == 1
    assert found["test_g_given"].hidden and not found["test_f_one"].hidden
    assert "def helper" in found["test_f_one"].code and "from ldpbook.mini" not in found["test_f_one"].code
    assert "import pytest" in found["test_f_one"].code
    assert not any(t.hidden for t in graded_tests(path, "mini", ["f", "g"]))     # hidden only when asked for


def test_graded_cells_copy_what_they_import_from_a_module_next_to_the_tests(tmp_path):
    folder = tmp_path / "grading"
    folder.mkdir()
    (folder / "shared.py").write_text(textwrap.dedent('''
        """Shared checking tools."""
        import math

        def helper(x):
            return _inner(x)

        def _inner(x):
            return math.floor(x)

        def unused():
            return 0
    '''))
    for spelling in ("from grading.shared import helper", "from shared import helper"):
        (folder / "graded_mini.py").write_text(f"{spelling}\nfrom ldpbook.mini import f\n\n\n"
                                               "def test_f():\n    assert helper(f(2.5)) == 2\n")
        (test,) = graded_tests(folder / "graded_mini.py", "mini", ["f"])
        assert "import" not in test.code.replace("import math", "") and "def unused" not in test.code
        space = {"f": lambda x: x}
        exec(test.code + "\ntest_f()", space)                          # runs on its own, as a graded cell does
        assert space["_inner"](1.5) == 1


def _graded_test_functions():
    for path in (GRADING / "graded_closeness.py", GRADING / "graded_spr.py"):     # the files still in the old format
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name in sorted(vars(module)):
            if name.startswith("test_"):
                yield pytest.param(getattr(module, name), id=f"{path.stem}.{name}")


@pytest.mark.parametrize("test", list(_graded_test_functions()))
def test_graded_tests_pass_on_the_reference(test):
    test()


def test_grading_scope_swaps_in_the_reference_and_puts_everything_back():
    import ldpbook.closeness as reference
    space = {"noisy_permutation_pvalue": "mine", "dp_permutation_test": "mine too", "np": "unrelated"}
    with pytest.raises(RuntimeError):
        with grading_scope(space, "closeness", own=["dp_permutation_test"]):
            assert space["noisy_permutation_pvalue"] is reference.noisy_permutation_pvalue
            assert space["dp_permutation_test"] == "mine too" and space["bin_samples"] is reference.bin_samples
            raise RuntimeError("a failing test")
    assert space == {"noisy_permutation_pvalue": "mine", "dp_permutation_test": "mine too", "np": "unrelated"}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    source = make_assignment(CHAPTER4, ",".join(FUNCTIONS), course, name="hw4", hidden_tests=True, timeout=45)
    return course, source


def test_made_assignment_is_an_nbgrader_source_notebook(made):
    from nbgrader.nbgraderformat import MetadataValidator
    course, source = made
    assert source == course / "source" / "hw4" / CHAPTER4.name
    nb = nbformat.read(source, as_version=4)
    nbformat.validate(nb)
    MetadataValidator().validate_nb(nb)
    assert _meta(nb.cells[0])["grade_id"] == "instructions" and "`noisy_permutation_pvalue`" in nb.cells[0].source
    ids = [_meta(c)["grade_id"] for c in nb.cells if _meta(c)]
    assert len(ids) == len(set(ids))
    solutions = [c for c in nb.cells if _meta(c).get("solution")]
    assert set(FUNCTIONS) <= {n.name for c in solutions for n in ast.parse(c.source).body
                              if isinstance(n, ast.FunctionDef)}
    assert all("### BEGIN SOLUTION" in c.source for c in solutions)
    assert not any("### BEGIN SOLUTION" in c.source for c in nb.cells if not _meta(c).get("solution"))
    graded = [c for c in nb.cells if _meta(c).get("grade")]
    assert all(_meta(c)["locked"] and _meta(c)["points"] >= 1 for c in graded)
    assert {_meta(c)["grade_id"].split("-")[0] for c in graded} == set(FUNCTIONS)
    assert 0 < sum("### BEGIN HIDDEN TESTS" in c.source for c in graded) < len(graded)
    assert not any("{solution}" in c.source for c in nb.cells if c.cell_type == "markdown")
    assert not any(c.get("outputs") or "#| export" in c.source for c in nb.cells if c.cell_type == "code")
    config = (course / "nbgrader_config.py").read_text()
    assert "c.Execute.timeout = 45" in config and "add_missing_cells = True" in config


def test_make_errors_are_one_line_with_exit_code_2(tmp_path, capsys):
    bad = cli("make", CHAPTER4, "--functions", "no_such_function", "--course", tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no_such_function" in bad.stderr
    for args, word in [(("--functions", " , "), "functions"), (("--functions", FUNCTIONS[0], "--name", "a b"), "name"),
                       (("--functions", FUNCTIONS[0], "--timeout", "0"), "timeout")]:
        run = command(capsys, "make", CHAPTER4, "--course", tmp_path, *args)
        assert run.returncode == 2 and word in run.stderr and run.stderr.count("\n") == 1, (args, run.stderr)
    empty = tmp_path / "graded_none.py"
    empty.write_text("def test_other():\n    assert True\n")
    with pytest.raises(ValueError, match="no test exercises"):
        make_assignment(CHAPTER4, FUNCTIONS[0], tmp_path, tests=[empty])
    run = command(capsys, "make", tmp_path / "missing.ipynb", "--functions", "f", "--course", tmp_path)
    assert run.returncode == 2 and "chapter: no file" in run.stderr
    plain = tmp_path / "plain.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), plain)
    run = command(capsys, "make", plain, "--functions", "f", "--course", tmp_path)
    assert run.returncode == 2 and "default_exp" in run.stderr


def _release(source: Path, target: Path) -> Path:
    "The student's copy, as `nbgrader generate_assignment` makes it: solutions and hidden tests removed."
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells:
        cell.source = re.sub(r"( *)### BEGIN SOLUTION\n.*?### END SOLUTION", r"\1raise NotImplementedError()",
                             cell.source, flags=re.S)
        cell.source = re.sub(r"### BEGIN HIDDEN TESTS\n.*?### END HIDDEN TESTS", "", cell.source, flags=re.S)
    nbformat.write(nb, target)
    return target


def rows(stdout):
    "Parse the check table into {name: (result, detail)}."
    table = {}
    for line in stdout.splitlines():
        match = re.match(r"(\S+(?: \d+)?)\s+(\S+)\s+(\S+)\s+(PASS|FAIL|ERROR)\s*(.*)$", line)
        if match:
            table[match.group(1)] = (match.group(4), match.group(5))
    return table


def test_check_passes_a_correct_notebook_from_the_project_root(made, tmp_path):
    _, source = made
    correct = tmp_path / "correct.ipynb"
    correct.write_bytes(source.read_bytes())
    run = cli("check", correct.relative_to(tmp_path), cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert rows(run.stdout) == {f: ("PASS", "") for f in FUNCTIONS}
    stub = _release(source, tmp_path / "stub.ipynb")
    run = cli("check", stub)                                    # from the project root
    assert run.returncode == 1, run.stdout + run.stderr
    table = rows(run.stdout)
    assert set(table) == set(FUNCTIONS)
    assert all(result == "FAIL" and "NotImplementedError" in detail for result, detail in table.values())


def test_check_reports_errors_timeouts_and_crashes_with_exit_code_3(tmp_path, capsys):
    cells = [nbformat.v4.new_code_cell(s) for s in ("def f(x):\n    return x", "def g(:\n    pass",
                                                   "while True:\n    pass", "assert f(1) == 1")]
    cells[3].metadata["nbgrader"] = {"grade": True, "grade_id": "f-test_one", "locked": True, "points": 1,
                                     "schema_version": 3, "solution": False}
    broken = tmp_path / "broken.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), broken)
    run = cli("check", broken, "--timeout", "3")
    assert run.returncode == 3, run.stdout + run.stderr
    table = rows(run.stdout)
    assert table["cell 1"][0] == "ERROR" and "SyntaxError" in table["cell 1"][1]
    assert table["cell 2"][0] == "ERROR" and "CellTimeoutError" in table["cell 2"][1]
    assert table["f"] == ("PASS", "")                            # the run went on after the timeout
    crash = tmp_path / "crash.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os\nos._exit(1)")]), crash)
    run = cli("check", crash, "--timeout", "20")
    assert run.returncode == 3 and "ERROR" in run.stdout and "died" in run.stdout, run.stdout + run.stderr
    for bad in (tmp_path / "missing.ipynb", tmp_path / "broken.txt"):
        if bad.suffix == ".txt":
            bad.write_text("not a notebook")
        run = command(capsys, "check", bad)
        assert run.returncode == 2 and run.stderr.count("\n") == 1 and "notebook" in run.stderr


def test_with_checks_and_a_chapter_graded_with_its_ordinary_tests(tmp_path):
    source = make_assignment(ROOT / "nbs" / "00_foundations.ipynb", "randomized_response", tmp_path, with_checks=True)
    nb = nbformat.read(source, as_version=4)
    assert any(c.cell_type == "code" and not _meta(c) for c in nb.cells)        # the chapter's checks, ungraded
    graded = [c for c in nb.cells if _meta(c).get("grade")]
    assert graded and all(_meta(c)["grade_id"].startswith("randomized_response-") for c in graded)
    assert all("from ldpbook.foundations import" not in c.source for c in graded)
    lean = nbformat.read(make_assignment(ROOT / "nbs" / "00_foundations.ipynb", "randomized_response",
                                         tmp_path / "lean"), as_version=4)
    assert all(_meta(c) for c in lean.cells if c.cell_type == "code")           # no ungraded code by default


def test_grading_scope_moves_standard_error_to_standard_output(capsys):
    with grading_scope({}, "closeness", own=()):
        print("a warning", file=sys.stderr)
    captured = capsys.readouterr()
    assert "a warning" in captured.out and captured.err == ""


def test_a_second_assignment_keeps_the_course_time_limit(made, capsys):
    course, _ = made
    run = command(capsys, "make", CHAPTER4, "--functions", FUNCTIONS[0], "--course", course, "--name", "hw4b",
                  "--timeout", "5")
    assert run.returncode == 0, run.stderr
    assert "keeps its time limit of 45 s" in run.stdout
    nb = nbformat.read(course / "source" / "hw4b" / CHAPTER4.name, as_version=4)
    assert "at\nmost 45 s" in nb.cells[0].source or "most 45 s" in nb.cells[0].source.replace("\n", " ")
    assert "c.Execute.timeout = 45" in (course / "nbgrader_config.py").read_text()


def test_check_cells_that_stand_alone_can_be_graded(tmp_path):
    toy = chapter("#| export\nimport math\n\ndef f(x):\n    return math.sqrt(x)\n\ndef g(x):\n    return x",
                  "assert f(4) == 2", "y = 9", "assert f(y) == 3", "assert f(1) == g(1)", "%time f(1)",
                  "[f(v) for v in range(3)]")
    path = tmp_path / "toy.ipynb"
    nbformat.write(toy, path)
    source = make_assignment(path, "f", tmp_path / "course", tests=[], checks_graded=True)
    graded = [c for c in nbformat.read(source, as_version=4).cells if _meta(c).get("grade")]
    assert [_meta(c)["grade_id"] for c in graded] == ["f-check_cell_2", "f-check_cell_5", "f-check_cell_7"]
    with pytest.raises(ValueError, match="no test exercises"):
        make_assignment(path, "f,g", tmp_path / "course", tests=[], checks_graded=True)     # g has no check alone


def test_course_commands_refuse_a_missing_gradebook_or_assignment(tmp_path, capsys):
    for args in (("scores", "hw9", "--course", tmp_path), ("autograde", "hw9", "--course", tmp_path),
                 ("review", "hw9", "--course", tmp_path)):
        run = command(capsys, *args)
        assert run.returncode == 2 and run.stderr.count("\n") == 1, (args, run.stderr)
    assert not (tmp_path / "gradebook.db").exists()                 # nothing created by asking


def _graded_module(stem):
    spec = importlib.util.spec_from_file_location(stem, GRADING / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _null_symbols_last(p, q, eps, *, divergence="kl", ell=None, **params):
    "divergence_optimal with the symbols p = q = 0 moved from the first block (as documented) to the last."
    import dataclasses
    from ldpbook.spr import divergence_optimal, spr_channel
    mech = divergence_optimal(p, q, eps, divergence=divergence, ell=ell, **params)
    null = {x for x in range(len(p)) if p[x] == 0 and q[x] == 0}
    blocks = [tuple(x for x in block if x not in null) for block in mech.partition]
    blocks[-1] += tuple(sorted(null))
    blocks = [b for b in blocks if b]
    return dataclasses.replace(mech, partition=tuple(blocks), channel=spr_channel(blocks, len(p), eps))


def _mutants():
    from ldpbook.closeness import dp_permutation_decision, dp_permutation_test, noisy_permutation_pvalue
    from ldpbook.spr import spr_channel, spr_mechanism
    pvalue_tests = {"test_noisy_permutation_pvalue_adds_laplace_noise_of_scale_2_delta_over_eps",
                    "test_noisy_permutation_pvalue_threshold_events_are_private"}
    scale_test = {"test_dp_permutation_test_adds_laplace_noise_of_scale_8_over_eps"}
    yield "graded_closeness", "noisy_permutation_pvalue", lambda o, t, e, *, sensitivity, rng=None: \
        noisy_permutation_pvalue(o, t, 2 * e, sensitivity=sensitivity, rng=rng), pvalue_tests          # 4/eps
    yield "graded_closeness", "noisy_permutation_pvalue", lambda o, t, e, *, sensitivity, rng=None: \
        noisy_permutation_pvalue(o, t, e, sensitivity=0.75 * sensitivity, rng=rng), pvalue_tests       # 6/eps
    ties_test = {"test_noisy_permutation_pvalue_without_noise_counts_ties_against_the_null"}
    yield "graded_closeness", "noisy_permutation_pvalue", lambda o, t, e, *, sensitivity, rng=None: \
        noisy_permutation_pvalue(o, t, e, sensitivity=sensitivity, rng=rng) - 1 / (len(t) + 1), ties_test
    yield "graded_closeness", "dp_permutation_decision", lambda o, t, e, *, sensitivity, alpha=0.05, rng=None: \
        dp_permutation_decision(o, t, 2 * e, sensitivity=sensitivity, alpha=alpha, rng=rng), \
        {"test_dp_permutation_decision_is_private"}
    yield "graded_closeness", "dp_permutation_test", \
        lambda x, y, eps, **kw: dp_permutation_test(x, y, 2 * eps, **kw), scale_test                    # 4/eps
    yield "graded_closeness", "dp_permutation_test", \
        lambda x, y, eps, **kw: dp_permutation_test(x, y, np.inf, **kw), scale_test                     # no noise
    yield "graded_spr", "divergence_optimal", _null_symbols_last, {"test_divergence_optimal_null_symbols_join_first_block"}
    yield "graded_spr", "divergence_optimal", lambda p, q, eps, *, divergence="kl", ell=None: spr_mechanism(
        p, q, eps, [range(len(p) // 2), range(len(p) // 2, len(p))], divergence=divergence), \
        {"test_divergence_optimal_beats_every_partition"}
    yield "graded_spr", "spr_channel", lambda blocks, k, eps: spr_channel(blocks, k, eps / 2), \
        {"test_spr_channel_is_randomized_response_on_block_labels"}


@pytest.mark.parametrize("stem, name, mutant, failing", list(_mutants()))
def test_graded_tests_catch_planted_bugs(stem, name, mutant, failing):
    "Each planted bug fails the graded tests named, through the public function only (the tests are not vacuous)."
    module = _graded_module(stem)
    setattr(module, name, mutant)
    for test in failing:
        with pytest.raises(AssertionError):
            getattr(module, test)()


def _other_pvalue(observed, permuted, eps, *, sensitivity, rng=None):
    "A correct noisy p-value that draws its noise otherwise: one value at a time, permuted first, subtracted."
    from ldpbook.closeness import noisy_permutation_pvalue
    from ldpbook.foundations import as_generator
    reference = noisy_permutation_pvalue(observed, permuted, eps, sensitivity=sensitivity, rng=0)   # validates the input
    if np.isinf(eps):
        return reference
    rng, scale = as_generator(rng), 2 * sensitivity / eps
    noisy_permuted = [t - scale * rng.laplace() for t in np.asarray(permuted, dtype=float)]
    noisy_observed = observed - rng.laplace(0.0, scale)
    return (1 + sum(t > noisy_observed for t in noisy_permuted)) / (len(noisy_permuted) + 1)


def _other_test(x, y, eps, *, k=None, statistic_name="rb", n_permutations=199, alpha=0.05, rng=None,
                return_nonprivate=False):
    "A correct DP permutation test that draws its noise first, as one array, and uses the last value for T_0."
    from ldpbook import closeness
    from ldpbook.foundations import as_generator
    rng = as_generator(rng)
    noise = rng.laplace(0.0, 2 * 4.0 / eps, size=n_permutations + 1)
    perm = closeness.permutation_statistics(x, y, k=k, statistic_name=statistic_name, n_permutations=n_permutations,
                                            rng=rng)
    pvalue = (1 + np.count_nonzero(perm.permuted + noise[:-1] >= perm.observed + noise[-1])) / (n_permutations + 1)
    keep = return_nonprivate
    return closeness.DPPermutationTestResult(bool(pvalue <= alpha), pvalue if keep else None,
                                             perm.observed if keep else None, perm.permuted if keep else None, eps,
                                             alpha, 8.0 / eps, statistic_name, n_permutations, ("reject",), ())


def _other_decision(observed, permuted, eps, *, sensitivity, alpha=0.05, rng=None):
    "A correct decision on `_other_pvalue`."
    from ldpbook.closeness import dp_permutation_decision
    dp_permutation_decision(observed, permuted, eps, sensitivity=sensitivity, alpha=alpha, rng=0)   # validates the input
    return bool(_other_pvalue(observed, permuted, eps, sensitivity=sensitivity, rng=rng) <= alpha)


def test_correct_solutions_that_draw_their_noise_otherwise_pass():
    "The exact checks find the observed statistic's noise from the decisions: the order of the draws is free."
    module = _graded_module("graded_closeness")
    module.noisy_permutation_pvalue, module.dp_permutation_decision = _other_pvalue, _other_decision
    module.dp_permutation_test = _other_test
    tests = [name for name in sorted(vars(module)) if name.startswith("test_")]
    assert len(tests) == 10
    for name in tests:
        getattr(module, name)()
