"""Mutation testing of the graded tests (tests/grading/graded_<module>.py): the wrong solutions students really
write must each lose at least a third of their function's points, and the chapter's own function must keep all of
them. `python tests/test_grading_mutants.py` prints the table that the teachers' appendix (nbs/90_assignments.ipynb)
shows, and writes it to tests/grading/mutation_table.json.

A chapter with a file tests/grading/mutants_<module>.py (SPR, foundations, E_gamma) has its mutants graded as
submissions, by `run_graded` in the sandbox with every test, hidden ones too. Every chapter also has the mutants of
tests/test_graded_chapters.py, run in this process through the harness's data-only codec
(`test_graded_chapters.points_kept`): the same verdicts, without a process per test; the table holds them too (the
chapter's own function once per chapter, from the sandbox where the chapter has a suite there).
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
IN_PROCESS = ("foundations", "spr", "egamma", "sparse", "closeness", "adaptive", "chernoff", "approximate")


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


def in_process_points(module: str, function, name: str) -> tuple:
    "`points` for a function of this process, by `test_graded_chapters.points_kept` over the tests of `name`."
    import test_graded_chapters as chapters
    return chapters.points_kept(module, name, function)


def table() -> list:
    "One row per chapter function (the reference) and per mutant: points kept, points in all, tests failed."
    rows = []
    for module in SUITES:
        mutants = suite(module)
        for function, code in mutants.REFERENCE.items():
            rows.append([module, function, "the chapter's own function", *points(module, function, code)])
        for (function, mistake), code in mutants.MUTANTS.items():
            rows.append([module, function, mistake, *points(module, function, code)])
    sys.path.insert(0, str(GRADING.parent))
    import test_graded_chapters as chapters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in IN_PROCESS:
            mutants = list(chapters.MUTANTS[module]())
            for function in dict.fromkeys(name for name, _, _ in mutants if module not in SUITES):
                rows.append([module, function, "the chapter's own function",
                             *in_process_points(module, chapters.reference(module, function), function)])
            for function, mistake, mutant in mutants:
                rows.append([module, function, mistake, *in_process_points(module, mutant, function)])
    return rows


@pytest.fixture(scope="module")
def rows():
    return table()


def test_every_suite_has_a_reference_and_mutants_of_each_function():
    import test_graded_chapters as chapters
    assert set(SUITES) == {"foundations", "spr", "egamma"} and set(IN_PROCESS) == set(chapters.MODULES)
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
