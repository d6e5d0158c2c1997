"""Fuzz tests of ldpbook.spr: every public function returns a valid result or raises ValueError/TypeError.

Generated inputs: NaN, ±inf, empty, wrong shapes and dtypes, booleans, strings, tiny and huge ε, huge and
ragged partitions, bad budgets; figure helpers with degenerate sizes. Never another exception, a NaN, a
negative divergence or a hang.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpbook import spr as S

FUZZ = settings(max_examples=40, deadline=None, derandomize=True)
OK = (ValueError, TypeError)

eps_values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(1e-12), st.just(700.0),
                       st.just(800.0), st.just(math.inf), st.booleans(), st.just("1.0"), st.just(-1.0),
                       st.integers(-2, 20))
pairs = st.one_of(
    st.integers(1, 7).flatmap(lambda k: st.tuples(st.just(k), st.integers(0, 2 ** 31))).map(
        lambda a: tuple(np.maximum(np.random.default_rng(a[1]).dirichlet(np.full(a[0], 0.1), 2), 0.0))),
    st.just(([0.5, 0.5], [0.5, np.nan])), st.just(([], [])), st.just(([[0.5, 0.5]], [[0.5, 0.5]])),
    st.just(([True, False], [False, True])), st.just((["0.5", "0.5"], ["0.2", "0.8"])),
    st.just(([0.5, 0.5], [0.2, 0.3, 0.5])), st.just(([1.0], [1.0])), st.just(([1e-300, 1.0], [1.0, 1e-300])))
kinds = st.sampled_from([("kl", {}), ("tv", {}), ("chi2", {}), ("hellinger", {}), ("egamma", {"gamma": 1e6}),
                         ("egamma", {"gamma": 0.0}), ("renyi", {"renyi_order": 0.01}), ("renyi", {"renyi_order": 1000.0}),
                         ("renyi", {"renyi_order": 0.0}), ("nope", {}), ("kl", {"alpha": 2.0})])
budgets = st.one_of(st.none(), st.integers(-1, 8), st.just(True), st.just(2.0), st.just("2"))


def _valid(value):
    return isinstance(value, float) and not math.isnan(value) and value >= 0


def _pair(pair):
    p, q = pair
    return p, q


@FUZZ
@given(pairs, eps_values, kinds, budgets)
def test_divergence_optimal(pair, eps, kind, ell):
    p, q = _pair(pair)
    name, params = kind
    try:
        mech = S.divergence_optimal(p, q, eps, divergence=name, ell=ell, **params)
    except OK:
        return
    assert _valid(mech.value)
    assert mech.channel.shape == (len(p), mech.num_outputs) and not np.any(np.isnan(mech.channel))


@FUZZ
@given(pairs, st.one_of(eps_values, st.lists(eps_values, max_size=3), st.just([[1.0]])), kinds, budgets)
def test_divergence_optimal_values(pair, eps, kind, ell):
    p, q = _pair(pair)
    name, params = kind
    try:
        V = S.divergence_optimal_values(np.atleast_2d(np.asarray(p, dtype=object)).tolist(),
                             np.atleast_2d(np.asarray(q, dtype=object)).tolist(), eps, divergence=name, ell=ell,
                                        **params)
    except OK:
        return
    assert not np.any(np.isnan(V)) and np.all(V >= 0)


@FUZZ
@given(pairs, eps_values, kinds,
       st.one_of(st.just([[0], [1]]), st.just([[0, 1]]), st.just([[0], [0]]), st.just([[]]), st.just([[True]]),
                 st.just([["0"], [1]]), st.just(5), st.just([[0.0], [1]])))
def test_fixed_partitions(pair, eps, kind, partition):
    p, q = _pair(pair)
    name, params = kind
    for call in (lambda: S.spr_mechanism(p, q, eps, partition, divergence=name, **params),
                 lambda: S.binary_mechanism(p, q, eps, divergence=name, **params),
                 lambda: S.randomized_response_mechanism(p, q, eps, divergence=name, **params),
                 lambda: S.spr_dp(p, q, eps, divergence=name, **params)):
        try:
            out = call()
        except OK:
            continue
        value = out[0] if isinstance(out, tuple) else out.value
        assert _valid(value)


@FUZZ
@given(pairs, eps_values, kinds)
def test_kov_lp_and_scores(pair, eps, kind):
    p, q = _pair(pair)
    name, params = kind
    try:
        sol = S.kov_lp(p, q, eps, divergence=name, **params)
        assert _valid(sol.value) and sol.upper_bound >= sol.value - 1e-9 * max(1.0, sol.value)
    except OK:
        pass
    try:
        M = S.interval_scores(p, q, eps, divergence=name, **params)
        assert not np.any(np.isnan(M))
    except OK:
        pass


@FUZZ
@given(pairs, eps_values, st.one_of(st.integers(-1, 4), st.none(), st.just(True)))
def test_joint_range(pair, eps, ell):
    p, q = _pair(pair)
    try:
        J = S.joint_range(p, q, eps, ell=ell)
    except OK:
        return
    assert J.extreme.any() and not np.any(np.isnan(J.u))


@pytest.mark.parametrize("call", [lambda: S.figure5_data(n=0), lambda: S.figure5_data(n=-5),
                                  lambda: S.figure5_data(eps=(np.nan,)), lambda: S.figure5_data(n=True),
                                  lambda: S.figure1_data(n_boot=0), lambda: S.figure1_data(k=1),
                                  lambda: S.figure1_data(T=0), lambda: S.figure1_data(k=3, eps=["x"]),
                                  lambda: S.figure1_data(k=3, seed=-1)])
def test_figure_helpers_reject_degenerate_sizes(call):
    with pytest.raises(OK):
        call()


def test_figure_helpers_at_small_sizes():
    panels = S.figure5_data(n=50, eps=(0.4,))
    assert 0 <= panels[0].acceptance <= 1
    data = S.figure1_data(k=3, T=2, eps=[0.0, 1.0], n_boot=3)
    assert all(np.all(np.isfinite(v)) for v in data.mean.values())


def test_joint_range_is_fast_and_guarded_at_large_k():
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(400)), rng.dirichlet(np.ones(400))
    assert S.joint_range(p, q, 1.0).extreme.sum() >= 2                   # ℓ = 2: a planar hull, not 800 LPs
    with pytest.raises(ValueError, match="linear programs"):
        S.joint_range(p[:40] / p[:40].sum(), q[:40] / q[:40].sum(), 1.0, ell=3)


@pytest.mark.parametrize("call", [lambda: S.spr_channel([[0], [1]], "2", 1.0),
                                  lambda: S.spr_channel([[0], [1]], True, 1.0),
                                  lambda: S.spr_channel([[0], [True]], 2, 1.0),
                                  lambda: S.spr_channel([[0], [1]], 2, 800.0),
                                  lambda: S.joint_range([0.5, 0.5], [0.2, 0.8], 1.0, max_points="x"),
                                  lambda: S.divergence_optimal_values([[0.5, 0.5]], [[0.2, 0.8]], ["1.0"]),
                                  lambda: S.divergence_optimal([0.5, 0.5], [0.2, 0.8], 1.0, ell="2")])
def test_parameters_must_be_numbers_of_the_right_kind(call):
    with pytest.raises(OK):
        call()
