"""Tests written for grading the approximate-privacy chapter (`ldpbook.approximate`).

Each test grades one function, which it receives as its only argument (the student's function, called in another
process). The graded functions are the two-output polygon's vertices and the four-output leaky randomized response:
their names are the chapter's own (the chapter's `is_approx_ldp` and `divergence_optimal` share their names with
functions of ldpbook.foundations and ldpbook.spr, which a submission needs to import). Expected values: hand-worked
numbers, and, in hidden tests only, the polygon's lines and the privacy defect in 40-digit mpmath.
"""
import math

import mpmath
import numpy as np

from ldpbook.assignments import grades, refused


def mp_defect(Q, eps):
    "max over ordered pairs of rows of sum_y (Q(y|x) - e^eps Q(y|x'))_+, in 40-digit arithmetic."
    with mpmath.workdps(40):
        e = mpmath.exp(mpmath.mpf(eps))
        return max(mpmath.fsum(max(mpmath.mpf(a) - e * mpmath.mpf(b), 0) for a, b in zip(Q[x], Q[y]))
                   for x in range(len(Q)) for y in range(len(Q)))


# ------------------------------------------------------------------------------------------ two_output_vertices
@grades("two_output_vertices", points=2)
def test_two_output_vertices_hand_worked(two_output_vertices):
    "At eps = log 3 and delta = 0.2: m* = 0.8/4 = 0.2, so the vertices are (0, 0.2), (0.2, 0.8), (0.8, 1)."
    got = [tuple(float(v) for v in pair) for pair in two_output_vertices(math.log(3.0), 0.2)]
    for (m, M), (em, eM) in zip(got, [(0.0, 0.2), (0.2, 0.8), (0.8, 1.0)]):
        assert math.isclose(m, em, abs_tol=1e-12) and math.isclose(M, eM, abs_tol=1e-12), got
    assert len(got) == 3


@grades("two_output_vertices", points=1)
def test_two_output_vertices_at_the_edges(two_output_vertices):
    "delta = 0: randomized response's levels 1/(e^eps + 1), e^eps/(e^eps + 1); delta = 1: every vertex is (0, 1)."
    (m0, M0), (m, M), (m1, M1) = two_output_vertices(1.0, 0.0)
    assert (m0, M0, m1, M1) == (0.0, 0.0, 1.0, 1.0)
    assert math.isclose(m, 1 / (math.e + 1), rel_tol=1e-12) and math.isclose(M, math.e / (math.e + 1), rel_tol=1e-12)
    assert all(math.isclose(a, b, abs_tol=1e-15) for pair in two_output_vertices(2.0, 1.0) for a, b in zip(pair, (0, 1)))


@grades("two_output_vertices", points=2, hidden=True)
def test_two_output_vertices_lie_where_the_lines_cross(two_output_vertices):
    "Each vertex is feasible and on the lines that define it (m = 0 and the first; both lines; M = 1 and the second)."
    rng = np.random.default_rng(12)
    for _ in range(30):
        eps, delta = float(rng.uniform(0, 5)), float(rng.uniform(0, 1))
        with mpmath.workdps(40):
            a = mpmath.exp(mpmath.mpf(eps))
            first = lambda m, M: M - a * m - delta                    # M - e^eps m <= delta
            second = lambda m, M: (1 - m) - a * (1 - M) - delta      # (1 - m) - e^eps (1 - M) <= delta
            (m0, M0), (m, M), (m1, M1) = [tuple(mpmath.mpf(float(v)) for v in pair)
                                          for pair in two_output_vertices(eps, delta)]
            assert m0 == 0 and abs(first(m0, M0)) < 1e-12 and second(m0, M0) < 1e-12
            assert abs(first(m, M)) < 1e-12 and abs(second(m, M)) < 1e-12
            assert M1 == 1 and abs(second(m1, M1)) < 1e-12 and first(m1, M1) < 1e-12


@grades("two_output_vertices", points=3)
def test_two_output_vertices_refuses_bad_parameters(two_output_vertices):
    "delta outside [0, 1] or NaN, and a negative eps, are ValueErrors."
    for eps, delta in ((1.0, -0.1), (1.0, 1.5), (1.0, float("nan")), (-1.0, 0.1)):
        assert refused(two_output_vertices, eps, delta) == "ValueError", f"eps={eps}, delta={delta}"


# ---------------------------------------------------------------------------------------------- leaky_rr_channel
@grades("leaky_rr_channel", points=2)
def test_leaky_rr_channel_hand_worked(leaky_rr_channel):
    "At eps = log 3 and delta = 0.2 the rows are (0.2, 0.6, 0.2, 0) and (0, 0.2, 0.6, 0.2)."
    R = np.asarray(leaky_rr_channel(math.log(3.0), 0.2), dtype=float)
    assert R.shape == (2, 4)
    assert np.allclose(R, [[0.2, 0.6, 0.2, 0.0], [0.0, 0.2, 0.6, 0.2]], rtol=0, atol=1e-12), R


@grades("leaky_rr_channel", points=2, hidden=True)
def test_leaky_rr_channel_is_exactly_on_the_privacy_boundary(leaky_rr_channel):
    "Rows sum to 1, the 40-digit privacy defect is at most delta, and within 1e-15 of it."
    rng = np.random.default_rng(13)
    for _ in range(30):
        eps, delta = float(rng.uniform(0, 6)), float(rng.uniform(0, 1))
        R = np.asarray(leaky_rr_channel(eps, delta), dtype=float)
        assert np.allclose(R.sum(axis=1), 1.0, atol=1e-12)
        defect = mp_defect(R, eps)
        assert defect <= delta and defect >= delta - 1e-15, f"eps={eps}, delta={delta}: defect {defect}"


@grades("leaky_rr_channel", points=1)
def test_leaky_rr_channel_refuses_bad_parameters(leaky_rr_channel):
    "delta outside [0, 1] or NaN, and a negative eps, are ValueErrors."
    for eps, delta in ((1.0, -0.1), (1.0, 1.5), (1.0, float("nan")), (-1.0, 0.1)):
        assert refused(leaky_rr_channel, eps, delta) == "ValueError", f"eps={eps}, delta={delta}"
