"""Tests of the exact convex hull behind the three-output certificate of ldpbook.approximate (`_exact_hull`, gift
wrapping in mpmath): its facets against every hyperplane through D of the points with all on one side (brute force),
on random points and on degenerate sets (many points on one facet, repeated points, a cube's grid), from qhull's
simplices, from one seed only and from none."""
import itertools

import mpmath as mp
import numpy as np
import pytest

from ldpbook.approximate import _exact_hull, _float_seeds, _plane

TOL = mp.mpf(10) ** -35


def brute_facets(Z):
    "Every facet of conv(Z) as the set of points on it: each D-subset's hyperplane with every point on one side."
    D, out = len(Z[0]), set()
    for idx in itertools.combinations(range(len(Z)), D):
        plane = _plane([Z[i] for i in idx])
        if plane is None:
            continue
        n, b = plane
        side = [mp.fdot(n, z) - b for z in Z]
        if max(side) <= TOL or min(side) >= -TOL:
            out.add(frozenset(i for i, s in enumerate(side) if abs(s) <= TOL))
    return out


def point_sets(rng):
    "Random points, a cube's grid (in 4D its corners) and centre, points on a facet, near-repeated points."
    sets = []
    for D in (2, 3, 4):
        sets.append([[mp.mpf(float(v)) for v in row] for row in rng.normal(size=(12, D))])
        corners = [list(map(mp.mpf, c)) for c in itertools.product((0, 1, 2) if D < 4 else (0, 2), repeat=D)]
        sets.append(corners + [[mp.mpf(1)] * D])
        flat = [[mp.mpf(float(v)) for v in row] + [mp.mpf(0)] for row in rng.random((8, D - 1))]
        sets.append(flat + [[mp.mpf(0.5)] * (D - 1) + [mp.mpf(1)], [mp.mpf(0.3)] * (D - 1) + [mp.mpf(-1)]] + flat[:2])
        base = [[mp.mpf(float(v)) for v in row] for row in rng.normal(size=(8, D))]
        sets.append(base + [[v + mp.mpf(10) ** -20 * (j + 1) for j, v in enumerate(z)] for z in base[:3]])
    return sets


@pytest.mark.parametrize("start", ["qhull", "one", "none"])
def test_gift_wrapping_finds_every_facet(start):
    rng = np.random.default_rng(7)
    with mp.workdps(80):
        for Z in point_sets(rng):
            expected = brute_facets(Z)
            seeds = {"qhull": _float_seeds(Z), "none": itertools.combinations(range(len(Z)), len(Z[0]))}.get(start)
            if start == "one":                                  # D independent points of one facet
                S = min(expected, key=sorted)
                seeds = [next(T for T in itertools.combinations(sorted(S), len(Z[0]))
                              if _plane([Z[i] for i in T]) is not None)]
            found = _exact_hull(Z, seeds, TOL)
            assert found is not None and set(found) == expected, (len(Z), len(Z[0]))


def test_every_facet_supports_the_points_and_a_point_beyond_is_not_missed():
    "Each facet has every point on its inner side; adding a point beyond one facet changes the hull."
    rng = np.random.default_rng(8)
    with mp.workdps(80):
        Z = [[mp.mpf(float(v)) for v in row] for row in rng.normal(size=(15, 4))]
        facets = _exact_hull(Z, _float_seeds(Z), TOL)
        for S, (n, b, _) in facets.items():
            assert all(mp.fdot(n, z) <= b + TOL for z in Z) and len(S) >= 4
        S, (n, b, _) = next(iter(facets.items()))
        centre = [mp.fsum(Z[i][j] for i in S) / len(S) for j in range(4)]
        Z2 = Z + [[c + mp.mpf(10) ** -25 * v for c, v in zip(centre, n)]]      # 1e-25 beyond the facet's centre
        assert S not in _exact_hull(Z2, _float_seeds(Z2), TOL)
        assert set(_exact_hull(Z2, _float_seeds(Z2), TOL)) == brute_facets(Z2)
