"""Graded tests for chapter 4 (`ldpbook.closeness`): each exercises one function through its public contract.

`python -m ldpbook.assignments make nbs/04_closeness.ipynb --functions ...` turns every test that exercises exactly
one assigned function into an autograded nbgrader cell (POINTS: its points; HIDDEN: hidden with `--hidden-tests`).
Privacy and the noise scale are checked exactly, on the functions' own decisions (exact_privacy.py): the tests hand
the function its Laplace draws through the generator `rng` and find by bisection where its decision flips; for the
p-value and the decision they compare exact Laplace tail probabilities between neighbouring statistics, for the full
test (whose relabellings are random and not coupled between data sets) they read the noise scale off the flip point
and the test's own statistics. Laplace noise of scale 4/eps instead of 8/eps fails them. A correct function passes
whatever order it draws its noise in, as long as it draws it with `rng.laplace`.
"""
import math

import numpy as np

from grading.exact_privacy import controlled, decided, observed_draw, privacy_loss, threshold
from ldpbook.closeness import dp_permutation_decision, dp_permutation_test, noisy_permutation_pvalue

POINTS = {"test_noisy_permutation_pvalue_without_noise_counts_ties_against_the_null": 2,
          "test_noisy_permutation_pvalue_adds_laplace_noise_of_scale_2_delta_over_eps": 2,
          "test_noisy_permutation_pvalue_threshold_events_are_private": 3,
          "test_noisy_permutation_pvalue_rejects_bad_input": 1,
          "test_dp_permutation_decision_thresholds_the_pvalue_at_alpha": 2,
          "test_dp_permutation_decision_refuses_a_test_that_cannot_reject": 1,
          "test_dp_permutation_decision_is_private": 3,
          "test_dp_permutation_test_rejects_different_samples": 2,
          "test_dp_permutation_test_releases_only_the_decision": 1,
          "test_dp_permutation_test_adds_laplace_noise_of_scale_8_over_eps": 3}
HIDDEN = {"test_noisy_permutation_pvalue_threshold_events_are_private", "test_dp_permutation_decision_is_private",
          "test_dp_permutation_test_adds_laplace_noise_of_scale_8_over_eps"}
B = 19                                          # permuted statistics: 1/(B + 1) = 0.05, the smallest level


def statistic_neighbours(delta):
    """Pairs of statistics (T_0; T_1..T_B) of neighbouring data sets that move the decision threshold by the whole
    2 delta allowed: T_0 down by delta, every T_b up by delta; far in the tail, the probability ratio is e^eps."""
    return [((0.0, np.full(B, t)), (-delta, np.full(B, t + delta))) for t in (-20.0, 0.0, 20.0, 60.0)]


def test_noisy_permutation_pvalue_without_noise_counts_ties_against_the_null():
    assert noisy_permutation_pvalue(0.0, [1.0, -1.0, 0.0, 2.0], np.inf, sensitivity=1.0) == 0.8
    assert noisy_permutation_pvalue(10.0, [1.0, -1.0, 0.0, 2.0], np.inf, sensitivity=1.0) == 0.2
    assert noisy_permutation_pvalue(-5.0, [1.0, -1.0, 0.0, 2.0], np.inf, sensitivity=1.0) == 1.0


def test_noisy_permutation_pvalue_adds_laplace_noise_of_scale_2_delta_over_eps():
    """With every permuted statistic equal to t and their noise at 0, p <= 1/(B + 1) exactly when T_0 + xi_0 > t:
    the observed statistic's standard draw c at which p flips gives the scale s = (t - T_0) / c of its noise."""
    def rejects(stats, eps, delta, z):
        return decided(lambda rng: noisy_permutation_pvalue(stats[0], stats[1], eps, sensitivity=delta,
                                                            rng=rng) <= 1 / (B + 1), z)
    for eps, delta in [(1.0, 4.0), (0.5, 1.0), (3.0, 4.0)]:
        index, sign = observed_draw(lambda z: rejects((0.0, np.ones(B)), eps, delta, z), np.zeros(B + 1))
        for observed, t in [(0.0, 5.0), (-3.0, 1.0), (2.0, 30.0)]:
            c = threshold(lambda z0: rejects((observed, np.full(B, t)), eps, delta,
                                             sign * z0 * (np.arange(B + 1) == index)), steps=50)
            assert math.isclose((t - observed) / c, 2 * delta / eps, rel_tol=1e-9), \
                "the observed statistic's Laplace noise must have scale 2 delta / eps"


def test_noisy_permutation_pvalue_threshold_events_are_private():
    """{p <= alpha} is eps-DP: between neighbouring statistics its probability, and that of its complement, change
    by at most a factor e^eps (computed exactly from the function's p-values), and nearly e^eps in the tail."""
    delta = 4.0
    for eps in (1.0, 2.0):
        for alpha in (1 / (B + 1), 0.5):
            def decide(stats, z):
                return decided(lambda rng: noisy_permutation_pvalue(stats[0], stats[1], eps, sensitivity=delta,
                                                                    rng=rng) <= alpha, z)
            worst = privacy_loss(decide, statistic_neighbours(delta), np.zeros(B + 1), (0.0, np.ones(B)), eps)
            assert 0.99 < worst <= 1 + 1e-6, f"privacy loss {worst:.3f} eps for the event p <= {alpha:g}"


def test_noisy_permutation_pvalue_rejects_bad_input():
    for args, sensitivity in [((0.0, [1.0], 0.0), 1.0), ((0.0, [1.0], -1.0), 1.0), ((0.0, [1.0], 1.0), 0.0),
                              ((0.0, [], 1.0), 1.0), ((0.0, [1.0], np.nan), 1.0), ((np.nan, [1.0], 1.0), 1.0)]:
        try:
            noisy_permutation_pvalue(*args, sensitivity=sensitivity)
        except (ValueError, TypeError):
            continue
        raise AssertionError("bad input was accepted")


def test_dp_permutation_decision_thresholds_the_pvalue_at_alpha():
    "Without noise the decision is p <= alpha, ties counted against the null; p = alpha rejects."
    permuted = np.r_[np.zeros(B - 1), 5.0]
    assert dp_permutation_decision(9.0, permuted, np.inf, sensitivity=4.0, alpha=0.05) is True         # p = 1/20
    assert dp_permutation_decision(1.0, permuted, np.inf, sensitivity=4.0, alpha=0.05) is False        # p = 2/20
    assert dp_permutation_decision(1.0, permuted, np.inf, sensitivity=4.0, alpha=0.1) is True          # p = 2/20
    assert dp_permutation_decision(5.0, permuted, np.inf, sensitivity=4.0, alpha=0.05) is False        # a tie: p = 2/20


def test_dp_permutation_decision_refuses_a_test_that_cannot_reject():
    for args, kwargs in [((0.0, np.zeros(10), 1.0), {"sensitivity": 4.0, "alpha": 0.05}),
                         ((0.0, np.zeros(B), 1.0), {"sensitivity": 4.0, "alpha": 0}),
                         ((0.0, np.zeros(B), 1.0), {"sensitivity": 4.0, "alpha": 1.5}),
                         ((0.0, np.zeros(B), 0.0), {"sensitivity": 4.0})]:
        try:
            dp_permutation_decision(*args, **kwargs)
        except (ValueError, TypeError):
            continue
        raise AssertionError("a test that cannot reject, or a bad level or budget, was accepted")


def test_dp_permutation_decision_is_private():
    """The released bit is eps-DP: between neighbouring statistics P(reject) and P(accept) change by at most a
    factor e^eps (computed exactly from the function's decisions), and nearly e^eps in the tail."""
    delta = 4.0
    for eps in (0.5, 2.0):
        def decide(stats, z):
            return decided(lambda rng: dp_permutation_decision(stats[0], stats[1], eps, sensitivity=delta, alpha=0.05,
                                                               rng=rng), z)
        worst = privacy_loss(decide, statistic_neighbours(delta), np.zeros(B + 1), (0.0, np.ones(B)), eps)
        assert 0.99 < worst <= 1 + 1e-6, f"privacy loss {worst:.3f} eps"


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


def test_dp_permutation_test_adds_laplace_noise_of_scale_8_over_eps():
    """The released bit is the eps-DP decision on the test's own statistics: with the permuted statistics' noise at
    0, it rejects exactly when T_0 + xi_0 > max_b T_b, so the observed statistic's standard draw c at which the
    decision flips gives the scale (max_b T_b - T_0) / c of its noise, which must be 2 * 4 / eps (4 is the
    statistic's sensitivity). T_0 and T_1..T_B are the test's own (return_nonprivate=True, the same seed, so the
    same relabellings); the decisions are computed exactly, whatever the relabellings turned out to be."""
    def reject(data, eps, seed, z):
        return decided(lambda rng: dp_permutation_test(*data, eps, n_permutations=B, rng=rng).reject, z, seed)
    samples = np.random.default_rng(5)
    probe = (np.array([0, 1, 2, 0, 1, 2]), np.array([0, 1, 2, 0, 1, 2]))      # T_0 is the smallest statistic
    for eps in (0.5, 1.0, 3.0):
        index, sign = observed_draw(lambda z: reject(probe, eps, 0, z), np.zeros(B + 1))
        measured = 0
        for seed in range(4):
            data = samples.integers(0, 3, 8), samples.integers(0, 3, 8)
            c = threshold(lambda z0: reject(data, eps, seed, sign * z0 * (np.arange(B + 1) == index)), steps=50)
            own = dp_permutation_test(*data, eps, n_permutations=B, return_nonprivate=True,
                                      rng=controlled(np.zeros(B + 1), seed, in_pieces=True))
            gap = float(np.max(own.null_distribution)) - float(own.statistic)
            if abs(gap) > 0.1:
                measured += 1
                assert math.isclose(gap / c, 8 / eps, rel_tol=1e-9), \
                    "the observed statistic's Laplace noise must have scale 2 * 4 / eps"
        assert measured >= 2
