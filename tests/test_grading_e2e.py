"""End to end on nbgrader, as a course would run it, in a temporary course folder.

Assignments from chapter 1 (`divergence_optimal`, `spr_channel`) and chapter 4 (`noisy_permutation_pvalue`,
`dp_permutation_decision`, `dp_permutation_test`); `nbgrader generate_assignment`; six kinds of submission (the
untouched release; a correct one; Laplace noise of scale 4/eps instead of 8/eps in the p-value and in the test; an
off-by-one in `noisy_permutation_pvalue`, the helper that the other two call; an infinite loop in `spr_channel`; the
noise bug plus tampering: a test cell edited, another deleted, and `set_custom_exc` installed); `autograde` with
`jobs=2` and a short timeout; `nbgrader export`.
The bugs are written as wrappers around the reference functions so that they stay the same bug whatever the
chapters' internals become. nbgrader runs with its own HOME, Jupyter and IPython folders: no user configuration
enters.
"""
import csv
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from ldpbook import assignments

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 6                      # seconds per cell: every cell takes under a second here (the slowest: imports)
CHAPTER4 = ("noisy_permutation_pvalue", "dp_permutation_decision", "dp_permutation_test")

NOISE_BUG = '''
_correct_pvalue, _correct_test = noisy_permutation_pvalue, dp_permutation_test
def noisy_permutation_pvalue(observed, permuted, eps, *, sensitivity, rng=None):
    "Laplace noise of scale 4/eps instead of 8/eps: the scale is sensitivity/eps instead of 2 sensitivity/eps."
    return _correct_pvalue(observed, permuted, 2 * eps, sensitivity=sensitivity, rng=rng)
def dp_permutation_test(x, y, eps, **options):
    "The same bug in the test's own noise."
    return _correct_test(x, y, 2 * eps, **options)
'''
OFF_BY_ONE = '''
_correct_pvalue = noisy_permutation_pvalue
def noisy_permutation_pvalue(observed, permuted, eps, *, sensitivity, rng=None):
    "p = #{...}/(B + 1) instead of (1 + #{...})/(B + 1)."
    return _correct_pvalue(observed, permuted, eps, sensitivity=sensitivity, rng=rng) - 1 / (len(permuted) + 1)
'''
LOOP = '''
def spr_channel(partition, k, eps):
    while True:
        pass
'''
CUSTOM_EXC = '''
get_ipython().set_custom_exc((BaseException,), lambda shell, etype, value, tb, tb_offset=None: None)
'''


def _meta(cell):
    return cell.metadata.get("nbgrader", {})


def _submit(course, student, name, solve=True, append="", tamper=False):
    "Write a student's copy of the release: solution cells filled from the source (or not), plus changes."
    release = next((course / "release" / name).glob("*.ipynb"))
    source = nbformat.read(course / "source" / name / release.name, as_version=4)
    answers = {_meta(c)["grade_id"]: c.source for c in source.cells if _meta(c).get("solution")}
    nb = nbformat.read(release, as_version=4)
    solutions = [c for c in nb.cells if _meta(c).get("solution")]
    if solve:
        for cell in solutions:
            cell.source = answers[_meta(cell)["grade_id"]]
    solutions[-1].source += "\n" + append
    if tamper:
        graded = [c for c in nb.cells if _meta(c).get("grade")]
        for cell in graded[:2]:
            cell.source = "pass"                                  # edited tests
        nb.cells.remove(graded[-1])                               # a deleted (hidden) test
        solutions[0].source += "\n" + CUSTOM_EXC
    folder = course / "submitted" / student / name
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / release.name)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("course")
    home = base / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON"))}
    env.update(HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"), MPLBACKEND="Agg")
    course = base / "course"
    assignments.make_assignment(ROOT / "nbs" / "01_spr.ipynb", "divergence_optimal,spr_channel", course,
                                name="hw1", hidden_tests=True, timeout=TIMEOUT)
    assignments.make_assignment(ROOT / "nbs" / "04_closeness.ipynb", ",".join(CHAPTER4), course, name="hw4",
                                hidden_tests=True, timeout=TIMEOUT)
    done = assignments.nbgrader(course, "generate_assignment", "hw*", env=env)    # both (an assignment glob)
    assert done.returncode == 0, done.stderr[-2000:]
    assert all(any((course / "release" / name).glob("*.ipynb")) for name in ("hw1", "hw4"))
    _submit(course, "stub", "hw1", solve=False)
    _submit(course, "correct", "hw1")
    _submit(course, "loop", "hw1", append=LOOP)
    _submit(course, "correct", "hw4")
    _submit(course, "noise", "hw4", append=NOISE_BUG)
    _submit(course, "offbyone", "hw4", append=OFF_BY_ONE)
    _submit(course, "tamper", "hw4", append=NOISE_BUG, tamper=True)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "ldpbook") as book:    # every student, before grading
        for student in ("stub", "correct", "loop", "noise", "offbyone", "tamper"):
            book.update_or_create_student(student)
    with ThreadPoolExecutor(2) as pool:        # both assignments at once: the hang of one overlaps the other
        codes = dict(zip(("hw1", "hw4"), pool.map(lambda name: assignments.autograde(course, name, jobs=2, env=env),
                                                  ("hw1", "hw4"))))
    exported = assignments.nbgrader(course, "export", env=env)
    assert exported.returncode == 0, exported.stderr[-2000:]
    scores = {(r["assignment"], r["student"], r["function"]): (r["score"], r["max_score"])
              for name in ("hw1", "hw4") for r in assignments.function_scores(course, name)}
    with open(course / "grades.csv", newline="") as handle:
        totals = {(r["assignment"], r["student_id"]): (float(r["score"]), float(r["max_score"]))
                  for r in csv.DictReader(handle)}
    return course, codes, scores, totals


def test_every_submission_was_graded(graded):
    _, codes, _, _ = graded
    assert codes == {"hw1": {"correct": 0, "loop": 0, "stub": 0}, "hw4": {"correct": 0, "noise": 0, "offbyone": 0,
                                                                          "tamper": 0}}


def test_correct_gets_full_points_and_stub_gets_zero(graded):
    _, _, _, totals = graded
    for name in ("hw1", "hw4"):
        score, max_score = totals[(name, "correct")]
        assert max_score > 0 and score == max_score
    assert totals[("hw1", "stub")] == (0.0, totals[("hw1", "correct")][1])


def test_each_bug_loses_points_on_its_own_function(graded):
    "The decision and the test call the student's buggy p-value in the notebook, yet keep their points."
    _, _, scores, _ = graded
    full = {f: scores[("hw4", "correct", f)][1] for f in CHAPTER4}
    assert all(scores[("hw4", "correct", f)][0] == full[f] > 0 for f in CHAPTER4)
    for student, buggy in [("noise", {"noisy_permutation_pvalue", "dp_permutation_test"}),
                           ("offbyone", {"noisy_permutation_pvalue"})]:
        for f in CHAPTER4:
            score, max_score = scores[("hw4", student, f)]
            assert max_score == full[f] and (score < max_score if f in buggy else score == max_score), (student, f)
    assert scores[("hw1", "loop", "spr_channel")][0] == 0
    assert scores[("hw1", "loop", "divergence_optimal")][0] == scores[("hw1", "loop", "divergence_optimal")][1]


def test_a_hang_is_interrupted_and_scores_zero_in_its_cells(graded):
    course, _, _, _ = graded
    nb = nbformat.read(next((course / "autograded" / "loop" / "hw1").glob("*.ipynb")), as_version=4)
    hung = [c for c in nb.cells if _meta(c).get("grade") and _meta(c)["grade_id"].startswith("spr_channel-")]
    assert hung and all(any(o.get("ename") == "CellTimeoutError" for o in c.outputs) for c in hung)


def test_tampering_gains_nothing(graded):
    course, _, scores, totals = graded
    assert totals[("hw4", "tamper")] == totals[("hw4", "noise")]
    assert totals[("hw4", "noise")][0] < totals[("hw4", "correct")][0]
    nb = nbformat.read(next((course / "autograded" / "tamper" / "hw4").glob("*.ipynb")), as_version=4)
    source = nbformat.read(next((course / "source" / "hw4").glob("*.ipynb")), as_version=4)
    assert len([c for c in nb.cells if _meta(c).get("grade")]) == len([c for c in source.cells if _meta(c).get("grade")])


def test_hidden_tests_are_out_of_the_release_and_back_for_grading(graded):
    course, _, _, _ = graded
    release = nbformat.read(next((course / "release" / "hw4").glob("*.ipynb")), as_version=4)
    autograded = nbformat.read(next((course / "autograded" / "correct" / "hw4").glob("*.ipynb")), as_version=4)
    hidden = "test_noisy_permutation_pvalue_threshold_events_are_private()"
    assert not any(hidden in c.source for c in release.cells)
    assert any(hidden in c.source for c in autograded.cells)


def test_review_points_at_the_tampering_only(graded):
    course, _, _, _ = graded
    assert {row["student"] for row in assignments.review(course, "hw4")} == {"tamper"}
    assert assignments.review(course, "hw1") == []
