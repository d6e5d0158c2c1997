"""Fuzz tests for ldpbook.closeness: for generated inputs (NaN, +-inf, empty, wrong shapes and dtypes, bools,
strings, tiny and huge eps, huge k and labels) every public function returns a valid result or raises ValueError /
TypeError - never another exception, a NaN or a hang."""
import dataclasses

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ldpbook import closeness

# ------------------------------------------------------------------ strategies (test_fuzz_adaptive uses them too)
HUGE = 10 ** 12

junk_scalars = st.one_of(
    st.none(), st.booleans(), st.just(np.bool_(True)), st.integers(-5, 5), st.integers(HUGE, 10 ** 400),
    st.sampled_from([0.0, -1.0, 1e-300, 1e-12, 1e300, 700.0, float("nan"), float("inf"), float("-inf")]),
    st.text(max_size=3), st.just("1"), st.just(b"1"), st.just(1 + 2j), st.just(object()), st.just([1, 2]),
)

junk_arrays = st.one_of(
    st.just(np.array([])), st.just(np.array([], dtype=int)), st.just(np.zeros((2, 2, 2))),
    st.just(np.array([np.nan, 0.5])), st.just(np.array([np.inf, 0.5])), st.just(np.array([-np.inf, 0.5])),
    st.just(np.array([True, False, True])), st.just(np.array(["a", "b"])), st.just(np.array([1 + 1j, 2])),
    st.just(np.array([0.5, 2.0, 0.1])), st.just(np.array([-1, 3, 2])), st.just(np.array([10 ** 15, 0, 3])),
    st.just(np.array([0, 1], dtype=np.uint8)), st.just(np.array([[0.1, 0.9], [0.3, 0.2]])),
    st.just(np.array(0.5)), st.just([0.1, "x"]), st.just(np.array([1.0, 2.0], dtype=object)),
    st.lists(st.integers(0, 6), min_size=0, max_size=12).map(np.array),
    st.lists(st.floats(0, 1), min_size=0, max_size=12).map(np.array),
)


def maybe(valid, bad=junk_scalars, p_bad=3):
    "A strategy that is usually valid and sometimes bad."
    return st.one_of(*([valid] * p_bad), bad)


def check_no_nan(value):
    "A returned array or number must not contain NaN."
    for item in (value if isinstance(value, tuple) else (value,)):
        arr = np.asarray(item)
        if arr.dtype.kind in "fc":
            assert not np.isnan(arr).any(), "a NaN was returned"


FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALLOWED = (ValueError, TypeError)

labels = st.lists(st.integers(0, 7), min_size=2, max_size=30).map(np.array)
huge_labels = st.lists(st.sampled_from([0, 3, HUGE, 10 ** 9]), min_size=2, max_size=10).map(np.array)
eps_values = st.sampled_from([1e-12, 1e-3, 0.5, 1.0, 30.0, 700.0, np.inf])
ks = st.one_of(st.none(), st.integers(8, 20), st.just(HUGE), st.just(10 ** 9))


def run(call, *args, **kwargs):
    "Call; allow ValueError/TypeError; check the result for NaN."
    try:
        out = call(*args, **kwargs)
    except ALLOWED:
        return None
    if dataclasses.is_dataclass(out):
        for field in dataclasses.fields(out):
            value = getattr(out, field.name)
            if isinstance(value, (float, np.ndarray)):
                check_no_nan(value)
    else:
        check_no_nan(out)
    return out


@FUZZ
@given(maybe(st.floats(1, 1e12)), maybe(eps_values), maybe(st.floats(0.05, 5)), maybe(st.integers(1, 6)))
def test_rates(n, eps, s, d):
    for call in (closeness.minimax_separation, closeness.sample_complexity):
        run(call, n if call is closeness.minimax_separation else (n % 1 if isinstance(n, float) else n), eps, s, d)


@FUZZ
@given(maybe(st.floats(0, 1)), maybe(st.floats(0.05, 5)), maybe(st.integers(1, 6)))
def test_phase_exponents(alpha, s, d):
    run(closeness.phase_exponents, alpha, s, d)


@FUZZ
@given(maybe(st.one_of(labels, huge_labels), junk_arrays), maybe(st.one_of(labels, huge_labels), junk_arrays),
       maybe(ks), st.sampled_from(["rb", "split"]))
def test_statistics_and_the_test(x, y, k, name):
    run(closeness.rb_statistic, x, y, k=k)
    run(closeness.split_statistic, x, y, k=k, rng=0)
    run(closeness.permutation_statistics, x, y, k=k, statistic_name=name, n_permutations=19, rng=1)
    out = run(closeness.dp_permutation_test, x, y, 1.0, k=k, statistic_name=name, n_permutations=19, alpha=0.05,
              rng=2)
    assert out is None or isinstance(out.reject, bool)


@FUZZ
@given(maybe(eps_values), maybe(st.sampled_from([19, 39, 99]), st.one_of(junk_scalars, st.integers(1, 18))),
       maybe(st.floats(0.01, 0.5)), maybe(st.sampled_from(["rb", "split"]), junk_scalars))
def test_dp_permutation_test_parameters(eps, n_permutations, alpha, name):
    x, y = np.array([0, 1, 1, 2, 2]), np.array([2, 2, 1, 0, 3])
    run(closeness.dp_permutation_test, x, y, eps, statistic_name=name, n_permutations=n_permutations, alpha=alpha,
        rng=3)


@FUZZ
@given(maybe(st.floats(-50, 50)), maybe(st.lists(st.floats(-50, 50), min_size=1, max_size=40).map(np.array),
                                        junk_arrays), maybe(eps_values), maybe(st.floats(0.5, 8)),
       maybe(st.floats(0.01, 0.9)))
def test_noise_and_decision(observed, permuted, eps, sensitivity, alpha):
    p = run(closeness.noisy_permutation_pvalue, observed, permuted, eps, sensitivity=sensitivity, rng=1)
    assert p is None or 0 < p <= 1
    decision = run(closeness.dp_permutation_decision, observed, permuted, eps, sensitivity=sensitivity, alpha=alpha,
                   rng=1)
    assert decision is None or isinstance(decision, bool)
    scale = run(closeness.laplace_scale, sensitivity, eps)
    assert scale is None or scale >= 0
    run(closeness.smallest_n_permutations, alpha)


@FUZZ
@given(maybe(st.lists(st.integers(0, 5), min_size=1, max_size=6).map(np.array), junk_arrays),
       maybe(st.lists(st.integers(0, 5), min_size=1, max_size=6).map(np.array), junk_arrays),
       maybe(st.integers(5, 9)), maybe(st.integers(5, 9)))
def test_rb_cell_values(u, v, n_x, n_y):
    run(closeness.rb_cell_values, u, v, n_x, n_y)


@FUZZ
@given(maybe(st.lists(st.floats(0, 1), min_size=1, max_size=20).map(np.array), junk_arrays),
       maybe(st.integers(1, 64), st.one_of(junk_scalars, st.just(HUGE), st.just(2 ** 40))))
def test_bin_samples(x, kappa):
    out = run(closeness.bin_samples, x, kappa)
    assert out is None or (out.dtype == np.int64 and out.min() >= 0)


@FUZZ
@given(maybe(st.integers(1, 200)), maybe(st.floats(0, 0.63)))
def test_sine_alternative(n, r):
    out = run(closeness.sample_sine_alternative, n, r, rng=1)
    assert out is None or (out.min() >= 0 and out.max() <= 1)


def _coin(p, rng):
    return (rng.random() < p,)


def _flip(flip, rng):
    return bool(flip)


@settings(max_examples=15, deadline=None)
@given(maybe(st.lists(st.floats(0, 1), min_size=1, max_size=3)), maybe(st.integers(1, 20)),
       maybe(st.integers(0, 5)), maybe(st.sampled_from([None, 1, 2])), maybe(st.integers(1, 5)))
def test_power_curve(grid, n_reps, rng, n_jobs, chunk_size):
    run(closeness.power_curve, _flip, _coin, grid, n_reps=n_reps, rng=rng, n_jobs=1 if n_jobs == 2 else n_jobs,
        backend=None, progress=False, chunk_size=chunk_size)


@settings(max_examples=10, deadline=None)
@given(maybe(st.integers(1, 2)), maybe(st.just((0.0, 0.3)), st.one_of(junk_scalars, st.just(()),
                                                                        st.just((0.9,)), st.just((np.nan,)))),
       maybe(st.just((1.0, np.inf)), st.one_of(st.just(()), st.just((0.0,)), st.just((np.nan,)))),
       maybe(st.integers(10, 40)), maybe(st.integers(2, 6)), maybe(st.sampled_from([19, 39])))
def test_figure2(n_reps, r_values, eps_values, n, kappa, n_permutations):
    run(closeness.figure2, n_reps=n_reps, r_values=r_values, eps_values=eps_values, n=n, kappa=kappa,
        n_permutations=n_permutations, alpha=0.05, rng=1, n_jobs=1, backend=None, progress=False)


@FUZZ
@given(maybe(st.one_of(labels, huge_labels), junk_arrays), maybe(st.one_of(labels, huge_labels), junk_arrays),
       maybe(st.integers(0, 3)), maybe(st.integers(0, 3)))
def test_occupied_counts_and_one_repetition(x, y, g, j):
    counts = run(closeness.occupied_cell_counts, x, y)
    assert counts is None or (counts[0].sum() == len(x) and counts[1].sum() == len(y))
    out = run(closeness.one_repetition, _flip, _coin, 0.5, 7, (), g, j)
    assert out is None or out.dtype == bool
