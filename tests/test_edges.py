"""Edges that the fuzz harness does not reach: valid or half-valid inputs (issue 39).

Masked arrays: numpy reads a masked array through its mask, so the hidden values would count as data. Every public
function that takes data refuses a masked entry (foundations' validation layer, `_refuse_masked`), with a message
that names the argument and how many entries are masked, never their values; an array whose mask hides nothing is
plain data."""
import numpy as np
import numpy.ma as ma
import pytest

from ldpbook.adaptive import adaptive_test
from ldpbook.chernoff import chernoff_information
from ldpbook.closeness import (bin_samples, dp_permutation_test, occupied_cell_counts, rb_statistic,
                               split_statistic)
from ldpbook.estimated import plugin_optimal
from ldpbook.foundations import divergence, is_ldp, ldp_epsilon, privatize
from ldpbook.sparse import skellam_pmf
from ldpbook.spr import divergence_optimal

P, Q = np.array([0.5, 0.25, 0.25]), np.array([0.25, 0.25, 0.5])
CHANNEL = np.array([[0.5, 0.5], [0.25, 0.75], [0.5, 0.5]])
X = np.array([0, 1, 2, 1, 0, 2, 1, 1])
Y = np.array([2, 2, 1, 0, 2, 2, 1, 0])
U = np.array([0.1, 0.5, 0.9, 0.3])


def masked(a, hide=1):
    "`a` as a masked array with its entry `hide` masked; the hidden value is a sentinel no function would accept."
    out = ma.masked_array(np.array(a, copy=True), mask=np.zeros(np.shape(a), dtype=bool))
    out.mask.flat[hide] = True
    out.data.flat[hide] = 123456789 if out.dtype.kind in "iu" else 1e300
    return out


def mechanism():
    return divergence_optimal(P, Q, 1.0)


# name -> (the call with one argument masked, the argument's name); one entry per public function that takes data
CALLS = {
    "divergence_optimal": (lambda: divergence_optimal(masked(P), Q, 1.0), "p"),
    "divergence": (lambda: divergence(P, masked(Q, 2)), "v"),
    "chernoff_information": (lambda: chernoff_information(masked(P), Q), "u"),
    "PartitionMechanism.sample": (lambda: mechanism().sample(masked(X), rng=1), "x"),
    "privatize": (lambda: privatize(masked(X), CHANNEL, rng=1), "x"),
    "dp_permutation_test": (lambda: dp_permutation_test(masked(X), Y, 1.0, k=3, rng=1), "x"),
    "rb_statistic": (lambda: rb_statistic(X, masked(Y, 3), k=3), "y"),
    "split_statistic": (lambda: split_statistic(masked(X), Y, k=3, rng=1), "x"),
    "occupied_cell_counts": (lambda: occupied_cell_counts(X, masked(Y)), "y"),
    "bin_samples": (lambda: bin_samples(masked(U), 4), "x"),
    "adaptive_test": (lambda: adaptive_test(masked(U), U[::-1].copy(), 1.0, rng=1), "x"),
    "plugin_optimal": (lambda: plugin_optimal(masked(X), Y, 1.0, k=3), "x0"),
    "skellam_pmf": (lambda: skellam_pmf(masked(np.array([0, 1, 2])), 1.5), "k"),
    "is_ldp": (lambda: is_ldp(masked(CHANNEL), 1.0), "Q"),
    "ldp_epsilon": (lambda: ldp_epsilon(masked(CHANNEL, 3)), "Q"),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_masked_entry_is_refused(name):
    call, argument = CALLS[name]
    with pytest.raises(ValueError) as err:
        call()
    message = str(err.value)
    assert message.startswith(f"{argument} has 1 masked entry"), message
    assert "123456789" not in message and "1e+300" not in message          # never the hidden value


def test_a_mask_that_hides_nothing_is_plain_data():
    open_mask = ma.masked_array(P, mask=np.zeros(3, dtype=bool))
    assert divergence_optimal(open_mask, Q, 1.0).value == divergence_optimal(P, Q, 1.0).value
    assert np.array_equal(privatize(ma.masked_array(X, mask=False), CHANNEL, rng=3), privatize(X, CHANNEL, rng=3))
    assert is_ldp(ma.masked_array(CHANNEL), 0.7, rtol=0) and not is_ldp(ma.masked_array(CHANNEL), 0.69, rtol=0)
    assert ldp_epsilon(ma.masked_array(CHANNEL)) == ldp_epsilon(CHANNEL)


def test_the_count_of_masked_entries_is_reported():
    x = ma.masked_array(X, mask=[True, False, True, False, False, True, False, False])
    with pytest.raises(ValueError, match="x has 3 masked entries"):
        privatize(x, CHANNEL, rng=1)


# ---------------------------------------------------------------- a misspelled keyword (issue 34, item 4)

@pytest.mark.parametrize("call, wrong, right", [
    (lambda: plugin_optimal(X, Y, 1.0, k=3, confidance=0.9), "confidance", "confidence"),
    (lambda: divergence_optimal(P, Q, 1.0, divergnce="tv"), "divergnce", "divergence"),
    (lambda: divergence_optimal(P, Q, 1.0, divergence="renyi", alpah=2.0), "alpah", "alpha"),
    (lambda: divergence_optimal(P, Q, 1.0, divergence="egamma", gama=2.0), "gama", "gamma"),
    (lambda: divergence(P, Q, kind="renyi", alpah=2.0), "alpah", "alpha"),
])
def test_a_misspelled_keyword_is_named_with_its_correction(call, wrong, right):
    with pytest.raises(TypeError) as err:
        call()
    assert f"unexpected keyword argument {wrong!r} (did you mean {right!r}?)" in str(err.value), str(err.value)


def test_a_keyword_close_to_nothing_is_named_without_a_guess():
    with pytest.raises(TypeError) as err:
        divergence_optimal(P, Q, 1.0, zzz=1.0)
    assert "unexpected keyword argument 'zzz':" in str(err.value) and "did you mean" not in str(err.value)
