"""Tests written for grading the Chernoff chapter (`ldpbook.chernoff`).

Each test grades one function, which it receives as its only argument (the student's function, called in another
process). The Chernoff information is computed here by golden-section search on the concave function
G(lambda) = -log sum_y u_y^lambda v_y^(1-lambda) (checked against mpmath), and the optimal mechanism against brute
force over the SPR channels of every partition of a small alphabet (randomized response on the block label, from
ldpbook.foundations). Those helpers would compute an assigned function: only hidden tests use them, so that the visible tests
a student reads do not hand out an answer.
"""
import math

import mpmath
import numpy as np

from ldpbook.assignments import grades, refused
from ldpbook.foundations import is_ldp, randomized_response

PAIRS = [(np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])),
         (np.array([0.05, 0.3, 0.15, 0.35, 0.15]), np.array([0.3, 0.1, 0.25, 0.05, 0.3]))]
ZERO_PAIR = (np.array([0.043, 0.0, 0.152, 0.335, 0.47]), np.array([0.219, 0.462, 0.151, 0.068, 0.1]))


def G(u, v, lam):
    "-log sum over the common support of u^lam v^(1-lam)."
    both = (np.asarray(u) > 0) & (np.asarray(v) > 0)
    u, v = np.asarray(u, dtype=float)[both], np.asarray(v, dtype=float)[both]
    return -math.log(float(np.sum(u ** lam * v ** (1 - lam))))


def chernoff(u, v):
    "max over lambda in [0, 1] of G, by golden-section search (G is concave)."
    lo, hi, ratio = 0.0, 1.0, (math.sqrt(5) - 1) / 2
    for _ in range(80):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        lo, hi = (lo, b) if G(u, v, a) >= G(u, v, b) else (a, hi)
    return max(G(u, v, 0.5 * (lo + hi)), G(u, v, 0.0), G(u, v, 1.0))


def mp_chernoff(u, v):
    "The same maximum in 30-digit arithmetic, at the root of G'."
    with mpmath.workdps(30):
        u, v = [mpmath.mpf(float(a)) for a in u], [mpmath.mpf(float(b)) for b in v]

        def g(lam):
            return -mpmath.log(sum(a ** lam * b ** (1 - lam) for a, b in zip(u, v)))
        lam = mpmath.findroot(lambda t: mpmath.diff(g, t), 0.5)
        return float(g(lam))


def set_partitions(k):
    "Every partition of {0, ..., k-1} into non-empty blocks (brute force)."
    if k == 0:
        yield []
        return
    for smaller in set_partitions(k - 1):
        for j in range(len(smaller)):
            yield smaller[:j] + [smaller[j] + [k - 1]] + smaller[j + 1:]
        yield smaller + [[k - 1]]


def best_by_brute_force(p, q, eps, ell=None):
    "The largest Chernoff information over randomized response on the block label of every partition."
    best = 0.0
    for blocks in set_partitions(p.size):
        if ell is not None and len(blocks) > ell:
            continue
        label = np.empty(p.size, dtype=int)
        for j, block in enumerate(blocks):
            label[block] = j
        Q = randomized_response(len(blocks), eps)[label]
        best = max(best, chernoff(Q.T @ p, Q.T @ q))
    return best


# ---------------------------------------------------------------------------------------- chernoff_information
@grades("chernoff_information", points=2)
def test_chernoff_information_of_mirrored_pairs(chernoff_information):
    "u = (a, 1 - a), v = (1 - a, a): by symmetry lambda* = 1/2 and C = -log(2 sqrt(a (1 - a)))."
    for a in (0.9, 0.6, 0.99):
        got = chernoff_information([a, 1 - a], [1 - a, a])
        assert math.isclose(got.value, -math.log(2 * math.sqrt(a * (1 - a))), rel_tol=1e-9), a
        assert math.isclose(got.lam, 0.5, abs_tol=1e-6), a


@grades("chernoff_information", points=3, hidden=True)
def test_chernoff_information_value_and_maximiser(chernoff_information):
    "The value is max_lambda G(lambda) (against mpmath) and G(lam) attains it."
    for u, v in PAIRS + [(np.array([0.9, 0.1]), np.array([0.2, 0.8]))]:
        got = chernoff_information(u, v)
        expected = mp_chernoff(u, v)
        assert math.isclose(got.value, expected, rel_tol=1e-9), f"value {got.value} != {expected}"
        assert 0.0 <= got.lam <= 1.0
        assert math.isclose(G(u, v, got.lam), expected, rel_tol=1e-9)


@grades("chernoff_information")
def test_chernoff_information_is_symmetric(chernoff_information):
    "C(u, v) = C(v, u), with the maximiser moved to 1 - lambda."
    for u, v in PAIRS:
        uv, vu = chernoff_information(u, v), chernoff_information(v, u)
        assert math.isclose(uv.value, vu.value, rel_tol=1e-12)
        assert math.isclose(uv.lam, 1 - vu.lam, abs_tol=1e-6)


@grades("chernoff_information")
def test_chernoff_information_edge_cases(chernoff_information):
    "Disjoint supports: inf; u = v: 0 with lam = 1/2; partial overlap: the sum runs over the common support."
    assert chernoff_information([1.0, 0.0], [0.0, 1.0]).value == math.inf
    same = chernoff_information([0.2, 0.3, 0.5], [0.2, 0.3, 0.5])
    assert abs(same.value) <= 1e-15 and same.lam == 0.5
    assert math.isclose(chernoff_information([0.5, 0.5, 0.0], [0.0, 0.5, 0.5]).value, math.log(2), rel_tol=1e-12)


@grades("chernoff_information", hidden=True)
def test_chernoff_information_rejects_bad_input(chernoff_information):
    "Vectors of different lengths, negative or NaN masses: ValueError."
    for u, v in [([0.5, 0.5], [0.2, 0.3, 0.5]), ([1.5, -0.5], [0.5, 0.5]), ([float("nan"), 1.0], [0.5, 0.5])]:
        assert refused(chernoff_information, u, v) == "ValueError", (u, v)


# -------------------------------------------------------------------------------------------- chernoff_optimal
def check_mechanism(mech, p, q, eps):
    "The channel is an eps-LDP k × s channel reporting the block of its partition, and `value`, `lam` are its own."
    channel = np.asarray(mech.channel, dtype=float)
    blocks = [sorted(int(x) for x in block) for block in mech.partition]
    assert sorted(x for block in blocks for x in block) == list(range(p.size))
    assert channel.shape == (p.size, len(blocks))
    assert np.allclose(channel.sum(axis=1), 1.0, rtol=0, atol=1e-12) and is_ldp(channel, eps)
    achieved = chernoff(channel.T @ p, channel.T @ q)
    assert math.isclose(mech.value, achieved, rel_tol=1e-9, abs_tol=1e-15), "value must be the channel's own C"
    assert 0.0 <= mech.lam <= 1.0 and math.isclose(G(channel.T @ p, channel.T @ q, mech.lam), achieved,
                                                    rel_tol=1e-8, abs_tol=1e-15)


@grades("chernoff_optimal", points=3, hidden=True)
def test_chernoff_optimal_beats_every_partition(chernoff_optimal):
    "The value is the best SPR value over all partitions (to the default tol 1e-8), the returned channel achieves it."
    for p, q in PAIRS + [ZERO_PAIR]:
        for eps in (0.5, 4.0):
            mech = chernoff_optimal(p, q, eps)
            check_mechanism(mech, p, q, eps)
            best = best_by_brute_force(p, q, eps)
            assert mech.value >= best * (1 - 1e-7), f"value {mech.value} below the best partition's {best}"
            assert mech.upper_bound >= best * (1 - 1e-12), "upper_bound is below a partition's value"


@grades("chernoff_optimal", points=2)
def test_chernoff_optimal_certificate(chernoff_optimal):
    "An eps-LDP k × s channel; upper_bound >= value > 0, gap = upper_bound - value <= tol * value."
    p, q = PAIRS[1]
    for eps, tol in [(1.0, 1e-8), (3.0, 1e-6)]:
        mech = chernoff_optimal(p, q, eps, tol=tol)
        channel = np.asarray(mech.channel, dtype=float)
        assert channel.shape[0] == p.size and np.allclose(channel.sum(axis=1), 1, rtol=0, atol=1e-12)
        assert is_ldp(channel, eps) and 0 <= mech.lam <= 1
        assert mech.upper_bound >= mech.value > 0
        assert math.isclose(mech.gap, mech.upper_bound - mech.value, rel_tol=1e-9, abs_tol=1e-15)
        assert -1e-15 <= mech.gap <= tol * mech.value + 1e-15


@grades("chernoff_optimal", points=2, hidden=True)
def test_chernoff_optimal_respects_the_output_budget(chernoff_optimal):
    "With ell: at most ell outputs, and at least the best value of partitions into at most ell blocks."
    p, q = PAIRS[1]
    for ell in (1, 2, 3):
        mech = chernoff_optimal(p, q, 4.0, ell=ell)
        assert np.asarray(mech.channel).shape[1] <= ell
        check_mechanism(mech, p, q, 4.0)
        assert mech.value >= best_by_brute_force(p, q, 4.0, ell=ell) * (1 - 1e-7)


@grades("chernoff_optimal")
def test_chernoff_optimal_at_eps_zero(chernoff_optimal):
    "eps = 0: every channel is constant, the value is 0."
    p, q = PAIRS[0]
    mech = chernoff_optimal(p, q, 0.0)
    assert abs(mech.value) <= 1e-15 and mech.upper_bound >= -1e-15


@grades("chernoff_optimal", hidden=True)
def test_chernoff_optimal_rejects_bad_input(chernoff_optimal):
    "A negative eps, a finite eps above 708.4, ell = 0: ValueError."
    p, q = PAIRS[0]
    assert refused(chernoff_optimal, p, q, -1.0) == "ValueError"
    assert refused(chernoff_optimal, p, q, 800.0) == "ValueError"
    assert refused(chernoff_optimal, p, q, 1.0, ell=0) == "ValueError"
