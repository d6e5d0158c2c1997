"""Tests written for grading the approximate-privacy chapter (`ldpbook.approximate`).

Each test grades one function, which it receives as its only argument (the student's function, called in another
process). Expected values: hand-worked hockey-stick sums, the total-variation closed form, and, in hidden tests
only, the privacy defect and the two-output optimum computed in mpmath by brute force (every set of inputs at every
vertex of the two-output polygon, found by intersecting its lines), so that the visible tests a student reads do not
hand out an answer.
"""
import itertools
import math

import mpmath
import numpy as np

from ldpbook.assignments import grades, refused
from ldpbook.foundations import divergence

PAIRS = [(np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])),
         (np.array([0.05, 0.3, 0.15, 0.35, 0.15]), np.array([0.3, 0.1, 0.25, 0.05, 0.3]))]


def mp_defect(Q, eps):
    "max over ordered pairs of rows of sum_y (Q(y|x) - e^eps Q(y|x'))_+, in 40-digit arithmetic."
    with mpmath.workdps(40):
        e = mpmath.exp(mpmath.mpf(eps))
        return max(mpmath.fsum(max(mpmath.mpf(a) - e * mpmath.mpf(b), 0) for a, b in zip(Q[x], Q[y]))
                   for x in range(len(Q)) for y in range(len(Q)))


def brute_two_output_kl(p, q, eps, delta):
    "The largest KL over two-output (eps, delta)-LDP channels: every subset at every polygon vertex, in mpmath."
    with mpmath.workdps(40):
        a, d = mpmath.exp(mpmath.mpf(eps)), mpmath.mpf(delta)
        lines = [(1, 0, 0), (0, 1, 1), (1, -1, 0), (-a, 1, d), (-1, a, d + a - 1)]     # alpha m + beta M = c
        best = mpmath.mpf(0)
        for (a1, b1, c1), (a2, b2, c2) in itertools.combinations(lines, 2):
            det = a1 * b2 - a2 * b1
            if det == 0:
                continue
            m, M = (c1 * b2 - c2 * b1) / det, (a1 * c2 - a2 * c1) / det
            tol = mpmath.mpf(10) ** -30
            if not (-tol <= m <= M + tol <= 1 + 2 * tol and M - a * m <= d + tol and 1 - m - a * (1 - M) <= d + tol):
                continue
            for bits in range(2 ** len(p)):
                t = [M if bits >> x & 1 else m for x in range(len(p))]
                u1, v1 = mpmath.fsum(x * s for x, s in zip(p, t)), mpmath.fsum(x * s for x, s in zip(q, t))
                best = max(best, sum(u * mpmath.log(u / v) for u, v in ((u1, v1), (1 - u1, 1 - v1)) if u > 0))
        return float(best)


# ------------------------------------------------------------------------------------------------ is_approx_ldp
@grades("is_approx_ldp", points=2)
def test_is_approx_ldp_hand_worked_channels(is_approx_ldp):
    "Hockey-stick sums worked out by hand: the channel [[0.75, 0.25], [0.5, 0.5]] at eps = 0 and eps = log 1.5."
    Q = [[0.75, 0.25], [0.5, 0.5]]
    assert is_approx_ldp(Q, 0.0, 0.25) and not is_approx_ldp(Q, 0.0, 0.2)
    assert is_approx_ldp(Q, math.log(1.5), 0.13) and not is_approx_ldp(Q, math.log(1.5), 0.12)


@grades("is_approx_ldp", points=1)
def test_is_approx_ldp_delta_one_admits_everything(is_approx_ldp):
    "Every channel is (eps, 1)-LDP; the identity channel is (eps, delta)-LDP for no delta < 1."
    identity = np.eye(3).tolist()
    assert is_approx_ldp(identity, 2.0, 1.0) and not is_approx_ldp(identity, 2.0, 0.99)


@grades("is_approx_ldp", points=2, hidden=True)
def test_is_approx_ldp_exact_at_the_boundary(is_approx_ldp):
    "Random channels with delta at their 40-digit privacy defect and one float above and below it."
    rng = np.random.default_rng(11)
    for _ in range(40):
        Q = rng.dirichlet(np.ones(3), size=3)
        eps = float(rng.uniform(0, 2))
        worst = mp_defect(Q, eps)
        for delta in (float(np.nextafter(float(worst), 0)), float(np.nextafter(float(worst), 1))):
            assert is_approx_ldp(Q.tolist(), eps, delta) == (worst <= delta), f"eps={eps}, delta={delta}"


@grades("is_approx_ldp", points=1)
def test_is_approx_ldp_refuses_a_bad_delta(is_approx_ldp):
    "delta below 0, above 1 or NaN is a ValueError."
    Q = [[0.75, 0.25], [0.5, 0.5]]
    for delta in (-0.1, 1.5, float("nan")):
        assert refused(is_approx_ldp, Q, 1.0, delta) == "ValueError", f"delta={delta}"


# ------------------------------------------------------------------------------------------ divergence_optimal
@grades("divergence_optimal", points=2)
def test_divergence_optimal_total_variation_closed_form(divergence_optimal):
    "TV: the optimum is (e^eps - 1 + 2 delta)/(e^eps + 1) times d_TV(p, q), for every budget."
    for p, q in PAIRS:
        for eps, delta in ((0.5, 0.01), (2.0, 0.2)):
            expected = (math.expm1(eps) + 2 * delta) / (math.exp(eps) + 1) * divergence(p, q, kind="tv")
            for ell in (2, None):
                got = divergence_optimal(p, q, eps, delta=delta, divergence="tv", ell=ell).value
                assert math.isclose(got, expected, rel_tol=1e-9), f"eps={eps}, delta={delta}, ell={ell}"


@grades("divergence_optimal", points=2)
def test_divergence_optimal_channel_achieves_its_value(divergence_optimal):
    "The channel has at most two outputs with ell = 2, rows summing to 1, and achieves the value."
    for p, q in PAIRS:
        mech = divergence_optimal(p, q, 1.0, delta=0.05, ell=2)
        channel = np.asarray(mech.channel)
        assert channel.shape[0] == p.size and channel.shape[1] <= 2
        assert np.allclose(channel.sum(axis=1), 1.0, atol=1e-12)
        achieved = divergence(channel.T @ p, channel.T @ q, kind="kl")
        assert math.isclose(mech.value, achieved, rel_tol=1e-9)


@grades("divergence_optimal", points=3, hidden=True)
def test_divergence_optimal_two_outputs_beat_every_subset(divergence_optimal):
    "KL with ell = 2: the value is the brute-force optimum, and the channel is exactly (eps, delta)-LDP."
    for p, q in PAIRS + [(np.array([0.0, 0.5, 0.5]), np.array([0.5, 0.25, 0.25]))]:   # the last: a bottom set leaks
        for eps, delta in ((0.1, 0.1), (1.0, 0.01), (3.0, 1e-6)):
            mech = divergence_optimal(p, q, eps, delta=delta, ell=2)
            assert mp_defect(np.asarray(mech.channel), eps) <= delta, "the channel must be (eps, delta)-LDP"
            best = brute_two_output_kl(p, q, eps, delta)
            assert math.isclose(mech.value, best, rel_tol=1e-9), f"eps={eps}, delta={delta}: {mech.value} != {best}"


@grades("divergence_optimal", points=1)
def test_divergence_optimal_refuses_bad_delta(divergence_optimal):
    "delta outside [0, 1] or NaN is a ValueError; a missing delta (None) is a TypeError."
    p, q = PAIRS[0]
    for delta, error in ((-0.1, "ValueError"), (1.5, "ValueError"), (float("nan"), "ValueError"), (None, "TypeError")):
        assert refused(divergence_optimal, p, q, 1.0, delta=delta) == error, f"delta={delta}"
