"""Foundations against independent references (mpmath at 60 digits, fractions.Fraction): the Hellinger terms of
masses below 1e-154, whose difference squares below the float range, and E_γ for a γ that is not a power of two,
whose u − γv cancels the rounding of γ·v."""
import itertools
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from ldpbook.foundations import (_exact_draws, divergence, divergence_terms, is_ldp, ldp_epsilon, perspective,
                                 privatize, randomized_response)

MPMATH_DPS = 60                    # the mpmath precision of every test in this file (tests/conftest.py)


def hellinger_reference(u, v):
    return sum((mp.sqrt(mp.mpf(float(a))) - mp.sqrt(mp.mpf(float(b)))) ** 2 for a, b in zip(u, v))


@pytest.mark.parametrize("scale", [1e-150, 1e-207, 1e-300, 5e-310])
def test_hellinger_of_tiny_masses_does_not_underflow(scale):
    "The term (√a − √b)² of a = 1.04·s, b = s is about 4e-4·s, far inside the float range for every s here."
    u = np.array([1.0 - 1.04 * scale, 1.04 * scale])
    v = np.array([1.0 - scale, scale])
    expected = hellinger_reference(u, v)
    assert expected > 1e-314
    got = divergence(u, v, kind="hellinger")
    assert abs(mp.mpf(got) - expected) <= 1e-12 * expected + 5e-324, (got, float(expected))   # subnormal: ± its ulp
    terms = divergence_terms(u[1:], v[1:], u[1:] - v[1:], kind="hellinger")
    one = hellinger_reference(u[1:], v[1:])
    assert abs(mp.mpf(float(terms[0])) - one) <= 1e-12 * one + 5e-324


def egamma_reference(u, v, gamma):
    "Σ [u − γv]₊ in rational arithmetic on the stored floats."
    g = Fraction(gamma)
    return sum(max(Fraction(float(a)) - g * Fraction(float(b)), Fraction(0)) for a, b in zip(u, v))


@pytest.mark.parametrize("u, v, gamma", [
    ([0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3], 1.5),          # γ·v rounds to u: an excess of 5.6e-17 vanished
    ([0.45, 0.55], [0.45 / 1.7, 1 - 0.45 / 1.7], 1.7),
    ([0.6, 0.4], [0.6 / 2.9, 1 - 0.6 / 2.9], 2.9),
])
def test_egamma_near_the_boundary_is_exact(u, v, gamma):
    expected = egamma_reference(u, v, gamma)
    assert expected > 0
    got = divergence(u, v, kind="egamma", gamma=gamma)
    assert abs(Fraction(got) - expected) <= Fraction(1, 10 ** 13) * expected, (got, float(expected))


def test_egamma_at_random_near_ties_agrees_with_fractions():
    "u_i within a few ulps of γ·v_i for all but the last symbol: the excess is of the size of the rounding of γ·v."
    rng = np.random.default_rng(3)
    for _ in range(300):
        m = int(rng.integers(2, 6))
        gamma = float(rng.uniform(1.0, 3.0))
        u = np.append(0.5 * rng.dirichlet(np.ones(m - 1)), 0.5)
        v = u[:-1] / gamma * (1 + 1e-15 * rng.standard_normal(m - 1))
        v = np.append(v, 1 - v.sum())
        expected = egamma_reference(u, v, gamma)
        got = divergence(u, v, kind="egamma", gamma=gamma)
        assert abs(Fraction(got) - expected) <= Fraction(1, 10 ** 13) * expected, (got, float(expected))


def cell_shares(row, K):
    "Exact probabilities of each output given U in the cell [K, K + 1)·2^-53 (Fraction), by exact inversion."
    T = [Fraction(0)] + list(itertools.accumulate(Fraction(float(v)) for v in row))
    S, lo, hi = T[-1], Fraction(K, 2 ** 53), Fraction(K + 1, 2 ** 53)
    return [max(Fraction(0), min(hi, T[j + 1] / S) - max(lo, T[j] / S)) * 2 ** 53 for j in range(len(row))]


@pytest.mark.parametrize("row, boundary", [
    ([0.5, 1e-17, 2e-17, 0.5 - 3e-17], 1),                 # three boundaries inside one cell, masses below it
    (list(randomized_response(2, 37.0)[0]), 1),             # the boundary 1 − 8.5e-17 of binary RR at ε = 37
    ([0.3, 0.3, 0.4 + 5e-10], 1),                           # a row summing to 1 only within the tolerance
])
def test_draws_in_a_straddling_cell_follow_the_exact_conditional_law(row, boundary):
    """Every draw is given the same u: the cell that holds the exact boundary C_boundary. The refinement must pick
    each output with the length of its interval inside the cell (a Monte Carlo check at 5 standard errors)."""
    row = np.array(row)
    T = list(itertools.accumulate(Fraction(float(v)) for v in row))
    K = int(T[boundary - 1] / T[-1] * 2 ** 53)
    shares = cell_shares(row, K)
    assert sum(shares) == 1 and sum(s > 0 for s in shares) >= 2          # the cell straddles
    n = 20_000
    got = _exact_draws(row[None, :], np.zeros(n, dtype=np.intp), np.random.default_rng(5), u=np.full(n, K * 2.0 ** -53))
    counts = np.bincount(got, minlength=row.size)
    for j, s in enumerate(shares):
        p = float(s)
        if p == 0:
            assert counts[j] == 0
        else:
            assert abs(counts[j] / n - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12, (j, counts[j] / n, p)


def exactly_ldp(Q, eps):
    "max_x Q ≤ e^ε·min_x Q in every column, in 60-digit arithmetic on the stored floats."
    E = mp.exp(mp.mpf(float(eps)))
    return all(mp.mpf(float(col.max())) <= E * mp.mpf(float(col.min())) for col in np.asarray(Q).T)


def test_ldp_epsilon_is_the_smallest_float_for_which_the_channel_is_exactly_ldp():
    """ldp_epsilon(Q) is the smallest ε for which Q is ε-LDP: as a float, the smallest one that passes the exact
    check (is_ldp with rtol=0). A rounded log(max) − log(min) falls below the true value about half the time."""
    rng = np.random.default_rng(12)
    channels = [rng.dirichlet(np.ones(int(rng.integers(2, 5))), size=int(rng.integers(2, 5))) for _ in range(150)]
    channels += [randomized_response(k, e) for k in (2, 3, 7) for e in (1e-9, 0.3, 1.0, 2.5, 40.0, 700.0)]
    channels += [np.array([[0.5, 0.5], [0.5, 0.5]]), np.array([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]]),
                 np.array([[0.5, 0.5], [np.nextafter(0.5, 1.0), np.nextafter(0.5, 0.0)]]),     # ε ≈ 2.2e-16
                 np.array([[1.0, 5e-324], [5e-324, 1.0]]),                                     # ε ≈ 744.4
                 np.array([[1.0 - 1e-300, 1e-300], [1e-300, 1.0 - 1e-300]])]
    for Q in channels:
        eps = ldp_epsilon(Q)
        assert exactly_ldp(Q[:, Q.max(axis=0) > 0], eps), eps
        assert is_ldp(Q, eps, rtol=0)
        if eps > 0:
            assert not exactly_ldp(Q[:, Q.max(axis=0) > 0], np.nextafter(eps, 0.0)), eps


def test_chi2_perspective_of_small_masses_does_not_underflow():
    "(a − b)²/b for a, b far below 1e-154, whose (a − b)² is below the float range though the term is not."
    a = np.array([1e-200, 3e-160, 1e-300, 0.0, 0.5, 1e-20])
    b = np.array([1e-300, 1e-170, 2e-300, 1e-300, 0.25, 3e-20])
    got = perspective(a, b, kind="chi2")
    for x, y, g in zip(a, b, got):
        want = (mp.mpf(float(x)) - mp.mpf(float(y))) ** 2 / mp.mpf(float(y))
        assert abs(mp.mpf(float(g)) - want) <= 1e-13 * want, (x, y, g, float(want))


def test_exact_draws_of_many_rows_in_any_order_agree_with_rational_inversion():
    """Several rows (masses over 300 decades, zeros), draws of all rows interleaved, u at and next to every exact
    boundary: a cell inside one exact interval gives its output, a straddling cell one of the outputs it meets."""
    rng = np.random.default_rng(9)
    decided = straddling = 0
    for _ in range(25):
        k, m = int(rng.integers(2, 6)), int(rng.integers(1, 30))
        Q = 10.0 ** -rng.uniform(0, rng.choice([1, 20, 300]), (k, m))
        Q[rng.random((k, m)) < 0.3] = 0.0
        Q[np.arange(k), rng.integers(0, m, k)] = 1.0
        Q = Q / Q.sum(axis=1, keepdims=True)
        T = [list(itertools.accumulate(Fraction(float(v)) for v in Q[r])) for r in range(k)]
        cells = []
        for r in range(k):
            for t in T[r][:-1]:
                K0 = int(t / T[r][-1] * 2 ** 53)
                cells += [(r, K) for K in range(K0 - 2, K0 + 3) if 0 <= K < 2 ** 53]
            cells += [(r, int(K)) for K in rng.integers(0, 2 ** 53, 10, dtype=np.int64)] + [(r, 0), (r, 2 ** 53 - 1)]
        cells = [cells[i] for i in rng.permutation(len(cells))]
        rows = np.array([r for r, _ in cells], dtype=np.intp)
        got = _exact_draws(Q, rows, np.random.default_rng(0), u=np.array([K * 2.0 ** -53 for _, K in cells]))
        for (r, K), g in zip(cells, got):
            shares = cell_shares(Q[r], K)
            if max(shares) == 1:
                decided += 1
                assert shares[g] == 1, (r, K, g)
            else:
                straddling += 1
                assert shares[g] > 0, (r, K, g)
    assert decided > 1000 and straddling > 100


def test_privatize_of_an_empty_list_is_an_empty_release():
    "An empty list of symbols (numpy reads it as float64) is no data, not a type error; an empty float array is."
    y = privatize([], randomized_response(3, 1.0), rng=0)
    assert y.shape == (0,) and y.dtype == np.int64
    assert privatize([[], []], randomized_response(3, 1.0), rng=0).shape == (2, 0)
    with pytest.raises(TypeError, match="x must be an array of 64-bit integers"):
        privatize(np.array([], dtype=float), randomized_response(3, 1.0), rng=0)


def on_a_dyadic_grid(p):
    "p rounded to multiples of 2^-50 with the last entry taking the rest: its entries sum to 1 exactly."
    q = np.round(p * 2 ** 50) / 2 ** 50
    q[-1] = 0.0
    q[-1] = 1 - q.sum()
    assert sum(Fraction(float(x)) for x in q) == 1
    return q


@pytest.mark.parametrize("alpha", [1e4, 1e6, 1e8, 1e10])
def test_renyi_of_a_large_order_between_close_distributions(alpha):
    """D_α for α up to 1e10 and u, v within 1e-4…1e-9 relative: α·(log u − log v) cancelled (errors up to 1e-6
    relative at α = 1e10). Vectors that sum to 1 exactly, so that the reference (mpmath, 100 digits) is unambiguous."""
    rng = np.random.default_rng(int(alpha) % 1000)
    with mp.workdps(100):
        for _ in range(20):
            m = int(rng.integers(2, 6))
            u = rng.dirichlet(np.ones(m))
            v = u * (1 + rng.choice([1e-4, 1e-6, 1e-9]) * rng.standard_normal(m))
            u, v = on_a_dyadic_grid(u), on_a_dyadic_grid(v / v.sum())
            a = mp.mpf(alpha)
            want = mp.log(sum(mp.mpf(float(x)) ** a * mp.mpf(float(y)) ** (1 - a) for x, y in zip(u, v))) / (a - 1)
            got = divergence(u, v, kind="renyi", renyi_order=alpha)
            assert abs(mp.mpf(got) - want) <= 1e-13 * abs(want), (alpha, got, float(want))


def test_hellinger_perspective_of_close_masses():
    "(√a − √b)² for a, b 1e-13 apart: subtracting the rounded roots lost three digits."
    a = np.array([0.5 + 2 ** -43, 1e-200 * (1 + 1e-9), 0.3, 0.0])
    b = np.array([0.5, 1e-200, 0.7, 0.2])
    got = perspective(a, b, kind="hellinger")
    for x, y, g in zip(a, b, got):
        want = (mp.sqrt(mp.mpf(float(x))) - mp.sqrt(mp.mpf(float(y)))) ** 2
        assert abs(mp.mpf(float(g)) - want) <= 1e-13 * want, (x, y, g, float(want))


def test_kl_perspective_of_close_masses():
    "a·log(a/b) for close and for tiny masses (scipy.special.rel_entr), and the conventions for zero masses."
    a = np.array([0.3 + 1e-13, 0.1 + 3e-14, 1e-300 * (1 + 1e-12), 0.3, 1e-300, 0.5])
    b = np.array([0.3, 0.1, 1e-300, 0.7, 0.6, 1e-310])
    got = perspective(a, b, kind="kl")
    for x, y, g in zip(a, b, got):
        want = mp.mpf(float(x)) * mp.log(mp.mpf(float(x)) / mp.mpf(float(y)))
        assert abs(mp.mpf(float(g)) - want) <= 1e-13 * abs(want) + 5e-324, (x, y, g, float(want))
    assert list(perspective([0.0, 0.0, 0.5], [0.5, 0.0, 0.0], kind="kl")) == [0.0, 0.0, np.inf]


@pytest.mark.parametrize("alpha", [0.5, 2.0, 10.0])
def test_renyi_perspective_of_close_masses(alpha):
    "(a^α b^(1−α) − b)/(α − 1) for a ≈ b: the difference of the rounded power and b lost up to all but two digits."
    a = np.array([0.3 + 1e-13, 0.7 * (1 + 3e-9), 1e-200 * (1 + 1e-12), 0.3, 1e-300])
    b = np.array([0.3, 0.7, 1e-200, 0.7, 0.5])
    got = perspective(a, b, kind="renyi", renyi_order=alpha)
    L = mp.mpf(alpha)
    for x, y, g in zip(a, b, got):
        want = (mp.mpf(float(x)) ** L * mp.mpf(float(y)) ** (1 - L) - mp.mpf(float(y))) / (L - 1)
        assert abs(mp.mpf(float(g)) - want) <= 1e-13 * abs(want), (x, y, g, float(want))
