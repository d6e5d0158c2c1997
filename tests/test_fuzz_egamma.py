"""Fuzz tests for ldpbook.egamma: for generated inputs — NaN, ±inf, empty and ragged arrays, wrong shapes and dtypes,
bools, strings, None, tiny and huge ε and γ — every public function either returns a valid result or raises
ValueError / TypeError. Never another exception, a NaN, a negative value where a divergence is returned, a hang
(each call has a time limit) or a parameter-sized allocation (the process runs under an address-space cap).

`fuzz_call`, `check_finite_result`, `weird` and `memory_cap` are shared with tests/test_fuzz_sparse.py.
"""
import dataclasses
import math
import os
import resource
import signal
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ldpbook.egamma import (binary_rr_channel, egamma_closed_form, egamma_lp, egamma_optimal, lr_distance,
                            lr_distance_optimal, neyman_pearson_curve, privatized_roc)

CALL_SECONDS = 20           # a call that takes longer counts as a hang
MEMORY_HEADROOM = 3 * 2 ** 30
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


class Hang(Exception):
    "Raised by the timer: the call under test took more than CALL_SECONDS."


@contextmanager
def time_limit(seconds=CALL_SECONDS):
    "Raise Hang after `seconds` (where the platform has interval timers; elsewhere no limit)."
    if not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(signum, frame):
        raise Hang(f"call took more than {seconds} s")
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def memory_cap(headroom=MEMORY_HEADROOM):
    "Cap the address space at its current size plus `headroom`: a parameter-sized allocation fails as MemoryError."
    "(Linux; where the size or the limit is not available, no cap.)"
    try:
        with open("/proc/self/status") as status:
            size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = size + headroom if hard == resource.RLIM_INFINITY else min(size + headroom, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (OSError, ValueError, StopIteration, AttributeError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def check_finite_result(value, nonnegative=False, where="result"):
    "No NaN anywhere in a result (numbers, arrays, tuples, dataclasses); optionally no negative number."
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            check_finite_result(getattr(value, f.name), nonnegative, f"{where}.{f.name}")
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            check_finite_result(item, nonnegative, f"{where}[{i}]")
    elif isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        assert not np.any(np.isnan(value)), f"NaN in {where}"
        assert not nonnegative or not np.any(value < 0), f"negative value in {where}"
    elif isinstance(value, (float, np.floating)):
        assert not math.isnan(value), f"NaN in {where}"
        assert not nonnegative or value >= 0, f"negative value in {where}"


def fuzz_call(fn, *args, nonnegative=False, **kwargs):
    "Call fn; ValueError / TypeError are accepted answers, anything else fails; a result is checked for NaN."
    try:
        with time_limit():
            result = fn(*args, **kwargs)
    except (ValueError, TypeError):
        return None
    check_finite_result(result, nonnegative, getattr(fn, "__name__", "result"))
    return result


SPECIALS = [None, True, False, "0.5", "abc", b"1", 0, -1, 0.0, -0.0, 1e-320, 1e-300, 1e308,
            math.inf, -math.inf, math.nan, 0.5 + 0.5j, [], [[]], [0.5, "a"], [[0.5, 0.5], [1.0]], {"a": 1}, (0.5, 0.5),
            np.array([]), np.zeros((0, 3)), np.zeros((2, 2)), np.array(["a", "b"]), np.array([True, False]),
            np.array([0.5 + 0j, 0.5]), np.array([None, 1.0], dtype=object), np.array([np.nan, 1.0]),
            np.array([np.inf, 0.0]), np.array([0.7, 0.7]), np.array([-0.5, 1.5]), np.float32(0.5), np.int8(3),
            np.bool_(True), slice(1)]


def weird():
    "Anything a careless or adversarial caller might pass."
    return st.one_of(st.sampled_from(SPECIALS),
                     st.floats(allow_nan=True, allow_infinity=True),
                     st.integers(min_value=-10 ** 20, max_value=10 ** 20),
                     st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=5),
                     st.text(max_size=4))


def maybe(valid):
    "A valid value most of the time, a weird one otherwise."
    return st.one_of(valid, valid, weird())


def distributions(k):
    "Probability vectors of length k with zeros and masses down to 1e-300."
    raw = st.lists(st.one_of(st.just(0.0), st.just(1e-300), st.floats(1e-12, 1.0)), min_size=k, max_size=k)
    return raw.filter(lambda v: sum(v) > 0).map(lambda v: np.array(v) / sum(v))


EPS = st.one_of(st.floats(0, 700), st.sampled_from([0.0, 1e-12, 1e-300, 700.0, 708.0, 709.0, 1e6, math.inf]))
GAMMA = st.one_of(st.floats(0, 1e6), st.sampled_from([0.0, 1.0, 1e-300, 1e6, 1e300]))


@st.composite
def pair(draw):
    k = draw(st.integers(1, 6))
    return draw(maybe(distributions(k))), draw(maybe(distributions(k)))


@st.composite
def channels(draw, k_max=6):
    k, m = draw(st.integers(1, k_max)), draw(st.integers(1, 4))
    rows = draw(st.lists(st.lists(st.floats(0, 1), min_size=m, max_size=m), min_size=k, max_size=k))
    Q = np.array(rows) + 1e-3
    return Q / Q.sum(axis=1, keepdims=True)


@pytest.fixture(autouse=True, scope="module")
def _capped():
    with memory_cap():
        yield


# ---------------------------------------------------------------- the fuzz tests

@FUZZ
@given(pair())
def test_fuzz_neyman_pearson_curve(pq):
    result = fuzz_call(neyman_pearson_curve, *pq, nonnegative=True)
    if result is not None:
        fpr, tpr = result
        assert fpr[0] == tpr[0] == 0 and fpr[-1] == tpr[-1] == 1 and np.all(np.diff(fpr) >= 0)


@FUZZ
@given(maybe(EPS), maybe(GAMMA), maybe(st.floats(0, 1)))
def test_fuzz_egamma_closed_form(eps, gamma, e_gamma):
    fuzz_call(egamma_closed_form, e_gamma, eps, gamma=gamma, nonnegative=True)


@FUZZ
@given(maybe(st.lists(st.booleans(), min_size=1, max_size=6).map(np.array)), maybe(EPS))
def test_fuzz_binary_rr_channel(inside, eps):
    channel = fuzz_call(binary_rr_channel, inside, eps, nonnegative=True)
    if channel is not None:
        assert np.allclose(channel.sum(axis=1), 1)


@FUZZ
@given(pair(), maybe(EPS), maybe(GAMMA), maybe(st.lists(st.integers(0, 5), max_size=5)), maybe(st.integers(0, 9)))
def test_fuzz_egamma_optimal_and_sample(pq, eps, gamma, x, rng):
    mech = fuzz_call(egamma_optimal, *pq, eps, gamma=gamma, nonnegative=True)
    if mech is not None:
        assert all(mech.partition) and mech.num_outputs == mech.channel.shape[1] == len(mech.partition)
        assert math.copysign(1.0, mech.value) == 1.0
        fuzz_call(mech.sample, x, rng)


@settings(FUZZ, max_examples=30)
@given(pair(), maybe(EPS), maybe(GAMMA))
def test_fuzz_egamma_lp(pq, eps, gamma):
    value = fuzz_call(egamma_lp, *pq, eps, gamma=gamma, nonnegative=True)
    assert value is None or math.copysign(1.0, value) == 1.0


@settings(FUZZ, max_examples=40)
@given(pair(), maybe(EPS), st.one_of(st.none(), maybe(st.lists(GAMMA, min_size=1, max_size=4))),
       st.one_of(st.none(), maybe(channels())), maybe(st.floats(0, 1)), maybe(st.sampled_from(["private", "channel"])))
def test_fuzz_privatized_roc(pq, eps, gammas, channel, alpha, curve):
    roc = fuzz_call(privatized_roc, *pq, eps, gammas=gammas, channel=channel, nonnegative=True)
    if roc is not None:
        fuzz_call(roc.tpr_at, alpha, curve=curve, nonnegative=True)


@FUZZ
@given(maybe(channels()), pair(), maybe(st.one_of(st.floats(1, 100), st.just(math.inf))), maybe(EPS))
def test_fuzz_lr_distance_and_bound(Q, pq, r, eps):
    fuzz_call(lr_distance, p=pq[0], q=pq[1], Q=Q, r=r, nonnegative=True)
    fuzz_call(lr_distance_optimal, *pq, eps, r=r, nonnegative=True)


def test_integers_beyond_the_float_range_are_value_errors():
    for call in (lambda: egamma_optimal([1.0], [10 ** 400], 1.0, gamma=1.0),
                 lambda: egamma_optimal([1.0], [1.0], 10 ** 400, gamma=1.0)):
        with pytest.raises(ValueError):
            call()


def test_the_harness_can_fail():
    "fuzz_call lets ValueError / TypeError through as answers, and fails on any other exception or a NaN."
    assert fuzz_call(egamma_optimal, [0.5, 0.5], [0.5], 1.0, gamma=1.0) is None
    with pytest.raises(ZeroDivisionError):
        fuzz_call(lambda: 1 / 0)
    with pytest.raises(AssertionError, match="NaN"):
        fuzz_call(lambda: (1.0, np.array([np.nan])))
    with pytest.raises(AssertionError, match="negative"):
        fuzz_call(lambda: -1e-17, nonnegative=True)
    if os.path.exists("/proc/self/status"):                      # the address-space cap works here
        with pytest.raises(MemoryError), memory_cap(2 ** 28):
            np.ones(2 ** 30)
