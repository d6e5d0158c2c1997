"""Tests for ldpbook.closeness (nbs/04_closeness.ipynb): exactness of the Rao–Blackwellized statistic, sensitivity, level,
privacy audits, reproducible parallel power curves, rates, every bad-input path, and the API shape (old call forms
warn and give the same results)."""
import dataclasses
from fractions import Fraction
from functools import partial
from itertools import combinations, product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from ldpbook.closeness import (
    SENSITIVITY, _figure2_sample, _hypergeom_pmf, _occupied_counts_fast, _occupied_counts_reference, _rb_cell_table,
    _rb_cell_values_reference, _split_from_table, _within_block_mad, bin_samples,
    dp_permutation_decision, dp_permutation_test, figure2, noisy_permutation_pvalue,
    smallest_n_permutations, minimax_separation, permutation_statistics, phase_exponents,
    power_curve, rb_statistic, sample_complexity, sample_sine_alternative, split_statistic, write_figure2_data)


# ------------------------------------------------------------------ exactness of the RB statistic
def rb_by_enumeration(x, y, k):
    "Average of the split statistic over every split: ordered pairs of disjoint m-blocks in each sample."
    m = min(len(x), len(y)) // 2

    def splits(n):
        for first in combinations(range(n), m):
            rest = [i for i in range(n) if i not in first]
            for second in combinations(rest, m):
                yield list(first), list(second)

    values = [_split_from_table(np.stack([np.bincount(x[a], minlength=k), np.bincount(x[b], minlength=k),
                                          np.bincount(y[c], minlength=k), np.bincount(y[e], minlength=k)], axis=1))
              for a, b in splits(len(x)) for c, e in splits(len(y))]
    return float(np.mean(values))


def test_hypergeom_pmf_matches_scipy():
    for population, successes, draws in [(10, 3, 4), (50, 20, 25), (7, 7, 3), (30, 0, 10), (1000, 400, 501),
                                         (5, 2, 5)]:
        lo, p = _hypergeom_pmf(population, successes, draws)
        x = np.arange(lo, lo + p.size)
        assert np.allclose(p, stats.hypergeom.pmf(x, population, successes, draws), rtol=1e-10, atol=1e-300)
        assert np.isclose(p.sum(), 1.0)


def test_within_block_mad_matches_direct_sum():
    for m in [1, 2, 3, 7, 20]:
        d = _within_block_mad(m)
        for s in range(2 * m + 1):
            h = np.arange(m + 1)
            assert np.isclose(d[s], np.sum(stats.hypergeom.pmf(h, 2 * m, s, m) * np.abs(2 * h - s)), atol=1e-13)


def test_rb_equals_exhaustive_enumeration():
    rng = np.random.default_rng(0)
    cases = [(np.array([0, 1]), np.array([1, 1]), 2), (np.array([0, 0, 1, 2, 2]), np.array([2, 2, 1, 0]), 3)]
    for _ in range(25):
        n_x, n_y, k = rng.integers(2, 7), rng.integers(2, 7), rng.integers(1, 5)
        cases.append((rng.integers(0, k, n_x), rng.integers(0, k, n_y), int(k)))
    for x, y, k in cases:
        assert np.isclose(rb_statistic(x, y, k=k), rb_by_enumeration(x, y, k), rtol=1e-12, atol=1e-12), (x, y, k)


def test_rb_equals_monte_carlo_average_of_split():
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 10, 200), rng.integers(0, 12, 333)
    draws = np.array([split_statistic(x, y, k=12, rng=rng) for _ in range(4000)])
    se = draws.std() / np.sqrt(draws.size)
    assert abs(draws.mean() - rb_statistic(x, y, k=12)) <= 4 * se


def test_rb_matches_direct_hypergeometric_summation():
    "An independent slow method: E|A - B| and D_N(u) by double sums over scipy's hypergeometric pmfs."
    rng = np.random.default_rng(2)
    n_x, n_y, k = 700, 603, 4
    x, y = rng.choice(k, n_x, p=[0.1, 0.2, 0.3, 0.4]), rng.integers(0, k, n_y)
    m = min(n_x, n_y) // 2
    total = 0.0
    for u, v in zip(np.bincount(x, minlength=k), np.bincount(y, minlength=k)):
        a, b = np.arange(m + 1), np.arange(m + 1)
        pa, pb = stats.hypergeom.pmf(a, n_x, u, m), stats.hypergeom.pmf(b, n_y, v, m)
        cross = pa @ np.abs(a[:, None] - b[None, :]) @ pb
        s = np.arange(2 * m + 1)
        d_m = np.array([np.sum(stats.hypergeom.pmf(np.arange(m + 1), 2 * m, t, m) * np.abs(2 * np.arange(m + 1) - t))
                        for t in s])
        total += 2 * cross - stats.hypergeom.pmf(s, n_x, u, 2 * m) @ d_m - stats.hypergeom.pmf(s, n_y, v, 2 * m) @ d_m
    assert np.isclose(rb_statistic(x, y, k=k), total, rtol=1e-9, atol=1e-8)


@settings(max_examples=40)
@given(st.lists(st.integers(0, 5), min_size=2, max_size=40), st.lists(st.integers(0, 5), min_size=2, max_size=40),
       st.permutations(range(6)))
def test_rb_symmetries(x, y, relabel):
    x, y, relabel = np.array(x), np.array(y), np.array(relabel)
    value = rb_statistic(x, y, k=6)
    assert np.isclose(value, rb_statistic(y, x, k=6), rtol=1e-10, atol=1e-10)          # swap the samples
    assert np.isclose(value, rb_statistic(relabel[x], relabel[y], k=6), rtol=1e-10, atol=1e-10)   # rename cells
    assert np.isclose(value, rb_statistic(x, y, k=9), rtol=1e-10, atol=1e-10)          # empty cells add nothing


def test_permutation_statistics_observed_equals_rb_statistic():
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 7, 90), rng.integers(0, 7, 120)
    perm = permutation_statistics(x, y, k=7, statistic_name="rb", n_permutations=50, rng=rng)
    assert np.isclose(perm.observed, rb_statistic(x, y, k=7), rtol=1e-12)
    assert perm.permuted.shape == (50,) and perm.sensitivity == 4.0


def test_occupied_counts_engine_equals_the_sort():
    "Dense labels go through one bincount per sample, sparse ones through the sort; both equal the reference."
    rng = np.random.default_rng(40)
    cases = [(rng.integers(0, 64, 1000), rng.integers(0, 64, 777)),                    # dense
             (rng.integers(0, 10 ** 12, 500), rng.integers(0, 10 ** 12, 300)),         # sparse: far above N
             (np.array([0, 2 ** 62]), np.array([5, 5, 2 ** 62])),                      # extreme labels
             (np.array([7, 7]), np.array([3]))]
    for x, y in cases:
        x, y = x.astype(np.int64), y.astype(np.int64)
        u, v = _occupied_counts_fast(x, y)
        cells = np.unique(np.r_[x, y])                                                  # independent: count directly
        assert np.array_equal(u, [(x == c).sum() for c in cells]) and np.array_equal(v, [(y == c).sum() for c in cells])
        ru, rv = _occupied_counts_reference(x, y)
        assert np.array_equal(u, ru) and np.array_equal(v, rv)


@pytest.mark.parametrize("n_x,n_y", [(1, 1), (2, 9), (40, 31), (7, 300), (301, 300), (1000, 1000)])
def test_full_cell_table_equals_the_reference(n_x, n_y):
    "The table of every pair (one matrix product) against the cell-by-cell reference, at its corners and inside."
    table = _rb_cell_table(n_x, n_y)
    assert table.shape == (n_x + 1, n_y + 1) and not table.flags.writeable
    rng = np.random.default_rng(n_x + n_y)
    u = np.r_[0, n_x, 0, n_x, 1, rng.integers(0, n_x + 1, 40)]
    v = np.r_[0, n_y, n_y, 0, 0, rng.integers(0, n_y + 1, 40)]
    reference = _rb_cell_values_reference(u, v, n_x, n_y)
    assert np.allclose(table[u, v], reference, rtol=1e-10, atol=1e-9)


def test_large_sample_rb_table_path_agrees():
    "Above the dense-table size the values are computed directly; both paths agree with rb_statistic."
    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 50, 3000), rng.integers(0, 50, 2500)           # (3001 * 2501) > 2**22: no dense table
    assert _rb_cell_table(3000, 2500) is None
    perm = permutation_statistics(x, y, k=50, statistic_name="rb", n_permutations=3, rng=rng)
    assert np.isclose(perm.observed, rb_statistic(x, y, k=50), rtol=1e-12)


# ------------------------------------------------------------------ sensitivity, exhaustively
def all_data_sets(n_x, n_y, k):
    return np.array(list(product(range(k), repeat=n_x + n_y)), dtype=np.int64)


def neighbour_index(n_total, k):
    "For each data set index (base-k digits), the indices of all neighbours (one digit changed)."
    index = np.arange(k ** n_total)
    out = []
    for j in range(n_total):
        weight = k ** (n_total - 1 - j)
        digit = (index // weight) % k
        for shift in range(1, k):
            out.append(index + (((digit + shift) % k) - digit) * weight)
    return np.stack(out, axis=1)


@pytest.mark.parametrize("n_x,n_y,k", [(2, 2, 3), (3, 4, 3), (4, 4, 3), (4, 3, 2), (2, 4, 4)])
def test_split_sensitivity_exhaustive(n_x, n_y, k):
    """Every data set, every neighbour, for a fixed split: |Z(D) - Z(D')| <= 4 (and 4 is attained).

    One split suffices: every split is a relabelling of records, and the set of all data sets is invariant under it."""
    data = all_data_sets(n_x, n_y, k)
    m = min(n_x, n_y) // 2
    blocks = [data[:, :m], data[:, m:2 * m], data[:, n_x:n_x + m], data[:, n_x + m:n_x + 2 * m]]
    counts = np.stack([np.stack([(b == i).sum(axis=1) for i in range(k)], axis=1) for b in blocks], axis=-1)
    z = _split_from_table(counts)
    change = np.abs(z[:, None] - z[neighbour_index(n_x + n_y, k)]).max()
    assert change <= SENSITIVITY["split"]
    if m >= 1 and k >= 2:
        assert change == 4


@pytest.mark.parametrize("n_x,n_y,k", [(2, 2, 3), (3, 4, 3), (4, 4, 3), (4, 3, 2), (2, 4, 4)])
def test_rb_sensitivity_exhaustive(n_x, n_y, k):
    data = all_data_sets(n_x, n_y, k)
    u = np.stack([(data[:, :n_x] == i).sum(axis=1) for i in range(k)], axis=1)
    v = np.stack([(data[:, n_x:] == i).sum(axis=1) for i in range(k)], axis=1)
    zbar = _rb_cell_table(n_x, n_y)[u, v].sum(axis=1)
    for i in [0, len(data) // 3, len(data) - 1]:
        assert np.isclose(zbar[i], rb_statistic(data[i, :n_x], data[i, n_x:], k=k), rtol=1e-12, atol=1e-12)
    change = np.abs(zbar[:, None] - zbar[neighbour_index(n_x + n_y, k)]).max()
    assert change <= SENSITIVITY["rb"] + 1e-9


# ------------------------------------------------------------------ level
@pytest.mark.parametrize("statistic", ["rb", "split"])
@pytest.mark.parametrize("eps", [0.5, np.inf])
def test_level_under_null(statistic, eps):
    p = np.array([0.4, 0.25, 0.15, 0.1, 0.06, 0.04])

    def sample(n, rng):
        return rng.choice(6, n, p=p), rng.choice(6, n + 7, p=p)

    test = partial(dp_permutation_test, eps=eps, k=6, statistic_name=statistic, n_permutations=39, alpha=0.05)
    pc = power_curve(test, sample, [40], n_reps=400, rng=20 + int(np.isinf(eps)), progress=False)
    assert pc.rejection_rate[0] <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 400)


# ------------------------------------------------------------------ privacy
def test_eps_inf_is_the_plain_permutation_test():
    rng = np.random.default_rng(5)
    x, y = rng.integers(0, 5, 60), rng.integers(0, 5, 60)
    res = dp_permutation_test(x, y, np.inf, k=5, n_permutations=99, rng=6, return_nonprivate=True)
    expected = (1 + np.sum(res.null_distribution >= res.statistic - 1e-9)) / 100
    assert res.pvalue == expected and res.noise_scale == 0.0 and res.private_fields == ()
    assert res.reject == (expected <= 0.05)


def test_nonprivate_fields_only_on_request():
    rng = np.random.default_rng(7)
    x, y = rng.integers(0, 4, 30), rng.integers(0, 4, 30)
    res = dp_permutation_test(x, y, 1.0, k=4, rng=1)
    assert res.pvalue is None and res.statistic is None and res.null_distribution is None
    assert res.private_fields == ("reject",) and "pvalue" in res.nonprivate_fields
    assert res.noise_scale == 8.0
    full = dp_permutation_test(x, y, 1.0, k=4, rng=1, return_nonprivate=True)
    assert full.reject == res.reject and full.pvalue is not None and full.null_distribution.shape == (199,)


def pvalue_law(observed, permuted, eps, sensitivity):
    "Exact law of noisy_permutation_pvalue: P(p = (1 + j)/(B + 1)), by quadrature over the observed statistic's noise."
    scale, permuted = 2 * sensitivity / eps, np.asarray(permuted, float)

    def integrand(z, j):
        q_all = stats.laplace.sf(observed + z - permuted, scale=scale)
        law = np.zeros(permuted.size + 1)
        law[0] = 1.0
        for q in q_all:
            law[1:] = law[1:] * (1 - q) + law[:-1] * q
            law[0] *= 1 - q
        return law[j] * stats.laplace.pdf(z, scale=scale)

    edges = np.r_[-np.inf, np.sort(np.r_[0.0, permuted - observed]), np.inf]
    return np.array([sum(integrate.quad(integrand, a, b, args=(j,), epsabs=0, epsrel=1e-10, limit=200)[0]
                         for a, b in zip(edges[:-1], edges[1:])) for j in range(permuted.size + 1)])


def test_threshold_events_are_dp_exactly():
    "Exact laws for random statistics and worst-case shifts: every {p <= t} and {p > t} within e^eps."
    rng = np.random.default_rng(8)
    eps, delta = 1.0, 1.0
    for _ in range(8):
        b = int(rng.integers(1, 4))
        t = rng.uniform(-8, 8, b + 1)
        shift = rng.choice([-delta, delta], b + 1)
        law, law2 = pvalue_law(t[0], t[1:], eps, delta), pvalue_law(t[0] + shift[0], t[1:] + shift[1:], eps, delta)
        for c in range(b):
            for p1, p2 in [(law[:c + 1].sum(), law2[:c + 1].sum()), (law[c + 1:].sum(), law2[c + 1:].sum())]:
                assert p1 <= np.exp(eps) * p2 * (1 + 1e-7) and p2 <= np.exp(eps) * p1 * (1 + 1e-7)


def test_pvalue_itself_is_not_dp():
    "The documented counterexample: a point mass of the p-value moves by more than e^eps (why it is not released)."
    law = pvalue_law(0.0, [12.0, 6.107, 6.107], 1.0, 1.0)
    law2 = pvalue_law(-1.0, [11.0, 7.107, 7.107], 1.0, 1.0)
    assert law[1] / law2[1] > np.e * 1.02


@pytest.mark.parametrize("statistic", ["rb", "split"])
def test_privacy_audit(statistic):
    """Monte Carlo audit over the test's own randomness, for the neighbouring pair (one y changed) that moves the
    observed statistic most: P(reject | D) <= e^eps P(reject | D') and vice versa, up to Monte Carlo error."""
    eps, alpha, b, n_runs = 1.0, 0.25, 19, 3000
    x = np.array([0, 0, 0, 1, 1, 1])
    y = np.array([2, 2, 2, 3, 3, 0])
    base = rb_statistic(x, y, k=4)
    best, y_best = -1.0, None
    for j in range(y.size):
        for value in range(4):
            y2 = y.copy()
            y2[j] = value
            change = abs(rb_statistic(x, y2, k=4) - base)
            if change > best:
                best, y_best = change, y2
    rng = np.random.default_rng(9)
    rates = [np.mean([dp_permutation_test(x, yy, eps, k=4, statistic_name=statistic, n_permutations=b, alpha=alpha,
                                      rng=rng).reject for _ in range(n_runs)])
             for yy in (y, y_best)]
    p, q = rates
    se = np.sqrt(p * (1 - p) / n_runs + np.exp(2 * eps) * q * (1 - q) / n_runs)
    assert p <= np.exp(eps) * q + 4 * se and q <= np.exp(eps) * p + 4 * se
    assert 1 - p <= np.exp(eps) * (1 - q) + 4 * se and 1 - q <= np.exp(eps) * (1 - p) + 4 * se
    assert abs(p - q) > 0.01            # the pair does move the decision: the audit is not vacuous


# ------------------------------------------------------------------ power_curve: serial == joblib == dask
_sample_pair = partial(_figure2_sample, n=40, kappa=5)      # importable by worker processes (loky, dask)


def test_power_curve_serial_joblib_dask_identical():
    test = partial(dp_permutation_test, eps=1.0, k=5, n_permutations=19)
    kwargs = dict(grid=[0.0, 0.6], n_reps=24, rng=123, progress=False)
    serial = power_curve(test, _sample_pair, n_jobs=1, **kwargs)
    pooled = power_curve(test, _sample_pair, n_jobs=2, chunk_size=5, **kwargs)
    assert np.array_equal(serial.rejection_rate, pooled.rejection_rate)
    distributed = pytest.importorskip("distributed")
    import joblib
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        with joblib.parallel_config(backend="dask"):
            on_dask = power_curve(test, _sample_pair, n_jobs=2, chunk_size=3, **kwargs)
    assert np.array_equal(serial.rejection_rate, on_dask.rejection_rate)
    assert serial.rejection_rate[1] > serial.rejection_rate[0]


def test_power_curve_vector_decisions_and_seeds():
    def sample(p, rng):
        return (rng.random(3) < p,)

    def test(flips, rng):
        return flips

    a = power_curve(test, sample, [0.2, 0.8], n_reps=50, rng=np.random.SeedSequence(5), progress=False)
    b = power_curve(test, sample, [0.2, 0.8], n_reps=50, rng=5, progress=False, chunk_size=3)
    assert a.rejection_rate.shape == (2, 3) and np.array_equal(a.rejection_rate, b.rejection_rate)
    assert a.entropy == 5
    c = power_curve(test, sample, [0.2, 0.8], n_reps=50, rng=np.random.default_rng(5), progress=False)
    assert c.rejection_rate.shape == (2, 3)


def test_figure2_small_run_shapes():
    f = figure2(n_reps=2, r_values=(0.0, 0.5), eps_values=(1.0, np.inf), n=60, kappa=4, n_permutations=19,
                progress=False)
    assert f.labels == ("split eps=1", "split eps=inf", "RB eps=1", "RB eps=inf")
    assert f.power.rejection_rate.shape == (2, 4)


# ------------------------------------------------------------------ binning, sampling, rates
def test_bin_samples():
    assert bin_samples(np.array([0.0, 0.1249, 0.125, 0.5, 1.0]), 8).tolist() == [0, 0, 1, 4, 7]
    pts = np.random.default_rng(10).random((500, 3))
    labels = bin_samples(pts, 4)
    j = np.minimum(np.floor(pts * 4), 3).astype(int)
    assert np.array_equal(labels, j[:, 0] * 16 + j[:, 1] * 4 + j[:, 2])
    assert bin_samples([0.3, 0.7], 1).tolist() == [0, 0]


def test_sine_alternative_density():
    pts = sample_sine_alternative(200_000, 0.5, rng=11)
    edges = np.linspace(0, 1, 17)
    expected = np.diff(edges + 0.5 / 8 * (1 - np.cos(4 * np.pi * edges)))        # CDF x + r (1 - cos 4 pi x) / 8
    observed = np.histogram(pts, edges)[0] / pts.size
    assert np.all(np.abs(observed - expected) < 5 * np.sqrt(expected / pts.size))


def test_rates():
    r, eps = np.geomspace(1e-3, 0.5, 9)[:, None], np.geomspace(1e-3, 10, 7)[None, :]
    for s, d in [(0.5, 4), (1.0, 1), (3.0, 2)]:
        assert np.allclose(minimax_separation(sample_complexity(r, eps, s, d).n, eps, s, d).rate, r, rtol=1e-9)
        alpha = np.linspace(0, 1, 200_001)
        pe = phase_exponents(alpha, s, d)
        assert np.allclose(alpha[1:][np.diff(pe.phase) != 0], list(pe.crossings.values()), atol=1e-5)
        assert (2 in set(pe.phase.tolist())) == (4 * s < d)
    ms = minimax_separation(1e6, np.inf, 1.0, 1)
    assert ms.dominant == 1 and np.isclose(ms.rate, 1e6 ** -0.4)
    assert minimax_separation(1e4, 1e-4, 1.0, 1).dominant == 4


# ------------------------------------------------------------------ bad input
X, Y = np.array([0, 1, 2, 1]), np.array([1, 1, 0, 2])


@pytest.mark.parametrize("kwargs,error", [
    (dict(eps=0.0), ValueError), (dict(eps=-1.0), ValueError), (dict(eps=np.nan), ValueError),
    (dict(eps="1"), TypeError), (dict(eps=1.0, alpha=0.0), ValueError), (dict(eps=1.0, alpha=1.0), ValueError),
    (dict(eps=1.0, alpha=1.5), ValueError), (dict(eps=1.0, alpha=np.nan), ValueError),
    (dict(eps=1.0, alpha=-0.1), ValueError), (dict(eps=1.0, statistic_name="chi2"), ValueError),
    (dict(eps=1.0, statistic_name=3), TypeError), (dict(eps=1.0, n_permutations=10), ValueError), (dict(eps=1.0, n_permutations=0), ValueError),
    (dict(eps=1.0, n_permutations=9.5), TypeError), (dict(eps=1.0, k=0), ValueError),
    (dict(eps=1.0, return_nonprivate="yes"), TypeError), (dict(eps=1.0, rng="seed"), TypeError),
])
def test_dp_permutation_test_bad_parameters(kwargs, error):
    with pytest.raises(error):
        dp_permutation_test(X, Y, **kwargs)


@pytest.mark.parametrize("x,y,k,error", [
    (np.array([], dtype=int), Y, 3, ValueError), (X, np.array([], dtype=int), 3, ValueError),
    (np.array([0]), Y, 3, ValueError),                                   # fewer than 2 observations
    (np.array([0, 3, 1]), Y, 3, ValueError), (np.array([0, -1, 1]), Y, 3, ValueError),
    (X, np.array([0, 5]), 3, ValueError), (np.array([0.0, 1.0, 2.0]), Y, 3, TypeError),
    (np.array([0.5, 1.0]), Y, None, TypeError), (np.array([True, False]), Y, 3, TypeError),
    (np.array([[0, 1], [1, 0]]), Y, 3, ValueError), (X, Y, 2.5, TypeError),
])
def test_bad_samples_every_entry_point(x, y, k, error):
    with pytest.raises(error):
        rb_statistic(x, y, k=k)
    with pytest.raises(error):
        split_statistic(x, y, k=k, rng=0)
    with pytest.raises(error):
        dp_permutation_test(x, y, 1.0, k=k)
    with pytest.raises(error):
        permutation_statistics(x, y, k=k)


@pytest.mark.parametrize("x,kappa,error", [
    ([0.2, 0.4], 0, ValueError), ([0.2, 0.4], -2, ValueError), ([0.2, 0.4], 2.0, TypeError),
    ([0.2, 1.01], 4, ValueError), ([-0.01, 0.5], 4, ValueError), ([[0.2, 1.5]], 4, ValueError),
    ([0.2, np.nan], 4, ValueError), (np.zeros((2, 2, 2)), 4, ValueError), ([], 4, ValueError),
    (["a", "b"], 4, TypeError), ([True, False], 4, TypeError), (np.zeros((2, 40)), 4, ValueError),
])
def test_bin_samples_bad_input(x, kappa, error):
    with pytest.raises(error):
        bin_samples(x, kappa)


@pytest.mark.parametrize("call,error", [
    (lambda: minimax_separation(0, 1.0, 1.0, 1), ValueError),
    (lambda: minimax_separation(100, 0.0, 1.0, 1), ValueError),
    (lambda: minimax_separation(100, np.nan, 1.0, 1), ValueError),
    (lambda: minimax_separation(100, 1.0, -1.0, 1), ValueError),
    (lambda: minimax_separation(100, 1.0, 1.0, 0), ValueError),
    (lambda: minimax_separation(100, 1.0, 1.0, 1.5), TypeError),
    (lambda: minimax_separation(np.inf, 1.0, 1.0, 1), ValueError),
    (lambda: sample_complexity(-0.1, 1.0, 1.0, 1), ValueError),
    (lambda: sample_complexity("0.1", 1.0, 1.0, 1), TypeError),
    (lambda: phase_exponents(1.2, 1.0, 1), ValueError),
    (lambda: phase_exponents(-0.1, 1.0, 1), ValueError),
    (lambda: phase_exponents(np.nan, 1.0, 1), ValueError),
    (lambda: phase_exponents(0.5, np.inf, 1), ValueError),
    (lambda: noisy_permutation_pvalue(1.0, [0.5], 1.0, sensitivity=0.0), ValueError),
    (lambda: noisy_permutation_pvalue(1.0, [], 1.0, sensitivity=4.0), ValueError),
    (lambda: noisy_permutation_pvalue(1.0, [0.5], -1.0, sensitivity=4.0), ValueError),
    (lambda: noisy_permutation_pvalue(np.nan, [0.5], 1.0, sensitivity=4.0), ValueError),
    (lambda: noisy_permutation_pvalue(1.0, [0.5, np.inf], 1.0, sensitivity=4.0), ValueError),
    (lambda: noisy_permutation_pvalue(1.0, [0.5, np.nan], np.inf, sensitivity=4.0), ValueError),
    (lambda: noisy_permutation_pvalue("1", [0.5], 1.0, sensitivity=4.0), TypeError),
    (lambda: dp_permutation_decision(1.0, np.zeros(39), 1.0, sensitivity=4.0, alpha=0.02), ValueError),
    (lambda: figure2(n_reps=1, n_permutations=9), ValueError),
    (lambda: sample_sine_alternative(10, 0.7), ValueError),
    (lambda: sample_sine_alternative(10, -0.1), ValueError),
    (lambda: sample_sine_alternative(0, 0.1), ValueError),
    (lambda: sample_sine_alternative(10, "r"), TypeError),
    (lambda: power_curve("test", _sample_pair, [0.1]), TypeError),
    (lambda: power_curve(dp_permutation_test, 3, [0.1]), TypeError),
    (lambda: power_curve(dp_permutation_test, _sample_pair, []), ValueError),
    (lambda: power_curve(dp_permutation_test, _sample_pair, [0.1], n_reps=0), ValueError),
    (lambda: power_curve(lambda x, y, rng: 0.5, _sample_pair, [0.1], n_reps=1, progress=False), TypeError),
    (lambda: power_curve(dp_permutation_test, _sample_pair, [0.1], rng=-3), ValueError),
    (lambda: figure2(n_reps=1, eps_values=(0.0,)), ValueError),
    (lambda: figure2(n_reps=1, alpha=2.0), ValueError),
])
def test_other_bad_input(call, error):
    with pytest.raises(error):
        call()


def test_public_rb_cell_values_sum_to_the_statistic_and_validate():
    from ldpbook.closeness import rb_cell_values
    rng = np.random.default_rng(11)
    x, y = rng.integers(0, 6, 40), rng.integers(0, 6, 31)
    u, v = np.bincount(x, minlength=6), np.bincount(y, minlength=6)
    assert rb_cell_values(u, v, 40, 31).sum() == pytest.approx(rb_statistic(x, y, k=6), rel=1e-12, abs=1e-12)
    assert rb_cell_values(u[None, :].repeat(3, 0), v[None, :].repeat(3, 0), 40, 31).shape == (3, 6)
    with pytest.raises(ValueError, match="counts must satisfy"):
        rb_cell_values(np.array([41]), np.array([0]), 40, 31)
    with pytest.raises(TypeError, match="u must be an array of 64-bit integers"):
        rb_cell_values(np.array([1.0]), np.array([0]), 40, 31)


# ------------------------------------------------------------------ misuse that used to pass silently
@pytest.mark.parametrize("alpha,smallest", [(0.05, 19), (0.01, 99), (0.1, 9), (0.25, 3), (0.5, 1), (0.3, 3),
                                            (0.049, 20), (1 / 3, 2)])
def test_smallest_n_permutations_is_the_smallest_that_can_reject(alpha, smallest):
    assert smallest_n_permutations(alpha) == smallest
    assert 1 / (smallest + 1) <= alpha and (smallest == 1 or 1 / smallest > alpha)
    x, y = np.array([0, 0, 0, 0]), np.array([1, 1, 1, 1])
    if smallest > 1:
        with pytest.raises(ValueError, match=f"n_permutations >= {smallest}"):
            dp_permutation_test(x, y, 1.0, n_permutations=smallest - 1, alpha=alpha)
    dp_permutation_test(x, y, 1.0, n_permutations=smallest, alpha=alpha)          # accepted


def test_nan_observed_statistic_is_an_error_not_a_rejection():
    with pytest.raises(ValueError, match="finite"):
        dp_permutation_decision(np.nan, np.zeros(99), np.inf, sensitivity=4.0)
    with pytest.raises(ValueError, match="finite"):
        dp_permutation_decision(0.0, np.r_[np.zeros(98), np.nan], 1.0, sensitivity=4.0)


def test_deprecated_names_still_work_and_warn():
    from ldpbook.closeness import dp_pvalue
    x, y = np.array([0, 1, 1, 2]), np.array([2, 2, 1, 0])
    with pytest.warns(DeprecationWarning, match="^ldpbook.*statistic_name") as record:
        old = dp_permutation_test(x, y, 1.0, statistic="split", rng=4, return_nonprivate=True)
    assert record[0].filename == __file__                         # the warning points at the caller
    new = dp_permutation_test(x, y, 1.0, statistic_name="split", rng=4, return_nonprivate=True)
    assert old.statistic_name == "split" and (old.pvalue, old.statistic) == (new.pvalue, new.statistic)
    with pytest.warns(DeprecationWarning, match="^ldpbook.*statistic_name"):
        old_perm = permutation_statistics(x, y, statistic="split", n_permutations=3, rng=2)
    new_perm = permutation_statistics(x, y, statistic_name="split", n_permutations=3, rng=2)
    assert _same(old_perm, new_perm)
    with pytest.warns(DeprecationWarning, match="^ldpbook.*dp_pvalue.*noisy_permutation_pvalue"):
        p = dp_pvalue(3.0, [1.0, 2.0, 5.0], 1.0, sensitivity=4.0, rng=5)
    assert p == noisy_permutation_pvalue(3.0, [1.0, 2.0, 5.0], 1.0, sensitivity=4.0, rng=5)
    with pytest.warns(DeprecationWarning, match="^ldpbook"):              # the old name and the old call form
        assert dp_pvalue(3.0, [1.0, 2.0, 5.0], 1.0, 4.0, 5) == p
    perm = permutation_statistics(x, y, statistic_name="rb", n_permutations=3, rng=1)
    with pytest.warns(DeprecationWarning, match="^ldpbook.*statistic_name"):
        assert perm.statistic == "rb"


def _same(a, b):
    "Equal results: numbers, arrays, tuples of arrays, or dataclasses field by field."
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, tuple) and a and isinstance(a[0], np.ndarray):
        return all(_same(u, v) for u, v in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b or (a != a and b != b)


def _coin_flip(p, rng):
    return (rng.random() < p,)


def _pass_flip(flip, rng):
    return bool(flip)


XS, YS = np.array([0, 1, 1, 2, 2, 2, 0, 1]), np.array([2, 2, 1, 0, 0, 0, 1, 2, 2])
OBSERVED, PERMUTED = 9.0, np.r_[np.zeros(18), 10.0]

# (function, old positional call, the same call in the new form): old forms of 0.1 that warn in 0.2.0
OLD_CALL_FORMS = [
    (split_statistic, lambda f: f(XS, YS, 3, 7), lambda f: f(XS, YS, k=3, rng=7)),
    (split_statistic, lambda f: f(XS, YS, None, rng=7), lambda f: f(XS, YS, rng=7)),
    (rb_statistic, lambda f: f(XS, YS, 3), lambda f: f(XS, YS, k=3)),
    (permutation_statistics, lambda f: f(XS, YS, 3, "split", 19, 5),
     lambda f: f(XS, YS, k=3, statistic_name="split", n_permutations=19, rng=5)),
    (permutation_statistics, lambda f: f(XS, YS, None, "rb", rng=5),
     lambda f: f(XS, YS, statistic_name="rb", rng=5)),
    (dp_permutation_test, lambda f: f(XS, YS, 1.0, 3, "rb", 19, 0.1, 4, True),
     lambda f: f(XS, YS, 1.0, k=3, statistic_name="rb", n_permutations=19, alpha=0.1, rng=4, return_nonprivate=True)),
    (dp_permutation_test, lambda f: f(XS, YS, 0.5, 3, n_permutations=39, rng=2),
     lambda f: f(XS, YS, 0.5, k=3, n_permutations=39, rng=2)),
    (noisy_permutation_pvalue, lambda f: f(OBSERVED, PERMUTED, 1.0, 4.0, 3),
     lambda f: f(OBSERVED, PERMUTED, 1.0, sensitivity=4.0, rng=3)),
    (noisy_permutation_pvalue, lambda f: f(OBSERVED, PERMUTED, np.inf, 4.0),
     lambda f: f(OBSERVED, PERMUTED, np.inf, sensitivity=4.0)),
    (dp_permutation_decision, lambda f: f(OBSERVED, PERMUTED, 2.0, 4.0, 0.1, 3),
     lambda f: f(OBSERVED, PERMUTED, 2.0, sensitivity=4.0, alpha=0.1, rng=3)),
    (dp_permutation_decision, lambda f: f(OBSERVED, PERMUTED, np.inf, 4.0, alpha=0.05),
     lambda f: f(OBSERVED, PERMUTED, np.inf, sensitivity=4.0, alpha=0.05)),
    (sample_sine_alternative, lambda f: f(30, 0.4, 8), lambda f: f(30, 0.4, rng=8)),
    (power_curve, lambda f: f(_pass_flip, _coin_flip, [0.2, 0.7], 40, 6, 1, None, False, 7),
     lambda f: f(_pass_flip, _coin_flip, [0.2, 0.7], n_reps=40, rng=6, n_jobs=1, backend=None, progress=False,
                 chunk_size=7)),
    (power_curve, lambda f: f(_pass_flip, _coin_flip, [0.5], 10, 6, progress=False, keep_decisions=True),
     lambda f: f(_pass_flip, _coin_flip, [0.5], n_reps=10, rng=6, progress=False, keep_decisions=True)),
]


@pytest.mark.parametrize("function,old,new", OLD_CALL_FORMS)
def test_old_positional_call_forms_warn_and_give_the_same_result(function, old, new):
    with pytest.warns(DeprecationWarning, match=f"^ldpbook .*{function.__name__} by position.*=\\.\\.\\.") as record:
        before = old(function)
    assert all(w.filename == __file__ for w in record)            # the warning points at the caller
    assert _same(before, new(function))


@pytest.mark.parametrize("call", [
    lambda: split_statistic(XS, YS, 3, 7, 1),                               # more positional arguments than ever
    lambda: rb_statistic(XS, YS, 3, 1),
    lambda: permutation_statistics(XS, YS, 3, "rb", 19, 5, "split"),        # statistic= was keyword-only
    lambda: dp_permutation_test(XS, YS, 1.0, 3, "rb", 19, 0.1, 4, True, "rb"),
    lambda: noisy_permutation_pvalue(OBSERVED, PERMUTED, 1.0, 4.0, 3, 1),
    lambda: dp_permutation_decision(OBSERVED, PERMUTED, 1.0, 4.0, 0.05, 3, 1),
    lambda: sample_sine_alternative(30, 0.4, 8, 1),
    lambda: power_curve(_pass_flip, _coin_flip, [0.5], 10, 6, 1, None, False, 7, True),   # keep_decisions
    lambda: figure2(2, (0.0,), (1.0,), 20, 4, 19, 0.05, 1, 1, None, False, 9),  # more than the 0.1 form (which warns)
    lambda: write_figure2_data("unused.csv", 2),
    lambda: dp_permutation_decision(OBSERVED, PERMUTED, 1.0),                # sensitivity is required
    lambda: noisy_permutation_pvalue(OBSERVED, PERMUTED, 1.0),
    lambda: rb_statistic(XS, YS, 3, k=3),                                    # the same option twice
])
def test_keyword_only_options_refuse_positional_use(call):
    with pytest.raises(TypeError):
        call()


def test_api_shape_of_the_module():
    "__all__ is the API: no figure helper, no old name, a numpy-style docstring for every function."
    import inspect
    import ldpbook.closeness as closeness
    helpers = {"FIGURE2_SETTINGS", "Figure2", "figure2", "write_figure2_data", "read_figure2_data", "dp_pvalue"}
    assert not helpers & set(closeness.__all__)
    for name in helpers:
        assert hasattr(closeness, name)                                      # importable all the same
    functions = [getattr(closeness, name) for name in closeness.__all__ if inspect.isfunction(getattr(closeness, name))]
    assert len(functions) >= 18                  # type hints and keyword-only options: tests/test_api_shape.py
    for function in functions:
        assert "Parameters\n    ----------" in function.__doc__ and "Returns\n    -------" in function.__doc__, \
            function.__name__


def test_no_argument_or_field_name_suggests_a_private_pvalue():
    import ldpbook.closeness as closeness
    assert "not an" in closeness.noisy_permutation_pvalue.__doc__.lower()
    assert "not ε-dp" in closeness.dp_pvalue.__doc__.lower()
    res = dp_permutation_test(np.array([0, 1, 1, 2]), np.array([2, 2, 1, 0]), 1.0, rng=None)
    assert res.private_fields == ("reject",) and res.pvalue is None and "pvalue" in res.nonprivate_fields


# ------------------------------------------------------------------ memory grows with occupied cells, not with k
def test_huge_labels_and_huge_k_use_memory_of_the_occupied_cells():
    import tracemalloc
    x = np.array([0, 10 ** 9, 10 ** 9, 5])
    y = np.array([10 ** 9, 3, 3, 0])
    tracemalloc.start()
    try:
        values = [rb_statistic(x, y), rb_statistic(x, y, k=10 ** 9 + 1), split_statistic(x, y, rng=1),
                  dp_permutation_test(x, y, 1.0, k=2 * 10 ** 9, rng=2).reject,
                  dp_permutation_test(x, y, 1.0, statistic_name="split", rng=2).reject]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2 ** 20, f"peak {peak / 2 ** 20:.0f} MiB"
    small = np.array([0, 3, 3, 2]), np.array([3, 1, 1, 0])          # the same data with labels renamed
    assert np.isclose(values[0], rb_statistic(*small), rtol=1e-12, atol=1e-12)
    assert np.isclose(values[1], values[0], rtol=1e-12, atol=1e-12)


def test_power_curve_backend_dask_string_on_a_local_cluster():
    "The documented call: power_curve(..., backend='dask') on a dask.distributed LocalCluster = serial = loky."
    distributed = pytest.importorskip("distributed")
    test = partial(dp_permutation_test, eps=1.0, k=5, n_permutations=19)
    kwargs = dict(grid=[0.0, 0.6], n_reps=12, rng=321, progress=False)
    serial = power_curve(test, _sample_pair, **kwargs)
    loky = power_curve(test, _sample_pair, n_jobs=2, backend="loky", chunk_size=4, **kwargs)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        on_dask = power_curve(test, _sample_pair, n_jobs=2, backend="dask", chunk_size=3, **kwargs)
    assert np.array_equal(serial.rejection_rate, loky.rejection_rate)
    assert np.array_equal(serial.rejection_rate, on_dask.rejection_rate)
    with pytest.raises(ValueError, match="backend"):
        power_curve(test, _sample_pair, backend="no-such-backend", **kwargs)


# ------------------------------------------------------------------ shipped full-size data cannot drift from the code
def test_shipped_figure2_data_recomputes_from_recorded_seeds():
    "Random rows of data/figure2.csv are recomputed from the recorded root seed: every decision must match."
    import pathlib
    from ldpbook.closeness import _figure2_setup, one_repetition, read_figure2_data
    path = pathlib.Path(__file__).resolve().parents[1] / "data" / "figure2.csv"
    fig, settings = read_figure2_data(path)
    assert settings["n_reps"] == 5000 and fig.power.decisions.shape == (len(fig.r_values), 5000, len(fig.labels))
    _, _, labels, sample, test = _figure2_setup(fig.r_values, fig.eps_values, settings["n"], settings["kappa"],
                                                settings["n_permutations"], settings["alpha"])
    assert labels == fig.labels
    chosen = np.random.default_rng()                     # different rows on every run
    for _ in range(3):
        g, j = int(chosen.integers(len(fig.r_values))), int(chosen.integers(settings["n_reps"]))
        again = one_repetition(test, sample, fig.r_values[g], settings["entropy"], settings["spawn_key"], g, j)
        assert np.array_equal(again, fig.power.decisions[g, j]), f"row r_index={g}, rep={j} differs"


def test_power_curve_keeps_decisions_that_sum_to_the_rates():
    test = partial(dp_permutation_test, eps=1.0, k=5, n_permutations=19)
    a = power_curve(test, _sample_pair, [0.0, 0.6], n_reps=10, rng=4, progress=False, chunk_size=3,
                    keep_decisions=True)
    b = power_curve(test, _sample_pair, [0.0, 0.6], n_reps=10, rng=4, progress=False)
    assert a.decisions.shape == (2, 10) and np.array_equal(a.decisions.mean(axis=1), b.rejection_rate)
    assert b.decisions is None


@pytest.mark.parametrize("alpha", [1e-9, 1e-20, 1e-25, 3e-100, 1e-300, 5e-324])
def test_smallest_n_permutations_at_tiny_levels_is_exact_and_bounded(alpha):
    "A bisection between 0 and ⌈1/α⌉ − 1 (exact rationals): the minimum of the rounded test, for any float α."
    smallest = smallest_n_permutations(alpha)
    assert 1 / (smallest + 1) <= alpha < 1 / smallest
    assert 2 * (smallest + 1) * Fraction(alpha) >= 1                 # not far below 1/α either
    x, y = np.array([0, 0, 0, 0]), np.array([1, 1, 1, 1])
    with pytest.raises(ValueError, match="n_permutations >= "):      # refused at once, no hang
        dp_permutation_test(x, y, 1.0, alpha=alpha)


# ------------------------------------------------------------------ rate functions at extreme sizes (mpmath)
def _rate_terms_mp(N, eps, s, d):
    "The four terms of the rate in arbitrary precision (eps = inf: the privacy terms are 0)."
    import mpmath as mp
    N, s = mp.mpf(N), mp.mpf(s)
    if np.isinf(eps):
        return [N ** (-2 * s / (4 * s + d)), mp.mpf(0), mp.mpf(0), mp.mpf(0)]
    eps = mp.mpf(eps)
    return [N ** (-2 * s / (4 * s + d)), (N * mp.sqrt(eps)) ** (-2 * s / (2 * s + d)),
            (N ** 1.5 * eps) ** (-2 * s / (4 * s + d)), 1 / (N * eps)]


def _sample_terms_mp(r, eps, s, d):
    import mpmath as mp
    r, s = mp.mpf(r), mp.mpf(s)
    first = r ** (-(4 * s + d) / (2 * s))
    if np.isinf(eps):
        return [first, mp.mpf(0), mp.mpf(0), mp.mpf(0)]
    eps = mp.mpf(eps)
    return [first, eps ** -0.5 * r ** (-(2 * s + d) / (2 * s)), eps ** (-mp.mpf(2) / 3) * r ** (-(4 * s + d) / (3 * s)),
            1 / (eps * r)]


def _binned_terms_mp(kappa, N, eps, s, d):
    import mpmath as mp
    kappa, N, s = mp.mpf(kappa), mp.mpf(N), mp.mpf(s)
    head = [kappa ** -s, kappa ** (mp.mpf(d) / 4) / mp.sqrt(N)]
    if np.isinf(eps):
        return head + [mp.mpf(0)] * 3
    eps = mp.mpf(eps)
    return head + [kappa ** (mp.mpf(d) / 2) / (N * mp.sqrt(eps)), kappa ** (mp.mpf(d) / 4) / (N ** 0.75 * mp.sqrt(eps)),
                   1 / (N * eps)]


def _agrees(value, exact) -> bool:
    "A float against an mpmath value: 1e-9 relative inside the float range, inf above it, 0 or tiny below it."
    if exact > np.finfo(float).max:
        return value == np.inf
    if exact < 1e-300:
        return 0 <= value < 1e-290
    return bool(np.isfinite(value)) and abs(value - float(exact)) <= 1e-9 * float(exact)


def test_rate_functions_are_exact_at_extreme_sizes():
    """minimax_separation, sample_complexity and binned_rate_terms against mpmath where N^(3/2), N eps, a power of r
    or of kappa leave the float range although the terms do not (and with eps = inf): never NaN, never a
    privacy term lost to an overflow, and the dominant term is the largest exact one."""
    from ldpbook.closeness import binned_rate_terms
    import mpmath as mp
    mp.mp.dps = 40
    rng = np.random.default_rng(2026)
    cases = [(1e250, 1e-246, 0.01, 1), (1e300, 1e-299, 0.05, 2), (1e-300, 1e300, 1.0, 1), (1e250, np.inf, 0.01, 1)]
    cases += [(10.0 ** rng.uniform(-5, 300), 10.0 ** rng.uniform(-300, 300), float(rng.choice([0.01, 0.5, 3.0])),
               int(rng.choice([1, 3]))) for _ in range(300)]
    for N, eps, s, d in cases:
        ms, exact = minimax_separation(N, eps, s, d), _rate_terms_mp(N, eps, s, d)
        assert all(_agrees(v, e) for v, e in zip(ms.terms.ravel(), exact)), (N, eps, s, d, ms.terms.ravel())
        top = sorted(exact, reverse=True)
        if top[0] > top[1] * (1 + 1e-6):
            assert ms.dominant == 1 + exact.index(top[0]), (N, eps, s, d)
        r = 10.0 ** rng.uniform(-300, 300) if N > 1e6 else 10.0 ** rng.uniform(-3, 0.3)
        sc = sample_complexity(r, eps, s, d)
        assert not np.isnan(sc.n) and all(_agrees(v, e) for v, e in zip(sc.terms.ravel(),
                                                                          _sample_terms_mp(r, eps, s, d))), (r, eps, s, d)
        kappa = 10.0 ** rng.uniform(0, 300)
        assert all(_agrees(v, e) for v, e in zip(binned_rate_terms(kappa, N, eps, s, d).ravel(),
                                                  _binned_terms_mp(kappa, N, eps, s, d))), (kappa, N, eps, s, d)


def test_lower_bound_transport_mechanism_gives_the_rate_term():
    """The chapter's transport mechanism: with the transport bound eps sqrt(N KL / 2) and KL ~ N^2 kappa^-(4s+d), the
    largest undetectable bump height kappa^-s is the rate's third term (up to a constant); the bound without the
    square root, eps N KL, would give (N^(3/2) sqrt(eps))^(-2s/(4s+d)) instead. The chapter must state the first."""
    import json
    from pathlib import Path
    for s, d in [(0.5, 1), (2.0, 3)]:
        ratios = []
        for N, eps in [(1e4, 1.0), (1e8, 1e-3), (1e12, 1e-6)]:
            kappa_sqrt = (eps * N ** 1.5 / np.sqrt(2)) ** (2 / (4 * s + d))     # eps sqrt(N N^2 kappa^-(4s+d) / 2) = 1
            kappa_plain = (eps * N ** 3) ** (1 / (4 * s + d))                   # eps N N^2 kappa^-(4s+d) = 1
            term = minimax_separation(N, eps, s, d).terms[2]
            ratios.append((kappa_sqrt ** -s / term, kappa_plain ** -s / term))
        ratios = np.array(ratios)
        assert np.allclose(ratios[:, 0], ratios[0, 0], rtol=1e-9)                # a constant: the theorem's term
        assert not np.allclose(ratios[:, 1], ratios[0, 1], rtol=1e-3)            # not without the square root
    notebook = json.loads((Path(__file__).parents[1] / "nbs" / "04_closeness.ipynb").read_text())
    text = next("".join(c["source"]) for c in notebook["cells"] if c.get("id") == "ch4-030")
    transport = text[text.index("Private hypercube transport"):text.index("Linear privacy")]
    assert r"\sqrt{\tfrac N2\,D_{\mathrm{kl}}" in transport
    assert "at most $\\varepsilon N\\,D_{\\mathrm{kl}}" not in transport.replace("\n   ", " ")


def test_chapter_does_not_claim_that_no_test_works_when_n_eps_is_below_one():
    """For N eps < 1 the rate is of constant order, but private tests still beat chance: at N eps = 0.9 a
    Laplace-noised count (eps-DP) tells f = g = delta_0 from f = delta_0, g = delta_1 (L1 distance 2) with power 0.12
    at level 0.05. The chapter must not say that no test can separate anything."""
    import json
    from pathlib import Path
    rng = np.random.default_rng(0)
    N, eps = 9, 0.1                                                    # N eps = 0.9
    threshold = np.log(10) / eps                                       # P(Laplace(1/eps) > threshold) = 0.05
    x, y = np.zeros(N, int), np.ones(N, int)
    count = (x == 0).sum() - (y == 0).sum()                            # 0 under the null, 9 here; sensitivity 1
    power = np.mean(count + rng.laplace(0, 1 / eps, 40000) > threshold)
    assert power > 0.1 and abs(power - 0.5 * np.exp(-(threshold - count) * eps)) < 0.01
    notebook = json.loads((Path(__file__).parents[1] / "nbs" / "04_closeness.ipynb").read_text())
    text = next("".join(c["source"]) for c in notebook["cells"] if c.get("id") == "ch4-005").replace("\n", " ")
    assert "no test can separate" not in text and "constant order" in text
