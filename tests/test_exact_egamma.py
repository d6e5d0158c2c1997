"""ldpbook.egamma is exact at the edges: egamma_optimal, egamma_closed_form, neyman_pearson_curve, privatized_roc and
egamma_lp against an arbitrary-precision reference.

The reference is independent of the library: it enumerates every set partition of the alphabet (contiguous or not,
one block included), evaluates randomized response on the block label in mpmath with enough digits to hold every
sum of the float inputs exactly, and takes the best. It calls neither the closed form, nor the SPR dynamic program,
nor any helper of ldpbook. Instances are built to be hard: sparse Dirichlet(0.1) pairs floored at 1e-300, pairs
that differ only in tiny masses, exact zeros, ties p(x) = γ q(x), ε log-uniform on [1e-12, 700] plus 0 and ∞, and
γ from 0 to 1e6.
"""
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from ldpbook.egamma import egamma_closed_form, egamma_lp, egamma_optimal, neyman_pearson_curve, privatized_roc
from brute_force import set_partitions

DIGITS = 400            # 1e-300 next to 1 needs about 330 digits to be summed exactly; the rest is margin
RTOL = 1e-9


def rr_egamma(p, q, eps, gamma, blocks):
    "E_γ(M0‖M1) of s-ary randomized response on the block label, in mpmath (p, q, gamma are mpf, eps mpf or inf)."
    s = len(blocks)
    p_total, q_total = mpmath.fsum(p), mpmath.fsum(q)
    total = mpmath.mpf(0)
    for block in blocks:
        pb, qb = mpmath.fsum(p[x] for x in block), mpmath.fsum(q[x] for x in block)
        if eps == mpmath.inf:
            gap = pb - gamma * qb
        else:                # M0(j) = ((e^ε − 1) p(B_j) + Σp) / (e^ε + s − 1): Σp is 1 only up to the input's rounding
            e = mpmath.exp(eps)
            gap = ((p_total + (e - 1) * pb) - gamma * (q_total + (e - 1) * qb)) / (e + s - 1)
        total += max(gap, 0)
    return total


def reference_optimum(p, q, eps, gamma):
    "max over all set partitions of E_γ after randomized response on the block label (exact for the float inputs)."
    with mpmath.workdps(DIGITS):
        P, Q = [mpmath.mpf(float(v)) for v in p], [mpmath.mpf(float(v)) for v in q]
        g = mpmath.mpf(float(gamma))
        e = mpmath.inf if math.isinf(eps) else mpmath.mpf(float(eps))
        return max(rr_egamma(P, Q, e, g, blocks) for blocks in set_partitions(list(range(len(P)))))


def partition_value(p, q, eps, gamma, blocks):
    "The exact value of randomized response on a given partition."
    with mpmath.workdps(DIGITS):
        P, Q = [mpmath.mpf(float(v)) for v in p], [mpmath.mpf(float(v)) for v in q]
        e = mpmath.inf if math.isinf(eps) else mpmath.mpf(float(eps))
        return rr_egamma(P, Q, e, mpmath.mpf(float(gamma)), [list(b) for b in blocks])


def close(value, reference, rtol=RTOL):
    "Within rtol relative of the reference, or within 1e-300 where the reference is (about) zero."
    with mpmath.workdps(DIGITS):
        return abs(mpmath.mpf(float(value)) - reference) <= max(rtol * abs(reference), mpmath.mpf("1e-300"))


def normalised(v):
    "v / Σv; an all-zero vector becomes a point mass on its last symbol."
    v = np.array(v, dtype=float)
    if v.sum() == 0:
        v[-1] = 1.0
    return v / v.sum()


def edge_pair(rng, k):
    "A hard pair on k symbols (see the module docstring)."
    kind = rng.integers(5)
    if kind == 0:                                     # sparse Dirichlet(0.1), floored at 1e-300 (or set to 0)
        p, q = rng.dirichlet(np.full(k, 0.1)), rng.dirichlet(np.full(k, 0.1))
        for v in (p, q):
            small = v < 1e-300
            v[small] = np.where(rng.random(small.sum()) < 0.5, 0.0, 1e-300)
        return normalised(p), normalised(q)
    if kind == 1:                                     # differ only in tiny masses
        base = rng.dirichlet(np.ones(k))
        tiny = 10.0 ** rng.uniform(-300, -20, size=k)
        return normalised(base + tiny * (rng.random(k) < 0.5)), normalised(base + tiny * (rng.random(k) < 0.5))
    if kind == 2:                                     # exact zeros in both
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        p[rng.random(k) < 0.3] = 0.0
        q[rng.random(k) < 0.3] = 0.0
        if p.sum() == 0:
            p[0] = 1.0
        if q.sum() == 0:
            q[-1] = 1.0
        return normalised(p), normalised(q)
    if kind == 3:                                     # one mass of 1e-300 next to the rest
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        j = rng.integers(k)
        p[j], q[(j + 1) % k] = 1e-300, 0.0
        return normalised(p), normalised(q)
    return rng.dirichlet(np.full(k, 0.5)), rng.dirichlet(np.full(k, 0.5))


def edge_eps(rng):
    u = rng.random()
    if u < 0.1:
        return math.inf
    if u < 0.15:
        return 0.0
    if u < 0.25:
        return float(rng.choice([1e-12, 700.0]))
    return float(10.0 ** rng.uniform(-12, np.log10(700)))


def edge_gamma(rng, p, q):
    u = rng.random()
    if u < 0.1:
        return float(rng.choice([0.0, 1.0, 1e6]))
    if u < 0.25:                                      # a tie p(x) = γ q(x) (up to the rounding of the ratio)
        both = np.flatnonzero((p > 0) & (q > 0))
        if both.size and p[both[0]] / q[both[0]] <= 1e6:
            return float(p[both[0]] / q[both[0]])
    if u < 0.5:
        return float(rng.uniform(0, 2))
    return float(10.0 ** rng.uniform(-6, 6))


def edge_instances(n, seed, k_max=5):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k = int(rng.integers(1, k_max + 1))
        p, q = edge_pair(rng, k)
        yield p, q, edge_eps(rng), edge_gamma(rng, p, q)


# ---------------------------------------------------------------- egamma_optimal

@pytest.mark.parametrize("seed, n, k_max", [(0, 150, 5), (1, 150, 5), (2, 25, 6)])
def test_egamma_optimal_is_exact_against_all_set_partitions(seed, n, k_max):
    for p, q, eps, gamma in edge_instances(n, seed, k_max):
        mech = egamma_optimal(p, q, eps, gamma=gamma)
        reference = reference_optimum(p, q, eps, gamma)
        where = f"p={p.tolist()}, q={q.tolist()}, eps={eps}, gamma={gamma}"
        assert mech.value >= 0 and math.copysign(1.0, mech.value) == 1.0, where
        assert close(mech.value, reference), (where, mech.value, float(reference))
        # the returned partition is optimal when evaluated exactly, not only the reported value
        assert all(mech.partition) and mech.num_outputs == len(mech.partition), where
        assert close(partition_value(p, q, eps, gamma, mech.partition), reference), where


def test_egamma_closed_form_against_the_theorem_in_arbitrary_precision():
    "egamma_closed_form(E, ε, gamma=γ) = max{0, 1 − γ, ((1 − γ) + (e^ε − 1)E)/(e^ε + 1)}, the theorem's first form."
    rng = np.random.default_rng(7)
    for _ in range(400):
        eps, gamma = edge_eps(rng), float(10.0 ** rng.uniform(-6, 6)) if rng.random() < 0.7 else float(rng.uniform(0, 2))
        floor = max(1 - gamma, 0.0)
        e_gamma = float(rng.choice([floor, 1.0, floor + (1 - floor) * 10.0 ** rng.uniform(-300, 0)]))
        value = float(egamma_closed_form(e_gamma, eps, gamma=gamma))
        with mpmath.workdps(DIGITS):
            g, E = mpmath.mpf(gamma), mpmath.mpf(e_gamma)
            if math.isinf(eps):
                third = E
            else:
                e = mpmath.exp(mpmath.mpf(eps))
                third = ((1 - g) + (e - 1) * E) / (e + 1)
            reference = max(mpmath.mpf(0), 1 - g, third)
        assert value >= 0 and close(value, reference), (eps, gamma, e_gamma, value, float(reference))


def test_egamma_optimal_at_the_largest_gamma_and_the_smallest_eps():
    "Named edges: γ = 1e6 with a mass q = 1e-300, ε = 1e-12 with γ = 1, zeros on both sides."
    cases = [([0.5, 0.5 - 1e-300, 1e-300], [0.5, 0.5, 0.0], 700.0, 1e6),
             ([1 - 1e-300, 1e-300], [1.0, 0.0], 1e-12, 1.0),
             ([0.25, 0.25, 0.5, 0.0], [0.0, 0.25, 0.25, 0.5], 1e-12, 0.5),
             ([0.3, 0.7], [0.3, 0.7], 5.0, 1.0),
             ([1e-300, 1.0], [1.0, 1e-300], math.inf, 1e6)]
    for p, q, eps, gamma in cases:
        p, q = np.array(p), np.array(q)
        mech = egamma_optimal(p, q, eps, gamma=gamma)
        assert close(mech.value, reference_optimum(p, q, eps, gamma)), (p, q, eps, gamma, mech.value)


def test_gaps_are_not_lost_to_the_rounding_of_gamma_q():
    "p(x) = fl(γ q(x)): the true gap is the rounding error of γq; a naive p − γq says 0 and loses the whole value."
    gamma = 0.1 + 0.2
    p = np.array([gamma * 0.3, gamma * 0.7])
    p = np.append(p, 1 - p.sum())
    q = np.array([0.3, 0.7, 0.0])
    for eps in (1.0, math.inf):
        for g in (gamma, 1 / gamma):
            mech = egamma_optimal(p, q, eps, gamma=g)
            reference = reference_optimum(p, q, eps, g)
            assert close(mech.value, reference), (eps, g, mech.value, float(reference))
            assert close(partition_value(p, q, eps, g, mech.partition), reference)


# ---------------------------------------------------------------- neyman_pearson_curve and privatized_roc

def exact_vertices(p, q):
    "(q(S_t), p(S_t)) for the top sets in the exact likelihood-ratio order (Fractions), q = 0 < p first."
    P, Q = [Fraction(float(v)) for v in p], [Fraction(float(v)) for v in q]
    symbols = [x for x in range(len(P)) if P[x] + Q[x] > 0]
    symbols.sort(key=lambda x: (Q[x] != 0, -(P[x] / Q[x]) if Q[x] else -P[x]))
    fpr, tpr, a, b = [Fraction(0)], [Fraction(0)], Fraction(0), Fraction(0)
    for x in symbols:
        a, b = a + Q[x], b + P[x]
        fpr.append(a)
        tpr.append(b)
    return fpr, tpr


def distinct_ratio_instances(n, seed):
    "Edge pairs whose likelihood ratios are pairwise distinct (the vertex list is then unique)."
    rng = np.random.default_rng(seed)
    while n:
        k = int(rng.integers(1, 8))
        p, q = edge_pair(rng, k)
        keep = (p + q) > 0
        P, Q = [Fraction(float(v)) for v in p[keep]], [Fraction(float(v)) for v in q[keep]]
        ratios = [P[i] / Q[i] if Q[i] else None for i in range(len(P))]
        if len(set(ratios)) == len(ratios) and keep.all():
            n -= 1
            yield p, q


def test_neyman_pearson_vertices_are_exact():
    for p, q in distinct_ratio_instances(200, seed=3):
        fpr, tpr = neyman_pearson_curve(p, q)
        ref_fpr, ref_tpr = exact_vertices(p, q)
        assert fpr.size == len(ref_fpr)
        for got, want in zip(np.concatenate((fpr, tpr)), ref_fpr + ref_tpr):
            assert got >= 0 and abs(Fraction(float(got)) - want) <= max(RTOL * want, Fraction(10) ** -300), (p, q)


def test_privatized_roc_values_and_vertices_are_exact():
    rng = np.random.default_rng(4)
    for p, q in distinct_ratio_instances(60, seed=5):
        eps = edge_eps(rng)
        gammas = [edge_gamma(rng, p, q) for _ in range(3)]
        roc = privatized_roc(p, q, eps, gammas=gammas)
        for g, value in zip(gammas, roc.gamma_values):
            assert value >= 0 and close(value, reference_optimum(p, q, eps, g)), (p, q, eps, g)
        # every interior vertex of the optimal curve is T_ε of an exact Neyman–Pearson vertex
        ref_fpr, ref_tpr = exact_vertices(p, q)
        with mpmath.workdps(DIGITS):
            if math.isinf(eps):
                slope, offset = mpmath.mpf(1), mpmath.mpf(0)
            else:
                slope, offset = mpmath.tanh(mpmath.mpf(eps) / 2), 1 / (mpmath.exp(mpmath.mpf(eps)) + 1)
            images = [(offset + slope * mpmath.mpf(a.numerator) / a.denominator,
                       offset + slope * mpmath.mpf(b.numerator) / b.denominator) for a, b in zip(ref_fpr, ref_tpr)]
            for x, y in zip(roc.fpr[1:-1], roc.tpr[1:-1]):
                assert any(abs(mpmath.mpf(float(x)) - ix) <= RTOL * ix + mpmath.mpf("1e-300")
                           and abs(mpmath.mpf(float(y)) - iy) <= RTOL * iy + mpmath.mpf("1e-300")
                           for ix, iy in images), (p, q, eps)


# ---------------------------------------------------------------- egamma_lp within its domain

def test_egamma_lp_within_solver_tolerance_and_never_negative():
    "HiGHS works to about 1e-9 absolute: that is egamma_lp's domain; it is never negative and never −0.0."
    for p, q, eps, gamma in edge_instances(80, seed=6, k_max=5):
        if gamma > 1e3 or (not math.isinf(eps) and eps > 700):
            continue                               # γ ≫ 1 makes the objective badly scaled for an LP solver
        value = egamma_lp(p, q, eps, gamma=gamma)
        assert value >= 0 and math.copysign(1.0, value) == 1.0
        with mpmath.workdps(DIGITS):
            assert abs(mpmath.mpf(value) - reference_optimum(p, q, eps, gamma)) <= 1e-8, (p, q, eps, gamma)
    assert math.copysign(1.0, egamma_lp([0.5, 0.5], [0.5, 0.5], 1.0, gamma=1.0)) == 1.0
    assert math.copysign(1.0, egamma_lp([1.0], [1.0], 1.0, gamma=3.0)) == 1.0


def test_egamma_optimal_on_large_alphabets_against_the_exact_theorem():
    "k = 1000: the value and the returned partition, evaluated exactly, equal max{0, D, (D + (e^ε − 1)E)/(e^ε + 1)}."
    rng = np.random.default_rng(8)
    for _ in range(12):
        p, q = edge_pair(rng, 1000)
        eps, gamma = edge_eps(rng), edge_gamma(rng, p, q)
        mech = egamma_optimal(p, q, eps, gamma=gamma)
        with mpmath.workdps(DIGITS):
            P, Q = [mpmath.mpf(float(v)) for v in p], [mpmath.mpf(float(v)) for v in q]
            g = mpmath.mpf(float(gamma))
            gaps = [a - g * b for a, b in zip(P, Q)]
            D, E = mpmath.fsum(gaps), mpmath.fsum(a for a in gaps if a > 0)
            if math.isinf(eps):
                reference = max(mpmath.mpf(0), D, E)
            else:
                e = mpmath.exp(mpmath.mpf(eps))
                reference = max(mpmath.mpf(0), D, (D + (e - 1) * E) / (e + 1))
        assert mech.value >= 0 and close(mech.value, reference), (eps, gamma)
        assert close(partition_value(p, q, eps, gamma, mech.partition), reference), (eps, gamma)


def kink_instances(n, seed):
    """Instances at the privacy level where the optimum leaves 0, moved by a relative 1e-12 … 1e-6: there the two
    terms of the closed form agree to up to 12 digits, and a float evaluation loses that many."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        k = int(rng.integers(2, 6))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        gamma = float(rng.uniform(0.2, 3.0))
        with mpmath.workdps(DIGITS):
            P, Q, g = [mpmath.mpf(float(v)) for v in p], [mpmath.mpf(float(v)) for v in q], mpmath.mpf(gamma)
            gaps = [a - g * b for a, b in zip(P, Q)]
            balance = mpmath.fsum(gaps)
            excess = mpmath.fsum(max(x, 0) for x in gaps) - max(balance, 0)
            if excess <= 0 or balance == 0:
                continue
            kink = mpmath.log1p(abs(balance) / excess)     # (e^ε − 1)·Ē = |Σ|
        eps = float(kink) * (1 + float(rng.choice([1e-12, 1e-10, 1e-8, 1e-6])))
        out.append((p, q, eps, gamma))
    return out


def test_egamma_optimal_is_exact_where_the_closed_form_cancels():
    for p, q, eps, gamma in kink_instances(60, 11):
        value = egamma_optimal(p, q, eps, gamma=gamma).value
        assert value >= 0 and close(value, reference_optimum(p, q, eps, gamma)), (eps, gamma)


def huge_ratio_pairs(n, seed):
    "Pairs whose likelihood ratios p/q are distinct and exceed 1e16: p(x) moderate, q(x) = 10^−u with u in [16, 300]."
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k = int(rng.integers(3, 7))
        p = rng.dirichlet(np.ones(k))
        q = np.zeros(k)
        q[:-1] = 10.0 ** -rng.uniform(16, 300, size=k - 1)
        q[-1] = 1.0 - q[:-1].sum()
        if rng.random() < 0.5:
            q[0] = 0.0                                 # a ratio of ∞ next to finite ones above 1e16
            q[-1] = 1.0 - q[1:-1].sum()
        yield p, q


def test_neyman_pearson_vertices_are_exact_when_ratios_exceed_1e16():
    """p/(p+q) rounds to 1 for every p/q > 1e16, so ordering by it puts such symbols in index order: the vertices and
    E_γ read off the curve were then wrong (by far more than 1e-9 relative, e.g. a curve value 0.03 for 0.3)."""
    for p, q in huge_ratio_pairs(200, seed=21):
        fpr, tpr = neyman_pearson_curve(p, q)
        ref_fpr, ref_tpr = exact_vertices(p, q)
        assert fpr.size == len(ref_fpr)
        for got, want in zip(np.concatenate((fpr, tpr)), ref_fpr + ref_tpr):
            assert abs(Fraction(float(got)) - want) <= RTOL * want, (p.tolist(), q.tolist())
    # the named case: the higher ratio has the larger index; E_γ at γ = 1e17 is 0.3 − 1e17·1e-18 = 0.2
    p, q = np.array([0.3, 0.3, 0.4]), np.array([1e-17, 1e-18, 1 - 1.1e-17])
    fpr, tpr = neyman_pearson_curve(p, q)
    assert abs(float(np.max(tpr - 1e17 * fpr)) - 0.2) <= 1e-12
    roc = privatized_roc(p, q, math.inf, gammas=[1e17])
    assert abs(float(roc.tpr_at([1e-18])[0]) - 0.3) <= 1e-12


def test_closed_form_and_roc_values_are_exact_where_the_closed_form_cancels():
    """egamma_closed_form and privatized_roc's E*_γ evaluated the bracket in floats also at the kink, where
    egamma_optimal already switched to exact arithmetic: relative errors up to 1e-4 (closed form) and 1e-7 (ROC)."""
    for p, q, eps, gamma in kink_instances(60, 12):
        with mpmath.workdps(DIGITS):
            g = mpmath.mpf(gamma)
            e_gamma = float(mpmath.fsum(max(mpmath.mpf(float(a)) - g * mpmath.mpf(float(b)), 0) for a, b in zip(p, q)))
            e = mpmath.exp(mpmath.mpf(eps))
            theorem = max(mpmath.mpf(0), 1 - g, ((1 - g) + (e - 1) * mpmath.mpf(e_gamma)) / (e + 1))
        value = float(egamma_closed_form(e_gamma, eps, gamma=gamma))
        assert value >= 0 and close(value, theorem), (e_gamma, eps, gamma, value, float(theorem))
        both = egamma_closed_form([e_gamma, e_gamma], [eps, 1.0], gamma=gamma)        # broadcast, one at the kink
        assert both[0] == value and both[1] == float(egamma_closed_form(e_gamma, 1.0, gamma=gamma))
        roc_value = privatized_roc(p, q, eps, gammas=[gamma, 1.0]).gamma_values[0]
        assert roc_value >= 0 and close(roc_value, reference_optimum(p, q, eps, gamma)), (eps, gamma)
