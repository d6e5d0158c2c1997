"""The tests written for grading (tests/grading/graded_<module>.py), tested.

For every chapter: (a) every graded test passes when it is given the chapter's own function; (b) every graded test
fails when it is given a stub that raises NotImplementedError; (c) plausible wrong implementations (mutants: one that
ignores eps, returns the uniform channel, forgets a convention...) lose at least a third of their function's points,
hidden tests included; (d) every test is attributed with `@grades` to a function the chapter exports, takes one parameter named as that
function, and every graded function has 3 to 6 tests, at least one of them hidden; (e) no helper of a visible test
computes what a graded function computes (`make`'s check); correct implementations written otherwise (other draw
orders, brute force) pass.

(a)-(c) run in this process: the function reaches a test as a proxy whose arguments and return value travel through
the harness's own data-only codec (`ldpbook.grading`), its exceptions arriving as `StudentError`. One end-to-end test
per chapter runs the real harness, `run_graded`, on the chapter's own export cells (full marks) and on a stub (zero).
"""
import dataclasses
import functools
import importlib
import importlib.util
import inspect
import json
import math
import types
from pathlib import Path

import nbformat
import numpy as np
import pytest

from ldpbook import assignments, grading
from brute_force import set_partitions as _set_partitions

GRADING = Path(__file__).resolve().parent / "grading"
MODULES = ("foundations", "spr", "egamma", "sparse", "closeness", "adaptive", "chernoff", "approximate")
NOTEBOOKS = {"foundations": "00_foundations", "spr": "01_spr", "egamma": "02_egamma", "sparse": "03_sparse_kernels",
             "closeness": "04_closeness", "adaptive": "05_adaptivity", "chernoff": "06_chernoff",
             "approximate": "08_approximate"}


# ------------------------------------------------------------------------------------ contract objects, in-process
def grading_of(test):
    "(function, points, hidden) recorded by @grades."
    function, points, hidden = test.__grades__
    return function, points, hidden


def transport(value):
    "value -> the harness's tagged JSON text -> value, as across the process boundary (TransportError if it cannot)."
    text = json.dumps(grading._encode(value, [grading.LIMITS["items"], grading.LIMITS["bytes"]]))
    return grading._decode(json.loads(text), [0])


def proxy(function):
    "The function as a graded test sees it, in this process: data in, data out, its exceptions as StudentError."
    def call(*args, **kwargs):
        args, kwargs = transport(args), transport(kwargs)
        try:
            result = function(*args, **kwargs)
        except Exception as err:                         # the function's exception, reported by type and message
            raise grading.StudentError(type(err).__name__, str(err)) from None
        return transport(result)
    call.__name__ = getattr(function, "__name__", "function")
    return call


def stub(*args, **kwargs):
    raise NotImplementedError()


# --------------------------------------------------------------------------------------------- the graded files
@functools.cache
def graded_module(module):
    "The graded test file of a chapter, imported (once)."
    path = GRADING / f"graded_{module}.py"
    spec = importlib.util.spec_from_file_location(f"graded_{module}", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def graded_tests(module):
    "[(name, test)] of a graded file: its top-level functions named test_*."
    loaded = graded_module(module)
    return [(name, test) for name, test in vars(loaded).items() if name.startswith("test_") and callable(test)]


def reference(module, function):
    return getattr(importlib.import_module(f"ldpbook.{module}"), function)


def cases():
    for module in MODULES:
        if (GRADING / f"graded_{module}.py").exists():
            for name, test in graded_tests(module):
                yield pytest.param(module, name, id=f"{module}.{name}")


CASES = list(cases())


def run(module, name, function):
    "Run graded test `name` of `module` with `function` behind the proxy: None if it passed, else the failure."
    test = dict(graded_tests(module))[name]
    try:
        test(proxy(function))
    except Exception as failure:                 # a test that raises fails, as in the harness
        return failure
    return None


def test_every_chapter_has_a_graded_file():
    missing = [m for m in MODULES if not (GRADING / f"graded_{m}.py").exists()]
    assert not missing, missing


@pytest.mark.parametrize("module, name", CASES)
def test_attribution(module, name):
    "(d) @grades names a function the chapter exports; the test's one parameter is named as it."
    test = dict(graded_tests(module))[name]
    function, points, hidden = grading_of(test)
    exported = importlib.import_module(f"ldpbook.{module}").__all__
    assert function in exported and callable(reference(module, function))
    assert list(inspect.signature(test).parameters) == [function]
    assert isinstance(points, int) and points >= 1 and isinstance(hidden, bool)
    assert (test.__doc__ or "").strip(), "the first line of the docstring is shown in feedback"


@pytest.mark.parametrize("module", MODULES)
def test_visible_tests_do_not_hand_out_an_answer(module):
    """(e) No helper that a visible test uses (the set-up cell a student reads) computes what a graded function of the
    chapter computes, by `make`'s own check; and `make`'s reader finds the same tests, points and hidden flags."""
    path = GRADING / f"graded_{module}.py"
    found = assignments.graded_tests(path)
    assert {(t.function, t.name, t.points, t.hidden) for t in found} == \
        {(*grading_of(test)[:1], name, *grading_of(test)[1:]) for name, test in graded_tests(module)}
    setup = assignments.visible_setup(path, found)
    nb = nbformat.read(Path(__file__).resolve().parents[1] / "nbs" / f"{NOTEBOOKS[module]}.ipynb", as_version=4)
    for function in sorted({t.function for t in found}):
        assert assignments.answering_helpers(setup, nb, function) == [], function


@pytest.mark.parametrize("module", MODULES)
def test_each_function_has_three_to_six_tests_one_hidden(module):
    per = {}
    for _, test in graded_tests(module):
        function, _, hidden = grading_of(test)
        per.setdefault(function, []).append(hidden)
    assert len(per) >= 2, f"{module}: at least two functions are graded"
    for function, hidden in per.items():
        assert 3 <= len(hidden) <= 6 and any(hidden) and not all(hidden), (function, hidden)


@pytest.mark.parametrize("module, name", CASES)
def test_reference_passes(module, name):
    "(a) the chapter's own function passes."
    function = grading_of(dict(graded_tests(module))[name])[0]
    failure = run(module, name, reference(module, function))
    assert failure is None, f"{module}.{function} fails {name}: {failure}"


@pytest.mark.parametrize("module, name", CASES)
def test_stub_fails(module, name):
    "(b) a function that raises NotImplementedError fails."
    assert run(module, name, stub) is not None


# ------------------------------------------------------------------------------------------------------ mutants
def _foundations_mutants():
    from ldpbook import foundations as f
    yield "randomized_response", "ignores eps (eps = 1)", lambda k, eps: f.randomized_response(k, 1.0)
    yield "randomized_response", "the uniform channel", lambda k, eps: np.full((k, k), 1.0 / k) if k >= 1 else stub()
    yield "randomized_response", "e^eps/(e^eps + k) on the diagonal", lambda k, eps: _rr_off_by_one(k, eps)
    yield "randomized_response", "accepts everything", lambda k, eps: np.eye(max(int(k), 1))
    yield "is_ldp", "always True", lambda Q, eps, *, rtol=1e-9: True
    yield "is_ldp", "compares rows, not columns", lambda Q, eps, *, rtol=1e-9: _rows_ldp(Q, eps, rtol)
    yield "is_ldp", "ignores rtol", lambda Q, eps, *, rtol=1e-9: f.is_ldp(Q, eps)
    yield "is_ldp", "validates nothing", lambda Q, eps, *, rtol=1e-9: _unchecked_ldp(Q, eps, rtol)
    yield "divergence", "KL in log base 2", lambda u, v, *, kind="kl", **p: f.divergence(u, v, kind=kind, **p) / (
        math.log(2) if kind == "kl" else 1)
    yield "divergence", "TV without the 1/2", lambda u, v, *, kind="kl", **p: f.divergence(u, v, kind=kind, **p) * (
        2 if kind == "tv" else 1)
    yield "divergence", "naive sum (cancellation near u = v)", _naive_divergence
    yield "divergence", "gamma ignored", lambda u, v, *, kind="kl", **p: f.divergence(
        u, v, kind=kind, **({"gamma": 1.0} if kind == "egamma" else p))


def _rr_off_by_one(k, eps):
    Q = np.full((k, k), 1 / (math.exp(eps) + k))
    np.fill_diagonal(Q, math.exp(eps) / (math.exp(eps) + k))
    return Q


def _rows_ldp(Q, eps, rtol):
    Q = np.asarray(Q, dtype=float)
    return bool(np.all(Q.max(axis=1) <= math.exp(eps) * (1 + rtol) * Q.min(axis=1)))


def _unchecked_ldp(Q, eps, rtol):
    Q = np.asarray(Q, dtype=float)
    with np.errstate(all="ignore"):
        return bool(np.all(Q.max(axis=0) <= math.exp(eps) * (1 + rtol) * Q.min(axis=0)))


def _naive_divergence(u, v, *, kind="kl", **params):
    from ldpbook.foundations import divergence
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    with np.errstate(all="ignore"):
        if kind == "kl":
            terms = np.where(u > 0, u * np.log(u / v), 0.0)
            return float(np.sum(terms)) if np.all((u == 0) | (v > 0)) else math.inf
        if kind == "chi2":
            return float(np.sum(u * u / v) - 1)
    return divergence(u, v, kind=kind, **params)


def _spr_mutants():
    from ldpbook import spr
    yield "divergence_optimal", "a fixed half/half split", lambda p, q, eps, *, divergence="kl", ell=None, **kw: \
        spr.spr_mechanism(p, q, eps, [range(len(p) // 2), range(len(p) // 2, len(p))], divergence=divergence, **kw)
    yield "divergence_optimal", "optimises for eps = 1 whatever eps", \
        lambda p, q, eps, **kw: _with_eps(spr.divergence_optimal(p, q, 1.0, **kw), p, q, eps)
    yield "divergence_optimal", "ignores ell", lambda p, q, eps, *, ell=None, **kw: spr.divergence_optimal(p, q, eps, **kw)
    yield "divergence_optimal", "one block per symbol", lambda p, q, eps, *, divergence="kl", ell=None, **kw: \
        spr.spr_mechanism(p, q, eps, [[x] for x in range(len(p))], divergence=divergence, **kw)
    yield "divergence_optimal", "null symbols in the last block", _null_symbols_last
    yield "divergence_optimal", "always KL", lambda p, q, eps, *, divergence="kl", ell=None, **kw: \
        spr.divergence_optimal(p, q, eps, ell=ell)
    yield "spr_channel", "eps / 2", lambda blocks, k, eps: spr.spr_channel(blocks, k, eps / 2)
    yield "spr_channel", "the uniform channel", lambda blocks, k, eps: np.full((k, len(blocks)), 1 / len(blocks))
    yield "spr_channel", "e^eps/(e^eps + s) on the block", lambda blocks, k, eps: _block_rr_off_by_one(blocks, k, eps)
    yield "spr_channel", "blocks taken in sorted order", lambda blocks, k, eps: spr.spr_channel(sorted(
        [sorted(b) for b in blocks]), k, eps)
    yield "spr_channel", "validates nothing", _unchecked_spr_channel


def _with_eps(mech, p, q, eps):
    "The mechanism's partition with the channel at eps (the value from eps = 1)."
    from ldpbook.spr import spr_channel
    return dataclasses.replace(mech, channel=spr_channel(mech.partition, len(p), eps), eps=eps)


def _null_symbols_last(p, q, eps, *, divergence="kl", ell=None, **params):
    "divergence_optimal with the symbols p = q = 0 moved from the first block (as documented) to the last."
    from ldpbook.spr import divergence_optimal, spr_channel
    mech = divergence_optimal(p, q, eps, divergence=divergence, ell=ell, **params)
    null = {x for x in range(len(p)) if p[x] == 0 and q[x] == 0}
    blocks = [tuple(x for x in block if x not in null) for block in mech.partition]
    blocks[-1] += tuple(sorted(null))
    blocks = [b for b in blocks if b]
    return dataclasses.replace(mech, partition=tuple(blocks), channel=spr_channel(blocks, len(p), eps))


def _block_rr_off_by_one(blocks, k, eps):
    s = len(blocks)
    Q = np.full((k, s), 1 / (math.exp(eps) + s))
    for j, block in enumerate(blocks):
        Q[list(block), j] = math.exp(eps) / (math.exp(eps) + s)
    return Q


def _unchecked_spr_channel(blocks, k, eps):
    s = len(blocks)
    Q = np.full((k, s), 1 / (math.exp(eps) + s - 1) if eps < np.inf else 0.0)
    for j, block in enumerate(blocks):
        Q[[x for x in block if x < k], j] = math.exp(eps) / (math.exp(eps) + s - 1) if eps < np.inf else 1.0
    return Q


def _egamma_mutants():
    from ldpbook import egamma as e
    yield "egamma_closed_form", "without the (1-gamma)_+ floor", lambda eg, eps, *, gamma: np.maximum(
        np.tanh(np.asarray(eps) / 2) * np.asarray(eg) - np.abs(1 - np.asarray(gamma)) / (np.exp(eps) + 1), 0)
    yield "egamma_closed_form", "tanh(eps) instead of tanh(eps/2)", lambda eg, eps, *, gamma: np.asarray(
        e.egamma_closed_form(eg, 2 * np.asarray(eps, dtype=float), gamma=gamma))
    yield "egamma_closed_form", "no positive part", _egamma_no_positive_part
    yield "egamma_closed_form", "validates nothing", _egamma_unchecked
    yield "egamma_optimal", "S = {p > q} whatever gamma", lambda p, q, eps, *, gamma: _egamma_wrong_set(p, q, eps, gamma)
    yield "egamma_optimal", "the non-private value", lambda p, q, eps, *, gamma: dataclasses.replace(
        e.egamma_optimal(p, q, eps, gamma=gamma), value=e.egamma_optimal(p, q, np.inf, gamma=gamma).value)
    yield "egamma_optimal", "strict threshold p > gamma q", _egamma_strict
    yield "egamma_optimal", "columns swapped", lambda p, q, eps, *, gamma: _swapped(e.egamma_optimal(p, q, eps, gamma=gamma))


def _egamma_no_positive_part(eg, eps, *, gamma):
    eg, eps, gamma = (np.asarray(a, dtype=float) for a in (eg, eps, gamma))
    floor = np.maximum(1 - gamma, 0)
    return floor + np.tanh(eps / 2) * (eg - floor) - np.abs(1 - gamma) / (np.exp(eps) + 1)


def _egamma_unchecked(eg, eps, *, gamma):
    eg, eps, gamma = (np.asarray(a, dtype=float) for a in (eg, eps, gamma))
    floor = np.maximum(1 - gamma, 0)
    with np.errstate(all="ignore"):
        return floor + np.maximum(np.tanh(eps / 2) * (eg - floor) - np.abs(1 - gamma) / (np.exp(eps) + 1), 0)


def _egamma_wrong_set(p, q, eps, gamma):
    from ldpbook.egamma import binary_rr_channel, egamma_optimal
    mech = egamma_optimal(p, q, eps, gamma=gamma)
    inside = np.asarray(p) > np.asarray(q)
    return dataclasses.replace(mech, channel=binary_rr_channel(inside, eps),
                               threshold_set=tuple(int(x) for x in np.flatnonzero(inside)))


def _egamma_strict(p, q, eps, *, gamma):
    from ldpbook.egamma import egamma_optimal
    mech = egamma_optimal(p, q, eps, gamma=gamma)
    return dataclasses.replace(mech, threshold_set=tuple(x for x in range(len(p)) if p[x] > gamma * q[x]))


def _swapped(mech):
    channel = np.asarray(mech.channel)
    return dataclasses.replace(mech, channel=channel[:, ::-1].copy())


def _sparse_mutants():
    from ldpbook import sparse as sp
    yield "sparse_rr_calibration", "e^eps/(e^eps + t)", lambda t, eps: (math.exp(eps) / (math.exp(eps) + t),
                                                                       1 / (math.exp(eps) + t))
    yield "sparse_rr_calibration", "naive form overflowing at large eps", lambda t, eps: _naive_calibration(t, eps)
    yield "sparse_rr_calibration", "swapped", lambda t, eps: sp.sparse_rr_calibration(t, eps)[::-1]
    yield "sparse_rr_calibration", "validates nothing", lambda t, eps: (1 / (1 + 2 * t * math.exp(-eps)),
                                                                       1 / (math.exp(eps) + 2 * t))
    yield "sparse_rr_defect", "leakage and excess swapped", lambda *a: _swap_defect(sp.sparse_rr_defect(*a))
    yield "sparse_rr_defect", "[p - e^eps q]_+ always", _defect_always_excess
    yield "sparse_rr_defect", "ignores eps", lambda x, xp, S, Sp, p, q, eps: sp.sparse_rr_defect(x, xp, S, Sp, p, q, 1.0)
    yield "sparse_rr_line_defect", "ignores p=", lambda h, t, eps, *, p=None: sp.sparse_rr_line_defect(h, t, eps)
    yield "sparse_rr_line_defect", "h q + [p - e^eps q]_+ for every h", _line_first_case
    yield "sparse_rr_line_defect", "the case boundary at h < t", _line_shifted_case


def _naive_calibration(t, eps):
    with np.errstate(all="ignore"):
        e = np.exp(np.float64(eps))
        return float(e / (e + 2 * t)), float(1 / (e + 2 * t))


def _swap_defect(d):
    return types.SimpleNamespace(support_leakage=d.overlap_excess, overlap_excess=d.support_leakage, total=d.total)


def _defect_always_excess(x, xp, S, Sp, p, q, eps):
    from ldpbook.sparse import sparse_rr_defect
    d = sparse_rr_defect(x, xp, S, Sp, p, q, eps)
    excess = max(p - math.exp(eps) * q, 0.0)
    leakage = q * len(set(S) - set(Sp) - {x})
    return types.SimpleNamespace(support_leakage=leakage, overlap_excess=excess, total=leakage + excess) \
        if d.total >= 0 else d


def _line_first_case(h, t, eps, *, p=None):
    from ldpbook.sparse import sparse_rr_calibration, sparse_rr_line_defect
    d = sparse_rr_line_defect(h, t, eps, p=p)
    pp, q = sparse_rr_calibration(t, eps) if p is None else (p, (1 - p) / (2 * t))
    leakage, excess = min(h, 2 * t) * q, max(pp - math.exp(eps) * q, 0.0)
    return types.SimpleNamespace(support_leakage=leakage, overlap_excess=excess, total=leakage + excess) \
        if d.total >= 0 else d


def _line_shifted_case(h, t, eps, *, p=None):
    from ldpbook.sparse import sparse_rr_line_defect
    return sparse_rr_line_defect(h + 1 if h == t else h, t, eps, p=p)


def _chernoff_mutants():
    from ldpbook import chernoff as c
    yield "chernoff_information", "lambda fixed at 1/2 (Bhattacharyya)", lambda u, v: _at_half(u, v)
    yield "chernoff_information", "a coarse grid of lambda", _coarse_chernoff
    yield "chernoff_information", "lambda not moved with the arguments", lambda u, v: c.chernoff_information(
        *sorted([u, v], key=lambda a: tuple(np.asarray(a, dtype=float))))
    yield "chernoff_optimal", "the KL-optimal partition", _chernoff_from_kl
    yield "chernoff_optimal", "binary RR on p >= q", _chernoff_binary
    yield "chernoff_optimal", "ignores ell", lambda p, q, eps, *, ell=None, **kw: c.chernoff_optimal(p, q, eps, **kw)
    yield "chernoff_optimal", "no certificate (upper_bound = value)", lambda p, q, eps, **kw: _no_certificate(
        c.chernoff_optimal(p, q, eps, **kw))


def _at_half(u, v):
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    with np.errstate(all="ignore"):
        total = float(np.sum(np.sqrt(u * v)))
    return types.SimpleNamespace(value=-math.log(total) if total > 0 else math.inf, lam=0.5)


def _coarse_chernoff(u, v):
    from ldpbook.chernoff import chernoff_information
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    exact = chernoff_information(u, v)
    if not math.isfinite(exact.value) or exact.value == 0:
        return exact
    both = (u > 0) & (v > 0)
    grid = np.linspace(0, 1, 21)
    values = [-math.log(float(np.sum(u[both] ** t * v[both] ** (1 - t)))) for t in grid]
    best = int(np.argmax(values))
    return types.SimpleNamespace(value=values[best], lam=float(grid[best]))


def _chernoff_from_kl(p, q, eps, *, ell=None, tol=1e-8, max_dp_calls=2000):
    from ldpbook.chernoff import chernoff_optimal, spr_chernoff_information
    if eps == 0:
        return chernoff_optimal(p, q, eps, ell=ell, tol=tol, max_dp_calls=max_dp_calls)
    from ldpbook.spr import divergence_optimal
    mech = chernoff_optimal(p, q, eps, ell=ell, tol=tol, max_dp_calls=max_dp_calls)
    kl = divergence_optimal(p, q, eps, ell=ell)
    info = spr_chernoff_information(p, q, eps, kl.partition)
    return dataclasses.replace(mech, value=info.value, lam=info.lam, partition=kl.partition, channel=kl.channel,
                               gap=mech.upper_bound - info.value)


def _chernoff_binary(p, q, eps, *, ell=None, tol=1e-8, max_dp_calls=2000):
    from ldpbook.chernoff import chernoff_optimal, spr_chernoff_information
    if eps == 0:
        return chernoff_optimal(p, q, eps, ell=ell, tol=tol, max_dp_calls=max_dp_calls)
    from ldpbook.spr import spr_channel
    mech = chernoff_optimal(p, q, eps, ell=ell, tol=tol, max_dp_calls=max_dp_calls)
    inside = [x for x in range(len(p)) if p[x] >= q[x]]
    blocks = [b for b in ([x for x in range(len(p)) if x not in inside], inside) if b]
    info = spr_chernoff_information(p, q, eps, blocks)
    return dataclasses.replace(mech, value=info.value, lam=info.lam, partition=tuple(map(tuple, blocks)),
                               channel=spr_channel(blocks, len(p), eps), gap=mech.upper_bound - info.value)


def _no_certificate(mech):
    return dataclasses.replace(mech, upper_bound=mech.value * (1 - 1e-6), gap=-1e-6 * mech.value)


def _closeness_mutants():
    from ldpbook import closeness as c
    yield "rb_statistic", "one random split instead of the average", lambda x, y, *, k=None: float(
        c.split_statistic(x, y, k=k, rng=0))
    yield "rb_statistic", "the average over splits of n = min // 2 - 1", _rb_wrong_block
    yield "rb_statistic", "not symmetric (x counted twice)", lambda x, y, *, k=None: c.rb_statistic(x, y, k=k) + \
        0.01 * len(x)
    yield "rb_statistic", "validates nothing", _rb_unchecked
    yield "noisy_permutation_pvalue", "noise 4/eps (Delta/eps)", lambda o, t, e, *, sensitivity, rng=None: \
        c.noisy_permutation_pvalue(o, t, 2 * e, sensitivity=sensitivity, rng=rng)
    yield "noisy_permutation_pvalue", "no noise", lambda o, t, e, *, sensitivity, rng=None: \
        c.noisy_permutation_pvalue(o, t, np.inf if e > 0 else e, sensitivity=sensitivity, rng=rng)
    yield "noisy_permutation_pvalue", "ties counted for the null (>)", _pvalue_strict
    yield "noisy_permutation_pvalue", "C/(B + 1) without the 1", lambda o, t, e, *, sensitivity, rng=None: \
        c.noisy_permutation_pvalue(o, t, e, sensitivity=sensitivity, rng=rng) - 1 / (len(t) + 1)
    yield "noisy_permutation_pvalue", "a fixed seed whatever rng", lambda o, t, e, *, sensitivity, rng=None: \
        c.noisy_permutation_pvalue(o, t, e, sensitivity=sensitivity, rng=0)
    yield "dp_permutation_decision", "noise 4/eps", lambda o, t, e, *, sensitivity, alpha=0.05, rng=None: \
        c.dp_permutation_decision(o, t, 2 * e, sensitivity=sensitivity, alpha=alpha, rng=rng)
    yield "dp_permutation_decision", "p < alpha instead of p <= alpha", _decision_strict
    yield "dp_permutation_decision", "alpha ignored (0.05)", lambda o, t, e, *, sensitivity, alpha=0.05, rng=None: \
        c.dp_permutation_decision(o, t, e, sensitivity=sensitivity, rng=rng)
    yield "dp_permutation_decision", "accepts any B", lambda o, t, e, *, sensitivity, alpha=0.05, rng=None: bool(
        c.noisy_permutation_pvalue(o, t, e, sensitivity=sensitivity, rng=rng) <= alpha)
    yield "dp_permutation_test", "noise 4/eps", lambda x, y, eps, **kw: c.dp_permutation_test(x, y, 2 * eps, **kw)
    yield "dp_permutation_test", "noise 4/eps, reported as 8/eps", lambda x, y, eps, **kw: _report_scale(
        c.dp_permutation_test(x, y, 2 * eps, **kw), 8 / eps)
    yield "dp_permutation_test", "no noise, reported as 8/eps", lambda x, y, eps, **kw: _report_scale(
        c.dp_permutation_test(x, y, np.inf if eps > 0 else eps, **kw), 8 / eps)
    yield "dp_permutation_test", "the split statistic whatever statistic_name", lambda x, y, eps, **kw: \
        c.dp_permutation_test(x, y, eps, **{**kw, "statistic_name": "split"})
    yield "dp_permutation_test", "always releases the non-private fields", lambda x, y, eps, **kw: \
        c.dp_permutation_test(x, y, eps, **{**kw, "return_nonprivate": True})


def _rb_wrong_block(x, y, *, k=None):
    from ldpbook.closeness import rb_statistic
    n = min(len(x), len(y))
    return rb_statistic(x, y, k=k) if n < 6 else rb_statistic(list(x)[:-2], list(y)[:-2], k=k)


def _rb_unchecked(x, y, *, k=None):
    from ldpbook.closeness import rb_statistic
    x, y = np.asarray(x), np.asarray(y)
    if x.size < 2 or y.size < 2 or np.any(x < 0) or (k is not None and np.any(x >= k)):
        return 0.0
    return rb_statistic(x.astype(int), y.astype(int))


def _pvalue_strict(o, t, e, *, sensitivity, rng=None):
    from ldpbook.closeness import laplace_scale
    from ldpbook.foundations import as_generator
    t = np.asarray(t, dtype=float)
    scale = laplace_scale(sensitivity, e)
    gen = as_generator(rng)
    noise = gen.laplace(scale=scale, size=t.size + 1) if scale > 0 else np.zeros(t.size + 1)
    return (1 + np.sum(t + noise[1:] > o + noise[0])) / (t.size + 1)


def _decision_strict(o, t, e, *, sensitivity, alpha=0.05, rng=None):
    from ldpbook.closeness import dp_permutation_decision, noisy_permutation_pvalue
    dp_permutation_decision(o, t, e, sensitivity=sensitivity, alpha=alpha, rng=0)      # validates the input
    return bool(noisy_permutation_pvalue(o, t, e, sensitivity=sensitivity, rng=rng) < alpha)


def _report_scale(result, scale):
    return dataclasses.replace(result, noise_scale=scale)


def _adaptive_mutants():
    from ldpbook import adaptive as a
    yield "adaptive_scores", "without centring", lambda s, o: a.adaptive_scores(s, np.zeros(np.shape(o)))
    yield "adaptive_scores", "the largest arg-max", lambda s, o: _last_argmax(s, o)
    yield "adaptive_scores", "the finest level only", lambda s, o: (np.asarray(s, float)[-1] - np.asarray(o, float)[-1],
                                                                   np.full(np.shape(s)[1], np.shape(s)[0] - 1))
    yield "centering_offsets", "the median", lambda s, *, level=0.2: np.median(np.asarray(s, dtype=float), axis=1)
    yield "centering_offsets", "rank ceil((1 - u) B) - 1", lambda s, *, level=0.2: _offsets_rank_off(s, level)
    yield "centering_offsets", "level ignored", lambda s, *, level=0.2: a.centering_offsets(s)
    yield "adaptive_test", "noise 8/eps", lambda x, y, eps, **kw: a.adaptive_test(x, y, 2 * eps, **kw)
    yield "adaptive_test", "noise 8/eps, reported as 16/eps", lambda x, y, eps, **kw: _report_scale(
        a.adaptive_test(x, y, 2 * eps, **kw), 16 / eps)
    yield "adaptive_test", "never rejects", lambda x, y, eps, **kw: dataclasses.replace(
        a.adaptive_test(x, y, eps, **kw), reject=False)
    yield "adaptive_test", "resolution as the level j", lambda x, y, eps, **kw: _resolution_as_level(
        a.adaptive_test(x, y, eps, **kw))


def _last_argmax(s, o):
    centred = np.asarray(s, dtype=float) - np.asarray(o, dtype=float)[:, None]
    return centred.max(axis=0), centred.shape[0] - 1 - centred[::-1].argmax(axis=0)


def _offsets_rank_off(s, level):
    s = np.sort(np.asarray(s, dtype=float), axis=1)
    B = s.shape[1]
    return s[:, max(min(B, math.ceil((1 - level) * B)) - 1, 0)]


def _resolution_as_level(result):
    if result.resolution is None:
        return result
    return dataclasses.replace(result, resolution=int(result.resolution).bit_length() + 100)


def _approximate_mutants():
    from ldpbook import approximate as a
    yield "two_output_vertices", "m* = 1/(e^eps + 1), without the factor 1 - delta", lambda eps, delta: tuple(
        (1 / (np.exp(eps) + 1), np.exp(eps) / (np.exp(eps) + 1)) if i == 1 else v
        for i, v in enumerate(a.two_output_vertices(eps, delta)))
    yield "two_output_vertices", "the mirror vertex at (delta, 1)", lambda eps, delta: tuple(
        (delta, 1.0) if i == 2 else v for i, v in enumerate(a.two_output_vertices(eps, delta)))
    yield "two_output_vertices", "validates nothing", lambda eps, delta: (
        (0.0, delta), ((1 - delta) / (np.exp(eps) + 1), 1 - (1 - delta) / (np.exp(eps) + 1)), (1 - delta, 1.0))
    yield "leaky_rr_channel", "randomized response without the leak", lambda eps, delta: np.hstack((
        np.zeros((2, 1)), a.leaky_rr_channel(eps, 0.0)[:, 1:3], np.zeros((2, 1))))
    yield "leaky_rr_channel", "the leak added without scaling the rest by 1 - delta", lambda eps, delta: (
        a.leaky_rr_channel(eps, delta) + np.array([[0, 1, 1, 0], [0, 1, 1, 0]]) * delta / 2)
    yield "leaky_rr_channel", "validates nothing", lambda eps, delta: np.array(
        [[delta, (1 - delta) / (1 + np.exp(-eps)), (1 - delta) / (1 + np.exp(eps)), 0.0],
         [0.0, (1 - delta) / (1 + np.exp(eps)), (1 - delta) / (1 + np.exp(-eps)), delta]])


MUTANTS = {"foundations": _foundations_mutants, "spr": _spr_mutants, "egamma": _egamma_mutants,
           "sparse": _sparse_mutants, "closeness": _closeness_mutants, "adaptive": _adaptive_mutants,
           "chernoff": _chernoff_mutants, "approximate": _approximate_mutants}


def mutant_cases():
    for module in MODULES:
        for function, what, mutant in MUTANTS[module]():
            yield pytest.param(module, function, mutant, id=f"{module}.{function}: {what}")


def points_kept(module, function, implementation) -> tuple:
    """(points kept, points in all, tests failed) of `implementation` under every graded test of `function` in the
    chapter, hidden ones too, run in this process by `run`."""
    mine = [(name, test) for name, test in graded_tests(module) if grading_of(test)[0] == function]
    assert mine, f"no graded tests of {function}"
    failed = [name for name, _ in mine if run(module, name, implementation) is not None]
    total = sum(grading_of(test)[1] for _, test in mine)
    return total - sum(grading_of(test)[1] for name, test in mine if name in failed), total, failed


@pytest.mark.parametrize("module, function, mutant", list(mutant_cases()))
def test_mutant_loses_at_least_a_third_of_its_points(module, function, mutant):
    "(c) a plausible wrong implementation loses at least a third of its function's points (hidden tests too)."
    kept, total, failed = points_kept(module, function, mutant)
    assert 3 * (total - kept) >= total, f"it keeps {kept} of {total} points of {function} (fails only {failed})"


# ------------------------------------------------------------------ correct implementations written otherwise pass
def _alternatives():
    "(module, function, what, implementation): correct, but not the chapter's code (other draw orders, brute force)."
    yield "foundations", "randomized_response", "written with np.where", _rr_where
    yield "spr", "divergence_optimal", "brute force over every partition", _brute_divergence_optimal
    yield "closeness", "noisy_permutation_pvalue", "noise drawn one value at a time, permuted first", _other_pvalue
    yield "closeness", "dp_permutation_test", "noise drawn first, the last value for T_0", _other_test
    yield "closeness", "dp_permutation_decision", "on the p-value drawn otherwise", _other_decision
    yield "closeness", "rb_statistic", "the average over every split, by enumeration", _rb_by_enumeration


def _rr_where(k, eps):
    from ldpbook.foundations import randomized_response
    randomized_response(k, eps)                                           # validates the input
    keep = 1.0 / (1.0 + (k - 1) * math.exp(-eps))
    return np.where(np.eye(k, dtype=bool), keep, (1.0 - keep) / (k - 1) if k > 1 else 0.0)


def _brute_divergence_optimal(p, q, eps, *, divergence="kl", ell=None, **params):
    "The best SPR mechanism over every partition (small k), null symbols joining the first block."
    from ldpbook import spr
    spr.divergence_optimal(p, q, eps, divergence=divergence, ell=ell, **params)    # validates the input
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    null = [x for x in range(p.size) if p[x] == 0 and q[x] == 0]
    live = [x for x in range(p.size) if x not in null]
    best = None
    for blocks in _set_partitions(live):
        if ell is not None and len(blocks) > ell:
            continue
        blocks = [blocks[0] + null] + blocks[1:]
        mech = spr.spr_mechanism(p, q, eps, blocks, divergence=divergence, **params)
        if best is None or mech.value > best.value * (1 + 1e-12):
            best = mech
    return best


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
    return (1 + sum(t >= noisy_observed for t in noisy_permuted)) / (len(noisy_permuted) + 1)


def _other_test(x, y, eps, *, k=None, statistic_name="rb", n_permutations=199, alpha=0.05, rng=None,
                return_nonprivate=False):
    "A correct DP permutation test that draws its noise first, as one array, and uses the last value for T_0."
    from ldpbook import closeness
    from ldpbook.foundations import as_generator
    closeness.dp_permutation_test(x, y, eps, k=k, statistic_name=statistic_name, n_permutations=n_permutations,
                                  alpha=alpha, rng=0)                      # validates the input
    rng = as_generator(rng)
    scale = 2 * 4.0 / eps
    noise = rng.laplace(0.0, scale, size=n_permutations + 1) if scale > 0 else np.zeros(n_permutations + 1)
    perm = closeness.permutation_statistics(x, y, k=k, statistic_name=statistic_name, n_permutations=n_permutations,
                                            rng=rng)
    pvalue = (1 + np.count_nonzero(perm.permuted + noise[:-1] >= perm.observed + noise[-1])) / (n_permutations + 1)
    keep = return_nonprivate
    return closeness.DPPermutationTestResult(bool(pvalue <= alpha), pvalue if keep else None,
                                             perm.observed if keep else None, perm.permuted if keep else None, eps,
                                             alpha, scale, statistic_name, n_permutations, ("reject",), ())


def _other_decision(observed, permuted, eps, *, sensitivity, alpha=0.05, rng=None):
    "A correct decision on `_other_pvalue`."
    from ldpbook.closeness import dp_permutation_decision
    dp_permutation_decision(observed, permuted, eps, sensitivity=sensitivity, alpha=alpha, rng=0)   # validates the input
    return bool(_other_pvalue(observed, permuted, eps, sensitivity=sensitivity, rng=rng) <= alpha)


def _rb_by_enumeration(x, y, *, k=None):
    from ldpbook.closeness import rb_statistic
    value = rb_statistic(x, y, k=k)                                       # validates the input
    if len(x) + len(y) > 10:
        return value
    graded = graded_module("closeness")
    return graded.split_statistic_average(list(x), list(y))


@pytest.mark.parametrize("module, function, implementation",
                         [pytest.param(m, f, i, id=f"{m}.{f}: {w}") for m, f, w, i in _alternatives()])
def test_correct_alternatives_pass(module, function, implementation):
    "A correct implementation that is not the chapter's code passes every test of its function."
    names = [name for name, test in graded_tests(module) if grading_of(test)[0] == function]
    failures = {name: run(module, name, implementation) for name in names}
    assert not any(failures.values()), failures


# ------------------------------------------------------------------------------ end to end, through the harness


def chapter_code(module):
    "The source of the chapter's export cells, as a submission would hold it (directives dropped, __future__ first)."
    from ldpbook.assignments import is_export_cell
    nb = nbformat.read(Path(__file__).resolve().parents[1] / "nbs" / f"{NOTEBOOKS[module]}.ipynb", as_version=4)
    lines = [line for cell in nb.cells if is_export_cell(cell) for line in cell.source.splitlines() + [""]
             if not line.lstrip().startswith("#|")]
    future = sorted({line for line in lines if line.startswith("from __future__ import")})
    return "\n".join(future + [line for line in lines if not line.startswith("from __future__ import")])


def stub_code(functions):
    "A submission that defines every graded function as a stub."
    return "\n".join(f"def {f}(*args, **kwargs):\n    raise NotImplementedError()\n" for f in functions)


@pytest.fixture(scope="module")
def harness_runs():
    """{(module, 'chapter' or 'stub'): future of run_graded's outcomes}, all started at once on a few threads (each
    test runs in its own child process, so the chapters are graded side by side)."""
    from concurrent.futures import ThreadPoolExecutor
    pool = ThreadPoolExecutor(max_workers=4)
    runs = {}
    for module in MODULES:
        functions = sorted({grading_of(test)[0] for _, test in graded_tests(module)})
        path = GRADING / f"graded_{module}.py"
        runs[module, "chapter"] = pool.submit(grading.run_graded, path, chapter_code(module), functions)
        runs[module, "stub"] = pool.submit(grading.run_graded, path, stub_code(functions), functions)
    yield runs
    pool.shutdown(cancel_futures=True)


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES)
def test_run_graded_end_to_end(module, harness_runs):
    "Through run_graded: the chapter's own export cells score full marks, a stub of every graded function 0."
    tests = {name: grading_of(test) for name, test in graded_tests(module)}
    total = sum(points for _, points, _ in tests.values())
    outcomes = harness_runs[module, "chapter"].result()
    assert {o.name for o in outcomes} == set(tests)
    failed = [(o.name, o.reason) for o in outcomes if not o.passed]
    assert not failed, failed
    assert sum(o.points for o in outcomes if o.passed) == total
    outcomes = harness_runs[module, "stub"].result()
    assert len(outcomes) == len(tests)
    passed = [o.name for o in outcomes if o.passed]
    assert not passed, f"a stub passes {passed}"
    assert all(o.reason for o in outcomes)
