"""End to end on nbgrader, as a lecturer runs a course, in a temporary course folder.

Two assignments: `hw1` from ldpbook.spr (`divergence_optimal`, `spr_channel`) and `hw3` from ldpbook.sparse
(`sparse_rr_calibration`), each graded with a small test file in the grading contract's format written here (a
visible and a hidden test per function), so that this test depends on the grading machinery only. The commands run
as documented: `python -m ldpbook.assignments make` from the project, then `nbgrader generate_assignment` (the
environment's own `nbgrader` script, without the environment on PATH), `autograde`, `scores` and `review` from the
course folder, `feedback` (hw1, two students at a time) and `nbgrader generate_feedback` (hw3), and `nbgrader
export`. Each submission is one row of the table of attacks in the project's grading issue, or another attack;
`SHOULD` is what it should score. The course is graded
with `--jobs 2`, then again with `--jobs 1`: the CSV of `scores` must not change. nbgrader runs with its own HOME
and Jupyter folders: no user configuration enters.
"""
import csv
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from ldpbook.grading import sandbox_status

ROOT = Path(__file__).resolve().parents[1]
SANDBOXED = sandbox_status() == "sandbox"    # the student's process cannot read the course (else `autograde` says so)
TIMEOUT = 3                                  # seconds per call of a student's function (make --timeout)

TESTS_SPR = '''
"""Tests of ldpbook.spr for this end-to-end test (the grading contract's format)."""
import itertools

import numpy as np

from ldpbook.assignments import StudentError, grades
from ldpbook.foundations import divergence, is_ldp, randomized_response

P, Q = np.array([0.5, 0.0, 0.2, 0.3]), np.array([0.1, 0.0, 0.5, 0.4])


def best_value(p, q, eps):
    "The largest KL over randomized response on the labels of every labelling of the symbols (brute force)."
    k, best = len(p), 0.0
    for labels in itertools.product(range(k), repeat=k):
        s = max(labels) + 1
        law = randomized_response(s, eps)[list(labels)]
        best = max(best, divergence(law.T @ p, law.T @ q, kind="kl"))
    return best


@grades("divergence_optimal", points=3)
def test_value_is_achieved_privately(divergence_optimal):
    "KL: the channel is eps-LDP, achieves the value, and does at least as well as randomized response."
    for eps in (0.5, 2.0):
        got = divergence_optimal(P, Q, eps, divergence="kl")
        channel = np.asarray(got.channel, dtype=float)
        assert is_ldp(channel, eps), f"the channel is not {eps}-LDP"
        achieved = divergence(channel.T @ P, channel.T @ Q, kind="kl")
        assert abs(got.value - achieved) <= 1e-9 * achieved, f"value {got.value}, the channel achieves {achieved}"
        rr = randomized_response(len(P), eps)
        assert got.value >= divergence(rr.T @ P, rr.T @ Q, kind="kl") * (1 - 1e-12)


@grades("divergence_optimal", points=2, hidden=True)
def test_value_is_the_best_and_bad_eps_is_refused(divergence_optimal):
    for eps in (0.5, 2.0):
        best = best_value(P, Q, eps)
        assert abs(divergence_optimal(P, Q, eps, divergence="kl").value - best) <= 1e-9 * best
    try:
        divergence_optimal(P, Q, -1.0)
    except StudentError as err:
        assert err.type_name == "ValueError"
    else:
        raise AssertionError("a negative eps must be refused")


@grades("spr_channel", points=2)
def test_channel_entries(spr_channel):
    "Q(j|x) = e^eps/(e^eps + s - 1) in x's block, 1/(e^eps + s - 1) elsewhere."
    got = np.asarray(spr_channel([[0, 2], [1]], 3, 1.0), dtype=float)
    e = np.e
    expected = np.array([[e, 1], [1, e], [e, 1]]) / (e + 1)
    assert got.shape == (3, 2) and np.allclose(got, expected, rtol=1e-12, atol=0), f"{got} != {expected}"


@grades("spr_channel", hidden=True)
def test_refuses_overlapping_blocks(spr_channel):
    try:
        spr_channel([[0, 1], [1, 2]], 3, 1.0)
    except StudentError as err:
        assert err.type_name in ("ValueError", "TypeError")
    else:
        raise AssertionError("overlapping blocks must be refused")
'''

TESTS_SPARSE = '''
"""Tests of ldpbook.sparse for this end-to-end test (the grading contract's format)."""
import math

from ldpbook.assignments import StudentError, grades


@grades("sparse_rr_calibration", points=2)
def test_calibration_values(sparse_rr_calibration):
    "p = e^eps/(e^eps + 2t), q = 1/(e^eps + 2t)."
    for t, eps in [(0, 1.0), (3, 0.5), (20, 5.0)]:
        p, q = sparse_rr_calibration(t, eps)
        e = math.exp(eps)
        assert math.isclose(p, e / (e + 2 * t), rel_tol=1e-12) and math.isclose(q, 1 / (e + 2 * t), rel_tol=1e-12)


@grades("sparse_rr_calibration", hidden=True)
def test_calibration_refuses_a_negative_radius(sparse_rr_calibration):
    try:
        sparse_rr_calibration(-1, 1.0)
    except StudentError as err:
        assert err.type_name == "ValueError"
    else:
        raise AssertionError("t = -1 must be refused")
'''

# Solutions written from the functions' docstrings, not from the chapter: brute force over the contiguous
# partitions of the likelihood-ratio order (the optimality theorem), randomized response on block labels.
DIVERGENCE_OPTIMAL = '''
    import itertools
    from dataclasses import dataclass
    from fractions import Fraction
    import numpy as np
    from ldpbook.foundations import divergence as _divergence, randomized_response

    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if p.ndim != 1 or p.shape != q.shape or not (np.all(np.isfinite(p)) and np.all(np.isfinite(q))) \\
            or np.any(p < 0) or np.any(q < 0) or abs(p.sum() - 1) > 1e-9 or abs(q.sum() - 1) > 1e-9:
        raise ValueError("p and q must be probability vectors of the same length")
    if not eps >= 0:
        raise ValueError("eps must be >= 0")
    null = [x for x in range(p.size) if p[x] == 0 and q[x] == 0]
    ratio = lambda x: (1, 0) if q[x] == 0 else (0, Fraction(p[x]) / Fraction(q[x]))
    order = sorted((x for x in range(p.size) if x not in null), key=ratio)
    groups = [list(g) for _, g in itertools.groupby(order, key=ratio)]

    @dataclass(frozen=True)
    class Mechanism:
        value: float
        partition: tuple
        channel: np.ndarray

    best = None
    for cuts in itertools.product((False, True), repeat=len(groups) - 1):
        blocks, block = [], list(groups[0])
        for cut, group in zip(cuts, groups[1:]):
            if cut:
                blocks.append(block)
                block = []
            block += group
        blocks.append(block)
        if ell is not None and len(blocks) > ell:
            continue
        blocks[0] = blocks[0] + null
        label = np.empty(p.size, dtype=int)
        for j, b in enumerate(blocks):
            label[b] = j
        channel = randomized_response(len(blocks), eps)[label]
        value = _divergence(channel.T @ p, channel.T @ q, kind=divergence, **params)
        if best is None or value > best.value * (1 + 1e-12):
            best = Mechanism(float(value), tuple(tuple(b) for b in blocks), channel)
    return best
'''
SPR_CHANNEL = '''
    import numpy as np
    blocks = [list(b) for b in partition]
    symbols = sorted(x for b in blocks for x in b)
    if symbols != list(range(k)) or any(len(b) == 0 for b in blocks):
        raise ValueError("partition must split 0, ..., k-1 into non-empty blocks")
    if not eps >= 0:
        raise ValueError("eps must be >= 0")
    w = np.exp(-eps)
    channel = np.full((k, len(blocks)), w / (1 + (len(blocks) - 1) * w))
    for j, b in enumerate(blocks):
        channel[b, j] = 1 / (1 + (len(blocks) - 1) * w)
    return channel
'''
CALIBRATION = '''
    import math
    if isinstance(t, bool) or not isinstance(t, int) or t < 0:
        raise ValueError("t must be a whole number >= 0")
    if not eps >= 0:
        raise ValueError("eps must be >= 0")
    p = 1 / (1 + 2 * t * math.exp(-eps))
    return p, math.exp(-eps) * p
'''
BORROW = '''
    from ldpbook.spr import divergence_optimal as _ref
    return _ref(p, q, eps, divergence=divergence, ell=ell, **params)
'''
READ_SOURCE = '''
    import json
    with open({path!r}) as handle:                     # the teacher's solution, read at grading time
        cells = json.load(handle)["cells"]
    space = {}
    for cell in cells:
        if "def divergence_optimal" in "".join(cell["source"]):
            exec("".join(cell["source"]), space)
    return space["divergence_optimal"](p, q, eps, divergence=divergence, ell=ell, **params)
'''
READ_SOURCE_UNSEEN = '''
    import json                                         # no name that the reading of the code looks for
    codecs = getattr(json, "co" + "decs")
    cells = json.loads(getattr(codecs, "op" + "en")({path_reversed!r}[::-1]).read())["cells"]   # the teacher's
    run = getattr(getattr(codecs, "buil" + "tins"), "ex" + "ec")
    for cell in cells:
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            run("".join(cell["source"]), globals())
    return globals()["divergence_optimal"](p, q, eps, divergence=divergence, ell=ell, **params)
'''
PATCH = '''
    import sys
    import ldpbook.assignments, ldpbook.grading
    ldpbook.assignments.run_graded = ldpbook.grading.run_graded = lambda *args, **kwargs: []
    print("PASSED")
    sys.stderr.write("all tests passed\\n")
    raise NotImplementedError()
'''
EXIT = '''
    import os
    os._exit(0)
'''
HANG = '''
    while True:
        pass
'''
BORROW_SPARSE = '''
    from ldpbook.sparse import sparse_rr_calibration as _ref
    return _ref(t, eps)
'''

# submission -> (assignment, {function: body or None for the release's stub}, edit, {function: points it should score})
SUBMISSIONS = {
    "independent": ("hw1", {"divergence_optimal": DIVERGENCE_OPTIMAL, "spr_channel": SPR_CHANNEL}, None,
                    {"divergence_optimal": 5, "spr_channel": 3}),
    "release": ("hw1", {}, None, {"divergence_optimal": 0, "spr_channel": 0}),
    "borrow": ("hw1", {"divergence_optimal": BORROW, "spr_channel": SPR_CHANNEL}, None,
               {"divergence_optimal": 0, "spr_channel": 3}),
    "reads_source": ("hw1", {"divergence_optimal": READ_SOURCE, "spr_channel": SPR_CHANNEL}, None,
                     {"divergence_optimal": 0 if SANDBOXED else 5, "spr_channel": 3}),
    "reads_source_unseen": ("hw1", {"divergence_optimal": READ_SOURCE_UNSEEN, "spr_channel": SPR_CHANNEL}, None,
                            {"divergence_optimal": 0 if SANDBOXED else 5, "spr_channel": 3}),
    "patches_grader": ("hw1", {"divergence_optimal": PATCH, "spr_channel": SPR_CHANNEL}, "edit_tests",
                       {"divergence_optimal": 0, "spr_channel": 3}),
    "exits": ("hw1", {"divergence_optimal": EXIT, "spr_channel": SPR_CHANNEL}, None,
              {"divergence_optimal": 0, "spr_channel": 3}),
    "hangs": ("hw1", {"divergence_optimal": DIVERGENCE_OPTIMAL, "spr_channel": HANG}, None,
              {"divergence_optimal": 5, "spr_channel": 0}),
    "edits_metadata": ("hw1", {"divergence_optimal": DIVERGENCE_OPTIMAL, "spr_channel": SPR_CHANNEL}, "metadata",
                       {"divergence_optimal": 5, "spr_channel": 3}),
    "markdown": ("hw1", {"divergence_optimal": DIVERGENCE_OPTIMAL, "spr_channel": SPR_CHANNEL}, "markdown",
                 {"divergence_optimal": 5, "spr_channel": 0}),
    "not_a_notebook": ("hw1", {}, "garbage", {"divergence_optimal": 0, "spr_channel": 0}),
    "independent3": ("hw3", {"sparse_rr_calibration": CALIBRATION}, None, {"sparse_rr_calibration": 3}),
    "release3": ("hw3", {}, None, {"sparse_rr_calibration": 0}),
    "borrow3": ("hw3", {"sparse_rr_calibration": BORROW_SPARSE}, None, {"sparse_rr_calibration": 0}),
}
BORROWERS = {("borrow", "divergence_optimal"), ("patches_grader", "divergence_optimal"),
             ("borrow3", "sparse_rr_calibration")} | \
    ({("reads_source", "divergence_optimal"), ("reads_source_unseen", "divergence_optimal")} if SANDBOXED else set())


def _meta(cell):
    return cell.metadata.get("nbgrader", {})


def _with_body(source, function, body):
    "Replace the release's `raise NotImplementedError()` of `function` in a solution cell by `body`."
    head, _, tail = source.partition(f"def {function}(")
    before, stub, after = tail.partition("raise NotImplementedError()")
    return head + f"def {function}(" + before + textwrap.dedent(body).strip().replace("\n", "\n    ") + after


def _submit(course, student, name, bodies, edit):
    "Write a student's copy of the release with `bodies` written in and `edit` made."
    release = next((course / "release" / name).glob("*.ipynb"))
    folder = course / "submitted" / student / name
    folder.mkdir(parents=True)
    if edit == "garbage":
        (folder / release.name).write_text("this is not a notebook")
        return
    nb = nbformat.read(release, as_version=4)
    for cell in nb.cells:
        for function, body in bodies.items():
            if _meta(cell).get("solution") and f"def {function}(" in cell.source:
                path = str(course / "source" / name / release.name)
                body = body.replace("{path!r}", repr(path)).replace("{path_reversed!r}", repr(path[::-1]))
                cell.source = _with_body(cell.source, function, body)
    graded = [c for c in nb.cells if _meta(c).get("grade")]
    spr = next((c for c in nb.cells if _meta(c).get("solution") and "def spr_channel(" in c.source), None)
    if edit == "metadata":   # a test switched off, another and a solution cell re-labelled, a bonus test added
        _meta(graded[0])["grade"] = False
        _meta(graded[1])["grade_id"] = "mine"
        _meta(spr)["grade_id"] = "renamed-solution"
        bonus = nbformat.v4.new_code_cell("pass")
        bonus.metadata["nbgrader"] = {**_meta(graded[2]), "grade_id": "bonus", "points": 100}
        nb.cells.append(bonus)
    elif edit == "markdown":
        spr.cell_type = "markdown"
        del spr["outputs"], spr["execution_count"]
    elif edit == "edit_tests":                 # every test replaced by `pass`, one deleted
        for cell in graded:
            cell.source = "pass"
        nb.cells.remove(graded[-1])
    nbformat.write(nb, folder / release.name)


def run(*args, cwd, env):
    "A documented command, as a user runs it."
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("grading")
    home = base / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON", "VIRTUAL_ENV"))}
    scripts = str(Path(sys.executable).parent)
    env.update(HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"), MPLBACKEND="Agg",
               PATH=os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != scripts))
    course = base / "course"
    for name, chapter, functions, tests in [("hw1", "01_spr", "divergence_optimal,spr_channel", TESTS_SPR),
                                            ("hw3", "03_sparse_kernels", "sparse_rr_calibration", TESTS_SPARSE)]:
        (base / f"tests_{name}.py").write_text(tests)
        made = run(sys.executable, "-m", "ldpbook.assignments", "make", ROOT / "nbs" / f"{chapter}.ipynb",
                   "--functions", functions, "--course", course, "--name", name, "--hidden-tests",
                   "--timeout", TIMEOUT, "--tests", base / f"tests_{name}.py", cwd=ROOT, env=env)
        assert made.returncode == 0, made.stderr[-2000:]
        released = run(Path(scripts) / "nbgrader", "generate_assignment", name, cwd=course, env=env)
        assert released.returncode == 0, released.stderr[-2000:]
    for student, (name, bodies, edit, _) in SUBMISSIONS.items():
        _submit(course, student, name, bodies, edit)
    assignments = [sys.executable, "-m", "ldpbook.assignments"]
    graded, csvs = {}, {}
    for jobs in (2, 1):
        for name in ("hw1", "hw3"):
            graded[jobs, name] = run(*assignments, "autograde", name, "--course", ".", "--jobs", jobs, cwd=course,
                                     env=env)
            csvs[jobs, name] = run(*assignments, "scores", name, "--course", ".", cwd=course, env=env)
    exported = run(Path(scripts) / "nbgrader", "export", cwd=course, env=env)
    assert exported.returncode == 0, exported.stderr[-2000:]
    feedback = {"hw1": run(*assignments, "feedback", "hw1", "--course", ".", "--jobs", 2, cwd=course, env=env),
                "hw3": run(Path(scripts) / "nbgrader", "generate_feedback", "hw3", cwd=course, env=env)}
    reviews = {name: run(*assignments, "review", name, "--course", ".", cwd=course, env=env) for name in ("hw1", "hw3")}
    return course, graded, csvs, feedback, reviews


def _scores(csv_text):
    return {(r["student"], r["function"]): r for r in csv.DictReader(io.StringIO(csv_text))}


def test_every_submission_scores_what_it_should(course):
    _, graded, csvs, _, _ = course
    for key, done in graded.items():
        assert done.returncode == 0, (key, [l for l in done.stdout.splitlines() if "nbgrader failed" in l],
                                      done.stderr[-2000:])
    scores = {**_scores(csvs[2, "hw1"].stdout), **_scores(csvs[2, "hw3"].stdout)}
    for student, (_, _, _, should) in SUBMISSIONS.items():
        for function, points in should.items():
            row = scores[student, function]
            assert float(row["score"]) == points, (student, function, row)
            assert (row["reason"] == "") == (float(row["score"]) == float(row["max_score"])), row


def test_export_has_the_totals(course):
    path = course[0] / "grades.csv"
    with open(path, newline="") as handle:
        totals = {(r["assignment"], r["student_id"]): float(r["score"]) for r in csv.DictReader(handle)}
    for student, (name, _, _, should) in SUBMISSIONS.items():
        assert totals[name, student] == sum(should.values()), student


def test_scores_show_the_marks_per_function(course):
    "Beside the CSV, on standard error: how many submissions earned each mark, and why the others lost points."
    _, _, csvs, _, reviews = course
    table = csvs[2, "hw1"].stderr
    assert "spr_channel (of 3 points): " in table and "divergence_optimal (of 5 points): " in table
    assert "test_channel_entries: the call did not finish within # s (timeout)" in table
    assert "marks per function" in reviews["hw1"].stdout and "spr_channel (of 3 points): " in reviews["hw1"].stdout


def test_scores_do_not_depend_on_jobs_or_reruns(course):
    _, _, csvs, _, _ = course
    for name in ("hw1", "hw3"):
        assert csvs[2, name].returncode == 0 and csvs[2, name].stdout.count("\n") > 2
        assert csvs[2, name].stdout == csvs[1, name].stdout


def test_failures_say_why(course):
    _, graded, csvs, _, _ = course
    scores = _scores(csvs[2, "hw1"].stdout)
    assert "exited" in scores["exits", "divergence_optimal"]["reason"] or \
        "died" in scores["exits", "divergence_optimal"]["reason"], scores["exits", "divergence_optimal"]
    assert "time" in scores["hangs", "spr_channel"]["reason"]
    assert "markdown" in scores["markdown", "spr_channel"]["reason"]
    assert "not a readable notebook" in scores["not_a_notebook", "spr_channel"]["reason"]
    assert "ldpbook.spr is not available to submissions" in scores["borrow", "divergence_optimal"]["reason"]
    printed = {line.split()[0]: line for line in graded[2, "hw1"].stdout.splitlines() if not line.startswith("note:")}
    assert set(printed) == {s for s, (name, *_) in SUBMISSIONS.items() if name == "hw1"}
    assert "spr_channel" in printed["hangs"] and "divergence_optimal" not in printed["hangs"]
    assert printed["independent"].split()[1] == "8/8"
    notes = [line for line in graded[2, "hw1"].stdout.splitlines() if line.startswith("note:")]
    assert bool(notes) == (not SANDBOXED), notes


def test_review_lists_exactly_the_borrowers(course):
    "The functions whose calls the sandbox refused (the list ends with its count; the marks per function follow)."
    _, _, _, _, reviews = course
    listed = set()
    for name in ("hw1", "hw3"):
        lines = reviews[name].stdout.splitlines()
        end = next(i for i, line in enumerate(lines) if line.endswith("to read") or line == "nothing to review")
        listed |= {(line.split()[0], line.split()[2].rstrip(":")) for line in lines[:end]}
    assert listed == BORROWERS, {n: r.stdout for n, r in reviews.items()}
    assert reviews["hw1"].returncode == 1


def test_feedback_shows_calls_of_visible_tests_and_only_verdicts_of_hidden_ones(course):
    course_dir, _, _, feedback, _ = course
    assert all(done.returncode == 0 for done in feedback.values()), feedback["hw1"].stderr[-2000:]
    assert (course_dir / "feedback" / "release" / "hw1" / "01_spr.html").exists() or \
        any((course_dir / "feedback").glob("*/hw1/01_spr.html"))
    nb = nbformat.read(course_dir / "autograded" / "release" / "hw1" / "01_spr.ipynb", as_version=4)
    cells = {_meta(c)["grade_id"]: c for c in nb.cells if _meta(c).get("grade")}
    visible = "\n".join(cells["spr_channel-test_channel_entries"].outputs[0]["traceback"])
    assert "spr_channel([[0, 2], [1]], 3, 1.0)" in visible and "NotImplementedError" in visible
    hidden = "\n".join(cells["spr_channel-test_refuses_overlapping_blocks"].outputs[0]["traceback"])
    assert "hidden test" in hidden and "spr_channel(" not in hidden and "NotImplementedError" not in hidden


def test_the_tests_stay_with_the_teacher(course):
    course_dir = course[0]
    for folder in ("release", "submitted", "autograded", "feedback"):
        assert not list((course_dir / folder).rglob("tests_*.py")) and not list((course_dir / folder).rglob("*.json"))
    release = nbformat.read(course_dir / "release" / "hw1" / "01_spr.ipynb", as_version=4)
    text = "\n".join(c.source for c in release.cells)
    assert "def test_value_is_achieved_privately" in text and "def test_value_is_the_best" not in text
    assert "def best_value" not in text
    manifest = json.loads((course_dir / "source" / ".grading" / "hw1" / "01_spr.json").read_text())
    assert "spr_dp" in manifest["withheld"] and "def spr_dp" in text
    spr_dp = next(c.source for c in release.cells if "def spr_dp(" in c.source)
    assert "raise NotImplementedError()" in spr_dp and "np.argmax" not in spr_dp
