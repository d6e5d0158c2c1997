"""Rényi optima at every order α > 0, down to 1e-300 and up to 1e300, against an mpmath brute force over all set
partitions of the alphabet (the SPR theorem: an optimal ε-LDP mechanism is the partition mechanism of one of them)."""
import itertools

import mpmath
import numpy as np
import pytest

from ldpbook.spr import divergence_optimal, divergence_optimal_values
from brute_force import set_partitions

ORDERS = [1e-300, 1e-12, 0.3, 2.0, 1e3, 1e8, 1e15, 1e50, 1e100, 1e300]


def brute_force(p, q, eps, alpha):
    """max over set partitions of D_α(Qᵀp‖Qᵀq) for the partition mechanism, at 400 digits (log Σ_α ≈ α for
    α = 1e-300); p and q are normalised exactly (the float vectors sum to 1 only within round-off)."""
    with mpmath.workdps(400):
        p, q = [mpmath.mpf(float(x)) for x in p], [mpmath.mpf(float(x)) for x in q]
        p, q = [x / mpmath.fsum(p) for x in p], [x / mpmath.fsum(q) for x in q]
        a, e = mpmath.mpf(alpha), mpmath.exp(mpmath.mpf(eps))
        best = mpmath.mpf(0)
        for part in set_partitions(list(range(len(p)))):
            s = len(part)
            cross = mpmath.mpf(0)
            for block in part:
                P, Q = sum(p[i] for i in block), sum(q[i] for i in block)
                u, v = (1 + (e - 1) * P) / (e + s - 1), (1 + (e - 1) * Q) / (e + s - 1)
                cross += mpmath.exp(a * mpmath.log(u) + (1 - a) * mpmath.log(v))
            best = max(best, mpmath.log(cross) / (a - 1))
        return best


def close(x, ref):
    return abs(mpmath.mpf(x) - ref) <= 1e-9 * abs(ref) + 1e-300


def test_the_issue_cases():
    for alpha in (1e50, 1e100, 1e300):
        value = divergence_optimal([.5, .5], [1, 0], 1.0, divergence="renyi", renyi_order=alpha).value
        assert abs(value - 0.6201145069582775) <= 1e-12           # log((1 + e)/2): the limit α → ∞
    p = np.array([.4, .3, .2, .1])
    one = divergence_optimal(p, p[::-1], 20.0, divergence="renyi", renyi_order=1e300).value
    many = divergence_optimal_values(p[None], p[::-1][None], 20.0, divergence="renyi", renyi_order=1e300)[0, 0]
    assert close(one, brute_force(p, p[::-1], 20.0, 1e300)) and close(many, brute_force(p, p[::-1], 20.0, 1e300))


@pytest.mark.parametrize("alpha", ORDERS)
def test_every_order_agrees_with_the_brute_force(alpha):
    rng = np.random.default_rng(7)
    for trial in range(6):
        k = 3 + trial % 3
        p, q = rng.dirichlet(np.full(k, 0.5)), rng.dirichlet(np.full(k, 0.5))
        for eps in (0.1, 1.0, 20.0):
            ref = brute_force(p, q, eps, alpha)
            one = divergence_optimal(p, q, eps, divergence="renyi", renyi_order=alpha).value
            many = divergence_optimal_values(p[None], q[None], eps, divergence="renyi", renyi_order=alpha)[0, 0]
            assert close(one, ref), (alpha, trial, eps, one, float(ref))
            assert close(many, ref), (alpha, trial, eps, many, float(ref))
