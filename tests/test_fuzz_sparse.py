"""Fuzz tests for ldpbook.sparse: for generated inputs — NaN, ±inf, empty arrays, wrong shapes and dtypes, bools,
strings, kernels and supports that return garbage, tiny and huge ε and μ, huge radii, separations and labels — every
public function either returns a valid result or raises ValueError / TypeError: never another exception, a NaN, a
defect outside [0, 1], a hang or a parameter-sized allocation (the harness of tests/test_fuzz_egamma.py: a time
limit per call and an address-space cap)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuzz_egamma import FUZZ, fuzz_call, maybe, memory_cap, weird

from ldpbook.sparse import (
    DefectDecomposition, SparseKernelMechanism, first_distance_moment, graph_ball_supports, graph_distances,
    poisson_binomial, poisson_binomial_pmf, range_defect, shell_ratio_epsilon, skellam_cdf, skellam_logpmf,
    skellam_pmf, skellam_privacy_loss, skellam_sf, sparse_exponential, sparse_randomized_response,
    sparse_rr_calibration, sparse_rr_defect, sparse_rr_line_defect, sparse_rr_r1, sparse_staircase, sweep_radius,
    table_one, truncated_additive, truncated_additive_defect, truncated_skellam, truncated_skellam_defect,
    truncated_skellam_leakage, truncated_skellam_normalizer,
)


@pytest.fixture(autouse=True, scope="module")
def _capped():
    with memory_cap():
        yield


EPS = st.one_of(st.floats(0, 800), st.sampled_from([0.0, 1e-12, 1e-300, 700.0, 1e6, math.inf]))
MU = st.one_of(st.floats(1e-6, 1e4), st.sampled_from([1e-300, 1e-12, 0.01, 2.0, 1e6, 1e12, 1e300]))
RADIUS = st.one_of(st.integers(0, 12), st.sampled_from([2 ** 19, 10 ** 9, 10 ** 18]))
SEPARATION = st.one_of(st.integers(1, 30), st.sampled_from([0, -3, 10 ** 9, 10 ** 18]))
LABELS = st.one_of(st.integers(-50, 50), st.sampled_from([10 ** 9, -(10 ** 18), 2 ** 62]))


def check_defect(result):
    "A defect is a pair of non-negative numbers whose total is at most one."
    if isinstance(result, DefectDecomposition):
        assert result.support_leakage >= 0 and result.overlap_excess >= 0 and result.total <= 1 + 1e-12


@st.composite
def kernel_arrays(draw):
    k, m = draw(st.integers(1, 5)), draw(st.integers(1, 6))
    K = np.array(draw(st.lists(st.one_of(st.floats(0, 10), st.just(0.0)), min_size=k * m, max_size=k * m))).reshape(k, m)
    mask = np.array(draw(st.lists(st.booleans(), min_size=k * m, max_size=k * m))).reshape(k, m)
    return K, mask


@st.composite
def mechanisms(draw):
    "A finite mechanism from arrays, or one of the chapter's mechanisms on ℤ (small parameters)."
    kind = draw(st.integers(0, 3))
    if kind == 0:
        K, mask = draw(kernel_arrays())
        return fuzz_call(SparseKernelMechanism.from_arrays, K, mask)
    if kind == 1:
        return sparse_randomized_response(draw(st.integers(0, 4)), draw(st.floats(0, 5)))
    if kind == 2:
        return truncated_skellam(draw(st.floats(0.01, 50)), draw(st.integers(0, 6)))
    garbage = draw(weird())                                          # a kernel or support that returns garbage
    if draw(st.booleans()):
        return SparseKernelMechanism(lambda x, ys: garbage, lambda x: np.arange(x - 1, x + 2))
    return SparseKernelMechanism(lambda x, ys: np.ones(np.shape(ys)), lambda x: garbage)


@FUZZ
@given(maybe(kernel_arrays()), maybe(st.none()), maybe(LABELS), maybe(LABELS), maybe(EPS), maybe(st.integers(0, 9)),
       st.one_of(st.none(), maybe(st.integers(0, 50))))
def test_fuzz_from_arrays_and_methods(arrays, support, x, x_prime, eps, rng, size):
    K, mask = arrays if isinstance(arrays, tuple) else (arrays, support)
    mech = fuzz_call(SparseKernelMechanism.from_arrays, K, mask)
    if mech is None:
        return
    law = fuzz_call(mech.pmf, x)
    if law is not None:
        assert np.all(law.probabilities >= 0) and abs(law.probabilities.sum() - 1) < 1e-9
    check_defect(fuzz_call(mech.defect, x, x_prime, eps))
    fuzz_call(mech.sample, x, rng=rng, size=size)
    fuzz_call(mech.channel)
    fuzz_call(mech.pure_epsilon, None, H=size, nonnegative=True)
    fuzz_call(mech.is_pure_ldp, eps)


@FUZZ
@given(mechanisms(), maybe(LABELS), maybe(LABELS), maybe(EPS), maybe(SEPARATION), maybe(LABELS))
def test_fuzz_mechanism_methods_and_range_defect(mech, x, x_prime, eps, H, center):
    if mech is None:
        return
    check_defect(fuzz_call(mech.defect, x, x_prime, eps))
    fuzz_call(first_distance_moment, mech, x, nonnegative=True)
    result = fuzz_call(range_defect, mech, eps, H, center=center, nonnegative=True)
    if result is not None:
        assert 0 <= result.total <= 1 + 1e-12
    fuzz_call(mech.channel, [x, x_prime])


@FUZZ
@given(maybe(st.lists(st.lists(st.integers(0, 1), min_size=4, max_size=4), min_size=4, max_size=4).map(np.array)),
       maybe(RADIUS), maybe(st.lists(st.floats(1e-3, 1), min_size=1, max_size=5).map(lambda a: np.sort(a)[::-1])),
       maybe(SEPARATION), maybe(st.sampled_from(["adjacency", "distance", "line"])))
def test_fuzz_graphs_and_staircase(adjacency, r, weights, H, kind):
    fuzz_call(graph_distances, adjacency, nonnegative=True)
    fuzz_call(graph_ball_supports, adjacency, r)
    fuzz_call(shell_ratio_epsilon, weights, H, nonnegative=True)
    fuzz_call(sparse_staircase, weights, "line" if isinstance(kind, str) and kind == "line" else adjacency, r, kind=kind)


@FUZZ
@given(maybe(st.lists(st.lists(st.floats(-5, 5), min_size=3, max_size=3), min_size=3, max_size=3).map(np.array)),
       maybe(st.floats(1e-3, 1e3)), maybe(RADIUS), maybe(EPS))
def test_fuzz_sparse_exponential(score, eta, support, eps):
    mech = fuzz_call(sparse_exponential, score, eta, support)
    if mech is not None:
        fuzz_call(mech.pure_epsilon, nonnegative=True)
        fuzz_call(range_defect, mech, eps, 1, nonnegative=True)


@FUZZ
@given(maybe(RADIUS), maybe(EPS), maybe(st.floats(0, 1)), maybe(SEPARATION), maybe(LABELS), maybe(LABELS))
def test_fuzz_sparse_randomized_response(t, eps, p, h, x, x_prime):
    fuzz_call(sparse_rr_calibration, t, eps, nonnegative=True)
    fuzz_call(sparse_randomized_response, t, eps)
    fuzz_call(sparse_randomized_response, t, p=p)
    check_defect(fuzz_call(sparse_rr_line_defect, h, t, eps))
    check_defect(fuzz_call(sparse_rr_line_defect, h, t, eps, p=p))
    fuzz_call(sparse_rr_r1, t, eps, nonnegative=True)
    support = [x, x_prime] if isinstance(x, int) and isinstance(x_prime, int) else x
    check_defect(fuzz_call(sparse_rr_defect, x, x_prime, support, [x_prime, x], p, 1 - p if isinstance(p, float) else p, eps))


@FUZZ
@given(maybe(st.sampled_from([lambda k: np.exp(-np.abs(k)), lambda k: np.ones(np.shape(k)), lambda k: np.nan * k,
                              lambda k: -np.abs(k), lambda k: "x", lambda k: np.where(k == 0, 1.0, 0.0)])),
       maybe(RADIUS), maybe(EPS), maybe(SEPARATION))
def test_fuzz_truncated_additive(pmf, r, eps, h):
    fuzz_call(truncated_additive, pmf, r)
    check_defect(fuzz_call(truncated_additive_defect, pmf, r, eps, h))


@FUZZ
@given(maybe(st.one_of(LABELS, st.lists(LABELS, max_size=5))), maybe(MU), maybe(RADIUS), maybe(EPS), maybe(SEPARATION))
def test_fuzz_skellam(k, mu, r, eps, h):
    fuzz_call(skellam_pmf, k, mu, nonnegative=True)
    fuzz_call(skellam_logpmf, k, mu)
    fuzz_call(skellam_sf, k, mu, nonnegative=True)
    fuzz_call(skellam_cdf, k, mu, nonnegative=True)
    fuzz_call(skellam_privacy_loss, k, h, mu)
    fuzz_call(truncated_skellam_normalizer, mu, r, nonnegative=True)
    fuzz_call(truncated_skellam_leakage, mu, r, h, nonnegative=True)
    check_defect(fuzz_call(truncated_skellam_defect, mu, r, eps, h))
    fuzz_call(truncated_skellam, mu, r)


@FUZZ
@given(maybe(st.lists(st.lists(st.floats(0, 1), min_size=3, max_size=3), min_size=1, max_size=3).map(np.array)),
       st.one_of(st.none(), maybe(RADIUS)))
def test_fuzz_poisson_binomial(P, support):
    beta = fuzz_call(poisson_binomial_pmf, P, nonnegative=True)
    if beta is not None:
        assert np.allclose(beta.sum(axis=1), 1)
    fuzz_call(poisson_binomial, P, support=support)


@settings(FUZZ, max_examples=15)
@given(maybe(st.lists(st.integers(0, 4), min_size=1, max_size=3)), maybe(EPS), maybe(st.integers(1, 3)), maybe(MU))
def test_fuzz_table_one_and_sweep(radii, eps, H, mu):
    fuzz_call(table_one, radii, eps=eps, H=H, mu=mu)
    fuzz_call(sweep_radius, lambda r: sparse_randomized_response(r, 1.0), radii, eps, H)
