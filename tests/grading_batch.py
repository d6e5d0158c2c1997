"""A course-sized batch, run by hand (`python tests/grading_batch.py` prints the timings; `pytest
tests/grading_batch.py` checks them): it takes over ten minutes, so `make test` does not collect it.

100 generated submissions of the SPR assignment (`divergence_optimal`, `spr_channel`, graded by
tests/grading/graded_spr.py with its hidden tests, 10 s per call): 70 honest (tests/grading/honest_spr.py), 20
wrong, 10 hanging or hostile. They are graded with `autograde --jobs 2`, fed back (`feedback --jobs 2`:
nbgrader's generate_feedback for two students at a time) and exported (`nbgrader export`) within 10 minutes, then
graded again with `--jobs 1`: the scores must be the same. Each honest solution earns every point, each wrong one
loses some, and `scores` shows the marks per function.
"""
import csv
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "grading"))
from honest_spr import HONEST, SPR_CHANNEL, WRONG, with_bodies  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BUDGET = 600                    # seconds for grading, feedback and export with --jobs 2

HOSTILE = {
    "loops": "while True:\n    pass",
    "sleeps": "import time\ntime.sleep(3600)",
    "forks": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
    "exits": "import os\nos._exit(0)",
    "hogs": "return len(bytearray(10 ** 11))",
    "borrows": "from ldpbook.spr import divergence_optimal as reference\n"
               "return reference(p, q, eps, divergence=divergence, ell=ell, **params)",
    "reads_course": "import glob\nreturn open(glob.glob('/**/source/hw1/01_spr.ipynb', recursive=True)[0]).read()",
    "prints": "print('PASSED ' * 10 ** 6)\nreturn None",
    "kills": "import os, signal\nos.kill(-1, signal.SIGKILL)\nreturn None",
}


def submissions() -> dict:
    "{student: ({function: body}, kind)}: 70 honest, 20 wrong, 10 hanging or hostile."
    found = {}
    honest, wrong = list(HONEST.items()), [*WRONG.items(), ("release", {})]
    for n in range(70):
        name, bodies = honest[n % len(honest)]
        found[f"h{n:02d}_{name}"] = ({f: f"# student h{n:02d}\n{b}" for f, b in bodies.items()}, "honest")
    for n in range(20):
        name, bodies = wrong[n % len(wrong)]
        found[f"w{n:02d}_{name}"] = (dict(bodies), "wrong")
    for n, (name, body) in enumerate(HOSTILE.items()):
        found[f"x{n:02d}_{name}"] = ({"divergence_optimal": body, "spr_channel": SPR_CHANNEL["given"]}, "hostile")
    found["x09_both_hang"] = ({"divergence_optimal": HOSTILE["loops"], "spr_channel": HOSTILE["sleeps"]}, "hostile")
    assert len(found) == 100
    return found


def run(*args, cwd, env):
    "A command as a user runs it, and its wall time."
    start = time.monotonic()
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=3600)
    return done, time.monotonic() - start


def batch(base: Path) -> dict:
    "Make, release, submit, then grade, feed back and export twice; the outputs and the time of each step."
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON", "VIRTUAL_ENV"))}
    home = base / "home"
    env.update(HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"), MPLBACKEND="Agg")
    scripts, course = Path(sys.executable).parent, base / "course"
    assignments = [sys.executable, "-m", "ldpbook.assignments"]
    made, _ = run(*assignments, "make", ROOT / "nbs" / "01_spr.ipynb", "--functions", "divergence_optimal,spr_channel",
                  "--course", course, "--name", "hw1", "--hidden-tests", cwd=ROOT, env=env)
    assert made.returncode == 0, made.stderr[-2000:]
    released, _ = run(scripts / "nbgrader", "generate_assignment", "hw1", cwd=course, env=env)
    assert released.returncode == 0, released.stderr[-2000:]
    release = nbformat.read(course / "release" / "hw1" / "01_spr.ipynb", as_version=4)
    kinds = {}
    for student, (bodies, kind) in submissions().items():
        folder = course / "submitted" / student / "hw1"
        folder.mkdir(parents=True)
        nbformat.write(with_bodies(release, bodies), folder / "01_spr.ipynb")
        kinds[student] = kind
    out, times = {"kinds": kinds}, {}
    for jobs in (2, 1):
        out[f"autograde{jobs}"], times[f"autograde --jobs {jobs}"] = run(*assignments, "autograde", "hw1", "--course",
                                                                          ".", "--jobs", jobs, cwd=course, env=env)
        out[f"scores{jobs}"], _ = run(*assignments, "scores", "hw1", "--course", ".", cwd=course, env=env)
        if jobs == 2:
            out["feedback"], times["feedback --jobs 2"] = run(*assignments, "feedback", "hw1", "--course", ".",
                                                              "--jobs", 2, cwd=course, env=env)
            out["export"], times["export"] = run(scripts / "nbgrader", "export", cwd=course, env=env)
    out["times"], out["course"] = times, course
    return out


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    return batch(tmp_path_factory.mktemp("batch"))


def _scores(text):
    return {(r["student"], r["function"]): r for r in csv.DictReader(io.StringIO(text))}


def test_the_batch_is_graded_fed_back_and_exported_within_budget(done):
    for step in ("autograde2", "autograde1", "feedback", "export", "scores2"):
        assert done[step].returncode == 0, (step, done[step].stderr[-2000:])
    t = done["times"]
    assert t["autograde --jobs 2"] + t["feedback --jobs 2"] + t["export"] <= BUDGET, t


def test_scores_do_not_depend_on_jobs(done):
    assert done["scores2"].stdout == done["scores1"].stdout


def test_honest_submissions_earn_every_point_and_the_others_do_not(done):
    scores = _scores(done["scores2"].stdout)
    for (student, function), row in scores.items():
        kind = done["kinds"][student]
        if kind == "honest":
            assert float(row["score"]) == float(row["max_score"]), row
    for student, kind in done["kinds"].items():
        if kind != "honest":
            assert any(float(scores[student, f]["score"]) < float(scores[student, f]["max_score"])
                       for f in ("divergence_optimal", "spr_channel")), student
    table = done["scores2"].stderr
    assert "divergence_optimal (of 12 points): " in table and "spr_channel (of 7 points): " in table


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        result = batch(Path(folder))
        print(os.getloadavg(), result["times"])
        print(result["scores2"].stderr)
        print("scores equal with --jobs 1 and 2:", result["scores2"].stdout == result["scores1"].stdout)
        for check in (test_the_batch_is_graded_fed_back_and_exported_within_budget, test_scores_do_not_depend_on_jobs,
                      test_honest_submissions_earn_every_point_and_the_others_do_not):
            try:
                check(result)
                print("PASS", check.__name__)
            except AssertionError as failure:
                print("FAIL", check.__name__, str(failure)[:300])
