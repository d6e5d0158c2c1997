"""`bin_samples` labels are exact: floor(kappa x) of the real value of each double x, against rational arithmetic.

The reference below never uses floating point on x * kappa: Fraction(x) is the exact value of the double x, and
the label of a coordinate is min(floor(Fraction(x) * kappa), kappa - 1)."""
import math
from fractions import Fraction

import numpy as np
import pytest

from ldpbook.closeness import bin_samples


def reference_labels(points: np.ndarray, kappa: int) -> list:
    "Row-major labels from exact rational arithmetic (Python integers throughout)."
    points = points[:, None] if points.ndim == 1 else points
    labels = []
    for row in points.tolist():
        label = 0
        for coordinate in row:
            label = label * kappa + min(math.floor(Fraction(coordinate) * kappa), kappa - 1)
        labels.append(label)
    return labels


def boundary_points(kappa: int, n_boundaries: int, rng: np.random.Generator) -> np.ndarray:
    """Doubles at and next to cell boundaries j / kappa: the correctly rounded j / kappa, its neighbours one and two
    ulps away on each side, and the doubles just below and above the real boundary."""
    if kappa <= n_boundaries:
        js = list(range(kappa + 1))
    else:
        js = [0, 1, 2, kappa - 2, kappa - 1, kappa] + [int(j) for j in rng.integers(0, kappa, n_boundaries,
                                                                                     dtype=np.uint64)]
    points = []
    for j in js:
        c = j / kappa                                   # int / int: the correctly rounded boundary
        below, above = np.nextafter(c, 0.0), np.nextafter(c, 1.0)
        points += [c, below, above, np.nextafter(below, 0.0), np.nextafter(above, 1.0)]
    points = np.clip(np.array(points), 0.0, 1.0)
    return np.concatenate([points, rng.random(200), [0.0, 1.0, 5e-324, 2.2e-308, np.nextafter(1.0, 0.0)]])


NON_POWERS = [3, 5, 6, 7, 10, 12, 100, 1000, 999_983, 3 ** 20, 10 ** 9 + 7, 2 ** 52 - 1, 2 ** 52 + 1, 2 ** 53 - 1,
              2 ** 53 + 1, 3 * 2 ** 51, 10 ** 15 + 37, 3 ** 33, 10 ** 18 + 9, 3 ** 39, 2 ** 62 - 1, 2 ** 62 + 1,
              2 ** 62 + 12345, 2 ** 63 - 25, 2 ** 63 - 1]
POWERS = [1, 2, 16, 2 ** 30, 2 ** 53, 2 ** 62]


@pytest.mark.parametrize("kappa", NON_POWERS + POWERS)
def test_labels_exact_next_to_boundaries_1d(kappa):
    points = boundary_points(kappa, 400, np.random.default_rng(kappa % 2 ** 32))
    assert bin_samples(points, kappa).tolist() == reference_labels(points, kappa)


def test_known_misrounding_cases():
    # 3 * fl(1/3) rounds to 1.0 in floating point, but fl(1/3) < 1/3: the point lies in cell 0 of 3
    assert bin_samples([1 / 3, 2 / 3], 3).tolist() == [0, 1]
    assert reference_labels(np.array([1 / 3, 2 / 3]), 3) == [0, 1]
    # above 2^53 kappa itself is not a double: float(kappa) * 1.0 would give the label 2^62 of a cell that does
    # not exist, and a point just below 1/2 must not be put in the middle cell of the double grid
    kappa = 2 ** 62 + 1
    assert bin_samples([1.0, 0.5, np.nextafter(0.5, 0.0)], kappa).tolist() == [kappa - 1, kappa // 2,
                                                                               kappa // 2 - 2 ** 8]


@pytest.mark.parametrize("d,kappa", [(2, 3), (2, 1000), (2, 3_037_000_499), (3, 7), (3, 2_097_151), (4, 55_108),
                                     (5, 6_208), (2, 2 ** 31 - 1)])
def test_labels_exact_next_to_boundaries_multidimensional(d, kappa):
    rng = np.random.default_rng(d * 1_000_003 + kappa)
    pool = boundary_points(kappa, 200, rng)
    points = pool[rng.integers(0, pool.size, (3000, d))]
    assert bin_samples(points, kappa).tolist() == reference_labels(points, kappa)


def test_random_points_many_kappa():
    rng = np.random.default_rng(20261202)
    kappas = [int(k) for k in rng.integers(2, 2 ** 63 - 1, 40, dtype=np.int64)]
    kappas += [int(k) for k in rng.integers(2, 10 ** 6, 40)]
    for kappa in kappas:
        points = np.concatenate([rng.random(100), rng.random(20) * 1e-12, rng.random(20) ** 40])
        assert bin_samples(points, kappa).tolist() == reference_labels(points, kappa), kappa


def test_largest_accepted_resolutions():
    assert bin_samples([1.0], 2 ** 63 - 1).tolist() == [2 ** 63 - 2]
    assert bin_samples([[1.0, 1.0, 1.0]], 2 ** 21 - 1).tolist() == [(2 ** 21 - 1) ** 3 - 1]
    for kappa, d in [(2 ** 21, 3), (3_037_000_500, 2), (2, 63)]:
        with pytest.raises(ValueError, match="do not fit in int64 labels"):
            bin_samples(np.full((1, d), 0.5), kappa)
