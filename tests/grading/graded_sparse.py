"""Tests written for grading the sparse-kernel chapter (`ldpbook.sparse`): the calibration and the defects of sparse randomized
response.

Each test grades one function, which it receives as its only argument (the student's function, called in another
process). Expected values come from brute force on the laws themselves: the window laws Q(.|x) of sparse RR are
written out as dictionaries and the ordered defect is summed term by term, split into the mass of Q(.|x) outside the
actual support of Q(.|x') (support leakage) and the hockey-stick excess on the common support (overlap excess).

`sparse_randomized_response` itself returns a mechanism whose behaviour lives in methods (`pmf`, `sample`), which do
not cross the process boundary; it is graded through the functions below that carry the same mathematics. The
helpers that would compute an assigned function (`calibration`, the window laws) serve hidden tests only; the visible
tests check values worked out by hand.
"""
import math

import mpmath
import numpy as np

from ldpbook.assignments import grades, refused


def window_law(x, support, p, q):
    "Q(.|x) of randomized response on `support`: p at x, q elsewhere; only the points of positive mass."
    law = {int(y): (p if y == x else q) for y in support}
    return {y: m for y, m in law.items() if m > 0}


def defect(law, law_prime, eps):
    "(support leakage, overlap excess) of the ordered defect between two laws given as dictionaries."
    leakage = sum(m for y, m in law.items() if y not in law_prime)
    excess = sum(max(m - math.exp(eps) * law_prime[y], 0.0) for y, m in law.items() if y in law_prime)
    return leakage, excess


def calibration(t, eps):
    "p_t = e^eps/(e^eps + 2t), q_t = 1/(e^eps + 2t), in 40 digits."
    with mpmath.workdps(40):
        e = mpmath.exp(eps)
        return float(e / (e + 2 * t)), float(1 / (e + 2 * t))


# --------------------------------------------------------------------------------------- sparse_rr_calibration
@grades("sparse_rr_calibration")
def test_sparse_rr_calibration_example(sparse_rr_calibration):
    "t = 1, eps = log 2: p = 2/4, q = 1/4; t = 2, eps = log 4: p = 4/8, q = 1/8."
    for t, eps, expected in [(1, math.log(2.0), (0.5, 0.25)), (2, math.log(4.0), (0.5, 0.125))]:
        p, q = sparse_rr_calibration(t, eps)
        assert math.isclose(p, expected[0], rel_tol=1e-12) and math.isclose(q, expected[1], rel_tol=1e-12)


@grades("sparse_rr_calibration", points=2, hidden=True)
def test_sparse_rr_calibration_values(sparse_rr_calibration):
    "(p_t, q_t) = (e^eps/(e^eps + 2t), 1/(e^eps + 2t)), against 40-digit values."
    for t in (0, 1, 3, 20):
        for eps in (0.1, 1.0, 5.0):
            p, q = sparse_rr_calibration(t, eps)
            expected = calibration(t, eps)
            assert math.isclose(p, expected[0], rel_tol=1e-12) and math.isclose(q, expected[1], rel_tol=1e-12), \
                f"t={t}, eps={eps}"


@grades("sparse_rr_calibration")
def test_sparse_rr_calibration_is_a_law_with_ratio_e_eps(sparse_rr_calibration):
    "p + 2t q = 1 and p / q = e^eps."
    for t in (1, 2, 7):
        for eps in (0.5, 2.0):
            p, q = sparse_rr_calibration(t, eps)
            assert math.isclose(p + 2 * t * q, 1.0, rel_tol=1e-12)
            assert math.isclose(p / q, math.exp(eps), rel_tol=1e-12)


@grades("sparse_rr_calibration", hidden=True)
def test_sparse_rr_calibration_is_stable_at_large_eps(sparse_rr_calibration):
    "eps = 800: p_t = 1 and q_t = e^-800 / ... underflow to 0 without NaN; eps = 0: both 1/(2t + 1)."
    p, q = sparse_rr_calibration(5, 800.0)
    assert p == 1.0 and q == 0.0
    p, q = sparse_rr_calibration(4, 0.0)
    assert math.isclose(p, 1 / 9, rel_tol=1e-12) and math.isclose(q, 1 / 9, rel_tol=1e-12)


@grades("sparse_rr_calibration", hidden=True)
def test_sparse_rr_calibration_rejects_bad_input(sparse_rr_calibration):
    "t < 0 or a negative eps: ValueError; a non-integer t: ValueError or TypeError."
    assert refused(sparse_rr_calibration, -1, 1.0) == "ValueError"
    assert refused(sparse_rr_calibration, 2, -1.0) == "ValueError"
    assert refused(sparse_rr_calibration, 1.5, 1.0) in ("ValueError", "TypeError")


# -------------------------------------------------------------------------------------------- sparse_rr_defect
CASES = [  # x, x', S(x), S(x'), p
    (0, 1, [-1, 0, 1], [0, 1, 2], 0.5),                   # overlapping windows, x in S(x')
    (0, 2, [-1, 0, 1], [1, 2, 3], 0.5),                   # x not in S(x')
    (0, 5, [-1, 0, 1], [4, 5, 6], 0.8),                   # disjoint supports
    (3, 4, [0, 3, 9, 12], [3, 4, 9, 20], 0.4),            # scattered supports of size 4
    (0, 1, [0, 1, 2, 3, 4], [0, 1, 2, 3, 4], 0.6),        # the same support
]


@grades("sparse_rr_defect", points=2)
def test_sparse_rr_defect_examples(sparse_rr_defect):
    "Windows of 3 with p = 1/2, q = 1/4, worked out by hand from the laws."
    cases = [((0, 2, [-1, 0, 1], [1, 2, 3], 0.5, 0.25, 1.0), (0.75, 0.0)),            # x outside S(x'): p + q
             ((0, 1, [-1, 0, 1], [0, 1, 2], 0.5, 0.25, math.log(2.0)), (0.25, 0.0)),   # [1/2 - 2/4]_+ = 0
             ((0, 1, [-1, 0, 1], [0, 1, 2], 0.5, 0.25, math.log(1.5)), (0.25, 0.125))]  # [1/2 - 1.5/4]_+
    for args, (leakage, excess) in cases:
        got = sparse_rr_defect(*args)
        assert math.isclose(got.support_leakage, leakage, rel_tol=1e-12), args
        assert math.isclose(got.overlap_excess, excess, rel_tol=1e-12, abs_tol=1e-15), args


@grades("sparse_rr_defect", points=2, hidden=True)
def test_sparse_rr_defect_matches_the_laws(sparse_rr_defect):
    "Support leakage and overlap excess of two RR laws, against the sums over their points."
    for x, xp, S, Sp, p in CASES:
        q = (1 - p) / (len(S) - 1)
        for eps in (0.2, 1.0, 3.0):
            got = sparse_rr_defect(x, xp, S, Sp, p, q, eps)
            leakage, excess = defect(window_law(x, S, p, q), window_law(xp, Sp, p, q), eps)
            assert math.isclose(got.support_leakage, leakage, rel_tol=1e-9, abs_tol=1e-15), (x, xp, S, Sp, p, eps)
            assert math.isclose(got.overlap_excess, excess, rel_tol=1e-9, abs_tol=1e-15), (x, xp, S, Sp, p, eps)


@grades("sparse_rr_defect")
def test_sparse_rr_defect_total_is_the_sum(sparse_rr_defect):
    "total = support leakage + overlap excess, and is at most 1."
    for x, xp, S, Sp, p in CASES:
        got = sparse_rr_defect(x, xp, S, Sp, p, (1 - p) / (len(S) - 1), 0.5)
        assert math.isclose(got.total, got.support_leakage + got.overlap_excess, rel_tol=1e-12, abs_tol=1e-15)
        assert -1e-15 <= got.total <= 1 + 1e-12


@grades("sparse_rr_defect", hidden=True)
def test_sparse_rr_defect_with_q_zero_is_all_leakage(sparse_rr_defect):
    "q = 0 (p = 1): the actual supports are {x} and {x'}, so the whole defect 1 is support leakage."
    got = sparse_rr_defect(0, 1, [-1, 0, 1], [0, 1, 2], 1.0, 0.0, 2.0)
    assert math.isclose(got.support_leakage, 1.0, rel_tol=1e-12) and abs(got.overlap_excess) <= 1e-15


@grades("sparse_rr_defect", hidden=True)
def test_sparse_rr_defect_rejects_bad_input(sparse_rr_defect):
    "x = x', a support that misses its own input, supports of different sizes: ValueError."
    assert refused(sparse_rr_defect, 0, 0, [-1, 0, 1], [-1, 0, 1], 0.5, 0.25, 1.0) == "ValueError"
    assert refused(sparse_rr_defect, 0, 1, [1, 2, 3], [0, 1, 2], 0.5, 0.25, 1.0) == "ValueError"
    assert refused(sparse_rr_defect, 0, 1, [-1, 0, 1], [0, 1, 2, 3], 0.5, 0.25, 1.0) == "ValueError"


# --------------------------------------------------------------------------------------- sparse_rr_line_defect
@grades("sparse_rr_line_defect", points=2, hidden=True)
def test_sparse_rr_line_defect_matches_the_window_laws(sparse_rr_line_defect):
    "Delta(0, h) of sparse RR on windows {x-t..x+t} with the calibrated p, for every case h <= t, t < h <= 2t, h > 2t."
    for t in (1, 2, 4):
        for eps in (0.3, 1.0, 3.0):
            p, q = calibration(t, eps)
            for h in range(1, 2 * t + 3):
                got = sparse_rr_line_defect(h, t, eps)
                leakage, excess = defect(window_law(0, range(-t, t + 1), p, q), window_law(h, range(h - t, h + t + 1), p, q),
                                         eps)
                assert math.isclose(got.support_leakage, leakage, rel_tol=1e-9, abs_tol=1e-15), (h, t, eps)
                assert math.isclose(got.overlap_excess, excess, rel_tol=1e-9, abs_tol=1e-15), (h, t, eps)


@grades("sparse_rr_line_defect", points=2)
def test_sparse_rr_line_defect_examples(sparse_rr_line_defect):
    "t = 1, p = 1/2 (q = 1/4), eps = log 1.5: Delta(0, 1) = 1/4 + 1/8, Delta(0, 2) = 3/4, Delta(0, 3) = 1."
    for h, total in [(1, 0.375), (2, 0.75), (3, 1.0)]:
        assert math.isclose(sparse_rr_line_defect(h, 1, math.log(1.5), p=0.5).total, total, rel_tol=1e-12), h


@grades("sparse_rr_line_defect", hidden=True)
def test_sparse_rr_line_defect_with_a_given_p(sparse_rr_line_defect):
    "With p= instead of the calibration, q = (1 - p)/(2t)."
    for t, p in [(1, 0.9), (2, 0.3), (3, 0.5)]:
        q = (1 - p) / (2 * t)
        for h in (1, t + 1, 2 * t + 1):
            got = sparse_rr_line_defect(h, t, 1.0, p=p)
            leakage, excess = defect(window_law(0, range(-t, t + 1), p, q), window_law(h, range(h - t, h + t + 1), p, q),
                                     1.0)
            assert math.isclose(got.total, leakage + excess, rel_tol=1e-9, abs_tol=1e-15), (h, t, p)


@grades("sparse_rr_line_defect", hidden=True)
def test_sparse_rr_line_defect_rejects_bad_input(sparse_rr_line_defect):
    "h < 1, t < 0 or a negative eps: ValueError."
    for h, t, eps in [(0, 2, 1.0), (1, -1, 1.0), (1, 2, -1.0)]:
        assert refused(sparse_rr_line_defect, h, t, eps) == "ValueError", (h, t, eps)
