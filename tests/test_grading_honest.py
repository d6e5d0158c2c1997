"""The lecturer's honest solutions earn full marks, and a student's `check` agrees with the course
(nbs/90_assignments.ipynb).

An assignment of the SPR chapter (`divergence_optimal`, `spr_channel`, graded by tests/grading/graded_spr.py with
its hidden tests) is made and released as a course makes it; ten honest solutions (tests/grading/honest_spr.py:
threads, `re.compile`, functools and itertools, numpy's whole API, `eval`, brute force through the given code, other
algorithms, files in /tmp) and three wrong ones are submitted. Each honest solution must earn every point of both
functions; and on every function of every submission, `check` (the visible tests, run as the student runs them)
must say PASS exactly when the course passed every visible test of that function.
"""
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from ldpbook.assignments import check, grade_submission, make_assignment

sys.path.insert(0, str(Path(__file__).resolve().parent / "grading"))
from honest_spr import HONEST, WRONG, with_bodies  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS = ("divergence_optimal", "spr_channel")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    "The course's rows and `check`'s rows of every submission."
    course = tmp_path_factory.mktemp("honest") / "course"
    make_assignment(ROOT / "nbs" / "01_spr.ipynb", ",".join(FUNCTIONS), course, name="hw1", hidden_tests=True)
    nbgrader = Path(sys.executable).parent / "nbgrader"
    done = subprocess.run([str(nbgrader), "generate_assignment", "hw1"], cwd=course, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    release = nbformat.read(course / "release" / "hw1" / "01_spr.ipynb", as_version=4)
    results = {}
    for student, bodies in {**HONEST, **WRONG}.items():
        folder = course / "submitted" / student / "hw1"
        folder.mkdir(parents=True)
        nbformat.write(with_bodies(release, bodies), folder / "01_spr.ipynb")
        rows = grade_submission(course, "hw1", student)[0]["tests"]
        results[student] = (rows, {row.name: row for row in check(folder / "01_spr.ipynb")})
    return results


@pytest.mark.parametrize("student", list(HONEST))
def test_each_honest_solution_earns_every_point(graded, student):
    rows, _ = graded[student]
    assert {row["function"] for row in rows} == set(FUNCTIONS)
    assert [(row["name"], row["reason"]) for row in rows if not row["passed"]] == []


def test_the_wrong_solutions_lose_points_on_the_function_they_got_wrong(graded):
    lost = {student: {row["function"] for row in graded[student][0] if not row["passed"]} for student in WRONG}
    # the given spr_mechanism builds its channel with the student's spr_channel: NaN there spoils both
    assert lost == {"binary_heuristic": {"divergence_optimal"},
                    "nan_at_infinity": {"divergence_optimal", "spr_channel"}, "no_validation": {"spr_channel"}}


@pytest.mark.parametrize("student", list(HONEST) + list(WRONG))
def test_check_agrees_with_the_course_on_every_function(graded, student):
    rows, checked = graded[student]
    for function in FUNCTIONS:
        visible = [row for row in rows if row["function"] == function and not row["hidden"]]
        assert visible and checked[function].total == len(visible)
        assert (checked[function].result == "PASS") == all(row["passed"] for row in visible), \
            (function, checked[function], [row["reason"] for row in visible])
        assert checked[function].passed == sum(row["passed"] for row in visible)
