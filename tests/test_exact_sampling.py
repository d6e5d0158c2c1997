"""Exact sampling: `privatize` and sparse kernels' `sample` draw each output with the probability of the stored row
normalised in real arithmetic, however small, not with the probability of a floating-point cumulative sum.

The reference is rational arithmetic (fractions.Fraction): for a cell [K, K + 1)·2^-53 of the uniform U, the exact
cumulative sums decide the output, or show that the cell straddles a boundary (then either output is possible and
the draw must use more bits)."""
import bisect
import itertools
from fractions import Fraction

import numpy as np
import pytest

from ldpbook.foundations import _exact_draws, privatize, randomized_response
from ldpbook.sparse import truncated_additive

GRID = Fraction(1, 2 ** 53)


def exact_cell(row, T, K):
    """(j, certain, meets) for the cell [K, K + 1)·2^-53 (T: the row's exact cumulative sums): j the output of
    U = K·2^-53 by exact inversion; certain when the whole cell gives j; the outputs whose interval meets the cell."""
    S = T[-1]
    lo, hi = K * GRID * S, (K + 1) * GRID * S
    j = bisect.bisect_right(T, lo)
    first, last = bisect.bisect_right(T, lo), bisect.bisect_left(T, hi)
    meets = {i for i in range(first, min(last, len(T) - 1) + 1) if row[i] > 0}
    return j, hi <= T[j], meets


def adversarial_rows(rng):
    rows = [randomized_response(2, e)[0] for e in (25.0, 30.0, 37.0, 40.0, 100.0, 700.0)]
    rows += [randomized_response(3, e)[1] for e in (36.0, 45.0)]
    rows += [np.array([0.0, 0.5, 0.0, 0.5, 0.0]), np.array([1.0]), np.array([0.0, 1.0, 0.0])]
    rows.append(np.array([1.0 - 1e-10, 1e-10 - 5e-324, 5e-324]))               # a subnormal mass
    rows.append(np.array([5e-324, 1.0, 2 ** -60, 0.0, 2 ** -54]))
    for _ in range(6):                                                          # masses over 300 decades
        r = 10.0 ** -rng.uniform(0, 300, rng.integers(2, 40))
        rows.append(r / r.sum())
    rows.append(rng.dirichlet(np.ones(1000)))
    rows.append(np.array([0.3, 0.3, 0.4 + 5e-10]))                             # sums to 1 only within tolerance
    return rows


def cells_near_boundaries(row, rng):
    "K at and next to every exact boundary, and random K."
    T = list(itertools.accumulate(Fraction(float(v)) for v in row))
    ks = set(int(k) for k in rng.integers(0, 2 ** 53, 50, dtype=np.int64))
    for t in T[:-1]:
        k0 = int(t / T[-1] / GRID)
        ks.update(k for k in range(k0 - 2, k0 + 3) if 0 <= k < 2 ** 53)
    return sorted(ks)


def test_exact_draws_agree_with_rational_inversion():
    rng = np.random.default_rng(7)
    decided = straddling = 0
    for row in adversarial_rows(rng):
        ks = cells_near_boundaries(row, rng)
        Q = row[None, :]
        got = _exact_draws(Q, np.zeros(len(ks), dtype=np.intp), np.random.default_rng(0),
                           u=np.array([k * 2.0 ** -53 for k in ks]))
        T = list(itertools.accumulate(Fraction(float(v)) for v in row))
        for k, g in zip(ks, got):
            j, certain, meets = exact_cell(row, T, k)
            if certain:
                decided += 1
                assert g == j, (k, g, j)
            else:
                straddling += 1
                assert g in meets and len(meets) >= 2
    assert decided > 2000 and straddling > 20                  # both kinds of cells were exercised


class LastCell(np.random.Generator):
    "A generator whose uniforms all fall in the last cell [1 − 2^-53, 1); its other draws are PCG64's."
    def random(self, size=None, dtype=np.float64, out=None):
        return np.full(size, 1 - 2.0 ** -53)


def test_privatize_draws_an_output_of_mass_below_the_grid():
    "At ε = 40 the report 1 of x = 0 (ternary RR) has probability 4e-18: plain inversion in floats never draws it."
    R = randomized_response(3, 40.0)
    n = 40_000
    y = privatize(np.zeros(n, dtype=int), R, rng=LastCell(np.random.PCG64(3)))
    expected = float(Fraction(float(R[0, 1])) / sum(Fraction(float(v)) for v in R[0]) / GRID)
    share = (y == 1).mean()
    assert 0.03 < expected < 0.05
    assert abs(share - expected) < 5 * np.sqrt(expected * (1 - expected) / n), (share, expected)


def test_sparse_sample_draws_an_output_of_mass_below_the_grid():
    M = truncated_additive(np.array([1e-20, 1.0, 1e-20]), 1)
    n = 40_000
    y = M.sample(5, rng=LastCell(np.random.PCG64(4)), size=n)
    law = M.pmf(5)
    expected = float(Fraction(float(law.probabilities[-1])) / sum(map(Fraction, map(float, law.probabilities)))
                     / GRID)
    assert set(np.unique(y)) <= {5, 6}
    assert abs((y == 6).mean() - expected) < 5 * np.sqrt(expected / n) + 1e-12


def test_zero_mass_outputs_are_never_drawn_even_in_straddling_cells():
    Q = np.array([[0.5, 0.0, 0.0, 0.5, 0.0]])
    u = np.array([0.5 - 2.0 ** -53, 0.5, 1 - 2.0 ** -53, 0.0])
    got = _exact_draws(Q, np.zeros(4, dtype=np.intp), np.random.default_rng(0), u=u)
    assert list(got) == [0, 3, 3, 0]


def test_a_generator_off_the_grid_is_refused():
    class OffGrid(np.random.Generator):
        def random(self, size=None, dtype=np.float64, out=None):
            return np.full(size, 0.1 + 2.0 ** -60)
    with pytest.raises(ValueError, match="rng"):
        privatize([0, 1], randomized_response(2, 1.0), rng=OffGrid(np.random.PCG64(0)))


def test_privatize_law_on_a_small_channel():
    "A chi-square check that the fast path draws the stated law (a million draws)."
    from scipy.stats import chisquare
    Q = np.array([[0.7, 0.2, 0.1, 0.0], [0.05, 0.05, 0.3, 0.6]])
    x = np.repeat([0, 1], 500_000)
    y = privatize(x, Q, rng=11)
    for s in range(2):
        counts = np.bincount(y[x == s], minlength=4)
        assert counts[Q[s] == 0].sum() == 0
        keep = Q[s] > 0
        assert chisquare(counts[keep], 500_000 * Q[s][keep]).pvalue > 1e-4


def test_sparse_sample_refuses_outputs_below_the_float_range():
    """Sparse randomized response at ε = 800 and an exponential kernel at η = 500 have outputs of probability below
    e^-745 (log-probabilities finite, probabilities 0): leaving them out would release a law with an infinite privacy
    loss, so `sample` refuses, naming the rule and not the input; at ε = 700 the smallest outputs are drawn."""
    from ldpbook.sparse import sparse_exponential, sparse_randomized_response
    for mech in (sparse_randomized_response(5, 800.0), sparse_exponential(lambda x, y: -abs(x - y), 500.0, 10)):
        with pytest.raises(ValueError, match="below the float range") as err:
            mech.sample(3, rng=0, size=10)
        assert "3" not in str(err.value)
    law = sparse_randomized_response(5, 700.0).pmf(3)
    assert law.probabilities.min() > 0                        # e^-700 is a normal float: every output is drawable
    assert sparse_randomized_response(5, 700.0).sample(3, rng=0, size=10).size == 10
