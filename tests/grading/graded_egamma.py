"""Tests written for grading the E_γ chapter (`ldpbook.egamma`).

Each test grades one function, which it receives as its only argument (the student's function, called in another
process). Expected values: the closed form evaluated in mpmath, and brute force over the SPR channels of every
partition of a small alphabet (randomized response on the block label, from ldpbook.foundations), which are eps-LDP and
include an optimal channel. Those helpers would compute an assigned function: only hidden tests use them, so that
the visible tests a student reads do not hand out an answer.
"""
import math

import mpmath
import numpy as np

from ldpbook.assignments import grades, refused
from ldpbook.foundations import divergence, is_ldp, randomized_response

PAIRS = [(np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])),
         (np.array([0.05, 0.3, 0.15, 0.35, 0.15]), np.array([0.3, 0.1, 0.25, 0.05, 0.3])),
         (np.array([0.5, 0.0, 0.5]), np.array([0.2, 0.6, 0.2]))]


def closed_form(e_gamma, eps, gamma):
    "(1-gamma)_+ + [tanh(eps/2) (E_gamma - (1-gamma)_+) - |1-gamma|/(e^eps+1)]_+ in 40-digit arithmetic."
    with mpmath.workdps(40):
        e_gamma, gamma = mpmath.mpf(e_gamma), mpmath.mpf(gamma)
        floor = max(1 - gamma, 0)
        if eps == math.inf:
            return float(floor + max(e_gamma - floor, 0))
        eps = mpmath.mpf(eps)
        return float(floor + max(mpmath.tanh(eps / 2) * (e_gamma - floor) - abs(1 - gamma) / (mpmath.exp(eps) + 1), 0))


def set_partitions(k):
    "Every partition of {0, ..., k-1} into non-empty blocks (brute force)."
    if k == 0:
        yield []
        return
    for smaller in set_partitions(k - 1):
        for j in range(len(smaller)):
            yield smaller[:j] + [smaller[j] + [k - 1]] + smaller[j + 1:]
        yield smaller + [[k - 1]]


def best_by_brute_force(p, q, eps, gamma):
    "The largest E_gamma(Q^T p || Q^T q) over randomized response on the block label of every partition."
    best = 0.0
    for blocks in set_partitions(p.size):
        label = np.empty(p.size, dtype=int)
        for j, block in enumerate(blocks):
            label[block] = j
        Q = randomized_response(len(blocks), eps)[label]
        best = max(best, divergence(Q.T @ p, Q.T @ q, kind="egamma", gamma=gamma))
    return best


def nonprivate(p, q, gamma):
    return float(sum(max(a - gamma * b, 0.0) for a, b in zip(p, q)))


# ----------------------------------------------------------------------------------------- egamma_closed_form
@grades("egamma_closed_form", points=2)
def test_egamma_closed_form_at_eps_log_3(egamma_closed_form):
    "At eps = log 3, tanh(eps/2) = 1/2 and 1/(e^eps + 1) = 1/4: values worked out by hand; E_gamma > 1 is refused."
    eps = math.log(3.0)
    assert refused(egamma_closed_form, 1.5, eps, gamma=1.0) == "ValueError", "E_gamma = 1.5 must be refused"
    for e_gamma, gamma, expected in [(0.6, 1.0, 0.3), (0.9, 2.0, 0.2), (0.4, 2.0, 0.0), (1.0, 0.5, 0.625),
                                     (0.5, 0.5, 0.5)]:
        got = float(np.asarray(egamma_closed_form(e_gamma, eps, gamma=gamma)))
        assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-15), f"E_gamma={e_gamma}, gamma={gamma}"


@grades("egamma_closed_form", hidden=True)
def test_egamma_closed_form_values(egamma_closed_form):
    "The formula of the docstring at a grid of (E_gamma, eps, gamma), against 40-digit values."
    for gamma in (0.3, 1.0, 2.5):
        floor = max(1 - gamma, 0.0)
        for e_gamma in (floor, floor + 0.3 * (1 - floor), 1.0):
            for eps in (0.1, 1.0, 4.0, np.inf):
                got = float(np.asarray(egamma_closed_form(e_gamma, eps, gamma=gamma)))
                assert math.isclose(got, closed_form(e_gamma, eps, gamma), rel_tol=1e-9, abs_tol=1e-15), \
                    f"E_gamma={e_gamma}, eps={eps}, gamma={gamma}"


@grades("egamma_closed_form", points=2, hidden=True)
def test_egamma_closed_form_is_the_best_privatized_value(egamma_closed_form):
    "For pairs p, q: the value equals the best E_gamma over the SPR channels of every partition."
    for p, q in PAIRS[:2]:
        for gamma in (0.5, 1.0, 2.0):
            for eps in (0.5, 2.0):
                got = float(np.asarray(egamma_closed_form(nonprivate(p, q, gamma), eps, gamma=gamma)))
                assert math.isclose(got, best_by_brute_force(p, q, eps, gamma), rel_tol=1e-9, abs_tol=1e-14)


@grades("egamma_closed_form")
def test_egamma_closed_form_broadcasts(egamma_closed_form):
    "eps of shape (3,) against gamma of shape (2, 1) gives shape (2, 3) (values as in the first test)."
    eps, gamma = np.array([0.0, math.log(3.0), np.inf]), np.array([[1.0], [2.0]])
    got = np.asarray(egamma_closed_form(0.6, eps, gamma=gamma), dtype=float)
    assert got.shape == (2, 3)
    assert np.allclose(got, [[0.0, 0.3, 0.6], [0.0, 0.05, 0.6]], rtol=1e-12, atol=1e-15)


@grades("egamma_closed_form")
def test_egamma_closed_form_at_eps_zero_and_infinity(egamma_closed_form):
    "eps = 0 leaves only (1-gamma)_+; eps = inf gives E_gamma back."
    for gamma, e_gamma in [(0.5, 0.7), (1.0, 0.4), (3.0, 0.2)]:
        assert math.isclose(float(np.asarray(egamma_closed_form(e_gamma, 0.0, gamma=gamma))), max(1 - gamma, 0.0),
                            rel_tol=1e-12, abs_tol=1e-15)
        assert math.isclose(float(np.asarray(egamma_closed_form(e_gamma, np.inf, gamma=gamma))), e_gamma,
                            rel_tol=1e-12)


@grades("egamma_closed_form", hidden=True)
def test_egamma_closed_form_rejects_bad_input(egamma_closed_form):
    "E_gamma outside [(1-gamma)_+, 1], a negative eps or gamma: ValueError."
    for e_gamma, eps, gamma in [(1.5, 1.0, 1.0), (0.1, 1.0, 0.5), (0.5, -1.0, 1.0), (0.5, 1.0, -1.0)]:
        assert refused(egamma_closed_form, e_gamma, eps, gamma=gamma) == "ValueError", (e_gamma, eps, gamma)


# ---------------------------------------------------------------------------------------------- egamma_optimal
@grades("egamma_optimal", points=2, hidden=True)
def test_egamma_optimal_value_and_channel(egamma_optimal):
    """The value is the best over all partitions, and the returned eps-LDP channel achieves it; a two-output
    channel reports 1 (its column 1) most likely exactly on threshold_set."""
    for p, q in PAIRS:
        for gamma in (0.5, 1.0, 2.0):
            for eps in (0.5, 2.0, np.inf):
                mech = egamma_optimal(p, q, eps, gamma=gamma)
                best = best_by_brute_force(p, q, eps, gamma)
                channel = np.asarray(mech.channel, dtype=float)
                assert channel.shape[0] == p.size and np.allclose(channel.sum(axis=1), 1, rtol=0, atol=1e-12)
                assert is_ldp(channel, eps)
                assert math.isclose(mech.value, best, rel_tol=1e-9, abs_tol=1e-14), (p, q, gamma, eps)
                achieved = divergence(channel.T @ p, channel.T @ q, kind="egamma", gamma=gamma)
                assert math.isclose(achieved, best, rel_tol=1e-9, abs_tol=1e-14)
                inside = {int(x) for x in mech.threshold_set}
                if channel.shape[1] == 2 and 0 < len(inside) < p.size:
                    assert {x for x in range(p.size) if channel[x, 1] > channel[x, 0]} == inside, \
                        "column 1 is the release of 1{x in threshold_set}, truthful more often than not"


@grades("egamma_optimal", points=2)
def test_egamma_optimal_threshold_set_and_nonprivate_value(egamma_optimal):
    "threshold_set = {x : p(x) >= gamma q(x)} in increasing order; nonprivate_value = sum (p - gamma q)_+."
    for p, q in PAIRS:
        for gamma in (0.5, 1.0, 2.0):
            mech = egamma_optimal(p, q, 1.0, gamma=gamma)
            assert tuple(int(x) for x in mech.threshold_set) == tuple(x for x in range(p.size)
                                                                       if p[x] >= gamma * q[x])
            assert math.isclose(mech.nonprivate_value, nonprivate(p, q, gamma), rel_tol=1e-12, abs_tol=1e-15)


@grades("egamma_optimal", hidden=True)
def test_egamma_optimal_channel_releases_the_bit(egamma_optimal):
    "Two outputs: column b is the probability of releasing b = 1{x in S_gamma}, truthfully w.p. e^eps/(e^eps+1)."
    p, q = PAIRS[1]
    eps, gamma = 1.5, 1.0
    mech = egamma_optimal(p, q, eps, gamma=gamma)
    inside = np.array([p[x] >= gamma * q[x] for x in range(p.size)])
    truth = math.exp(eps) / (math.exp(eps) + 1)
    expected = np.where(inside[:, None], [1 - truth, truth], [truth, 1 - truth])
    assert np.allclose(np.asarray(mech.channel, dtype=float), expected, rtol=1e-12, atol=0)


@grades("egamma_optimal", points=2)
def test_egamma_optimal_edge_cases(egamma_optimal):
    "eps = inf gives the non-private value; p = q gives (1-gamma)_+; eps = 0 gives (1-gamma)_+; gamma < 0 is refused."
    p, q = PAIRS[0]
    assert refused(egamma_optimal, p, q, 1.0, gamma=-1.0) == "ValueError", "gamma = -1 must be refused"
    assert math.isclose(egamma_optimal(p, q, np.inf, gamma=1.0).value, 0.5 * np.abs(p - q).sum(), rel_tol=1e-12)
    for gamma in (0.5, 2.0):
        assert math.isclose(egamma_optimal(p, p, 1.0, gamma=gamma).value, max(1 - gamma, 0), abs_tol=1e-15)
        assert math.isclose(egamma_optimal(p, q, 0.0, gamma=gamma).value, max(1 - gamma, 0), abs_tol=1e-15)


@grades("egamma_optimal", hidden=True)
def test_egamma_optimal_rejects_bad_input(egamma_optimal):
    "A negative gamma or eps, vectors of different lengths: ValueError."
    p, q = PAIRS[0]
    for args, gamma in [((p, q, 1.0), -1.0), ((p, q, -1.0), 1.0), ((p[:3], q, 1.0), 1.0)]:
        assert refused(egamma_optimal, *args, gamma=gamma) == "ValueError"
