"""Referee tests of ldpbook.chernoff: inputs the first test file did not reach, each checked against an independent
reference (exact arithmetic or a hand-derived value)."""
import math

import mpmath as mp
import numpy as np
import pytest

from ldpbook.chernoff import chernoff_information, chernoff_optimal, interval_upper_bound, spr_chernoff_information

mp.mp.dps = 50


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
