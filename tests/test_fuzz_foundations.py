"""Fuzz tests of ldpbook.foundations: every public function returns a valid result or raises ValueError/TypeError.

Generated inputs include NaN, ±inf, negative and empty arrays, wrong shapes and dtypes, booleans, strings
(numeric ones too), tiny and huge ε, and sizes up to a memory cap. Never another exception, a NaN, a negative
divergence or a hang.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpbook import foundations as F

settings.register_profile("fuzz", max_examples=60, deadline=None, derandomize=True)
FUZZ = settings.get_profile("fuzz")

scalars = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10 ** 6), st.booleans(),
                    st.just("0.5"), st.just("abc"), st.none(), st.just(1e-300), st.just(700.0), st.just(1e308))
vectors = st.one_of(
    st.lists(st.floats(min_value=0, max_value=1), min_size=0, max_size=6),
    st.lists(scalars, min_size=1, max_size=5),
    st.integers(1, 7).flatmap(lambda k: st.tuples(st.just(k), st.integers(0, 2 ** 31))).map(
        lambda a: np.random.default_rng(a[1]).dirichlet(np.full(a[0], 0.2))),
    st.just([[0.5, 0.5]]), st.just([True, False]), st.just(["0.5", "0.5"]), st.just([0.5, 0.5 + 1e-3j]),
    st.just(np.array([0.5, np.nan])), st.just(np.array([1.0, -0.0])), st.just([1e-300, 1.0]))
kinds = st.sampled_from([("kl", {}), ("tv", {}), ("chi2", {}), ("hellinger", {}), ("egamma", {"gamma": 2.0}),
                         ("egamma", {"gamma": -1.0}), ("renyi", {"renyi_order": 0.5}), ("renyi", {"renyi_order": 1.0}),
                         ("renyi", {"renyi_order": 1000.0}), ("renyi", {"renyi_order": True}), ("bogus", {}),
                         ("kl", {"gamma": 1.0}), ("egamma", {"gamma": "2"})])
OK = (ValueError, TypeError)


def valid_array(x):
    x = np.asarray(x)
    return not np.any(np.isnan(x))


@FUZZ
@given(vectors, vectors, kinds)
def test_divergence(u, v, kind):
    name, params = kind
    try:
        d = F.divergence(u, v, kind=name, **params)
    except OK:
        return
    assert isinstance(d, float) and not np.isnan(d) and d >= 0


@FUZZ
@given(vectors, vectors, vectors, kinds)
def test_divergence_terms_and_perspective(u, v, diff, kind):
    name, params = kind
    for call in (lambda: F.divergence_terms(u, v, diff, kind=name, **params),
                 lambda: F.perspective(u, v, kind=name, **params)):
        try:
            out = call()
        except OK:
            continue
        assert valid_array(out)


@FUZZ
@given(st.one_of(vectors, st.just(np.eye(3)), st.just(np.full((2, 3), 1 / 3)), st.just([[1.0, 0.0], [0.5, 0.5]])),
       scalars)
def test_channel_checks(Q, eps):
    for call in (lambda: F.is_ldp(Q, eps), lambda: F.ldp_epsilon(Q), lambda: F.privacy_defect(Q, eps),
                 lambda: F.is_approx_ldp(Q, eps, 0.1)):
        try:
            out = call()
        except OK:
            continue
        if isinstance(out, np.ndarray):
            assert valid_array(out) and np.all(out >= 0)
        elif isinstance(out, float):
            assert not np.isnan(out)


@FUZZ
@given(st.one_of(st.integers(-3, 60), st.just(10 ** 5), st.just(10 ** 12), st.booleans(), st.just("3"),
                 st.just(3.0)), scalars)
def test_randomized_response(k, eps):
    try:
        R = F.randomized_response(k, eps)
    except OK:
        return
    assert R.shape == (k, k) and valid_array(R) and np.allclose(R.sum(axis=1), 1.0)


@FUZZ
@given(st.one_of(st.lists(st.integers(-2, 5), max_size=6), st.just([True, False]), st.just(["1"]),
                 st.just([0.0, 1.0]), st.just(np.array([], dtype=int))),
       st.one_of(st.none(), st.integers(-1, 3), st.just("seed"), st.just(True)))
def test_privatize(x, rng):
    try:
        y = F.privatize(x, F.randomized_response(3, 1.0), rng=rng)
    except OK:
        return
    assert y.shape == np.shape(x) and np.all((y >= 0) & (y < 3))


@FUZZ
@given(scalars, st.one_of(st.none(), st.integers(-2, 3)))
def test_scalar_validators(value, minimum):
    for call in (lambda: F.check_eps(value), lambda: F.check_eps(value, allow_inf=True),
                 lambda: F.check_int(value, "n", minimum), lambda: F.as_generator(value)):
        try:
            call()
        except OK:
            continue


@pytest.mark.parametrize("bad", [[True, False], ["0.5", "0.5"], [0.5, True], np.array([True, False]),
                                 np.array(["0.5", "0.5"])])
def test_booleans_and_numeric_strings_are_not_numbers(bad):
    with pytest.raises(TypeError, match="booleans and strings are not numbers"):
        F.check_distribution(bad)
    with pytest.raises(TypeError):
        F.divergence(bad, [0.5, 0.5])
    for scalar in (True, "0.5"):
        with pytest.raises(TypeError):
            F.check_eps(scalar)


def test_errors_do_not_echo_data():
    secret = [0.123456789, 0.876543211 + 0.5]
    with pytest.raises(ValueError) as info:
        F.check_distribution(secret)
    assert "0.12" not in str(info.value) and "1.37" not in str(info.value)
    with pytest.raises(ValueError) as info:
        F.check_nonnegative([-0.987654321], "x")
    assert "0.98" not in str(info.value)


def test_memory_guards():
    with pytest.raises(ValueError, match="GiB"):
        F.randomized_response(10 ** 5, 1.0)
    Q = np.full((300, 400), 1 / 400)                       # 300·300·400 = 3.6e7 entries without chunking
    assert F.privacy_defect(Q, 0.5).max() == 0.0
