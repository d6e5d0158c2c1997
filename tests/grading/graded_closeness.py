"""Tests written for grading the closeness chapter (`ldpbook.closeness`).

Each test grades one function, which it receives as its only argument (the student's function, called in another
process, with int seeds as `rng`). The Rao-Blackwellized statistic is checked against the average of the split
statistic over every split, enumerated here (in hidden tests only: it would compute the assigned function; the
visible ones check values worked out by hand). The noise of the DP permutation test is checked by its law, not by its
draws: given the statistics T_0 (observed) and T_1..T_B (permuted), the count C = #{b : T_b + xi_b >= T_0 + xi_0}
behind the p-value (1 + C)/(B + 1) has a known mean and variance when the xi are i.i.d. Laplace of scale s
(`count_law`, exact up to a quadrature error below 1e-6). Over many seeds, the standardised sum of C - E[C] must stay
within 5 (a correct function fails with probability about 1e-6 whatever order it draws its noise in); noise of scale
s/2, or none, moves it far beyond.
"""
import itertools
import math

import numpy as np

from ldpbook.assignments import grades, refused
from ldpbook.closeness import rb_statistic as verified_rb_statistic   # tested against brute force in test_closeness


# ---------------------------------------------------------------------------- the law of the noisy rank count C
def laplace_sf(x):
    "P(Z >= x) for a standard Laplace Z, elementwise."
    x = np.asarray(x, dtype=float)
    return np.where(x >= 0, 0.5 * np.exp(-np.abs(x)), 1 - 0.5 * np.exp(-np.abs(x)))


def count_law(observed, permuted, scale, n_grid=20000):
    "Mean and variance of C = #{b : T_b + xi_b >= T_0 + xi_0}, xi i.i.d. Laplace(scale), by quadrature over xi_0."
    gap = observed - np.asarray(permuted, dtype=float)              # C counts xi_b - xi_0 >= gap_b
    if scale == 0:
        return float(np.sum(gap <= 0)), 0.0
    u = (np.arange(n_grid) + 0.5) / n_grid                          # quantiles of xi_0 / scale
    z = np.where(u < 0.5, np.log(2 * u), -np.log(2 - 2 * u))
    pi = laplace_sf(gap[None, :] / scale + z[:, None])
    mean, var = pi.sum(axis=1), (pi * (1 - pi)).sum(axis=1)
    return float(mean.mean()), float((var + mean ** 2).mean() - mean.mean() ** 2)


def count_from_pvalue(pvalue, B):
    "C from p = (1 + C)/(B + 1); the p-value must be one of these values."
    count = pvalue * (B + 1) - 1
    assert abs(count - round(count)) <= 1e-6 and 0 <= round(count) <= B, f"{pvalue} is not (1 + C)/(B + 1)"
    return round(count)


def standardised_deviation(draws):
    "sum (C - E[C]) / sqrt(sum Var[C]) over draws (C, (mean, variance))."
    total = sum(c - law[0] for c, law in draws)
    spread = math.sqrt(sum(law[1] for _, law in draws))
    return total / spread


# ---------------------------------------------------------------------------------------------- rb_statistic
def split_statistic_average(x, y):
    "The average of Kim's split statistic over every split: ordered pairs of disjoint n-blocks of each sample."
    x, y = list(x), list(y)
    n = min(len(x), len(y)) // 2
    cells = sorted(set(x) | set(y))

    def halves(sample):
        for first in itertools.combinations(range(len(sample)), n):
            rest = [i for i in range(len(sample)) if i not in first]
            for second in itertools.combinations(rest, n):
                yield ([sum(sample[i] == c for i in first) for c in cells],
                       [sum(sample[i] == c for i in second) for c in cells])

    total, count = 0, 0
    y_halves = list(halves(y))
    for x1, x2 in halves(x):
        for y1, y2 in y_halves:
            total += sum(abs(a - c) + abs(b - d) - abs(a - b) - abs(c - d) for a, b, c, d in zip(x1, x2, y1, y2))
            count += 1
    return total / count


SAMPLES = [([0, 1, 1, 2], [0, 0, 1, 2]), ([0, 0, 0, 1, 1], [1, 1, 2, 2]), ([3, 3, 0, 1], [0, 1, 2, 3, 3, 5]),
           ([0, 0, 1, 1], [2, 2, 3, 3]), ([4, 4, 4, 4], [4, 4, 4, 4, 4])]


@grades("rb_statistic", points=2)
def test_rb_statistic_examples(rb_statistic):
    """Every split gives the same Z here: samples in two different cells, Z = 2 + 2 + 2 + 2 = 8; everything in one
    cell, Z = 0. A negative cell is refused."""
    assert math.isclose(rb_statistic([0, 0, 0, 0], [1, 1, 1, 1]), 8.0, rel_tol=1e-12)
    assert abs(rb_statistic([4, 4, 4, 4], [4, 4, 4, 4, 4])) <= 1e-12
    assert refused(rb_statistic, [0, -1], [0, 1]) == "ValueError", "a negative cell must be refused"


@grades("rb_statistic", points=3, hidden=True)
def test_rb_statistic_is_the_average_over_all_splits(rb_statistic):
    "Exactly the average of the split statistic over every split of small samples (up to 6 and 7: 2800 splits)."
    for x, y in SAMPLES + [([0, 1, 1, 2, 2, 2], [0, 0, 1, 3, 3, 2, 2])]:
        expected = split_statistic_average(x, y)
        assert math.isclose(rb_statistic(x, y), expected, rel_tol=1e-9, abs_tol=1e-12), f"x={x}, y={y}"


@grades("rb_statistic")
def test_rb_statistic_invariances(rb_statistic):
    "Unchanged by swapping the samples, reordering them, renaming the cells, or passing k."
    rng = np.random.default_rng(4)
    for _ in range(4):
        x, y = rng.integers(0, 5, size=9), rng.integers(0, 5, size=7)
        value = rb_statistic(x, y)
        rename = rng.permutation(50)[:5]
        assert math.isclose(rb_statistic(y, x), value, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(rb_statistic(rng.permutation(x), rng.permutation(y)), value, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(rb_statistic(rename[x], rename[y]), value, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(rb_statistic(x, y, k=5), value, rel_tol=1e-9, abs_tol=1e-12)


@grades("rb_statistic", hidden=True)
def test_rb_statistic_sensitivity_at_most_4(rb_statistic):
    "Replacing one observation moves the statistic by at most 4."
    rng = np.random.default_rng(7)
    for _ in range(6):
        x, y = rng.integers(0, 4, size=10), rng.integers(0, 4, size=10)
        x2 = x.copy()
        x2[rng.integers(10)] = rng.integers(4)
        assert abs(rb_statistic(x, y) - rb_statistic(x2, y)) <= 4 + 1e-9


@grades("rb_statistic", hidden=True)
def test_rb_statistic_rejects_bad_input(rb_statistic):
    "A sample of one observation, negative labels, labels >= k: ValueError; float labels: ValueError or TypeError."
    assert refused(rb_statistic, [0, 1], [0]) == "ValueError"
    assert refused(rb_statistic, [0, -1], [0, 1]) == "ValueError"
    assert refused(rb_statistic, [0, 1, 5], [0, 1], k=3) == "ValueError"
    assert refused(rb_statistic, [0.5, 1.0], [0, 1]) in ("ValueError", "TypeError")


# --------------------------------------------------------------------------------- noisy_permutation_pvalue
T0, TB = 3.0, np.array([-6.0, -2.5, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 3.0, 4.5, 5.0, 8.0, -3.0, 1.5, 2.5, 6.0, -0.5,
                        0.0, 9.0])


@grades("noisy_permutation_pvalue", points=2)
def test_noisy_permutation_pvalue_without_noise_counts_ties_against_the_null(noisy_permutation_pvalue):
    "eps = inf: p = (1 + #{b : T_b >= T_0})/(B + 1), ties counted."
    assert noisy_permutation_pvalue(0.0, [1.0, -1.0, 0.0, 2.0], np.inf, sensitivity=1.0) == 0.8
    assert noisy_permutation_pvalue(10.0, [1.0, -1.0, 0.0, 2.0], np.inf, sensitivity=1.0) == 0.2
    assert noisy_permutation_pvalue(-5.0, [1.0, -1.0, 0.0, 2.0], np.inf, sensitivity=1.0) == 1.0
    assert noisy_permutation_pvalue(T0, TB, np.inf, sensitivity=4.0) == (1 + np.sum(TB >= T0)) / 20


@grades("noisy_permutation_pvalue", points=3)
def test_noisy_permutation_pvalue_adds_laplace_noise_of_scale_2_delta_over_eps(noisy_permutation_pvalue):
    "Over 300 seeds, the rank count behind p follows its law under Laplace noise of scale 2 Delta / eps."
    for eps, delta in [(1.0, 2.0), (0.5, 1.0), (4.0, 4.0)]:
        scale = 2 * delta / eps
        permuted = np.full(19, -1.5 * scale)            # every T_b 1.5 noise scales below T_0 = 0: the most telling
        law = count_law(0.0, permuted, scale)
        draws = [(count_from_pvalue(noisy_permutation_pvalue(0.0, permuted, eps, sensitivity=delta, rng=seed), 19), law)
                 for seed in range(300)]
        z = standardised_deviation(draws)
        assert abs(z) <= 5, f"eps={eps}, Delta={delta}: the counts are {z:.1f} standard deviations off"


@grades("noisy_permutation_pvalue", hidden=True)
def test_noisy_permutation_pvalue_is_reproducible_and_varies_with_the_seed(noisy_permutation_pvalue):
    "The same int seed gives the same p-value; different seeds give different ones."
    values = [noisy_permutation_pvalue(T0, TB, 0.5, sensitivity=4.0, rng=seed) for seed in range(20)]
    assert values == [noisy_permutation_pvalue(T0, TB, 0.5, sensitivity=4.0, rng=seed) for seed in range(20)]
    assert len(set(values)) >= 4


@grades("noisy_permutation_pvalue", hidden=True)
def test_noisy_permutation_pvalue_rejects_bad_input(noisy_permutation_pvalue):
    "eps <= 0, sensitivity <= 0, a NaN statistic, no permuted statistic: ValueError."
    for args, delta in [((0.0, [1.0, 2.0], 0.0), 1.0), ((0.0, [1.0, 2.0], -1.0), 1.0), ((0.0, [1.0, 2.0], 1.0), 0.0),
                        ((float("nan"), [1.0, 2.0], 1.0), 1.0), ((0.0, [], 1.0), 1.0)]:
        assert refused(noisy_permutation_pvalue, *args, sensitivity=delta) == "ValueError", (args, delta)


# ---------------------------------------------------------------------------------- dp_permutation_decision
def reject_probability(observed, permuted_value, B, alpha, scale, n_grid=20000):
    """P(p <= alpha) when every T_b equals `permuted_value`, the xi i.i.d. Laplace(scale): given xi_0, C is
    binomial, and p <= alpha means C <= floor(alpha (B + 1)) - 1."""
    from scipy.stats import binom
    largest = math.floor(alpha * (B + 1) + 1e-9) - 1
    u = (np.arange(n_grid) + 0.5) / n_grid
    z = np.where(u < 0.5, np.log(2 * u), -np.log(2 - 2 * u))
    return float(binom.cdf(largest, B, laplace_sf((observed - permuted_value) / scale + z)).mean())


@grades("dp_permutation_decision", points=2)
def test_dp_permutation_decision_without_noise(dp_permutation_decision):
    "eps = inf: reject iff (1 + #{T_b >= T_0})/(B + 1) <= alpha, ties counted against the null; alpha > 1 refused."
    assert refused(dp_permutation_decision, 0.0, TB, np.inf, sensitivity=4.0, alpha=1.5) == "ValueError"
    for observed, alpha in [(3.0, 0.05), (3.0, 0.4), (5.5, 0.1), (-10.0, 0.5), (9.0, 0.05), (10.0, 0.05)]:
        expected = (1 + np.sum(TB >= observed)) / 20 <= alpha
        assert bool(dp_permutation_decision(observed, TB, np.inf, sensitivity=4.0, alpha=alpha)) == expected, \
            (observed, alpha)


@grades("dp_permutation_decision", points=3, hidden=True)
def test_dp_permutation_decision_rejects_as_often_as_laplace_noise_of_scale_2_delta_over_eps(dp_permutation_decision):
    "Over 300 seeds, the number of rejections matches its law under Laplace noise of scale 2 Delta / eps."
    for eps, delta in [(1.0, 2.0), (0.5, 1.0)]:
        scale = 2 * delta / eps
        permuted = np.full(19, -scale)                 # every T_b one noise scale below T_0 = 0: the most telling
        chance = reject_probability(0.0, -scale, 19, 0.25, scale)
        rejections = sum(bool(dp_permutation_decision(0.0, permuted, eps, sensitivity=delta, alpha=0.25, rng=seed))
                         for seed in range(300))
        z = (rejections - 300 * chance) / math.sqrt(300 * chance * (1 - chance))
        assert abs(z) <= 5, f"eps={eps}, Delta={delta}: {rejections} rejections, {300 * chance:.0f} expected"


@grades("dp_permutation_decision")
def test_dp_permutation_decision_is_a_reproducible_bool(dp_permutation_decision):
    "A bool; the same int seed gives the same decision; over seeds both decisions occur near the threshold."
    decisions = [dp_permutation_decision(0.0, np.full(19, -4.0), 1.0, sensitivity=2.0, alpha=0.25, rng=seed)
                 for seed in range(30)]
    assert all(isinstance(d, (bool, np.bool_)) for d in decisions)
    assert decisions == [dp_permutation_decision(0.0, np.full(19, -4.0), 1.0, sensitivity=2.0, alpha=0.25, rng=seed)
                         for seed in range(30)]
    assert 0 < sum(map(bool, decisions)) < 30


@grades("dp_permutation_decision", hidden=True)
def test_dp_permutation_decision_refuses_a_test_that_cannot_reject(dp_permutation_decision):
    "1/(B + 1) > alpha, alpha outside (0, 1), eps <= 0: ValueError; 1/(B + 1) = alpha can reject, and does."
    assert dp_permutation_decision(100.0, np.zeros(19), np.inf, sensitivity=1.0, alpha=0.05)
    assert refused(dp_permutation_decision, 0.0, np.zeros(5), 1.0, sensitivity=1.0, alpha=0.05) == "ValueError"
    assert refused(dp_permutation_decision, 0.0, np.zeros(19), 1.0, sensitivity=1.0, alpha=1.5) == "ValueError"
    assert refused(dp_permutation_decision, 0.0, np.zeros(19), 0.0, sensitivity=1.0) == "ValueError"


# -------------------------------------------------------------------------------------- dp_permutation_test
X_DIFF = [0, 0, 0, 1, 1, 0, 2, 0, 1, 0, 0, 3, 0, 1, 0, 0, 2, 0, 0, 1]
Y_DIFF = [3, 2, 3, 3, 1, 3, 2, 3, 2, 3, 3, 0, 3, 2, 3, 3, 1, 2, 3, 3]


@grades("dp_permutation_test", points=2)
def test_dp_permutation_test_without_noise(dp_permutation_test):
    """eps = inf, return_nonprivate: T_0 is the RB statistic, p = (1 + #{T_b >= T_0})/(B + 1), reject iff p <= alpha;
    without return_nonprivate, none of them is released."""
    for x, y in [(X_DIFF, Y_DIFF), (X_DIFF[:10], X_DIFF[10:])]:
        for seed in (0, 1):
            got = dp_permutation_test(x, y, np.inf, n_permutations=39, alpha=0.1, rng=seed, return_nonprivate=True)
            null = np.asarray(got.null_distribution, dtype=float)
            assert null.shape == (39,)
            assert math.isclose(got.statistic, verified_rb_statistic(x, y), rel_tol=1e-9, abs_tol=1e-12)
            assert math.isclose(got.pvalue, (1 + np.sum(null >= got.statistic - 1e-9)) / 40, rel_tol=1e-12)
            assert bool(got.reject) == (got.pvalue <= 0.1)
    private = dp_permutation_test(X_DIFF, Y_DIFF, np.inf, n_permutations=39, alpha=0.1, rng=0)
    assert private.pvalue is None and private.statistic is None and private.null_distribution is None


@grades("dp_permutation_test")
def test_dp_permutation_test_permuted_statistics_are_relabellings(dp_permutation_test):
    "Each T_b is the RB statistic of some relabelling of the pooled sample into samples of the same sizes."
    x, y = [0, 0, 1], [1, 2, 2]
    pooled = x + y
    possible = [verified_rb_statistic([pooled[i] for i in c], [pooled[i] for i in range(6) if i not in c])
                for c in itertools.combinations(range(6), 3)]
    got = dp_permutation_test(x, y, 1.0, n_permutations=19, rng=3, return_nonprivate=True)
    for t in np.asarray(got.null_distribution, dtype=float):
        assert min(abs(t - s) for s in possible) <= 1e-9, f"{t} is not the statistic of a relabelling"


@grades("dp_permutation_test", points=3, hidden=True)
def test_dp_permutation_test_adds_laplace_noise_of_scale_8_over_eps(dp_permutation_test):
    "noise_scale = 8/eps, and over 250 seeds the rank count behind p follows its law under that noise."
    for eps in (0.5, 1.0):                             # noise of the size of T_0 - T_b here: the most telling
        draws = []
        for seed in range(250):
            got = dp_permutation_test(X_DIFF, Y_DIFF, eps, n_permutations=19, rng=seed, return_nonprivate=True)
            assert math.isclose(got.noise_scale, 8 / eps, rel_tol=1e-12)
            assert bool(got.reject) == (got.pvalue <= 0.05)
            law = count_law(got.statistic, np.asarray(got.null_distribution, dtype=float), 8 / eps, n_grid=4000)
            draws.append((count_from_pvalue(got.pvalue, 19), law))
        z = standardised_deviation(draws)
        assert abs(z) <= 5, f"eps={eps}: the counts are {z:.1f} standard deviations off"


@grades("dp_permutation_test", hidden=True)
def test_dp_permutation_test_releases_only_the_decision(dp_permutation_test):
    "Without return_nonprivate, pvalue, statistic and null_distribution are None; reject is a bool."
    got = dp_permutation_test(X_DIFF, Y_DIFF, 1.0, rng=0)
    assert got.pvalue is None and got.statistic is None and got.null_distribution is None
    assert isinstance(got.reject, (bool, np.bool_))


@grades("dp_permutation_test", hidden=True)
def test_dp_permutation_test_rejects_bad_input(dp_permutation_test):
    "eps <= 0, alpha outside (0, 1), too few permutations to ever reject at alpha: ValueError."
    assert refused(dp_permutation_test, X_DIFF, Y_DIFF, 0.0) == "ValueError"
    assert refused(dp_permutation_test, X_DIFF, Y_DIFF, 1.0, alpha=1.5) == "ValueError"
    assert refused(dp_permutation_test, X_DIFF, Y_DIFF, 1.0, n_permutations=5) == "ValueError"
