"""The (ε, δ)-LDP optimum with any number of outputs: the linear program over staircase columns of the approximate
chapter (`approx-thm-staircase-lp`), held to references it does not use: the theorems for two letters, δ = 0 and ε = 0,
every vertex of the polytopes with three and four outputs listed exactly (cddlib), random private channels, values
recomputed in mpmath, and the exact (ε, δ) check of every channel returned."""
import itertools
import math
import os
import pickle
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import linprog

from ldpbook import spr
from ldpbook.approximate import (_identity_leak, _leaky_rr4, _staircase_lp, divergence_optimal, is_approx_ldp,
                                 staircase_columns)
from ldpbook.foundations import divergence, load_mechanism
from test_approximate import cdd_vertices, close, mp_value, random_instance

KINDS = (("kl", {}), ("chi2", {}), ("hellinger", {}), ("renyi", {"renyi_order": 0.5}),
         ("renyi", {"renyi_order": 3.0}))
KIND_IDS = ["kl", "chi2", "hellinger", "renyi0.5", "renyi3"]


def mp_channel_value(Q, p, q, kind, params):
    "The divergence of the stored float channel Q, in 50-digit arithmetic."
    with mp.workdps(50):
        U = [mp.fsum(mp.mpf(float(a)) * mp.mpf(float(b)) for a, b in zip(col, p)) for col in Q.T]
        V = [mp.fsum(mp.mpf(float(a)) * mp.mpf(float(b)) for a, b in zip(col, q)) for col in Q.T]
        return mp_value(U, V, kind, params)


def test_the_staircase_columns_are_the_maps_onto_consecutive_levels():
    """Against a direct enumeration: every vector in {0} ∪ {e^{-εj}} whose non-zero exponents fill 0..H."""
    for k, count in ((1, 1), (2, 5), (3, 25), (4, 149), (5, 1081)):
        eps = 0.7
        got = {tuple(np.round(-np.log(np.where(c > 0, c, 1.0)) / eps).astype(int) * (c > 0) - (c == 0))
               for c in staircase_columns(k, eps)}
        want = set()
        for h in itertools.product(range(-1, k), repeat=k):
            levels = {v for v in h if v >= 0}
            if levels and levels == set(range(max(levels) + 1)):
                want.add(tuple(max(levels) - v if v >= 0 else -1 for v in h))
        assert got == want and len(got) == count
    with pytest.raises(ValueError, match="k"):
        staircase_columns(8, 1.0)


@pytest.mark.parametrize("kind, params", KINDS, ids=KIND_IDS)
def test_two_letters_give_the_four_output_leaky_randomized_response(kind, params):
    rng = np.random.default_rng(41)
    for _ in range(12):
        p, q = rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(2))
        eps, delta = float(10 ** rng.uniform(-2, 1.2)), float(10 ** rng.uniform(-9, np.log10(0.5)))
        ref = _leaky_rr4(p, q, eps, delta, kind, params)[0]
        assert close(_staircase_lp(p, q, eps, delta, kind, params)[0], ref, 1e-11)


@pytest.mark.parametrize("kind, params", KINDS, ids=KIND_IDS)
def test_delta_zero_gives_the_spr_optimum_and_eps_zero_the_identity_leak(kind, params):
    rng = np.random.default_rng(42)
    for k in (3, 4, 5):
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        total = _staircase_lp(p, q, 1.3, 0.0, kind, params)[0]
        ref = spr.divergence_optimal(p, q, 1.3, divergence=kind, **params)
        assert close(divergence(ref.channel.T @ p, ref.channel.T @ q, kind=kind, **params), ref.value, 1e-12)
        from ldpbook.foundations import divergence_from_sum
        assert close(divergence_from_sum(total, kind=kind, **params), ref.value, 1e-11)
        assert close(_staircase_lp(p, q, 0.0, 0.1, kind, params)[0], _identity_leak(p, q, 0.1, kind, params)[0], 1e-11)


@pytest.mark.parametrize("ell", [3, 4])
def test_no_vertex_of_the_polytopes_with_three_or_four_outputs_is_above_the_program(ell):
    """Every channel with ℓ outputs has at most the optimum over any number of outputs: every vertex, listed in
    exact rationals by cddlib at e^ε = 2 and δ = 1/10, evaluated in mpmath, is at most the program's bound."""
    a, delta = 2, Fraction(1, 10)
    V = cdd_vertices(3, ell, a, delta)
    rng = np.random.default_rng(43)
    for kind, params in KINDS[:3]:
        for _ in range(4):
            p, q = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))
            _, upper, _ = _staircase_lp(p, q, math.log(2), 0.1, kind, params)
            with mp.workdps(30):
                P, Qm = [mp.mpf(float(x)) for x in p], [mp.mpf(float(x)) for x in q]
                best = max(mp_value([mp.fsum(mp.mpf(Qv[x][y].numerator) / Qv[x][y].denominator * P[x]
                                             for x in range(3)) for y in range(ell)],
                                    [mp.fsum(mp.mpf(Qv[x][y].numerator) / Qv[x][y].denominator * Qm[x]
                                             for x in range(3)) for y in range(ell)], kind, params) for Qv in V)
            assert best <= upper * (1 + 1e-12)


def test_random_private_channels_with_up_to_eight_outputs_are_never_above_the_program():
    """Vertices of the (ε, δ) polytope with ℓ = 5…8 outputs on three letters, reached by linear programs in random
    directions (the maximum of a convex function lies at such vertices), are never above the program."""
    rng = np.random.default_rng(44)
    for trial in range(6):
        ell = 5 + trial % 4
        p, q = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))
        eps, delta = float(rng.choice([0.5, 2.0])), float(rng.choice([0.05, 0.2]))
        rows = []
        for size in range(1, ell):
            for S in itertools.combinations(range(ell), size):
                for x, x2 in itertools.permutations(range(3), 2):
                    row = np.zeros((3, ell))
                    row[x, list(S)], row[x2, list(S)] = 1.0, -np.exp(eps)
                    rows.append(row.ravel())
        A_eq = np.kron(np.eye(3), np.ones((1, ell)))
        upper = _staircase_lp(p, q, eps, delta, "kl", {})[1]
        for _ in range(8):
            z = linprog(rng.normal(size=3 * ell), A_ub=np.array(rows), b_ub=np.full(len(rows), delta), A_eq=A_eq,
                        b_eq=np.ones(3), bounds=(0, 1), method="highs").x
            Q = np.clip(z, 0, None).reshape(3, ell)
            assert mp_channel_value(Q, p, q, "kl", {}) <= upper * (1 + 1e-9)


def test_the_mixture_of_the_identity_leak_and_spr_is_not_optimal():
    p, q = np.array([0.26, 0.20, 0.54]), np.array([0.60, 0.18, 0.22])
    mech = divergence_optimal(p, q, 2.0, delta=0.2)
    mixture = 0.2 * divergence(p, q, kind="kl") + 0.8 * spr.divergence_optimal(p, q, 2.0).value
    exact = mp_channel_value(mech.channel, p, q, "kl", {})
    assert mech.structure == "staircase-lp" and is_approx_ldp(mech.channel, 2.0, 0.2)
    assert float(exact) > mixture * 1.008 and close(mech.value, exact, 1e-12)
    assert close(mech.value, 0.1682422597187819, 1e-12)


def test_on_the_issues_family_every_channel_is_private_and_the_value_meets_its_certified_bound():
    """The issue's family on k ≤ 6 (ties, zeros, ε from 1e-3 to 20, δ from 1e-12 to 0.5), the divergences in turn:
    the channel passes the exact (ε, δ) check, its value recomputed in mpmath is the returned value, and the dual
    bound of the program is within 1e-9 of it (so the value is the optimum to 1e-9). 60 instances by default (the
    first 60 of the same sequence); LDPBOOK_APPROX_FULL=1 runs all 200 (measured: all pass, 20–40 s)."""
    rng = np.random.default_rng(45)
    for i in range(200 if os.environ.get("LDPBOOK_APPROX_FULL") == "1" else 60):
        p, q, eps, delta = random_instance(rng)
        kind, params = KINDS[i % len(KINDS)]
        total, upper, Q = _staircase_lp(p, q, eps, delta, kind, params)
        assert is_approx_ldp(Q, eps, delta)
        if np.isinf(upper):
            assert np.isinf(float(mp_channel_value(Q, p, q, kind, params)))
            continue
        assert upper >= total and upper - total <= 1e-9 * upper + 1e-300
        if p.size >= 3 and not np.array_equal(p, q):
            mech = divergence_optimal(p, q, eps, delta=delta, divergence=kind, **params)
            assert mech.structure == "staircase-lp" and is_approx_ldp(mech.channel, eps, delta)
            assert close(mech.value, mp_channel_value(mech.channel, p, q, kind, params), 1e-12)


def test_the_result_is_released_saved_and_refused_where_the_program_is_not_used():
    p, q = [0.2, 0.3, 0.5], [0.5, 0.3, 0.2]
    mech = divergence_optimal(p, q, 1.0, delta=0.1, ell=9)                  # ℓ ≥ k²: the same program
    assert mech.structure == "staircase-lp" and mech.value == divergence_optimal(p, q, 1.0, delta=0.1).value
    released = mech.sample(np.array([0, 1, 2] * 200), rng=3)
    assert released.min() >= 0 and released.max() < mech.channel.shape[1]
    again = pickle.loads(pickle.dumps(mech))
    assert np.array_equal(again.channel, mech.channel)
    assert np.array_equal(load_mechanism(mech.to_json()).channel, mech.channel)
    many = np.arange(1, 12) / 66                                            # eleven distinct likelihood ratios
    tied = divergence_optimal(np.r_[1, 1, 2, 2, 3, 3, 4, 4, 0] / 20, np.r_[4, 4, 3, 3, 2, 2, 1, 1, 0] / 20, 1.0,
                              delta=0.1)                                   # four ratios, and p = q = 0 at the last
    four = divergence_optimal(np.r_[2, 4, 6, 8] / 20, np.r_[8, 6, 4, 2] / 20, 1.0, delta=0.1)
    assert tied.structure == "staircase-lp" and close(tied.value, four.value, 1e-12)
    assert np.array_equal(tied.channel[::2][:4], four.channel) and is_approx_ldp(tied.channel, 1.0, 0.1)
    for call in (lambda: divergence_optimal(many, many[::-1], 1.0, delta=0.1),
                 lambda: divergence_optimal(p, q, 1.0, delta=0.1, ell=5),
                 lambda: divergence_optimal(p, q, 1.0, delta=0.1, divergence=lambda t: (t - 1) ** 2)):
        with pytest.raises(NotImplementedError):
            call()
