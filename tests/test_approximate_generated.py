"""The (ε, δ)-LDP optimum without a budget on eight to ten distinct likelihood ratios: the certified column generation of the
approximate chapter (`approx-thm-generated`), held to what it does not use: the exact 50-digit staircase program on up
to six ratios (random and adversarial pairs: ties, zeros, δ from 1e-12 to 0.5), lower bounds from the exact program on
merged letters and from the two-output theorem, the unconstrained optimum above, values recomputed in mpmath, the exact
(ε, δ) check of every channel, the frequencies of what `sample` releases, and bad input.

By default three small instances per divergence and one eight-ratio call (KL); LDPBOOK_APPROX_FULL=1 runs twelve
and the eight-ratio call for every divergence."""
import functools
import os
import zlib

import numpy as np
import pytest

from ldpbook import spr
from ldpbook.approximate import (MAX_GENERATED_K, _generated_optimal, _staircase_lp, divergence_optimal,
                                 is_approx_ldp)
from test_approximate import close
from test_approximate_staircase import mp_channel_value

FULL = os.environ.get("LDPBOOK_APPROX_FULL") == "1"
KINDS = (("kl", {}), ("chi2", {}), ("hellinger", {}), ("renyi", {"renyi_order": 0.5}),
         ("renyi", {"renyi_order": 3.0}))
KIND_IDS = ["kl", "chi2", "hellinger", "renyi0.5", "renyi3"]


def small_instance(rng):
    "A pair on 3 to 6 letters with ties and zeros in p, ε from 0.1 to 5, δ from 1e-12 to 0.5 (log-uniform)."
    k = int(rng.integers(3, 7))
    p, q = rng.dirichlet(np.full(k, rng.choice([0.3, 1.0, 3.0]))), rng.dirichlet(np.ones(k))
    if rng.random() < 0.25:
        p[rng.integers(k)] = 0.0
    if rng.random() < 0.3:                                          # a tie: two letters with the same ratio
        p[1], q[1] = p[0], q[0]
    p, q = p / p.sum(), q / q.sum()
    return p, q, float(10 ** rng.uniform(-1, np.log10(5))), float(10 ** rng.uniform(-12, np.log10(0.5)))


@pytest.mark.parametrize("kind, params", KINDS, ids=KIND_IDS)
def test_column_generation_agrees_with_the_exact_program(kind, params):
    """Where it answers, to 1e-9 relative, with a channel that passes the exact check. A refusal (its bound did not
    close within its rounds) is allowed, not a wrong answer; small δ stalls the generation most (measured: 7 of 8
    Hellinger and Rényi-½ instances with δ < 1e-8 refused), so at least one instance of each family must be answered."""
    rng = np.random.default_rng(zlib.crc32((kind + str(params)).encode()))
    n, refused = (12 if FULL else 3), 0
    for _ in range(n):
        p, q, eps, delta = small_instance(rng)
        try:
            Q = _generated_optimal(p, q, eps, delta, kind, params)
        except NotImplementedError:
            refused += 1
            continue
        ref = _staircase_lp(p, q, eps, delta, kind, params)[0]
        got = float(mp_channel_value(Q, p, q, kind, params))
        if kind == "renyi":                                         # the program's sum, before the logarithm
            r = params["renyi_order"]
            got = (np.expm1((r - 1) * got)) / (r - 1)
        assert is_approx_ldp(Q, eps, delta) and close(got, ref, 1e-9)
    assert refused < n


def eight(seed):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(8)), rng.dirichlet(np.ones(8))


@functools.cache
def eight_ratio_mechanism(kind, order=None):
    "The eight-ratio optimum of the pair `eight(8)` at ε = 1, δ = 1e-3 (computed once per module: 10 to 40 s)."
    p, q = eight(8)
    return divergence_optimal(p, q, 1.0, delta=1e-3, divergence=kind, **({} if order is None else
                                                                            {"renyi_order": order}))


@pytest.mark.parametrize("kind, params", KINDS if FULL else KINDS[:1], ids=KIND_IDS if FULL else KIND_IDS[:1])
def test_eight_ratios_between_independent_bounds(kind, params):
    """The eight-ratio optimum lies above the exact seven-ratio optimum of the pair with its two closest ratios merged
    (a channel of the merged pair is one of the full pair), above the two-output optimum and the δ = 0 optimum, and
    below the unconstrained one; its channel passes the exact check and its value is the channel's, in mpmath."""
    p, q = eight(8)
    eps, delta = 1.0, 1e-3
    mech = eight_ratio_mechanism(kind, params.get("renyi_order"))
    assert mech.structure == "column-generation" and is_approx_ldp(mech.channel, eps, delta)
    assert close(mech.value, float(mp_channel_value(mech.channel, p, q, kind, params)), 1e-12)
    order = np.argsort(p / q)
    i = int(np.argmin(np.diff((p / q)[order])))                    # merge the two closest ratios into one letter
    keep = np.delete(order, i + 1)
    pm, qm = p[keep].copy(), q[keep].copy()
    pm[i], qm[i] = p[order[i]] + p[order[i + 1]], q[order[i]] + q[order[i + 1]]
    merged = divergence_optimal(pm, qm, eps, delta=delta, divergence=kind, **params)
    assert merged.structure == "staircase-lp"
    below = [merged.value, divergence_optimal(p, q, eps, delta=delta, divergence=kind, ell=2, **params).value,
             spr.divergence_optimal(p, q, eps, divergence=kind, **params).value]
    assert all(v <= mech.value * (1 + 1e-12) for v in below)
    assert mech.value <= spr.divergence_optimal(p, q, np.inf, divergence=kind, **params).value


def test_releases_follow_the_channel_and_bad_input_is_refused():
    p, q = eight(8)
    mech = eight_ratio_mechanism("kl", None)
    rng = np.random.default_rng(5)
    for x in (int(np.argmax(p / q)), int(np.argmin(p / q))):       # the two extreme letters
        released = mech.sample(np.full(20_000, x), rng=rng)
        freq = np.bincount(released, minlength=mech.channel.shape[1]) / released.size
        sd = np.sqrt(mech.channel[x] * (1 - mech.channel[x]) / released.size)
        assert np.all(np.abs(freq - mech.channel[x]) <= 5 * sd + 1e-12)   # an output of mass 0 never fires
    for bad in (dict(delta=-0.1), dict(delta=1.5), dict(delta=float("nan")), dict(delta=None)):
        with pytest.raises((ValueError, TypeError), match="delta"):
            divergence_optimal(p, q, 1.0, **bad)
    with pytest.raises(ValueError, match="p"):
        divergence_optimal(np.r_[p[:-1], np.nan], q, 1.0, delta=0.1)


def test_more_ratios_than_the_generation_takes_are_refused_not_guessed():
    nine = np.arange(1, MAX_GENERATED_K + 2) / ((MAX_GENERATED_K + 1) * (MAX_GENERATED_K + 2) / 2)
    with pytest.raises(NotImplementedError):
        divergence_optimal(nine, nine[::-1], 1.0, delta=0.1)
