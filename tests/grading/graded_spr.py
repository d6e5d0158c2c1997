"""Graded tests for chapter 1 (`ldpbook.spr`): each exercises one function through its public contract.

`python -m ldpbook.assignments make nbs/01_spr.ipynb --functions ...` turns every test that exercises exactly one
assigned function into an autograded nbgrader cell (POINTS gives its points, HIDDEN which tests are hidden with
`--hidden-tests`). The expected values come from independent computations (brute force over all partitions, the
channel's own output laws), never from the function under test; nothing depends on the order of random draws.
"""
import numpy as np

from ldpbook.foundations import divergence, is_ldp, randomized_response
from ldpbook.spr import divergence_optimal, spr_channel

POINTS = {"test_divergence_optimal_beats_every_partition": 3, "test_divergence_optimal_null_symbols_join_first_block": 2,
          "test_divergence_optimal_respects_the_output_budget": 2, "test_divergence_optimal_rejects_bad_input": 1,
          "test_spr_channel_is_randomized_response_on_block_labels": 2, "test_spr_channel_rejects_bad_partitions": 1}
HIDDEN = {"test_divergence_optimal_respects_the_output_budget", "test_spr_channel_rejects_bad_partitions"}
PAIRS = [(np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])),
         (np.array([0.05, 0.3, 0.15, 0.35, 0.15]), np.array([0.3, 0.1, 0.25, 0.05, 0.3]))]


def set_partitions(k):
    "Every partition of {0, ..., k-1} into non-empty blocks (brute force, independent of the chapter)."
    if k == 0:
        yield []
        return
    for smaller in set_partitions(k - 1):
        for j in range(len(smaller)):
            yield smaller[:j] + [smaller[j] + [k - 1]] + smaller[j + 1:]
        yield smaller + [[k - 1]]


def block_rr_channel(blocks, k, eps):
    "Randomized response on the block label, built from the foundations chapter."
    label = np.empty(k, dtype=int)
    for j, block in enumerate(blocks):
        label[list(block)] = j
    return randomized_response(len(blocks), eps)[label]


def achieved(channel, p, q, kind="kl"):
    "D_f between the two output laws of a channel."
    return divergence(channel.T @ p, channel.T @ q, kind=kind)


def test_divergence_optimal_beats_every_partition():
    for p, q in PAIRS:
        for eps in (0.5, 2.0):
            mech = divergence_optimal(p, q, eps, divergence="kl")
            best = max(achieved(block_rr_channel(b, p.size, eps), p, q) for b in set_partitions(p.size))
            assert abs(mech.value - best) <= 1e-9 * best
            assert abs(achieved(np.asarray(mech.channel), p, q) - best) <= 1e-9 * best
            assert is_ldp(mech.channel, eps)


def test_divergence_optimal_null_symbols_join_first_block():
    p = np.array([0.5, 0.0, 0.3, 0.0, 0.2])
    q = np.array([0.1, 0.0, 0.3, 0.0, 0.6])
    for eps in (0.5, 3.0):
        mech = divergence_optimal(p, q, eps, divergence="kl")
        blocks = [sorted(int(x) for x in block) for block in mech.partition]
        assert sorted(x for block in blocks for x in block) == list(range(5))
        assert {1, 3} <= set(blocks[0]) and len(blocks) >= 2


def test_divergence_optimal_respects_the_output_budget():
    p, q = PAIRS[1]
    for ell in (1, 2, 3):
        mech = divergence_optimal(p, q, 4.0, divergence="kl", ell=ell)
        best = max(achieved(block_rr_channel(b, p.size, 4.0), p, q) for b in set_partitions(p.size) if len(b) <= ell)
        assert np.asarray(mech.channel).shape[1] <= ell
        assert abs(mech.value - best) <= 1e-9 * (1 + best)


def test_divergence_optimal_rejects_bad_input():
    p, q = PAIRS[0]
    for bad in [(p[:3], q, 1.0), (p, q, -1.0), (p * 2, q, 1.0), (p, np.full(4, np.nan), 1.0)]:
        try:
            divergence_optimal(*bad)
        except (ValueError, TypeError):
            continue
        raise AssertionError("bad input was accepted")


def test_spr_channel_is_randomized_response_on_block_labels():
    blocks = [(0, 3), (1,), (2, 4)]
    for eps in (0.0, 1.0, np.inf):
        channel = np.asarray(spr_channel(blocks, 5, eps))
        assert channel.shape == (5, 3)
        assert np.allclose(channel, block_rr_channel(blocks, 5, eps), rtol=1e-12, atol=0)
        assert np.allclose(channel.sum(axis=1), 1.0, rtol=1e-12, atol=0)


def test_spr_channel_rejects_bad_partitions():
    for blocks in ([(0, 1), (1, 2)], [(0,), (1,)], [(0, 1, 2), ()], [(0, 1), (2, 5)]):
        try:
            spr_channel(blocks, 3, 1.0)
        except (ValueError, TypeError):
            continue
        raise AssertionError("a bad partition was accepted")
