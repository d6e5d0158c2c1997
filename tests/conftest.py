"""Shared test configuration: deterministic property tests, a non-interactive matplotlib backend, and the order in
which pytest-xdist hands out the test files."""
import os

import mpmath
import pytest
from hypothesis import settings

os.environ.setdefault("MPLBACKEND", "Agg")
# Property tests draw the same examples on every run, so a CI failure reproduces exactly.
settings.register_profile("ldpbook", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("ldpbook")

# `make unit` runs `pytest -n 2 --dist loadfile`: each file goes whole to one worker, in the order of the queue. By
# default xdist queues the files with the most tests first, which put the slowest file (the end-to-end course, a
# few tests but over two minutes) last, and one worker idled while the other ran it alone. The slowest files go
# first instead, longest first, so the two workers finish together; the rest follow in the usual order. The
# seconds are one file's time on one worker (the sums of `--junitxml` times per file, measured under a load of about
# 4 on the 2 cores and scaled to the end-to-end course's 143 s alone on a nearly idle machine; rough is enough: only
# the order matters).
SLOWEST_FILES = {"test_approximate_budget.py": 150, "test_approximate_generated.py": 150,
                 "test_grading_e2e.py": 143, "test_approximate_staircase.py": 45,
                 "test_chernoff.py": 88, "test_grading_mutants.py": 60,
                 "test_grading_honest.py": 40, "test_adaptive.py": 40, "test_estimated.py": 34,
                 "test_assignments.py": 31, "test_cli.py": 28, "test_approximate.py": 33, "test_graded_chapters.py": 21,
                 "test_exact_spr.py": 20, "test_grading_harness.py": 27, "test_survey.py": 10,
                 "test_referee_chernoff.py": 9, "test_portability.py": 9, "test_spr.py": 8, "test_fuzz_api.py": 8,
                 "test_spr_sweep_engine.py": 8, "test_spr_fast.py": 12, "test_opendp.py": 8, "test_exact_egamma.py": 7,
                 "test_approximate_structure.py": 100, "test_approximate_runs.py": 90}


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):       # pytest-xdist: keep the order given below
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    "Slowest files first (stable: the tests of a file keep their order, the other files theirs)."
    position = {id(item): i for i, item in enumerate(items)}
    items.sort(key=lambda item: (-SLOWEST_FILES.get(item.path.name, 0), position[id(item)]))


@pytest.fixture(autouse=True)
def _mpmath_precision(request):
    """mpmath's precision is one global per process. A file that set it at import (`mp.mp.dps = 60`) got whatever the
    file imported last in the same worker set, and a test that set it changed it for the tests after it. Every test
    now runs at its file's MPMATH_DPS (mpmath's default, 15 digits, if none) and leaves the precision as it was."""
    with mpmath.workdps(getattr(request.module, "MPMATH_DPS", 15)):
        yield
