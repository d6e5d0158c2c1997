"""Mutation testing of the graded tests (tests/grading/graded_<module>.py): the wrong solutions students really
write (tests/grading/mutants_<module>.py) must each lose at least a third of their function's points, and the
chapter's own function must keep all of them. `python tests/test_grading_mutants.py` prints the table that the
teachers' appendix (nbs/90_assignments.ipynb) shows, and writes it to tests/grading/mutation_table.json.
"""
import importlib.util
import json
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import pytest

from ldpbook.grading import run_graded

GRADING = Path(__file__).resolve().parent / "grading"
TABLE = GRADING / "mutation_table.json"
SUITES = sorted(path.stem.removeprefix("mutants_") for path in GRADING.glob("mutants_*.py"))


def suite(module: str):
    spec = importlib.util.spec_from_file_location(f"_mutants_{module}", GRADING / f"mutants_{module}.py")
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def points(module: str, function: str, code: str) -> tuple:
    "(points earned, points in all) of `function` under every graded test of the chapter, hidden ones too."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcomes = run_graded(GRADING / suite(module).TESTS, code, [function], blocked=(), timeout=60)
    assert outcomes, f"no graded tests of {function}"
    return sum(o.points for o in outcomes if o.passed), sum(o.points for o in outcomes), \
        [o.name for o in outcomes if not o.passed]


def table() -> list:
    "One row per chapter function (the reference) and per mutant: points kept, points in all, tests failed."
    rows = []
    for module in SUITES:
        mutants = suite(module)
        for function, code in mutants.REFERENCE.items():
            rows.append([module, function, "the chapter's own function", *points(module, function, code)])
        for (function, mistake), code in mutants.MUTANTS.items():
            rows.append([module, function, mistake, *points(module, function, code)])
    return rows


@pytest.fixture(scope="module")
def rows():
    return table()


def test_every_suite_has_a_reference_and_mutants_of_each_function():
    assert "spr" in SUITES
    for module in SUITES:
        mutants = suite(module)
        assert set(mutants.REFERENCE) == {function for function, _ in mutants.MUTANTS}, module


def test_the_reference_keeps_every_point(rows):
    for module, function, what, kept, total, failed in rows:
        if what == "the chapter's own function":
            assert kept == total > 0, (module, function, failed)


def test_every_mutant_loses_at_least_a_third_of_its_points(rows):
    for module, function, what, kept, total, failed in rows:
        if what != "the chapter's own function":
            assert Fraction(total - kept, total) >= Fraction(1, 3), (module, function, what, kept, total)


def test_the_appendix_shows_this_table(rows):
    assert json.loads(TABLE.read_text()) == rows


if __name__ == "__main__":
    found = table()
    TABLE.write_text(json.dumps(found, indent=1) + "\n")
    for module, function, what, kept, total, failed in found:
        print(f"{module:12s} {function:22s} {kept:3d}/{total:<3d} {what}: {', '.join(failed)}", file=sys.stdout)
