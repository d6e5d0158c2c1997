"""Fuzz tests for ldpbook.adaptive: every public function returns a valid result or raises ValueError/TypeError
for generated inputs (NaN, +-inf, empty, wrong shapes and dtypes, bools, strings, huge sizes), never another
exception, a NaN or a hang."""
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ldpbook import adaptive
from test_fuzz_closeness import HUGE, check_no_nan, junk_arrays, junk_scalars, maybe

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALLOWED = (ValueError, TypeError)

points = st.lists(st.floats(0, 1), min_size=2, max_size=25).map(np.array)
points_2d = st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=20).map(np.array)
eps_values = st.sampled_from([1e-12, 1e-3, 0.5, 1.0, 30.0, 700.0, math.inf])


def run(call, *args, **kwargs):
    try:
        out = call(*args, **kwargs)
    except ALLOWED:
        return None
    check_no_nan(out)
    return out


@FUZZ
@given(maybe(st.integers(1, 10 ** 30)), maybe(st.lists(st.floats(0, 1), max_size=5).map(np.array), junk_arrays),
       maybe(st.integers(1, 64), st.one_of(junk_scalars, st.just(HUGE))), maybe(st.floats(0, 0.63)),
       maybe(st.integers(1, 4096), st.one_of(junk_scalars, st.just(HUGE), st.just(10 ** 9))))
def test_grid_and_alternative(n, t, scale, r, kappa):
    level = run(adaptive.dyadic_max_level, n)
    assert level is None or level >= 0
    run(adaptive.alternating_density, t, scale, r)
    masses = run(adaptive.alternating_cell_masses, scale, r, kappa)
    assert masses is None or (masses.min() >= -1e-15 and abs(masses.sum() - 1) < 1e-9)
    sample = run(adaptive.sample_alternating, n if isinstance(n, int) and n < 300 else 5, scale, r, rng=1)
    assert sample is None or (sample.min() >= 0 and sample.max() <= 1)


@FUZZ
@given(maybe(st.one_of(points, points_2d), junk_arrays), maybe(st.integers(0, 70)))
def test_dyadic_partitions(z, max_level):
    parts = run(adaptive.dyadic_partitions, z, max_level)
    assert parts is None or parts.n_shared_levels <= parts.max_level + 1


@FUZZ
@given(maybe(st.lists(st.floats(-50, 50), min_size=1, max_size=6), junk_arrays), maybe(st.floats(0.01, 0.99)))
def test_centering_and_scores(row, level):
    table = np.atleast_2d(np.asarray(row, dtype=object if isinstance(row, list) and any(
        isinstance(v, str) for v in row) else None))
    offsets = run(adaptive.centering_offsets, table, level=level)
    if offsets is not None:
        scores = run(adaptive.adaptive_scores, table, offsets)
        assert scores is not None
    run(adaptive.adaptive_scores, table, row)


@FUZZ
@given(maybe(st.integers(0, 4)), maybe(st.integers(2, 5)))
def test_multiscale_statistics(n_extra, n_x):
    z = np.linspace(0, 1, 6)
    parts = adaptive.dyadic_partitions(z, 4)
    is_x = np.zeros((2, 6 + (n_extra if isinstance(n_extra, int) and 0 <= n_extra <= 4 else 0)), dtype=bool)
    is_x[:, :3] = True
    run(adaptive.multiscale_statistics, parts, is_x, n_x, 3)
    run(adaptive.multiscale_statistics, "parts", is_x, n_x, 3)


@FUZZ
@given(maybe(st.one_of(points, points_2d), junk_arrays), maybe(st.one_of(points, points_2d), junk_arrays),
       maybe(eps_values), maybe(st.sampled_from([0.05, 0.1, 0.5])), maybe(st.integers(1, 9)),
       maybe(st.sampled_from([19, 39]), st.one_of(junk_scalars, st.integers(1, 18))),
       maybe(st.floats(0.01, 0.99)),
       maybe(st.sampled_from(["permutation", "none", "scaled", "range"]),
             st.one_of(junk_scalars, st.just("None"), st.just(""))))
def test_adaptive_test(x, y, eps, alpha, n_centering, n_permutations, level, centering):
    out = run(adaptive.adaptive_test, x, y, eps, alpha=alpha, n_centering=n_centering, n_permutations=n_permutations,
              centering_level=level, rng=3, centering=centering)
    assert out is None or isinstance(out.reject, bool)


@settings(max_examples=8, deadline=None)
@given(maybe(st.integers(1, 2)), maybe(st.integers(8, 30)),
       maybe(st.just((math.inf, 1.0)), st.one_of(st.just(()), st.just((0.0,)), st.just((math.nan,)))),
       maybe(st.just(((1, 0.0), (2, 0.3))), st.one_of(st.just(()), st.just(((2, 0.9),)), st.just(((0, 0.1),)),
                                                       st.just((("a", 0.1),)), st.just(((2, math.nan),)))),
       maybe(st.just((4,)), st.one_of(st.just(()), st.just((0,)), st.just((2.5,)))))
def test_figure3(n_reps, n, eps_values, scenarios, resolutions):
    run(adaptive.figure3_power, n_reps, n, eps_values, scenarios, resolutions, 19, 5, 0.05, 1, 1, None, False)
