"""Fuzz tests of ldpbook.chernoff: every public function returns a valid result or raises ValueError/TypeError.

Generated inputs: NaN, ±inf, empty, wrong shapes and dtypes, booleans, strings, tiny and huge ε, bad budgets and
tolerances, degenerate figure and simulation sizes. Never another exception, a NaN, a negative exponent, a
certificate below the value, or a hang.
"""
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ldpbook import chernoff as C

from test_fuzz_spr import FUZZ, OK, budgets, eps_values
from test_fuzz_spr import pairs as spr_pairs

pairs = st.one_of(spr_pairs, st.just(([1.0, 0.0], [0.0, 1.0])), st.just(([0.5, 0.5], [0.5, 0.5])),
                  st.just(([0.5, -0.5], [0.5, 0.5])))
tolerances = st.one_of(st.just(1e-12), st.just(1e-6), st.just(0.0), st.just(-1.0), st.just(math.nan),
                       st.just(2.0), st.just(True), st.just("1e-9"))


def _valid(value):
    return isinstance(value, float) and not math.isnan(value) and value >= 0


@FUZZ
@given(pairs)
def test_chernoff_information(pair):
    try:
        info = C.chernoff_information(*pair)
    except OK:
        return
    assert _valid(info.value) and 0.0 <= info.lam <= 1.0


@FUZZ
@given(pairs, eps_values, budgets, tolerances)
def test_chernoff_optimal(pair, eps, ell, tol):
    p, q = pair
    try:
        best = C.chernoff_optimal(p, q, eps, ell=ell, tol=tol)
    except OK:
        return
    assert _valid(best.value) and 0.0 <= best.lam <= 1.0
    assert best.upper_bound >= best.value and best.gap >= 0
    assert best.channel.shape[0] == len(p) and not np.any(np.isnan(best.channel))


@FUZZ
@given(pairs, eps_values, st.one_of(st.just([[0], [1]]), st.just([[0, 1]]), st.just([[0], [0]]), st.just([[]]),
                                    st.just([[True]]), st.just(5)))
def test_spr_chernoff_information(pair, eps, partition):
    p, q = pair
    try:
        info = C.spr_chernoff_information(p, q, eps, partition)
    except OK:
        return
    assert _valid(info.value)


@FUZZ
@given(pairs, st.one_of(st.integers(-1, 3), st.just(10 ** 30), st.just(2.5), st.just(True)),
       st.one_of(st.integers(-1, 50), st.just(1.5), st.just("10")))
def test_bayes_error(pair, n, reps):
    try:
        est = C.bayes_error(*pair, n, reps=reps, rng=0)
    except OK:
        return
    assert not math.isnan(est.log_error) and est.log_error <= 0


@FUZZ
@given(st.one_of(st.integers(-1, 4), st.just(True), st.just(2.5)), st.one_of(st.integers(-1, 2), st.just("1")),
       st.one_of(st.none(), st.just(()), st.just((1.0,)), st.just((np.nan,)), st.just((-1.0,)), st.just(("a",))))
def test_chernoff_figure_data(k, T, eps):
    try:
        data = C.chernoff_figure_data(k, T=T, eps=eps)
    except OK:
        return
    assert all(np.all(np.isfinite(v)) and np.all(v >= 0) for v in data.exponent.values())
