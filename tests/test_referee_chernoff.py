"""Referee tests of ldpbook.chernoff: inputs the first test file did not reach, each checked against an independent
reference (exact arithmetic or a hand-derived value)."""
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ldpbook.chernoff import chernoff_information, chernoff_optimal, interval_upper_bound, spr_chernoff_information
from ldpbook.foundations import is_ldp

MPMATH_DPS = 50                    # the mpmath precision of every test in this file (tests/conftest.py)


@pytest.mark.parametrize("a, b", [(0.6, 0.4), (1.0, 0.0), (0.5, 0.5 - 1e-9)])
def test_interval_upper_bound_refuses_a_reversed_interval(a, b):
    # [a, b] with b < a is empty: there is no maximum to bound. Before, (0.6, 0.4) with H = 0.1 at both ends
    # returned 2.8e-17, an "upper bound" below the values of H it was given.
    with pytest.raises(ValueError, match="b"):
        interval_upper_bound(a, b, 0.1, 0.1, 1.0, 1.0)


def test_interval_upper_bound_of_a_point_is_at_least_the_given_values():
    # [a, a] is one point: the bound on H there can be no smaller than either value handed in for H(a)
    assert interval_upper_bound(0.4, 0.4, 0.1, 0.2, 1.0, 1.0) >= 0.2
    assert interval_upper_bound(0.4, 0.4, 0.3, 0.3, 1.0, 1.0) == 0.3


def test_interval_upper_bound_against_a_dense_maximum():
    # max over λ of min(chord + (K/2)(λ−a)(b−λ), tent): every bound the theorem gives, on 10^5 points in exact
    # arithmetic; the function may return the smaller of the two maxima only if it is still above this
    rng = np.random.default_rng(3)
    for _ in range(40):
        a, b = np.sort(rng.uniform(0, 1, 2))
        H_a, H_b, L, K = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0, 3), rng.uniform(0, 10)
        lam = np.linspace(a, b, 100001)
        chord = H_a + (H_b - H_a) * (lam - a) / (b - a) + 0.5 * K * (lam - a) * (b - lam)
        tent = np.minimum(H_a + L * (lam - a), H_b + L * (b - lam))
        dense = np.minimum(chord, tent).max()
        got = interval_upper_bound(a, b, H_a, H_b, L, K)
        assert got >= dense - 1e-12
        assert got <= min(chord.max(), 0.5 * (H_a + H_b + L * (b - a))) + 1e-9


@pytest.mark.parametrize("u", [[0.2, 0.8], [0.4953619228095318, 0.5046380771904682], [1.0], [0.1, 0.0, 0.9]])
def test_chernoff_information_of_identical_laws_is_plus_zero(u):
    # C(u, u) = 0 exactly (the chapter's convention on total masses); it used to come out as -0.0, which prints
    # as "-0.0" and has a negative sign bit
    for value in (chernoff_information(u, u).value, spr_chernoff_information(u, u, 1.0, [[i] for i in range(len(u))]).value):
        assert value == 0.0 and math.copysign(1.0, value) == 1.0


def mp_contiguous_optimum(p, q, eps, partitions):
    """max over the given partitions of C(Qᵀp, Qᵀq) for their RR-on-blocks channels, in 50 digits and without
    forming 1 + (something of order 1e-300): −log Σ u^λ v^{1−λ} = −log1p(Σ_y (u^λ v^{1−λ} − λu − (1−λ)v)) for outputs
    whose masses are taken to sum to 1, maximised over λ by golden section; in 330 digits, as the order-one terms of
    a block holding the 1e-300 mass cancel to that order."""
    with mp.workdps(330):
        return +_mp_contiguous_optimum(p, q, eps, partitions)


def _mp_contiguous_optimum(p, q, eps, partitions):
    eps = mp.mpf(eps)
    w = mp.e ** (-eps)
    best = mp.mpf(0)
    for part in partitions:
        norm = 1 + (len(part) - 1) * w
        u = [(w + (1 - w) * mp.fsum(mp.mpf(float(p[i])) for i in b)) / norm for b in part]
        v = [(w + (1 - w) * mp.fsum(mp.mpf(float(q[i])) for i in b)) / norm for b in part]
        G = lambda l: -mp.log1p(mp.fsum(a ** l * b ** (1 - l) - l * a - (1 - l) * b for a, b in zip(u, v)))
        lo, hi, g = mp.mpf(0), mp.mpf(1), (mp.sqrt(5) - 1) / 2
        for _ in range(90):                       # λ to 1e-18: the value to far below 1e-12 relative
            x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
            lo, hi = (x1, hi) if G(x1) < G(x2) else (lo, x2)
        best = max(best, G(lo))
    return best


@pytest.mark.parametrize("eps", [690.0, 700.0, 708.3])
@pytest.mark.parametrize("p, q", [([1e-300, 1.0], [0.0, 1.0]), ([1e-300, 0.5, 0.5], [0.0, 0.5, 0.5]),
                                  ([1e-300, 0.3, 0.7], [0.0, 0.7, 0.3])])
def test_a_1e300_exclusive_mass_at_the_largest_eps(p, q, eps):
    # e^{−ε} is 2.2e-300 … 2.4e-308, so the 1e-300 mass that only p puts on symbol 0 is resolved (at ε = 700 its block
    # has likelihood ratio ≈ 1e4) and C* can be of order 1e-300: the value must still be right, achieved and certified
    parts = {2: [[[0], [1]], [[0, 1]]], 3: [[[0], [1], [2]], [[0, 1], [2]], [[0], [1, 2]], [[0, 2], [1]], [[1], [0, 2]],
                                         [[0, 1, 2]]]}[len(p)]
    ref = mp_contiguous_optimum(p, q, eps, parts)
    got = chernoff_optimal(np.array(p), np.array(q), eps)
    assert ref > 0 and abs(got.value - ref) <= 1e-9 * ref
    assert got.upper_bound >= ref * (1 - 1e-12) and got.gap <= 1e-8 * got.value
    achieved = mp_contiguous_optimum(p, q, eps, [[list(b) for b in got.partition]])
    assert abs(achieved - ref) <= 1e-9 * ref


def mp_optimum_over_contiguous(p, q, eps, ell=None):
    """C* from the 2^(k̄−1) LR-contiguous partitions with at most `ell` blocks (the chapter's swap theorem), each in
    100 digits, so to 1e-95 absolute (`inf` for disjoint supports): the outputs of
    RR on blocks (or, at ε = ∞, the block masses), their masses taken to sum to 1 (−log1p of the excess form)."""
    from ldpbook.spr import sort_by_likelihood_ratio
    groups, null = sort_by_likelihood_ratio(np.asarray(p), np.asarray(q))
    n, best = len(groups), mp.mpf(0)
    with mp.workdps(100):
        w = mp.e ** (-mp.mpf(eps)) if eps != math.inf else mp.mpf(0)
        for mask in range(2 ** (n - 1)):
            cut = [0] + [i + 1 for i in range(n - 1) if mask >> i & 1] + [n]
            if len(cut) == 2 or ell is not None and len(cut) - 1 > ell:
                continue                          # one output carries no information: C = 0, the start value
            part = [[x for g in groups[a:b] for x in g] for a, b in zip(cut[:-1], cut[1:])]
            norm = 1 + (len(part) - 1) * w
            u = [(w + (1 - w) * mp.fsum(mp.mpf(float(p[i])) for i in b)) / norm for b in part]
            v = [(w + (1 - w) * mp.fsum(mp.mpf(float(q[i])) for i in b)) / norm for b in part]
            inside = [(a, b) for a, b in zip(u, v) if a > 0 and b > 0]
            if not inside:
                return mp.inf
            out_u, out_v = mp.fsum(a for a, b in zip(u, v) if b == 0), mp.fsum(b for a, b in zip(u, v) if a == 0)
            def G(l):                             # −log1p of the excess form, or −log Σ when that is small
                direct = mp.fsum(a ** l * b ** (1 - l) for a, b in inside)
                if direct < 0.5:
                    return -mp.log(direct)
                return -mp.log1p(mp.fsum(a ** l * b ** (1 - l) - l * a - (1 - l) * b for a, b in inside)
                                 - l * out_u - (1 - l) * out_v)
            lo, hi, g = mp.mpf(0), mp.mpf(1), (mp.sqrt(5) - 1) / 2
            for _ in range(90):
                x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
                lo, hi = (x1, hi) if G(x1) < G(x2) else (lo, x2)
            best = max(best, G(lo), G(mp.mpf(0)), G(mp.mpf(1)))
    return best


CERTIFICATE_CASES = [   # the first fell 3.9e-15 (relative) above the upper bound when it was the best exponent itself
    ([0.3848119128193029, 0.6125714000336681, 0.002616687147029071],
     [0.2787891053996785, 0.33258275235245205, 0.38862814224786957], 1.0)]
CERTIFICATE_CASES += [(*np.random.default_rng(seed).dirichlet(np.ones(4), 2), eps)
                      for seed in range(8) for eps in (0.3, 3.0, math.inf)]


@pytest.mark.parametrize("p, q, eps", CERTIFICATE_CASES)
def test_upper_bound_is_never_below_the_optimum(p, q, eps):
    # With few tie groups the search ends by maximising every contiguous partition, and at ε = ∞ the answer is
    # C(p, q): the bound used to be the computed exponent itself, which round-off can put below the true optimum
    got = chernoff_optimal(np.asarray(p), np.asarray(q), eps)
    ref = mp_optimum_over_contiguous(p, q, eps)
    assert got.upper_bound >= ref and got.value <= ref * (1 + 1e-9) and got.gap <= 1e-8 * got.value


masses = st.lists(st.sampled_from([0.0, 1e-300, 1e-12, 0.1, 0.25, 0.3, 1.0, 3.0]), min_size=1, max_size=4)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(masses, masses, st.sampled_from([1e-6, 0.5, 3.0, 40.0, 700.0, math.inf]), st.integers(1, 4),
       st.sampled_from([1e-8, 1e-4]))
def test_certificate_on_fuzzed_small_pairs(p, q, eps, ell, tol):
    # ties, zeros, one-sided zeros, 1e-300 masses, k = 1 … 4, budgets: value ≤ C* ≤ upper_bound against the
    # 100-digit optimum over all contiguous partitions, the gap within tol, the channel ε-LDP with no slack
    k = min(len(p), len(q))
    p, q = np.array(p[:k]), np.array(q[:k])
    assume(p.sum() > 0 and q.sum() > 0)
    p, q = p / p.sum(), q / q.sum()
    ell = None if eps == math.inf else min(ell, k)
    got = chernoff_optimal(p, q, eps, ell=ell, tol=tol)
    ref = mp_optimum_over_contiguous(p, q, eps, ell)
    assert is_ldp(got.channel, eps, rtol=0)
    if ref == mp.inf:
        assert got.value == math.inf
        return
    resolution = mp.mpf(10) ** -95                 # the reference's; also below it, C* is not a float anyway
    assert got.value <= ref * (1 + mp.mpf(1e-9)) + resolution and got.upper_bound >= ref - resolution
    assert got.value >= ref * (1 - mp.mpf(tol) - mp.mpf(1e-9)) - resolution and got.gap <= tol * got.value
