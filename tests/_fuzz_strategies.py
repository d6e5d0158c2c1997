"""Shared hypothesis strategies for the fuzz tests: valid values mixed with every kind of bad input."""
import numpy as np
from hypothesis import strategies as st

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
