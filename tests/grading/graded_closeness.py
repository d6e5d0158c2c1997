"""Graded tests for chapter 4 (`ldpbook.closeness`): each exercises one function through its public contract.

`python -m ldpbook.assignments make nbs/04_closeness.ipynb --functions ...` turns every test that exercises exactly
one assigned function into an autograded nbgrader cell (POINTS: its points; HIDDEN: hidden with `--hidden-tests`).
Privacy is tested on what the functions release, on neighbouring inputs, against the exact probabilities of the
threshold events of Laplace noise; frequencies are compared with a 5-standard-error margin, so no test depends on
the order in which a correct solution draws its noise.
"""
import numpy as np

from ldpbook.closeness import dp_permutation_test, dp_pvalue

POINTS = {"test_dp_pvalue_without_noise_counts_ties_against_the_null": 2,
          "test_dp_pvalue_follows_the_documented_laplace_law": 2, "test_dp_pvalue_threshold_events_are_private": 3,
          "test_dp_pvalue_rejects_bad_input": 1, "test_dp_permutation_test_rejects_different_samples": 2,
          "test_dp_permutation_test_releases_only_the_decision": 1, "test_dp_permutation_test_is_private": 1}
HIDDEN = {"test_dp_pvalue_threshold_events_are_private", "test_dp_permutation_test_is_private"}


def laplace_difference_sf(z, scale):
    "P(xi_0 - xi_1 > z) for independent Laplace(scale) xi_0, xi_1 (closed form; symmetric in z)."
    a = abs(z) / scale
    upper = 0.5 * np.exp(-a) * (1 + a / 2)
    return upper if z >= 0 else 1 - upper


def frequency(draw, n):
    "Mean of n independent draws of a 0/1 event, each with its own seed (so draw order inside is irrelevant)."
    return float(np.mean([bool(draw(seed)) for seed in range(n)]))


def test_dp_pvalue_without_noise_counts_ties_against_the_null():
    assert dp_pvalue(0.0, [1.0, -1.0, 0.0, 2.0], np.inf, 1.0) == 0.8
    assert dp_pvalue(10.0, [1.0, -1.0, 0.0, 2.0], np.inf, 1.0) == 0.2
    assert dp_pvalue(-5.0, [1.0, -1.0, 0.0, 2.0], np.inf, 1.0) == 1.0


def test_dp_pvalue_follows_the_documented_laplace_law():
    "One permuted statistic: p = 1/2 exactly when T_1 + xi_1 < T_0 + xi_0, with Laplace(2 delta / eps) noise."
    eps, delta, n = 1.0, 4.0, 2000
    for observed, permuted in [(0.0, 8.0), (3.0, 1.0)]:
        values = {dp_pvalue(observed, [permuted], eps, delta, rng=seed) for seed in range(20)}
        assert values <= {0.5, 1.0}
        exact = laplace_difference_sf(permuted - observed, 2 * delta / eps)
        seen = frequency(lambda s: dp_pvalue(observed, [permuted], eps, delta, rng=s) <= 0.5, n)
        assert abs(seen - exact) <= 5 * np.sqrt(exact * (1 - exact) / n)


def test_dp_pvalue_threshold_events_are_private():
    """Neighbouring inputs (every statistic moved by delta): P(p <= t) and P(p > t) change by at most a factor e^eps,
    up to 5 standard errors of the difference."""
    eps, delta, n = 2.0, 4.0, 3000
    near, far = (0.0, [0.0]), (-delta, [delta])
    for event in (lambda p: p <= 0.5, lambda p: p > 0.5):
        rates = [frequency(lambda s, d=d: event(dp_pvalue(d[0], d[1], eps, delta, rng=s)), n) for d in (near, far)]
        for a, b in [rates, rates[::-1]]:
            se = np.sqrt((a * (1 - a) + np.exp(2 * eps) * b * (1 - b)) / n)
            assert a <= np.exp(eps) * b + 5 * se


def test_dp_pvalue_rejects_bad_input():
    for args in [(0.0, [1.0], 0.0, 1.0), (0.0, [1.0], -1.0, 1.0), (0.0, [1.0], 1.0, 0.0), (0.0, [], 1.0, 1.0),
                 (0.0, [1.0], np.nan, 1.0)]:
        try:
            dp_pvalue(*args)
        except (ValueError, TypeError):
            continue
        raise AssertionError("bad input was accepted")


def test_dp_permutation_test_rejects_different_samples():
    x, y = np.zeros(40, dtype=int), np.ones(40, dtype=int)
    for seed in range(3):
        assert dp_permutation_test(x, y, np.inf, k=2, rng=seed).reject
        assert dp_permutation_test(x, y, 50.0, k=2, rng=seed).reject


def test_dp_permutation_test_releases_only_the_decision():
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 4, 30), rng.integers(0, 4, 30)
    result = dp_permutation_test(x, y, 1.0, k=4, rng=1)
    assert isinstance(result.reject, (bool, np.bool_))
    assert result.pvalue is None and result.statistic is None and result.null_distribution is None


def test_dp_permutation_test_is_private():
    """Neighbouring samples (one observation of y changed): the rates of rejecting and of not rejecting move by at
    most a factor e^eps over the test's own randomness, up to 3 standard errors. The pair is one where a decision
    without noise moves far more (not rejecting: about 5% against 28%); errors in the noise scale itself are
    checked exactly in dp_pvalue's tests."""
    eps, alpha, n = 1.0, 0.05, 1000
    x, y = np.zeros(6, dtype=int), np.ones(6, dtype=int)
    y2 = np.r_[y[:-1], 0]
    rates = [frequency(lambda s, yy=yy: dp_permutation_test(x, yy, eps, k=2, n_permutations=19, alpha=alpha,
                                                            rng=s).reject, n) for yy in (y, y2)]
    for a, b in [rates, rates[::-1], [1 - rates[0], 1 - rates[1]], [1 - rates[1], 1 - rates[0]]]:
        se = np.sqrt((a * (1 - a) + np.exp(2 * eps) * b * (1 - b)) / n)
        assert a <= np.exp(eps) * b + 3 * se
