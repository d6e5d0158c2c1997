"""Tests written for grading the adaptivity chapter (`ldpbook.adaptive`).

Each test grades one function, which it receives as its only argument (the student's function, called in another
process, with int seeds as `rng`). The scores and the centering offsets are checked against their definitions,
written out here. The noise of the multiscale test is checked by its law, not by its draws, as for ldpbook.closeness (this
file is self-contained, so the law is repeated here): given the released scores T_0 and T_1..T_B, the count
C = #{b : T_b + xi_b >= T_0 + xi_0} behind the p-value (1 + C)/(B + 1) has a known mean and variance under i.i.d.
Laplace noise of scale 16/eps; over many seeds the standardised sum of C - E[C] must stay within 5. The rank formula
of the offsets, written out, serves a hidden test only (it would compute the assigned function).
"""
import math

import numpy as np

from ldpbook.assignments import grades, refused


def laplace_sf(x):
    "P(Z >= x) for a standard Laplace Z, elementwise."
    x = np.asarray(x, dtype=float)
    return np.where(x >= 0, 0.5 * np.exp(-np.abs(x)), 1 - 0.5 * np.exp(-np.abs(x)))


def count_law(observed, permuted, scale, n_grid=4000):
    "Mean and variance of C = #{b : T_b + xi_b >= T_0 + xi_0}, xi i.i.d. Laplace(scale), by quadrature over xi_0."
    gap = observed - np.asarray(permuted, dtype=float)
    u = (np.arange(n_grid) + 0.5) / n_grid
    z = np.where(u < 0.5, np.log(2 * u), -np.log(2 - 2 * u))
    pi = laplace_sf(gap[None, :] / scale + z[:, None])
    mean, var = pi.sum(axis=1), (pi * (1 - pi)).sum(axis=1)
    return float(mean.mean()), float((var + mean ** 2).mean() - mean.mean() ** 2)


def count_from_pvalue(pvalue, B):
    "C from p = (1 + C)/(B + 1); the p-value must be one of these values."
    count = pvalue * (B + 1) - 1
    assert abs(count - round(count)) <= 1e-6 and 0 <= round(count) <= B, f"{pvalue} is not (1 + C)/(B + 1)"
    return round(count)


# ---------------------------------------------------------------------------------------------- adaptive_scores
@grades("adaptive_scores", points=2)
def test_adaptive_scores_are_the_max_of_centred_statistics(adaptive_scores):
    "scores[b] = max_j (statistics[j, b] - offsets[j]); level[b] = the j attaining it."
    rng = np.random.default_rng(5)
    for G, B in [(1, 4), (3, 7), (6, 19)]:
        statistics, offsets = rng.normal(size=(G, B)) * 5, rng.normal(size=G)
        scores, level = adaptive_scores(statistics, offsets)
        centred = statistics - offsets[:, None]
        assert np.asarray(scores).shape == (B,) and np.asarray(level).shape == (B,)
        assert np.allclose(scores, centred.max(axis=0), rtol=1e-12, atol=1e-12)
        assert np.array_equal(np.asarray(level), centred.argmax(axis=0))


@grades("adaptive_scores")
def test_adaptive_scores_ties_go_to_the_coarsest_level(adaptive_scores):
    "When several levels attain the maximum, level is the smallest such j."
    statistics = np.array([[1.0, 5.0, 2.0], [3.0, 5.0, 2.0], [3.0, 0.0, 2.0]])
    scores, level = adaptive_scores(statistics, np.zeros(3))
    assert np.allclose(scores, [3.0, 5.0, 2.0]) and list(np.asarray(level)) == [1, 0, 0]
    scores, level = adaptive_scores(statistics, np.array([0.0, 0.0, -1.0]))
    assert np.allclose(scores, [4.0, 5.0, 3.0]) and list(np.asarray(level)) == [2, 0, 2]


@grades("adaptive_scores", hidden=True)
def test_adaptive_scores_rejects_mismatched_offsets(adaptive_scores):
    "offsets of a length other than the number of rows G: ValueError."
    assert refused(adaptive_scores, [[1.0, 2.0]], [0.0, 1.0]) == "ValueError"
    assert refused(adaptive_scores, [[1.0, 2.0], [0.0, 0.0]], [0.0]) == "ValueError"


# -------------------------------------------------------------------------------------------- centering_offsets
def expected_offsets(null_statistics, level):
    "The value of rank i_u = min(B, ceil((1 - u)(B + 1))) - 1 (from 0, increasing) of each row."
    B = null_statistics.shape[1]
    rank = min(B, math.ceil((1 - level) * (B + 1))) - 1
    return np.sort(null_statistics, axis=1)[:, rank]


@grades("centering_offsets", points=2)
def test_centering_offsets_example(centering_offsets):
    "Rows (5, 1, 4, 2, 3) and (0, 0, 1, 1, 1), B = 5: ranks min(5, ceil((1 - u) 6)) - 1 = 4, 3, 2 for u = .2, .4, .6."
    rows = np.array([[5.0, 1.0, 4.0, 2.0, 3.0], [0.0, 0.0, 1.0, 1.0, 1.0]])
    for level, expected in [(0.2, [5.0, 1.0]), (0.4, [4.0, 1.0]), (0.6, [3.0, 1.0])]:
        assert np.array_equal(np.asarray(centering_offsets(rows, level=level), dtype=float), expected), level


@grades("centering_offsets", points=2, hidden=True)
def test_centering_offsets_rank_formula(centering_offsets):
    "Row by row, the order statistic of rank min(B, ceil((1 - u)(B + 1))) - 1."
    rng = np.random.default_rng(6)
    for G, B, u in [(1, 18, 0.2), (3, 10, 0.3), (4, 30, 0.05), (2, 10, 0.01), (5, 7, 0.5)]:
        null = rng.normal(size=(G, B))
        got = np.asarray(centering_offsets(null, level=u), dtype=float)
        assert got.shape == (G,)
        assert np.array_equal(got, expected_offsets(null, u)), f"G={G}, B={B}, u={u}"


@grades("centering_offsets")
def test_centering_offsets_default_level_and_column_order(centering_offsets):
    "The default level is 0.2, and reordering the columns changes nothing."
    rng = np.random.default_rng(8)
    null = rng.normal(size=(3, 18))
    got = np.asarray(centering_offsets(null), dtype=float)
    assert np.array_equal(got, np.asarray(centering_offsets(null, level=0.2), dtype=float))
    assert np.array_equal(np.asarray(centering_offsets(null[:, rng.permutation(18)]), dtype=float), got)
    assert np.all(np.isin(got, null)), "each offset is one of the row's statistics"


@grades("centering_offsets", hidden=True)
def test_centering_offsets_rejects_a_level_outside_the_open_interval(centering_offsets):
    "level 0, 1 or 1.5: ValueError."
    for level in (0.0, 1.0, 1.5):
        assert refused(centering_offsets, [[1.0, 2.0, 3.0]], level=level) == "ValueError", level


# ------------------------------------------------------------------------------------------------ adaptive_test
SAMPLE_RNG = np.random.default_rng(0)
X, Y = SAMPLE_RNG.uniform(size=30), SAMPLE_RNG.uniform(size=30) ** 3            # different laws on [0, 1]
X_FAR, Y_FAR = SAMPLE_RNG.uniform(size=40), SAMPLE_RNG.uniform(size=40) ** 6    # told apart by every run seen
OPTIONS = {"n_centering": 19, "n_permutations": 19, "centering": "permutation"}


@grades("adaptive_test", points=2)
def test_adaptive_test_without_noise(adaptive_test):
    "eps = inf: p = (1 + #{T_b >= T_0})/(B + 1), reject iff p <= alpha; very different samples are told apart."
    for x, y, seed in [(X, Y, 0), (X, Y, 1), (X_FAR, Y_FAR, 2)]:
        got = adaptive_test(x, y, np.inf, rng=seed, return_nonprivate=True, **OPTIONS)
        null = np.asarray(got.null_distribution, dtype=float)
        assert null.shape == (19,)
        assert math.isclose(got.pvalue, (1 + np.sum(null >= got.statistic - 1e-9)) / 20, rel_tol=1e-12)
        assert bool(got.reject) == (got.pvalue <= 0.05)
    assert bool(got.reject), "samples of U(0, 1) and of U(0, 1)^6, 40 points each, without noise: rejected"


@grades("adaptive_test", points=3, hidden=True)
def test_adaptive_test_adds_laplace_noise_of_scale_16_over_eps(adaptive_test):
    "noise_scale = 16/eps, and over 300 seeds the rank count behind p follows its law under that noise."
    eps, draws = 2.0, []
    for seed in range(300):
        got = adaptive_test(X, Y, eps, rng=seed, return_nonprivate=True, **OPTIONS)
        assert math.isclose(got.noise_scale, 16 / eps, rel_tol=1e-12)
        assert bool(got.reject) == (got.pvalue <= 0.05)
        draws.append((count_from_pvalue(got.pvalue, 19),
                      count_law(got.statistic, np.asarray(got.null_distribution, dtype=float), 16 / eps)))
    z = sum(c - law[0] for c, law in draws) / math.sqrt(sum(law[1] for _, law in draws))
    assert abs(z) <= 5, f"the counts are {z:.1f} standard deviations off"


@grades("adaptive_test", points=3)
def test_adaptive_test_resolution_and_private_release(adaptive_test):
    "Without options only reject is released; return_resolution gives a kappa = 2^j with j <= ceil(3 log2 N)."
    got = adaptive_test(X, Y, 1.0, rng=0, **OPTIONS)
    assert got.pvalue is None and got.statistic is None and got.null_distribution is None and got.resolution is None
    assert isinstance(got.reject, (bool, np.bool_))
    top = math.ceil(3 * math.log2(30))
    for seed in (0, 1):
        kappa = int(adaptive_test(X, Y, 1.0, rng=seed, return_resolution=True, **OPTIONS).resolution)
        assert kappa in {2 ** j for j in range(top + 1)}


@grades("adaptive_test", hidden=True)
def test_adaptive_test_rejects_bad_input(adaptive_test):
    "eps <= 0, points outside [0, 1], one point, too few permutations to ever reject: ValueError."
    assert refused(adaptive_test, X, Y, 0.0, **OPTIONS) == "ValueError"
    assert refused(adaptive_test, X, Y + 1, 1.0, **OPTIONS) == "ValueError"
    assert refused(adaptive_test, X[:1], Y, 1.0, **OPTIONS) == "ValueError"
    assert refused(adaptive_test, X, Y, 1.0, n_centering=19, n_permutations=5) == "ValueError"
