"""Tests of the three-output optimum of ldpbook.approximate (the certified image hull, `divergence_optimal(...,
ell=3)` for 3 ≤ k ≤ 6): against every vertex of the polytope of (ε, δ)-LDP channels listed exactly by cddlib
(pycddlib, GMP rationals) on three and four letters, evaluated in mpmath; on five and six letters, where no list is
affordable, against linear programs over the channels in random directions (no vertex they reach may beat the
answer) and against the certificate's own upper bound. Every returned channel's hockey-stick defect is recomputed in
mpmath, and its releases are drawn. The mixture δ·D_f(p‖q) + (1 − δ)·V_ε is compared with the exact three-output
optimum on five and six letters.

The random family has 30 instances by default; LDPBOOK_APPROX_FULL=1 runs 200."""
import os
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import linprog

from ldpbook import spr
from ldpbook.approximate import divergence_optimal, is_approx_ldp
from ldpbook.foundations import divergence, divergence_terms
from test_approximate import MPMATH_DPS, cdd_vertices, mixture_pairs, mp_defect, mp_value, random_instance

N_FAMILY = 200 if os.environ.get("LDPBOOK_APPROX_FULL") == "1" else 30
KINDS = (("kl", {}), ("chi2", {}), ("hellinger", {}), ("renyi", {"renyi_order": 2.0}))


def near_best(V, p, q, kind, params):
    "The indices of the exact vertices whose D_f in floats is within 1e-9 of the largest (to be decided in mpmath)."
    Vf = np.array([[[float(v) for v in row] for row in Q] for Q in V])
    U, W = np.einsum("nky,k->ny", Vf, p), np.einsum("nky,k->ny", Vf, q)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        floats = np.nan_to_num(divergence_terms(U, W, U - W, kind=kind, check=False, **params).sum(axis=1),
                               nan=np.inf)
    return np.flatnonzero(floats >= floats.max() * (1 - 1e-9) - 1e-300)


def best_vertex(V, p, q, kind, params):
    """The largest D_f over the exact vertices: all in floats, those within 1e-9 of the largest again in mpmath
    (the vertex entries as exact rationals)."""
    top = near_best(V, p, q, kind, params)
    with mp.workdps(MPMATH_DPS):
        P, Qm = [mp.mpf(float(x)) for x in p], [mp.mpf(float(x)) for x in q]
        best = mp.mpf(0)
        for i in top.tolist():
            cols = [[mp.mpf(V[i][x][y].numerator) / V[i][x][y].denominator for x in range(len(p))]
                    for y in range(len(V[i][0]))]
            best = max(best, mp_value([mp.fsum(c * w for c, w in zip(col, P)) for col in cols],
                                      [mp.fsum(c * w for c, w in zip(col, Qm)) for col in cols], kind, params))
        return best


def answer_or_none(p, q, eps, delta, kind, params):
    "The three-output mechanism, or None where its certificate does not close (a refusal, counted by the callers)."
    try:
        return divergence_optimal(p, q, eps, delta=delta, divergence=kind, ell=3, **params)
    except NotImplementedError:
        return None


def agrees(mech, ref, p, q, eps, delta, kind, params):
    "The value within 1e-9 of the reference, the channel exactly private in mpmath, its value its own."
    assert mech.channel.shape == (p.size, 3) and mech.structure == "image-hull"
    assert mp_defect(mech.channel, eps) <= mp.mpf(delta) and is_approx_ldp(mech.channel, eps, delta)
    if ref == mp.inf:
        return mech.value == np.inf
    u, v = mech.channel.T @ p, mech.channel.T @ q
    with mp.workdps(MPMATH_DPS):
        own = mp_value([mp.mpf(float(x)) for x in u], [mp.mpf(float(x)) for x in v], kind, params)
    return abs(mech.value - float(ref)) <= 1e-9 * float(ref) + 1e-300 and abs(mech.value - float(own)) <= \
        1e-12 * float(own) + 1e-300


@pytest.mark.parametrize("a, delta", [(Fraction(2), Fraction(1, 10)), (Fraction(20), Fraction(1, 2)),
                                      (Fraction(11, 10), Fraction(1, 10 ** 6)), (Fraction(1), Fraction(1, 10)),
                                      (Fraction(float(np.exp(1e-3))), Fraction(1e-12)),
                                      (Fraction(float(np.exp(12.0))), Fraction(1e-9))])
def test_three_outputs_on_three_letters_equal_the_best_exact_vertex(a, delta):
    """Every vertex of the 3 × 3 polytope (cddlib, exact), the best in mpmath: the answer agrees to 1e-9, for
    random pairs, tied ratios, zeros and p = q, at ε = 0 and ε from 1e-3 to 12, δ from 1e-12 to 1/2. A refusal
    (the certificate not closing) is allowed but counted: at most one in six."""
    V, eps, d = cdd_vertices(3, 3, a, delta), float(np.log(float(a))), float(delta)
    answered = refused = 0
    for p, q in mixture_pairs(np.random.default_rng(int(a * 100) + int(1 / delta) % 1000), 6):
        for kind, params in KINDS:
            mech = answer_or_none(p, q, eps, d, kind, params)
            answered, refused = answered + (mech is not None), refused + (mech is None)
            if mech is None:
                continue
            assert agrees(mech, best_vertex(V, p, q, kind, params), p, q, eps, d, kind, params), (kind, p, q)
    assert refused <= answered / 5


def test_three_outputs_on_four_letters_equal_the_best_exact_vertex():
    """The 2955 vertices of the 4 × 3 polytope at two parameter pairs, five pairs each (eight with
    LDPBOOK_APPROX_FULL=1), KL and Hellinger (a refusal is counted: at most 3)."""
    refused = 0
    for a, delta in ((Fraction(3), Fraction(1, 20)), (Fraction(21, 20), Fraction(1, 10 ** 8))):
        V, eps, d = cdd_vertices(4, 3, a, delta), float(np.log(float(a))), float(delta)
        assert len(V) == 2955
        rng = np.random.default_rng(4)
        for i in range(8 if N_FAMILY == 200 else 5):
            p, q = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
            if i == 1:
                q[[0, 1]] = p[[0, 1]] * q[2] / p[2]                      # three equal likelihood ratios
            if i == 2:
                q[3] = 0.0
            p, q = p / p.sum(), q / q.sum()
            for kind, params in KINDS[::2]:
                try:
                    mech = divergence_optimal(p, q, eps, delta=d, divergence=kind, ell=3, **params)
                except NotImplementedError:
                    refused += 1
                    continue
                assert agrees(mech, best_vertex(V, p, q, kind, params), p, q, eps, d, kind, params), (a, i, kind)
    assert refused <= 3


def lp_vertices(p, q, eps, delta, directions, rng):
    """Channels that linear programs (HiGHS) reach over the k × 3 (ε, δ)-LDP polytope, written with every output
    set (no scaling, no reduction), in random directions of the objective."""
    k, ell, a = p.size, 3, np.exp(eps)
    rows = []
    for S in ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2)):
        for x in range(k):
            for z in range(k):
                if x != z:
                    row = np.zeros((k, ell))
                    row[x, list(S)], row[z, list(S)] = 1.0, -a
                    rows.append(row.ravel())
    A_eq = np.kron(np.eye(k), np.ones((1, ell)))
    out = []
    for _ in range(directions):
        c = rng.normal(size=(2, ell))
        res = linprog(-(np.outer(p, c[0]) + np.outer(q, c[1])).ravel(), A_ub=np.array(rows),
                      b_ub=np.full(len(rows), delta), A_eq=A_eq, b_eq=np.ones(k), bounds=(0, 1), method="highs")
        out.append(np.clip(res.x, 0, 1).reshape(k, ell))
    return out


def family(n):
    """The issue's family at three outputs: the first n instances of `random_instance` (seed 2036) with k ≥ 3, each
    with its divergence (KL, χ², Hellinger, Rényi 2 in turn). Drawn on their own, so the list does not depend on
    which instances are answered."""
    rng, out = np.random.default_rng(2036), []
    while len(out) < n:
        p, q, eps, delta = random_instance(rng)
        if p.size >= 3 and np.all(np.isfinite(q)):                  # the generator can empty q by a tie
            out.append((p, q, eps, delta, *KINDS[len(out) % len(KINDS)]))
    return out


# Refused by the float certificate alone (29 of the 200: it did not close to 1e-9, or a float program failed, at
# ε < 0.02, ε > 9 or δ near 1e-11), answered by the exact one; by default three quick ones on three and four letters,
# checked against every vertex listed by cddlib.
FORMERLY_REFUSED = (10, 11, 23, 35, 37, 43, 46, 49, 60, 61, 66, 71, 73, 79, 81, 101, 118, 124, 133, 136, 147, 154,
                    158, 171, 181, 184, 185, 190, 198)
FORMERLY_REFUSED_DEFAULT = (49, 66, 79)     # (10, 11 and 23 are in the default family)


def lp_check(mech, p, q, eps, delta, kind, params, rng):
    "No linear program's vertex in 40 random directions beats the answer by more than the programs' tolerance."
    u, v = mech.channel.T @ p, mech.channel.T @ q
    total = divergence_terms(u, v, u - v, kind=kind, check=False, **params).sum()
    for Q in lp_vertices(p, q, eps, delta, 40, rng):
        u, v = Q.T @ p, Q.T @ q
        with np.errstate(divide="ignore", invalid="ignore"):
            found = divergence_terms(u, v, u - v, kind=kind, check=False, **params).sum()
        assert not found > total * (1 + 1e-6) + 1e-9, (p, q, eps, delta, kind)


def test_the_issue_family_at_three_outputs():
    """Instances with ties and zeros, ε from 1e-3 to 20, δ from 1e-12 to 0.5, k = 3 … 6: every answer is exactly
    private (mpmath) and no linear program's vertex in 40 random directions beats it by more than the programs'
    tolerance. None is refused: of the 200 instances of the full run, 29 were refused by the float certificate
    alone (ε < 0.02, ε > 9, δ near 1e-11, or a float program failing at ε > 16), and the exact certificate answers
    them all (10, 11 and 23 are among the first 30, the default run)."""
    rng, answered, refused = np.random.default_rng(2037), 0, 0
    for p, q, eps, delta, kind, params in family(N_FAMILY):
        mech = answer_or_none(p, q, eps, delta, kind, params)
        answered, refused = answered + (mech is not None), refused + (mech is None)
        if mech is None:
            continue
        assert mp_defect(mech.channel, eps) <= mp.mpf(delta) and is_approx_ldp(mech.channel, eps, delta)
        if mech.value != np.inf:
            lp_check(mech, p, q, eps, delta, kind, params, rng)
    print(f"\n{N_FAMILY} instances at three outputs: {answered} answered, {refused} refused")
    assert refused == 0


@pytest.mark.parametrize("i", FORMERLY_REFUSED if os.environ.get("LDPBOOK_APPROX_FULL") == "1" else
                         FORMERLY_REFUSED_DEFAULT)
def test_the_formerly_refused_instances_are_answered_exactly(i):
    """The instances the float certificate refused are answered: on three and four letters the value equals the
    best of every vertex of the polytope (cddlib, exact, at the rational a = e^ε in floats) to 1e-9, and on more
    letters no linear program beats it; the channel is exactly private."""
    p, q, eps, delta, kind, params = family(i + 1)[i]
    mech = divergence_optimal(p, q, eps, delta=delta, divergence=kind, ell=3, **params)
    assert mp_defect(mech.channel, eps) <= mp.mpf(delta) and is_approx_ldp(mech.channel, eps, delta)
    if p.size <= 4:
        V = cdd_vertices(p.size, 3, Fraction(float(np.exp(eps))), Fraction(delta))
        assert agrees(mech, best_vertex(V, p, q, kind, params), p, q, eps, delta, kind, params)
    else:
        lp_check(mech, p, q, eps, delta, kind, params, np.random.default_rng(i))


def test_no_three_output_optimum_on_five_or_six_letters_beats_the_mixture():
    """The mixture δ·D_f(p‖q) + (1 − δ)·V_ε (up to 2k outputs) against the certified three-output optimum: never
    below it, for KL, χ² and Hellinger on 4 pairs of five and six letters (8 with LDPBOOK_APPROX_FULL=1; a refusal is
    counted: at most 1 of 12, 3 of 24)."""
    rng, refused, n_pairs = np.random.default_rng(56), 0, 8 if N_FAMILY == 200 else 4
    for i in range(n_pairs):
        k = 5 + i % 2
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        eps, delta = float(rng.choice([0.1, 1.0, 4.0])), float(rng.choice([1e-6, 1e-3, 0.05, 0.3]))
        for kind in ("kl", "chi2", "hellinger"):
            mixture = delta * divergence(p, q, kind=kind) + (1 - delta) * spr.divergence_optimal(
                p, q, eps, divergence=kind).value
            try:
                best = divergence_optimal(p, q, eps, delta=delta, divergence=kind, ell=3).value
            except NotImplementedError:
                refused += 1
                continue
            assert best <= mixture * (1 + 1e-9), (k, eps, delta, kind)
    assert refused <= (3 if n_pairs == 8 else 1)


def test_three_outputs_are_at_least_two_and_grow_with_delta():
    "The budget of three contains the budget of two, and a larger δ admits more channels."
    rng = np.random.default_rng(3)
    for k in (3, 5):
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        values = [divergence_optimal(p, q, 1.0, delta=d, ell=3).value for d in (1e-6, 1e-3, 0.1)]
        assert values[0] <= values[1] <= values[2]
        assert values[0] >= divergence_optimal(p, q, 1.0, delta=1e-6, ell=2).value * (1 - 1e-12)


def test_releases_of_a_three_output_mechanism_have_its_probabilities():
    p, q = np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.4, 0.3, 0.2, 0.1])
    mech = divergence_optimal(p, q, 0.5, delta=0.05, ell=3)
    rng = np.random.default_rng(12)
    x = rng.integers(0, 4, size=80_000)
    y = mech.sample(x, rng=rng)
    for symbol in range(4):
        hits = y[x == symbol]
        assert np.all(mech.channel[symbol][np.unique(hits)] > 0)
        freq = np.bincount(hits, minlength=3) / hits.size
        assert np.abs(freq - mech.channel[symbol]).max() < 5 * np.sqrt(0.25 / hits.size)


def test_larger_alphabets_and_budgets_are_refused_with_the_reason():
    """Budgets of four and five outputs on three or more letters are refused, naming what is solved; three outputs
    on seven letters are answered (the branch and bound over the runs, tests/test_approximate_runs.py)."""
    p7, q7 = np.full(7, 1 / 7), np.arange(1, 8) / 28
    seven = divergence_optimal(p7, q7, 1.0, delta=0.1, ell=3)
    assert seven.structure == "four-runs" and seven.channel.shape == (7, 3) and is_approx_ldp(seven.channel, 1.0, 0.1)
    assert seven.value >= divergence_optimal(p7, q7, 1.0, delta=0.1, ell=2).value
    for p, q, ell in (([0.2, 0.3, 0.5], [0.5, 0.3, 0.2], 4), ([0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1], 5)):
        with pytest.raises(NotImplementedError, match="solved exactly only for ell = 2 or 3"):
            divergence_optimal(p, q, 1.0, delta=0.1, ell=ell)
    same = divergence_optimal([0.2, 0.3, 0.5], [0.2, 0.3, 0.5], 1.0, delta=0.1, ell=3)
    assert same.value == 0.0 and is_approx_ldp(same.channel, 1.0, 0.1)


def test_a_three_output_mechanism_is_saved_and_refused_when_its_delta_is_lowered():
    """The channel uses its budget (not private at a smaller δ), survives JSON exactly, and a file claiming a smaller
    δ is refused on loading by the exact check."""
    import json
    from ldpbook.foundations import _encode, load_mechanism, to_json
    mech = divergence_optimal([0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1], 0.5, delta=0.05, ell=3)
    assert not is_approx_ldp(mech.channel, 0.5, 0.05 * (1 - 1e-6))
    loaded = load_mechanism(to_json(mech))
    assert np.array_equal(loaded.channel, mech.channel) and loaded.structure == "image-hull"
    smaller = json.loads(to_json(mech))
    smaller["result"]["guarantee"]["delta"] = _encode(0.04, "delta")
    smaller["result"]["fields"]["delta"] = _encode(0.04, "delta")
    with pytest.raises(ValueError, match="not private"):
        load_mechanism(json.dumps(smaller))
