"""Tests written for grading the SPR chapter (`ldpbook.spr`).

Each test grades one function, which it receives as its only argument (the student's function, called in another
process). The expected values are independent of the function under test: brute force over every partition of a
small alphabet, randomized response on the block label built from ldpbook.foundations, the output laws of the returned
channel itself. The helpers that would compute an assigned function (brute force) serve hidden tests only, so that
the visible tests a student reads do not hand out an answer.
"""
import math

import numpy as np

from ldpbook.assignments import grades, refused
from ldpbook.foundations import divergence, is_ldp, randomized_response
from ldpbook.spr import spr_mechanism            # the value of a given partition, in the grader

PAIRS = [(np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])),
         (np.array([0.05, 0.3, 0.15, 0.35, 0.15]), np.array([0.3, 0.1, 0.25, 0.05, 0.3]))]
NULL_PAIR = (np.array([0.35, 0.0, 0.15, 0.5]), np.array([0.2, 0.0, 0.6, 0.2]))     # symbol 1: p = q = 0


def set_partitions(k):
    "Every partition of {0, ..., k-1} into non-empty blocks (brute force)."
    if k == 0:
        yield []
        return
    for smaller in set_partitions(k - 1):
        for j in range(len(smaller)):
            yield smaller[:j] + [smaller[j] + [k - 1]] + smaller[j + 1:]
        yield smaller + [[k - 1]]


def block_rr_channel(blocks, k, eps):
    "Randomized response on the block label, built from ldpbook.foundations."
    label = np.empty(k, dtype=int)
    for j, block in enumerate(blocks):
        label[list(block)] = j
    return randomized_response(len(blocks), eps)[label]


def achieved(channel, p, q, kind="kl", **params):
    "D_f between the two output laws of a channel."
    channel = np.asarray(channel, dtype=float)
    return divergence(channel.T @ p, channel.T @ q, kind=kind, **params)


def best_by_brute_force(p, q, eps, kind="kl", ell=None, **params):
    "The largest D_f over the SPR channels of every partition (with at most `ell` blocks)."
    return max(achieved(block_rr_channel(b, p.size, eps), p, q, kind, **params)
               for b in set_partitions(p.size) if ell is None or len(b) <= ell)


def check_channel(mech, k, eps, kind="kl", p=None, q=None, **params):
    """The mechanism's channel is a k × s eps-LDP channel, one column per block of a partition of {0..k-1}, that
    reports its block most likely; with p, q: its value is the divergence its channel achieves, and the symbols
    with p = q = 0 are in the first block (as the docstring says)."""
    channel = np.asarray(mech.channel, dtype=float)
    blocks = [sorted(int(x) for x in block) for block in mech.partition]
    assert sorted(x for block in blocks for x in block) == list(range(k)), "the partition must cover the alphabet"
    assert channel.shape == (k, len(blocks))
    assert np.allclose(channel.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert is_ldp(channel, eps), "the channel must be eps-LDP"
    for j, block in enumerate(blocks):
        assert np.all(channel[block, j] >= channel[block].max(axis=1) * (1 - 1e-12)), "output j reports block j"
    if p is not None:
        assert math.isclose(mech.value, achieved(channel, p, q, kind, **params), rel_tol=1e-9, abs_tol=1e-15), \
            "value must be what the channel achieves"
        null = {x for x in range(k) if p[x] == 0 and q[x] == 0}
        assert null <= set(blocks[0]), "the symbols with p = q = 0 must be in the first block"


# ----------------------------------------------------------------------------------------- divergence_optimal
@grades("divergence_optimal", points=2)
def test_divergence_optimal_achieves_its_value_and_beats_simple_partitions(divergence_optimal):
    """The eps-LDP channel achieves the value, which beats one block per symbol and the split at p >= q; a negative
    eps is refused."""
    for p, q in PAIRS:
        assert refused(divergence_optimal, p, q, -1.0) in ("ValueError", "TypeError"), "eps = -1 was accepted"
        for eps in (0.5, 2.0, np.inf):
            mech = divergence_optimal(p, q, eps, divergence="kl")
            check_channel(mech, p.size, eps, "kl", p, q)
            singletons = spr_mechanism(p, q, eps, [[x] for x in range(p.size)]).value
            halves = spr_mechanism(p, q, eps, [np.flatnonzero(p < q), np.flatnonzero(p >= q)]).value
            assert mech.value >= max(singletons, halves) * (1 - 1e-12)


@grades("divergence_optimal", points=3, hidden=True)
def test_divergence_optimal_beats_every_partition(divergence_optimal):
    """KL, chi^2, Hellinger, E_gamma: the value is the best over all partitions (with at most ell blocks when ell
    is given), and the channel achieves it; a symbol with p = q = 0 joins the first block."""
    for p, q in [*PAIRS, NULL_PAIR]:
        for eps in (0.5, 2.0, 5.0, np.inf):
            mech = divergence_optimal(p, q, eps, divergence="kl")
            check_channel(mech, p.size, eps, "kl", p, q)
            best = best_by_brute_force(p, q, eps)
            assert math.isclose(mech.value, best, rel_tol=1e-9), f"value {mech.value} != best {best} at eps={eps}"
    p, q = PAIRS[0]
    for ell in (2, 3):
        mech = divergence_optimal(p, q, 5.0, divergence="kl", ell=ell)
        check_channel(mech, p.size, 5.0, "kl", p, q)
        best = best_by_brute_force(p, q, 5.0, ell=ell)
        assert len(mech.partition) <= ell, f"{len(mech.partition)} blocks with ell={ell}"
        assert math.isclose(mech.value, best, rel_tol=1e-9), f"value {mech.value} != best {best} with ell={ell}"
    p, q = PAIRS[1]
    for kind, params in [("chi2", {}), ("hellinger", {}), ("egamma", {"gamma": 1.5})]:
        mech = divergence_optimal(p, q, 1.0, divergence=kind, **params)
        check_channel(mech, p.size, 1.0, kind, p, q, **params)
        best = best_by_brute_force(p, q, 1.0, kind, **params)
        assert math.isclose(mech.value, best, rel_tol=1e-9), f"{kind}: value {mech.value} != best {best}"


@grades("divergence_optimal", points=2)
def test_divergence_optimal_null_symbols_join_first_block(divergence_optimal):
    "Symbols with p = q = 0 are in the first block, as the docstring says."
    p = np.array([0.5, 0.0, 0.3, 0.0, 0.2])
    q = np.array([0.1, 0.0, 0.3, 0.0, 0.6])
    for eps in (0.5, 3.0):
        mech = divergence_optimal(p, q, eps, divergence="kl")
        check_channel(mech, 5, eps, "kl", p, q)
        first = {int(x) for x in mech.partition[0]}
        assert {1, 3} <= first and len(mech.partition) >= 2


@grades("divergence_optimal", points=2, hidden=True)
def test_divergence_optimal_respects_the_output_budget(divergence_optimal):
    "With ell, at most ell outputs and the best value over partitions of at most ell blocks."
    p, q = PAIRS[1]
    for ell in (1, 2, 3):
        mech = divergence_optimal(p, q, 4.0, divergence="kl", ell=ell)
        best = best_by_brute_force(p, q, 4.0, ell=ell)
        assert np.asarray(mech.channel).shape[1] <= ell
        assert math.isclose(mech.value, best, rel_tol=1e-9, abs_tol=1e-15)


@grades("divergence_optimal", hidden=True)
def test_divergence_optimal_at_eps_zero_and_infinity(divergence_optimal):
    "eps = 0: nothing can be learnt (value 0); eps = inf: the best deterministic quantizer."
    p, q = PAIRS[0]
    assert abs(divergence_optimal(p, q, 0.0, divergence="tv").value) <= 1e-12
    mech = divergence_optimal(p, q, np.inf, divergence="tv")
    assert math.isclose(mech.value, 0.5 * np.abs(p - q).sum(), rel_tol=1e-9)


@grades("divergence_optimal", points=2, hidden=True)
def test_divergence_optimal_rejects_bad_input(divergence_optimal):
    "Lengths that differ, a negative eps, masses that are not a distribution, NaN: ValueError or TypeError."
    p, q = PAIRS[0]
    for bad in [(p[:3], q, 1.0), (p, q, -1.0), (p * 2, q, 1.0), (p, np.full(4, np.nan), 1.0)]:
        assert refused(divergence_optimal, *bad) in ("ValueError", "TypeError"), "bad input was accepted"


# ------------------------------------------------------------------------------------------------ spr_channel
@grades("spr_channel", points=2)
def test_spr_channel_example(spr_channel):
    """Blocks {0, 3}, {1}, {2, 4} at eps = log 2: 2/4 for the own block, 1/4 for each other; overlapping blocks are
    refused."""
    channel = np.asarray(spr_channel([(0, 3), (1,), (2, 4)], 5, math.log(2.0)), dtype=float)
    expected = np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5], [0.5, 0.25, 0.25],
                         [0.25, 0.25, 0.5]])
    assert channel.shape == (5, 3) and np.allclose(channel, expected, rtol=1e-12, atol=0)
    assert refused(spr_channel, [(0, 3), (1, 3), (2, 4)], 5, 1.0) in ("ValueError", "TypeError"), \
        "overlapping blocks were accepted"


@grades("spr_channel", points=2, hidden=True)
def test_spr_channel_is_randomized_response_on_block_labels(spr_channel):
    "Q(j|x) = e^eps/(e^eps + s - 1) if x is in block j, else 1/(e^eps + s - 1); column j is the j-th block given."
    blocks = [(4, 2), (0, 3), (1,)]
    for eps in (0.3, 1.0, 5.0, np.inf):
        channel = np.asarray(spr_channel(blocks, 5, eps), dtype=float)
        assert channel.shape == (5, 3)
        assert np.allclose(channel, block_rr_channel(blocks, 5, eps), rtol=1e-12, atol=0)


@grades("spr_channel")
def test_spr_channel_is_exactly_eps_ldp(spr_channel):
    "Rows sum to 1 and the channel is eps-LDP (and not for a smaller eps)."
    for blocks, k in [([(0,), (1,)], 2), ([(2, 0), (1, 3)], 4), ([(0, 1, 2, 3, 4, 5)], 6)]:
        for eps in (0.5, 2.0):
            channel = np.asarray(spr_channel(blocks, k, eps), dtype=float)
            assert np.allclose(channel.sum(axis=1), 1.0, rtol=0, atol=1e-12)
            assert is_ldp(channel, eps)
            if len(blocks) > 1:
                assert not is_ldp(channel, 0.99 * eps)


@grades("spr_channel", hidden=True)
def test_spr_channel_at_eps_zero_and_infinity(spr_channel):
    "eps = 0: every row uniform over the blocks; eps = inf: the deterministic block-label map."
    blocks = [(1, 2), (0,), (3,)]
    assert np.allclose(np.asarray(spr_channel(blocks, 4, 0.0), dtype=float), np.full((4, 3), 1 / 3), rtol=1e-12)
    assert np.array_equal(np.asarray(spr_channel(blocks, 4, np.inf), dtype=float),
                          np.array([[0, 1, 0], [1, 0, 0], [1, 0, 0], [0, 0, 1]], dtype=float))


@grades("spr_channel", hidden=True)
def test_spr_channel_rejects_bad_partitions(spr_channel):
    "Overlapping blocks, blocks that do not cover {0..k-1}, an empty block, a symbol out of range: refused."
    for blocks in ([(0, 1), (1, 2)], [(0,), (1,)], [(0, 1, 2), ()], [(0, 1), (2, 5)]):
        assert refused(spr_channel, blocks, 3, 1.0) in ("ValueError", "TypeError"), f"{blocks} was accepted"
