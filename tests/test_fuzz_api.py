"""The whole public API against the catalogue of bad values of tests/fuzz_api.py, inside `pytest tests/`.

Each run takes the same deterministic sample of calls (a fixed time budget, under a minute); LDPBOOK_FUZZ_ALL=1
takes every call. A call that is still mishandled is listed in tests/fuzz_api_known.txt (written by
``LDPBOOK_FUZZ_ALL=1 LDPBOOK_FUZZ_WRITE=tests/fuzz_api_known.txt python tests/fuzz_api.py``): the test fails on
any other mishandled call, and on a listed call that is now handled (the list only shrinks)."""
import os
import pathlib
import warnings

import pytest

import fuzz_api

SAMPLE_CALLS = 500
KNOWN_FILE = pathlib.Path(__file__).with_name("fuzz_api_known.txt")
KNOWN = {line.strip() for line in KNOWN_FILE.read_text(encoding="utf-8").splitlines() if line.strip()}


@pytest.mark.parametrize("name", sorted(fuzz_api.CASES))
def test_the_valid_call_of_every_case_works(name):
    "The table of valid calls is right: each returns a value without NaN (so a bad value is what a failure tests)."
    case = fuzz_api.CASES[name]
    if case[0] == "method":
        func, args, kwargs = getattr(case[1](), case[2]), case[3], case[4]
    else:
        func, args, kwargs = case
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)        # the valid calls use the current forms
        result = func(*args, **kwargs)
    assert not fuzz_api._has_nan(result)


def test_the_catalogue_covers_the_issue():
    labels = dict(fuzz_api.BAD)
    for label in ("nan", "inf", "-inf", "empty list", "ragged", "3-D", "str array", "True", "str", "complex",
                  "10**400", "zero", "1e-300", "1e6", "10**9", "None"):
        assert label in labels
    assert len(fuzz_api.BAD) >= 36 and len(fuzz_api.CASES) >= 110


def test_bad_values_are_handled():
    everything = os.environ.get("LDPBOOK_FUZZ_ALL") == "1"
    selection = fuzz_api.calls() if everything else fuzz_api.sample(SAMPLE_CALLS)
    results = fuzz_api.run(selection)
    keys = {fuzz_api.key(name, slot, label) for name, slot, label in selection}
    bad = {fuzz_api.key(name, slot, label): detail for name, slot, label, kind, detail in results if kind == "bad"}
    new = sorted(f"{k}: {bad[k]}" for k in set(bad) - KNOWN)
    fixed = sorted((KNOWN & keys) - set(bad))
    assert not new, f"{len(new)} mishandled calls:\n" + "\n".join(new[:40])
    assert not fixed, f"now handled, remove from {KNOWN_FILE.name}:\n" + "\n".join(fixed[:40])
