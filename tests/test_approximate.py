"""Tests of ldpbook.approximate: the exact (ε, δ) check against mpmath, the optimum against an exact enumeration in
mpmath that does not use the chapter's theorem (every set of inputs, every vertex of the two-output polygon found
by intersecting its lines), against linear programs, the two-input theorem by the garbling it claims, δ = 0 and
the other edges, the privacy of the releases, and every bad-input path. The newer optima have references of their
own: two letters with three outputs against every vertex of the polytope of 2 × 3 (ε, δ)-LDP channels (active sets
solved in mpmath); the identity leak at ε = 0 against δ·D_f(p‖q) in mpmath and against random channels at their
own δ; the two-output Rényi-LDP optimum against an mpmath search over every set of inputs (grid and golden
section on the curve of the largest feasible level), with its certificate checked to bound that search.
Where the chapter has no theorem (three letters, ε > 0, three or four outputs), every vertex of the polytope of
(ε, δ)-LDP channels is listed exactly by cddlib (pycddlib, GMP rationals), the list is held to every basis solved in
fractions and to linear programs, and no vertex may beat the mixture δ·D_f(p‖q) + (1 − δ)·V_ε in mpmath.

The random run has 200 instances in the default test; LDPBOOK_APPROX_FULL=1 runs 2,000."""
import itertools
import json
import os
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import linprog

from ldpbook import spr
from ldpbook.approximate import (ApproxMechanism, RenyiLdpMechanism, divergence_optimal, is_approx_ldp,
                                 is_renyi_ldp, leaky_rr_channel, renyi_ldp_bounds, renyi_ldp_optimal,
                                 two_output_reference, two_output_vertices)
from ldpbook.foundations import divergence, divergence_terms, load_mechanism, privacy_defect, to_json

MPMATH_DPS = 40
N_INSTANCES = 2_000 if os.environ.get("LDPBOOK_APPROX_FULL") == "1" else 200
KINDS = (("kl", {}), ("chi2", {}), ("hellinger", {}), ("tv", {}), ("egamma", {"gamma": 0.5}),
         ("egamma", {"gamma": 3.0}), ("renyi", {"renyi_order": 0.5}), ("renyi", {"renyi_order": 2.0}))


def mp_defect(Q, eps):
    "max over ordered pairs of rows of Σ_y (Q(y|x) − e^ε Q(y|x'))₊, in mpmath."
    e = mp.exp(mp.mpf(eps))
    return max(mp.fsum(max(mp.mpf(a) - e * mp.mpf(b), 0) for a, b in zip(Q[x], Q[y]))
               for x in range(Q.shape[0]) for y in range(Q.shape[0]))


def mp_value(u, v, kind, params):
    "D_f(u‖v) from its definition (linear-free terms, which is the same for probability vectors), in mpmath."
    total = mp.mpf(0)
    for a, b in zip(u, v):
        if kind == "tv":
            total += abs(a - b) / 2
        elif kind == "egamma":
            total += max(a - params["gamma"] * b, 0)
        elif kind == "hellinger":
            total += (mp.sqrt(a) - mp.sqrt(b)) ** 2
        elif kind == "renyi":
            r = mp.mpf(params["renyi_order"])
            if b == 0 and a > 0 and r > 1:
                return mp.inf
            total += ((a ** r * b ** (1 - r) if b > 0 else 0) - b - r * (a - b)) / (r - 1)
        elif b == 0:
            if a > 0:
                return mp.inf
        elif kind == "kl":
            total += (a * mp.log(a / b) if a > 0 else 0) - a + b
        else:
            total += (a - b) ** 2 / b
    if kind == "renyi":
        r = mp.mpf(params["renyi_order"])
        return mp.log(1 + (r - 1) * total) / (r - 1)
    return total


def polygon_vertices(eps, delta):
    "Every feasible intersection of two of the lines that bound the two-output set of (m, M), in mpmath."
    a, d = mp.exp(mp.mpf(eps)), mp.mpf(delta)
    # α m + β M = c: m = 0, M = 1, M = m, M − a m = δ, and (1 − m) − a(1 − M) = δ, i.e. −m + aM = δ + a − 1
    lines = [(1, 0, 0), (0, 1, 1), (1, -1, 0), (-a, 1, d), (-1, a, d + a - 1)]
    out = []
    for (a1, b1, c1), (a2, b2, c2) in itertools.combinations(lines, 2):
        det = a1 * b2 - a2 * b1
        if det == 0:
            continue
        m, M = (c1 * b2 - c2 * b1) / det, (a1 * c2 - a2 * c1) / det
        tol = mp.mpf(10) ** -30
        if -tol <= m <= M + tol and M <= 1 + tol and M - a * m <= d + tol and (1 - m) - a * (1 - M) <= d + tol:
            out.append((min(max(m, 0), 1), min(max(M, 0), 1)))
    return out


def enumerated_optimum(p, q, eps, delta, kind, params):
    "The two-output optimum by brute force: every subset S of inputs at every polygon vertex, in mpmath."
    P, Qm = [mp.mpf(float(x)) for x in p], [mp.mpf(float(x)) for x in q]
    best = mp.mpf(0) if kind != "egamma" else max(mp.mpf(1) - params["gamma"], 0)
    for m, M in polygon_vertices(eps, delta):
        for bits in range(2 ** len(p)):
            t = [M if bits >> x & 1 else m for x in range(len(p))]
            u = [mp.fsum(a * (1 - s) for a, s in zip(P, t)), mp.fsum(a * s for a, s in zip(P, t))]
            v = [mp.fsum(b * (1 - s) for b, s in zip(Qm, t)), mp.fsum(b * s for b, s in zip(Qm, t))]
            best = max(best, mp_value(u, v, kind, params))
    return best


def random_instance(rng):
    "A pair on k ≤ 6 symbols with ties and zeros, ε from 1e-3 to 20 and δ from 1e-12 to 0.5 (log-uniform)."
    k = int(rng.integers(2, 7))
    p, q = rng.dirichlet(np.full(k, rng.choice([0.3, 1.0, 3.0]))), rng.dirichlet(np.full(k, rng.choice([0.3, 1.0])))
    if rng.random() < 0.3:
        drop = rng.random(k) < 0.3
        drop[rng.integers(k)] = False                               # q keeps some mass
        q[drop] = 0.0
    if rng.random() < 0.2:
        p[rng.integers(k)] = 0.0
    if rng.random() < 0.3 and k > 2:                                # a tie: two symbols with the same ratio
        p[1], q[1] = p[0], q[0]
    p, q = p / p.sum(), q / q.sum()
    return p, q, float(10 ** rng.uniform(-3, np.log10(20))), float(10 ** rng.uniform(-12, np.log10(0.5)))


def close(value, ref, rtol=1e-9):
    "Equal to `rtol` relative (both infinite counts as equal; an exact 0 must be matched to 1e-300)."
    ref = float(ref) if ref != mp.inf else np.inf
    if np.isinf(ref) or np.isinf(value):
        return value == ref
    return abs(value - ref) <= rtol * abs(ref) + 1e-300


def test_the_exact_check_agrees_with_mpmath_at_the_boundary():
    rng = np.random.default_rng(0)
    decisions = 0
    for _ in range(120):
        k, m = (int(v) for v in rng.integers(2, 5, size=2))
        Q = rng.dirichlet(np.full(m, 0.5), size=k)
        if rng.random() < 0.3:
            Q[:, 0] = 0.0
            Q /= Q.sum(axis=1, keepdims=True)
        eps = float(rng.choice([0.0, rng.uniform(0, 3), 30.0, 700.0]))
        worst = mp_defect(Q, eps)
        for delta in (float(worst), float(np.nextafter(float(worst), 0)), float(np.nextafter(float(worst), 1))):
            if 0 <= delta <= 1:
                assert is_approx_ldp(Q, eps, delta) == (worst <= delta), (Q, eps, delta)
                decisions += 1
    assert decisions > 300


def test_the_exact_check_has_no_slack_where_the_float_check_has_some():
    Q = np.array([[0.75, 0.25], [0.5, 0.5]])
    assert is_approx_ldp(Q, 0.0, 0.25) and not is_approx_ldp(Q, 0.0, float(np.nextafter(0.25, 0)))
    assert is_approx_ldp(Q, np.inf, 0.0)                             # ε = ∞ admits every channel, as is_ldp


def test_every_divergence_agrees_with_the_exact_enumeration_on_random_instances():
    rng = np.random.default_rng(1)
    for _ in range(N_INSTANCES):
        p, q, eps, delta = random_instance(rng)
        kind, params = KINDS[int(rng.integers(len(KINDS)))]
        ells = (2, 3, None) if kind in ("tv", "egamma") else (2,)
        ref = enumerated_optimum(p, q, eps, delta, kind, params)
        for ell in ells:
            mech = divergence_optimal(p, q, eps, delta=delta, divergence=kind, ell=ell, **params)
            assert close(mech.value, ref), (p, q, eps, delta, kind, params, ell, mech.value, ref)
            assert is_approx_ldp(mech.channel, eps, delta)
            u = [mp.fsum(mp.mpf(float(a)) * mp.mpf(float(c)) for a, c in zip(p, col)) for col in mech.channel.T]
            v = [mp.fsum(mp.mpf(float(b)) * mp.mpf(float(c)) for b, c in zip(q, col)) for col in mech.channel.T]
            assert close(mech.value, mp_value(u, v, kind, params), 1e-9)     # the value is the channel's


def test_two_inputs_without_a_budget_agree_with_the_four_output_mechanism_in_mpmath():
    rng = np.random.default_rng(2)
    for _ in range(60):
        p, q = rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(2))
        eps, delta = float(10 ** rng.uniform(-3, np.log10(20))), float(10 ** rng.uniform(-12, np.log10(0.5)))
        kind, params = KINDS[int(rng.integers(len(KINDS)))]
        d, s = mp.mpf(delta), 1 / (1 + mp.exp(-mp.mpf(eps)))
        rows = [[d, (1 - d) * s, (1 - d) * (1 - s), 0], [0, (1 - d) * (1 - s), (1 - d) * s, d]]
        u = [p[0] * rows[0][y] + p[1] * rows[1][y] for y in range(4)]
        v = [q[0] * rows[0][y] + q[1] * rows[1][y] for y in range(4)]
        for ell in (None, 4, 7):
            mech = divergence_optimal(p, q, eps, delta=delta, divergence=kind, ell=ell, **params)
            assert close(mech.value, mp_value(u, v, kind, params), 1e-9)
            assert mech.structure == ("leaky-rr-4" if kind not in ("tv", "egamma") else mech.structure)
            assert is_approx_ldp(mech.channel, eps, delta)


def garbling(R, Q):
    "A channel W with R W = Q (feasibility LP), or None."
    n, m = R.shape[1], Q.shape[1]
    A_eq = np.vstack((np.kron(R, np.eye(m)), np.kron(np.eye(n), np.ones((1, m)))))
    res = linprog(np.zeros(n * m), A_eq=A_eq, b_eq=np.concatenate((Q.ravel(), np.ones(n))), bounds=(0, None),
                  method="highs")
    return None if res.status != 0 else res.x.reshape(n, m)


def test_every_two_input_channel_is_a_garbling_of_the_four_output_mechanism_and_no_better():
    rng = np.random.default_rng(3)
    for _ in range(60):
        Q = rng.dirichlet(np.full(int(rng.integers(2, 7)), 0.5), size=2)
        eps = float(rng.uniform(0.0, 2.0))
        delta = float(privacy_defect(Q, eps).max())
        if delta < 1e-6:
            continue
        R = divergence_optimal([0.5, 0.5], [0.5, 0.5], eps, delta=min(delta, 1.0)).channel
        W = garbling(R, Q)
        assert W is not None and np.abs(R @ W - Q).max() < 1e-7
        assert garbling(divergence_optimal([0.5, 0.5], [0.5, 0.5], eps, delta=0.8 * delta).channel, Q) is None
        p, q = rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(2))
        for kind, params in KINDS[:4]:
            best = divergence_optimal(p, q, eps, delta=delta, divergence=kind, **params).value
            assert divergence(Q.T @ p, Q.T @ q, kind=kind) <= best * (1 + 1e-9) + 1e-15


def three_output_egamma_lp(p, q, eps, delta, gamma):
    "max E_γ over (ε, δ)-LDP channels with three outputs: one LP per set of outputs, all hockey-stick subsets."
    k, a, m = len(p), np.exp(eps), 3
    rows, rhs = [], []
    for x, y in itertools.permutations(range(k), 2):
        for r in (1, 2):
            for T in itertools.combinations(range(m), r):
                row = np.zeros((k, m))
                row[x, list(T)], row[y, list(T)] = 1.0, -a
                rows.append(row.ravel() / (1 + a))
                rhs.append(delta / (1 + a))
    A_eq = np.kron(np.eye(k), np.ones((1, m)))
    best = max(1 - gamma, 0.0)
    for r in (1, 2):
        for A in itertools.combinations(range(m), r):
            c = np.zeros((k, m))
            c[:, list(A)] = (p - gamma * q)[:, None]
            res = linprog(-c.ravel(), A_ub=np.array(rows), b_ub=np.array(rhs), A_eq=A_eq, b_eq=np.ones(k),
                          bounds=(0, 1), method="highs")
            best = max(best, -res.fun)
    return best


def test_a_third_output_buys_nothing_for_egamma_and_tv():
    rng = np.random.default_rng(4)
    for _ in range(15):
        k = int(rng.integers(2, 5))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        eps, delta, gamma = float(rng.uniform(0.05, 3)), float(rng.uniform(1e-3, 0.4)), float(rng.uniform(0.3, 4))
        lp = three_output_egamma_lp(p, q, eps, delta, gamma)
        ours = divergence_optimal(p, q, eps, delta=delta, divergence="egamma", gamma=gamma, ell=3).value
        assert abs(lp - ours) <= 1e-7 * max(1.0, abs(lp))


def test_the_lp_reference_agrees_with_the_enumeration():
    rng = np.random.default_rng(5)
    for _ in range(6):
        k = int(rng.integers(2, 5))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        eps, delta = float(rng.uniform(0.05, 5)), float(10 ** rng.uniform(-5, np.log10(0.5)))
        for kind, params in (("kl", {}), ("hellinger", {})):
            ref = enumerated_optimum(p, q, eps, delta, kind, params)
            assert close(two_output_reference(p, q, eps, delta=delta, divergence=kind, **params), ref, 1e-9)


@pytest.mark.parametrize("ell", [2, 3, None])
@pytest.mark.parametrize("kind,params", KINDS)
def test_delta_zero_reproduces_spr(kind, params, ell):
    rng = np.random.default_rng(6)
    spr_params = dict(params)                       # the same keyword in both chapters
    for _ in range(5):
        p, q, eps, _ = random_instance(rng)
        ours = divergence_optimal(p, q, eps, delta=0.0, divergence=kind, ell=ell, **params)
        theirs = spr.divergence_optimal(p, q, eps, divergence=kind, ell=None if ell is None else min(ell, len(p)),
                                        **spr_params)
        assert close(ours.value, theirs.value, 1e-12) and np.array_equal(ours.channel, theirs.channel)


def test_the_two_output_vertices_at_delta_zero_give_the_spr_optimum():
    rng = np.random.default_rng(7)
    for _ in range(40):
        p, q, eps, _ = random_instance(rng)
        p, q = (p + 0.01) / 1.0 / (1 + 0.01 * p.size), (q + 0.01) / (1 + 0.01 * q.size)   # no zeros (see below)
        for kind, params in KINDS[:4]:
            tiny = divergence_optimal(p, q, eps, delta=1e-300, divergence=kind, ell=2, **params)
            assert tiny.structure != "spr" and close(tiny.value, spr.divergence_optimal(p, q, eps, divergence=kind,
                                                                                       ell=2).value, 1e-12)


def test_any_delta_makes_kl_infinite_when_p_has_mass_where_q_has_none():
    p, q = np.array([0.5, 0.25, 0.25]), np.array([0.0, 0.5, 0.5])
    assert spr.divergence_optimal(p, q, 1.0).value < np.inf
    mech = divergence_optimal(p, q, 1.0, delta=1e-300, ell=2)
    assert mech.value == np.inf and mech.channel[0, 1] == 1e-300 and np.all(mech.channel[1:, 1] == 0)


def test_the_edges_delta_one_and_eps_infinite_admit_every_channel():
    p, q = np.array([0.1, 0.2, 0.7]), np.array([0.5, 0.3, 0.2])
    for ell in (1, 2, 3, None):
        for eps, delta in ((1.0, 1.0), (np.inf, 0.3)):
            mech = divergence_optimal(p, q, eps, delta=delta, ell=ell)
            free = spr.divergence_optimal(p, q, np.inf, ell=ell)
            assert is_approx_ldp(mech.channel, eps, delta)
            if ell == 1:                                             # one output: 0, up to round-off of the masses
                assert mech.channel.shape[1] == 1 and abs(mech.value) < 1e-30
            else:
                assert mech.value == free.value
    assert two_output_vertices(1.0, 1.0)[0] == (0.0, 1.0)


def test_cases_without_a_theorem_are_refused_not_guessed():
    for eps, ell in ((1.0, 4), (1.0, 5), (1e-9, 8)):               # no budget: the staircase program
        with pytest.raises(NotImplementedError):
            divergence_optimal([0.2, 0.3, 0.5], [0.5, 0.3, 0.2], eps, delta=0.1, ell=ell)
    with pytest.raises(NotImplementedError):                        # ε = 0 for a plain convex f: not claimed
        divergence_optimal([0.2, 0.3, 0.5], [0.5, 0.3, 0.2], 0.0, delta=0.1, divergence=lambda t: (t - 1) ** 2)


def test_value_grows_with_delta_and_eps():
    rng = np.random.default_rng(8)
    for _ in range(30):
        p, q, eps, _ = random_instance(rng)
        values = [divergence_optimal(p, q, eps, delta=d, ell=2, divergence="hellinger").value
                  for d in (0.0, 1e-6, 1e-3, 0.1, 0.5, 1.0)]
        assert all(b >= a * (1 - 1e-12) for a, b in zip(values, values[1:]))


def test_releases_have_the_channels_probabilities_and_a_leak_never_fires_outside_its_set():
    p, q = np.array([0.0, 0.5, 0.5]), np.array([0.5, 0.25, 0.25])
    mech = divergence_optimal(p, q, 0.1, delta=0.1, ell=2)
    assert mech.structure == "leak" and isinstance(mech, ApproxMechanism)
    rng = np.random.default_rng(9)
    x = rng.integers(0, 3, size=60_000)
    y = mech.sample(x, rng=rng)
    for symbol in range(3):
        hits = y[x == symbol]
        expected = mech.channel[symbol]
        assert np.all(expected[np.unique(hits)] > 0)                 # an output of probability 0 never appears
        freq = np.bincount(hits, minlength=2) / hits.size
        assert np.abs(freq - expected).max() < 5 * np.sqrt(0.25 / hits.size) + 1e-12
    assert mech.sample([0, 1], rng=None).shape == (2,)                # fresh entropy


@pytest.mark.parametrize("bad,error,words", [
    ({"delta": -0.1}, ValueError, "delta"), ({"delta": 1.5}, ValueError, "delta"),
    ({"delta": float("nan")}, ValueError, "delta"), ({"delta": None}, TypeError, "delta"),
    ({"delta": "0.1"}, TypeError, "delta"), ({"delta": True}, TypeError, "delta"),
    ({"delta": 0.1, "ell": 0}, ValueError, "ell"), ({"delta": 0.1, "ell": 2.5}, TypeError, "ell"),
    ({"delta": 0.1, "divergence": "renyi"}, ValueError, "renyi_order"),
    ({"delta": 0.1, "gamma": 2.0}, TypeError, "gamma"), ({"delta": 0.1, "divergence": "nope"}, ValueError, "kind"),
])
def test_bad_input_is_refused_with_a_clear_error(bad, error, words):
    with pytest.raises(error, match=words):
        divergence_optimal([0.2, 0.8], [0.5, 0.5], 1.0, **bad)


def test_extreme_inputs_give_exact_channels_or_a_clear_refusal():
    p, q = np.array([1e-300, 0.3, 0.7 - 1e-300]), np.array([0.5, 0.5 - 1e-300, 1e-300])
    for eps in (1e-12, 1e-3, 30.0, 700.0):
        for delta in (1e-300, 1e-12, 0.3, 1 - 1e-16):
            for kind in ("kl", "tv", "hellinger", "chi2"):
                mech = divergence_optimal(p, q, eps, delta=delta, ell=2, divergence=kind)
                assert is_approx_ldp(mech.channel, eps, delta) and mech.value >= 0
    for eps in (708.5, 710.0, 1e5):
        with pytest.raises(ValueError, match="eps"):
            divergence_optimal(p, q, eps, delta=0.1, ell=2)


def test_delta_without_eps_and_a_nan_eps_are_refused():
    with pytest.raises(TypeError, match="eps"):
        divergence_optimal([0.2, 0.8], [0.5, 0.5], delta=0.1)
    with pytest.raises(ValueError, match="eps"):
        divergence_optimal([0.2, 0.8], [0.5, 0.5], float("nan"), delta=0.1)
    with pytest.raises(TypeError, match="eps"):
        divergence_optimal([0.2, 0.8], [0.5, 0.5], None, delta=0.1)
    with pytest.raises(ValueError, match="delta"):
        is_approx_ldp([[0.5, 0.5], [0.2, 0.8]], 1.0, 2.0)
    with pytest.raises(ValueError, match="Q"):
        is_approx_ldp([[0.5, 0.6], [0.2, 0.8]], 1.0, 0.1)


def mp_renyi_level(Q, alpha):
    "max over ordered pairs of rows of D_α(Q(·|x) ‖ Q(·|x')), in mpmath (rows with full support)."
    r = mp.mpf(alpha)
    return max(mp.log(mp.fsum(mp.mpf(a) ** r * mp.mpf(b) ** (1 - r) for a, b in zip(Q[x], Q[y]))) / (r - 1)
               for x in range(Q.shape[0]) for y in range(Q.shape[0]))


def test_renyi_ldp_channels_are_approximately_private_as_the_proposition_says():
    rng = np.random.default_rng(10)
    for _ in range(100):
        Q = rng.dirichlet(np.full(int(rng.integers(2, 5)), 2.0), size=int(rng.integers(2, 4)))
        alpha = float(rng.choice([1.5, 2.0, 5.0]))
        eps = float(mp_renyi_level(Q, alpha)) * (1 + 1e-12)
        for delta in (1e-6, 1e-2, 0.3):
            assert is_approx_ldp(Q, eps + np.log(1 / delta) / (alpha - 1), delta)


def test_renyi_bounds_hold_for_random_channels_at_their_own_level():
    rng = np.random.default_rng(11)
    grid = np.concatenate((np.geomspace(1e-9, 1e-2, 4), np.linspace(0.05, 0.95, 10)))
    for _ in range(25):
        k = int(rng.integers(2, 6))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        t = rng.uniform(0.02, 0.98, size=k)
        Q, alpha = np.column_stack((1 - t, t)), float(rng.choice([1.5, 2.0, 5.0]))
        eps = float(mp_renyi_level(Q, alpha))
        for kind in ("kl", "tv", "hellinger"):
            b = renyi_ldp_bounds(p, q, eps, renyi_order=alpha, divergence=kind, ell=2, deltas=grid)
            assert b.lower == spr.divergence_optimal(p, q, eps, divergence=kind, ell=2).value
            assert b.lower <= b.upper and divergence(Q.T @ p, Q.T @ q, kind=kind) <= b.upper * (1 + 1e-9)


@pytest.mark.parametrize("bad,error", [({"renyi_order": 1.0}, ValueError), ({"renyi_order": 0.5}, ValueError),
                                       ({"renyi_order": None}, TypeError),
                                       ({"renyi_order": 2.0, "deltas": [0.0, 0.5]}, ValueError),
                                       ({"renyi_order": 2.0, "deltas": [1.0]}, ValueError),
                                       ({"renyi_order": 2.0, "deltas": []}, ValueError)])
def test_renyi_bounds_refuse_bad_parameters(bad, error):
    with pytest.raises(error):
        renyi_ldp_bounds([0.2, 0.8], [0.5, 0.5], 1.0, **bad)


def test_the_leaky_channel_is_validated_and_exactly_on_its_boundary():
    for eps, delta in ((0.0, 0.3), (1.0, 1e-12), (5.0, 0.5), (700.0, 0.1)):
        R = leaky_rr_channel(eps, delta)
        assert is_approx_ldp(R, eps, delta) and (delta == 0 or not is_approx_ldp(R, eps, delta * (1 - 1e-9)))
    for eps, delta in ((-1.0, 0.1), (1.0, 1.5), (1.0, float("nan")), (710.0, 0.1)):
        with pytest.raises(ValueError):
            leaky_rr_channel(eps, delta)


# --- two inputs with three outputs: every vertex of the polytope of 2 × 3 (ε, δ)-LDP channels, in mpmath

def polytope_2x3(a):
    """The 18 inequalities A z ≤ b (b = c0 + c1·δ) of the 2 × 3 (ε, δ)-LDP channels in the unknowns
    z = (Q00, Q01, Q10, Q11), Q[x, 2] = 1 − Q[x, 0] − Q[x, 1]; `a` is e^ε (float or mpf)."""
    lift = [[1, 0, 0, 0], [0, 1, 0, 0], [-1, -1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, -1, -1]]
    const = [0, 0, 1, 0, 0, 1]
    rows = [([-c for c in lift[i]], (const[i], 0)) for i in range(6)]          # Q ≥ 0
    for S in ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2)):
        for x, x2 in ((0, 1), (1, 0)):
            coef = [sum(lift[3 * x + y][j] - a * lift[3 * x2 + y][j] for y in S) for j in range(4)]
            rows.append((coef, (-sum(const[3 * x + y] - a * const[3 * x2 + y] for y in S), 1)))
    return rows, lift, const


def vertices_2x3_mp(eps, delta):
    "The vertices in mpmath: active sets found in floats, each re-solved and checked for feasibility in mpmath."
    rows_f, lift, const = polytope_2x3(float(np.exp(eps)))
    A = np.array([r[0] for r in rows_f], float)
    b = np.array([c0 + c1 * delta for _, (c0, c1) in rows_f])
    a_mp, d_mp = mp.exp(mp.mpf(eps)), mp.mpf(delta)
    rows_mp, _, _ = polytope_2x3(a_mp)
    out, sets = [], np.array(list(itertools.combinations(range(18), 4)))
    regular = np.linalg.cond(A[sets]) < 1e13
    sets = sets[regular]
    z = np.linalg.solve(A[sets], b[sets][..., None])[..., 0]
    near = np.all(z @ A.T <= b + 1e-7 * (1 + np.abs(b)), axis=1)
    for active in sets[near].tolist():
        Am = mp.matrix([rows_mp[i][0] for i in active])
        bm = mp.matrix([rows_mp[i][1][0] + rows_mp[i][1][1] * d_mp for i in active])
        zm = mp.lu_solve(Am, bm)
        if all(mp.fsum(c * w for c, w in zip(coef, zm)) <= c0 + c1 * d_mp + mp.mpf(10) ** -30
               for coef, (c0, c1) in rows_mp):
            out.append([min(max(mp.fsum(l * w for l, w in zip(lift[i], zm)) + const[i], 0), 1) for i in range(6)])
    return out


def test_two_inputs_with_three_outputs_agree_with_every_vertex_of_the_polytope_in_mpmath():
    rng = np.random.default_rng(21)
    for _ in range(40):
        p, q = rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(2))
        if rng.random() < 0.2:
            p = np.array([1.0, 0.0]) if rng.random() < 0.5 else p
        eps, delta = float(10 ** rng.uniform(-3, np.log10(20))), float(10 ** rng.uniform(-12, np.log10(0.5)))
        kind, params = KINDS[int(rng.integers(len(KINDS)))]
        P, Qm = [mp.mpf(float(x)) for x in p], [mp.mpf(float(x)) for x in q]
        ref = max(mp_value([P[0] * V[y] + P[1] * V[3 + y] for y in range(3)],
                           [Qm[0] * V[y] + Qm[1] * V[3 + y] for y in range(3)], kind, params)
                  for V in vertices_2x3_mp(eps, delta))
        mech = divergence_optimal(p, q, eps, delta=delta, divergence=kind, ell=3, **params)
        assert close(mech.value, ref), (p, q, eps, delta, kind, params, mech.value, ref)
        assert mech.channel.shape[1] <= 3 and is_approx_ldp(mech.channel, eps, delta)
        two = divergence_optimal(p, q, eps, delta=delta, divergence=kind, ell=2, **params).value
        four = divergence_optimal(p, q, eps, delta=delta, divergence=kind, **params).value
        assert two <= mech.value * (1 + 1e-12) + 1e-300 and mech.value <= four * (1 + 1e-12) + 1e-300


def test_merged_channels_stay_exactly_private_at_extreme_parameters():
    for eps in (1e-12, 1e-3, 1.0, 30.0, 700.0):
        for delta in (1e-300, 1e-12, 0.3, 1 - 1e-16):
            for p, q in (([0.3, 0.7], [0.6, 0.4]), ([1.0, 0.0], [0.5, 0.5]), ([1e-300, 1 - 1e-300], [0.5, 0.5])):
                mech = divergence_optimal(p, q, eps, delta=delta, ell=3, divergence="hellinger")
                assert mech.structure == "leaky-rr-3" and is_approx_ldp(mech.channel, eps, delta)


# --- ε = 0: the identity leak

def test_at_eps_zero_the_identity_leak_gives_delta_times_the_divergence_in_mpmath():
    rng = np.random.default_rng(22)
    for _ in range(60):
        p, q, _, delta = random_instance(rng)
        kind, params = KINDS[int(rng.choice([0, 1, 2, 6, 7]))]                  # kl, chi2, hellinger, renyi
        if p.size == 2:
            continue                                                           # two letters: R_{0,δ}
        mech = divergence_optimal(p, q, 0.0, delta=delta, divergence=kind, **params)
        P, Qm, d = [mp.mpf(float(x)) for x in p], [mp.mpf(float(x)) for x in q], mp.mpf(delta)
        ref = mp_value([d * x for x in P] + [1 - d], [d * x for x in Qm] + [1 - d], kind, params)
        assert mech.structure == "identity-leak" and close(mech.value, ref), (p, q, delta, kind, mech.value, ref)
        assert is_approx_ldp(mech.channel, 0.0, delta)
        assert divergence_optimal(p, q, 0.0, delta=delta, divergence=kind, ell=p.size + 1, **params).value == mech.value


def test_no_channel_at_eps_zero_beats_the_identity_leak():
    "The theorem's behaviour: random channels, each at its own δ (largest total variation between two rows)."
    rng = np.random.default_rng(23)
    for _ in range(300):
        k, m = int(rng.integers(3, 6)), int(rng.integers(2, 8))
        Q = rng.dirichlet(np.full(m, rng.choice([0.2, 1.0, 5.0])), size=k)
        if rng.random() < 0.3:                                                  # the cyclic channel of the chapter
            k, m, d = 3, 3, float(rng.uniform(0.01, 0.6))
            Q = np.full((3, 3), 1 / 3) + d / 2 * (np.eye(3) - np.roll(np.eye(3), 1, axis=1))
        delta = float(privacy_defect(Q, 0.0).max())
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        for kind in ("kl", "chi2", "hellinger"):
            assert divergence(Q.T @ p, Q.T @ q, kind=kind) <= delta * divergence(p, q, kind=kind) * (1 + 1e-9)


# --- Rényi local privacy with two outputs

def mp_bern_renyi(a, b, r):
    if (a > 0 and b == 0) or (a < 1 and b == 1):
        return mp.inf
    first = a ** r * b ** (1 - r) if a > 0 else 0
    second = (1 - a) ** r * (1 - b) ** (1 - r) if a < 1 else 0
    return mp.log(first + second) / (r - 1)


def mp_top_level(m, eps, r, steps=70):
    "M*(m) by bisection in mpmath (both divergences grow with M on [m, 1])."
    lo, hi = m, mp.mpf(1)
    if m == 0:
        return mp.mpf(0)
    for _ in range(steps):
        mid = (lo + hi) / 2
        if mp_bern_renyi(mid, m, r) <= eps and mp_bern_renyi(m, mid, r) <= eps:
            lo = mid
        else:
            hi = mid
    return lo


def renyi_reference(p, q, eps, alpha, kind, params, grid=40, golden=45):
    """The best two-output channel t = m + (M − m)1_S over every set S (not only top sets) with (m, M) on the
    curve or its mirror, without the chapter's search: a grid of m, then a golden-section search around the best
    grid point, all in mpmath."""
    r, e = mp.mpf(alpha), mp.mpf(eps)
    P, Qm = [mp.mpf(float(x)) for x in p], [mp.mpf(float(x)) for x in q]
    sets = [[x for x in range(len(p)) if bits >> x & 1] for bits in range(1, 2 ** len(p) - 1)]

    tops = {}

    def value(m, S, mirror):
        M = tops[m] if m in tops else tops.setdefault(m, mp_top_level(m, e, r))
        lo, hi = (1 - M, 1 - m) if mirror else (m, M)
        u1 = lo + (hi - lo) * mp.fsum(P[x] for x in S)
        v1 = lo + (hi - lo) * mp.fsum(Qm[x] for x in S)
        return mp_value([1 - u1, u1], [1 - v1, v1], kind, params)

    best, arg = mp.mpf(-1), None
    for i in range(grid + 1):
        m = mp.mpf(i) / grid
        for S in sets:
            for mirror in (False, True):
                v = value(m, S, mirror)
                if v > best:
                    best, arg = v, (i, S, mirror)
    i, S, mirror = arg
    a, b = mp.mpf(max(i - 1, 0)) / grid, mp.mpf(min(i + 1, grid)) / grid
    g = (mp.sqrt(5) - 1) / 2
    for _ in range(golden):
        c, d = b - g * (b - a), a + g * (b - a)
        if value(c, S, mirror) >= value(d, S, mirror):
            b = d
        else:
            a = c
    return max(best, value((a + b) / 2, S, mirror))


def test_the_renyi_ldp_optimum_agrees_with_an_mpmath_search_over_every_set():
    rng = np.random.default_rng(24)
    for _ in range(8):
        k = int(rng.integers(2, 4))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        eps, alpha = float(10 ** rng.uniform(-2, 0.7)), float(rng.choice([1.5, 2.0, 5.0]))
        kind, params = [("kl", {}), ("chi2", {}), ("hellinger", {}), ("tv", {}), ("egamma", {"gamma": 1.5})][
            int(rng.integers(5))]
        mech = renyi_ldp_optimal(p, q, eps, renyi_order=alpha, divergence=kind, **params)
        ref = renyi_reference(p, q, eps, alpha, kind, params)
        assert mech.value >= float(ref) * (1 - 1e-9) - 1e-300, (p, q, eps, alpha, kind, mech.value, ref)
        assert float(ref) <= mech.upper * (1 + 1e-9) + 1e-300                 # the certificate bounds every channel
        assert mech.upper <= mech.value * (1 + 1e-11) + 1e-300
        assert is_renyi_ldp(mech.channel, eps, renyi_order=alpha)
        u = [mp.fsum(mp.mpf(float(a)) * mp.mpf(float(c)) for a, c in zip(p, col)) for col in mech.channel.T]
        v = [mp.fsum(mp.mpf(float(b)) * mp.mpf(float(c)) for b, c in zip(q, col)) for col in mech.channel.T]
        assert close(mech.value, mp_value(u, v, kind, params), 1e-9)           # the value is the channel's


def test_no_random_two_output_channel_beats_the_renyi_optimum_at_its_own_level():
    rng = np.random.default_rng(25)
    for i in range(25):
        k = int(rng.integers(2, 7))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        t = rng.uniform(0.02, 0.98, size=k)
        Q, alpha = np.column_stack((1 - t, t)), float(rng.choice([1.5, 2.0, 10.0]))
        eps = float(mp_renyi_level(Q, alpha)) * (1 + 1e-12)
        mech = renyi_ldp_optimal(p, q, eps, renyi_order=alpha, divergence="hellinger")
        assert divergence(Q.T @ p, Q.T @ q, kind="hellinger") <= mech.upper * (1 + 1e-12)
        if i >= 6:
            continue
        bounds = renyi_ldp_bounds(p, q, eps, renyi_order=alpha, ell=2, divergence="hellinger")
        assert bounds.lower <= mech.value * (1 + 1e-12) and mech.value <= bounds.upper * (1 + 1e-12)


def test_the_exact_renyi_check_agrees_with_mpmath_at_the_boundary():
    rng = np.random.default_rng(26)
    decisions = 0
    for _ in range(60):
        k, m = (int(v) for v in rng.integers(2, 5, size=2))
        Q, alpha = rng.dirichlet(np.full(m, 2.0), size=k), float(rng.choice([1.5, 2.0, 7.0]))
        with mp.workdps(60):
            level = mp_renyi_level(Q, alpha)
            for eps in (float(level), float(np.nextafter(float(level), 0)), float(np.nextafter(float(level), 9))):
                assert is_renyi_ldp(Q, eps, renyi_order=alpha) == (level <= eps), (Q, alpha, eps)
                decisions += 1
    assert decisions == 180
    assert is_renyi_ldp(np.full((3, 2), 0.5), 0.0, renyi_order=2.0)            # equal rows: level 0
    assert not is_renyi_ldp([[1.0, 0.0], [0.5, 0.5]], 100.0, renyi_order=2.0)   # an output only one row has


def test_a_renyi_mechanism_is_released_saved_and_refused_when_changed():
    mech = renyi_ldp_optimal([0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4], 1.0, renyi_order=2.0)
    assert isinstance(mech, RenyiLdpMechanism) and mech.num_outputs == 2
    assert not is_renyi_ldp(mech.channel, 1.0 - 1e-9, renyi_order=2.0)       # the budget is used
    loaded = load_mechanism(to_json(mech))
    assert np.array_equal(loaded.channel, mech.channel) and loaded.renyi_order == 2.0
    x = np.repeat(np.arange(4), 20_000)
    counts = np.bincount(mech.sample(x, rng=3)[x == 3], minlength=2) / 20_000
    assert abs(counts[1] - mech.channel[3, 1]) < 0.015                        # the release follows the channel
    wider = json.loads(to_json(mech))
    wider["result"]["guarantee"]["eps"] = foundations_encode(0.9)
    wider["result"]["fields"]["eps"] = foundations_encode(0.9)
    with pytest.raises(ValueError, match="not private"):
        load_mechanism(json.dumps(wider))


def foundations_encode(x):
    from ldpbook import foundations
    return foundations._encode(x, "eps")


@pytest.mark.parametrize("bad,error,words", [
    ({"renyi_order": 1.0}, ValueError, "renyi_order"), ({"renyi_order": None}, TypeError, "renyi_order"),
    ({"renyi_order": 2.0, "divergence": "renyi"}, ValueError, "renyi_order"),
    ({"renyi_order": 2.0, "eps": -1.0}, ValueError, "eps"),
    ({"renyi_order": 2.0, "eps": float("nan")}, ValueError, "eps"),
    ({"renyi_order": 2.0, "eps": np.inf}, ValueError, "eps"), ({"renyi_order": 2.0, "gamma": 2.0}, TypeError, "gamma"),
])
def test_renyi_optimal_refuses_bad_input(bad, error, words):
    args = {"eps": 1.0, **bad}
    eps = args.pop("eps")
    with pytest.raises(error, match=words):
        renyi_ldp_optimal([0.2, 0.8], [0.5, 0.5], eps, **args)


def test_renyi_optimal_refuses_an_uncertifiable_divergence_instead_of_guessing():
    with pytest.raises(ValueError, match="p and q"):
        renyi_ldp_optimal([0.5, 0.5, 0.0], [0.0, 0.5, 0.5], 1.0, renyi_order=2.0, divergence="kl")
    mech = renyi_ldp_optimal([0.5, 0.5, 0.0], [0.0, 0.5, 0.5], 1.0, renyi_order=2.0, divergence="hellinger")
    assert is_renyi_ldp(mech.channel, 1.0, renyi_order=2.0) and mech.value > 0


def test_large_renyi_orders_approach_pure_ldp_from_above_without_overflow():
    "(α, ε)-Rényi-LDP contains ε-LDP and tends to it as α → ∞; (u/v)^α overflows floats from α ≈ 700 on."
    p, q = np.array([0.04, 0.09, 0.22, 0.47, 0.18]), np.array([0.18, 0.47, 0.22, 0.09, 0.04])
    pure = divergence_optimal(p, q, 1.0, delta=0.0, ell=2).value
    previous = np.inf
    for alpha in (2.0, 10.0, 1e3, 1e6):
        mech = renyi_ldp_optimal(p, q, 1.0, renyi_order=alpha)
        assert pure <= mech.value <= previous and is_renyi_ldp(mech.channel, 1.0, renyi_order=alpha)
        previous = mech.value
    assert previous <= pure * (1 + 1e-5)
    with mp.workdps(60):
        Q = np.array([[0.7, 0.3], [0.3, 0.7]])
        level = mp_renyi_level(Q, 1000.0)
        assert is_renyi_ldp(Q, float(level) * (1 + 1e-12), renyi_order=1000.0)
        assert not is_renyi_ldp(Q, float(level) * (1 - 1e-12), renyi_order=1000.0)


def test_tiny_and_zero_renyi_levels_give_private_channels_and_a_valid_bound():
    p, q = np.array([0.04, 0.09, 0.22, 0.47, 0.18]), np.array([0.18, 0.47, 0.22, 0.09, 0.04])
    zero = renyi_ldp_optimal(p, q, 0.0, renyi_order=2.0)
    assert zero.value == zero.upper == 0.0 and is_renyi_ldp(zero.channel, 0.0, renyi_order=2.0)
    for eps in (1e-12, 1e-6):
        mech = renyi_ldp_optimal(p, q, eps, renyi_order=2.0)
        assert 0 < mech.value <= mech.upper and is_renyi_ldp(mech.channel, eps, renyi_order=2.0)
        # the Rényi-LDP optimum lies below the (ε', δ) bound of the chapter's proposition
        assert mech.value <= renyi_ldp_bounds(p, q, eps, renyi_order=2.0, ell=2).upper * (1 + 1e-9)


# Every vertex of the polytope of k × ℓ (ε, δ)-LDP channels, exactly: cddlib's double description in GMP rationals
# (pycddlib), with e^ε = a and δ rational so that every vertex is rational. The chapter compares the mixture
# δ·D_f(p‖q) + (1 − δ)·V_ε with the best vertex; these tests hold the enumeration to an independent one and repeat
# the comparison in mpmath.

def privacy_polytope_exact(k, ell, a, delta):
    """The k × ℓ (ε, δ)-LDP channels (entries row-major) as rows (b, A): A z ≤ b for Q ≥ 0 and for
    Q(S|x) − a·Q(S|x') ≤ δ (every proper non-empty output set S, every ordered pair x ≠ x'), then the k
    equalities Σ_y Q(y|x) = 1 (last). Fractions throughout."""
    n, rows = k * ell, []
    for i in range(n):
        rows.append((Fraction(0), [Fraction(-1 if j == i else 0) for j in range(n)]))
    for size in range(1, ell):
        for S in itertools.combinations(range(ell), size):
            for x, x2 in itertools.permutations(range(k), 2):
                A = [Fraction(0)] * n
                for y in S:
                    A[x * ell + y], A[x2 * ell + y] = Fraction(1), -a
                rows.append((delta, A))
    equalities = [(Fraction(1), [Fraction(int(j // ell == x)) for j in range(n)]) for x in range(k)]
    return rows, equalities


def cdd_vertices(k, ell, a, delta):
    "Every vertex of the polytope, as k × ℓ matrices of Fractions, by cddlib in exact rational arithmetic."
    import cdd.gmp as cdd
    rows, equalities = privacy_polytope_exact(k, ell, a, delta)
    array = [[b] + [-c for c in A] for b, A in rows + equalities]
    mat = cdd.matrix_from_array(array, lin_set=range(len(rows), len(array)), rep_type=cdd.RepType.INEQUALITY)
    gens = cdd.copy_generators(cdd.polyhedron_from_matrix(mat)).array
    assert all(g[0] == 1 for g in gens)                      # a polytope: vertices only, no rays
    return [[list(map(Fraction, g[1 + x * ell:1 + (x + 1) * ell])) for x in range(k)] for g in gens]


def exact_solve(M, b):
    "The solution of the square system M z = b in Fractions, or None if M is singular (Gauss–Jordan)."
    n, aug = len(M), [list(r) + [v] for r, v in zip(M, b)]
    for col in range(n):
        piv = next((r for r in range(col, n) if aug[r][col] != 0), None)
        if piv is None:
            return None
        aug[col], aug[piv] = aug[piv], aug[col]
        for r in range(n):
            if r != col and aug[r][col] != 0:
                f = aug[r][col] / aug[col][col]
                aug[r] = [x - f * y for x, y in zip(aug[r], aug[col])]
    return [aug[i][n] / aug[i][i] for i in range(n)]


def exact_rank(rows):
    "The rank of a list of rows of Fractions."
    rows, rank = [list(r) for r in rows], 0
    for col in range(len(rows[0]) if rows else 0):
        piv = next((r for r in range(rank, len(rows)) if rows[r][col] != 0), None)
        if piv is None:
            continue
        rows[rank], rows[piv] = rows[piv], rows[rank]
        for r in range(rank + 1, len(rows)):
            f = rows[r][col] / rows[rank][col]
            rows[r] = [x - f * y for x, y in zip(rows[r], rows[rank])]
        rank += 1
    return rank


def test_the_vertex_enumeration_agrees_with_every_basis_solved_exactly():
    """Two letters, three outputs (and three letters, two outputs): every choice of active inequalities that, with
    the equalities, determines a point, solved in Fractions; the feasible points are exactly cddlib's vertices."""
    for k, ell, a, delta in ((2, 3, Fraction(2), Fraction(1, 10)), (2, 3, Fraction(3), Fraction(1, 2)),
                             (3, 2, Fraction(3, 2), Fraction(1, 20))):
        rows, equalities = privacy_polytope_exact(k, ell, a, delta)
        free = k * ell - k
        brute = set()
        for chosen in itertools.combinations(rows, free):
            z = exact_solve([A for _, A in list(chosen) + equalities], [b for b, _ in list(chosen) + equalities])
            if z is not None and all(sum(c * v for c, v in zip(A, z)) <= b for b, A in rows):
                brute.add(tuple(z))
        found = {tuple(v for row in V for v in row) for V in cdd_vertices(k, ell, a, delta)}
        assert found == brute and len(found) > 4


def test_three_letter_vertices_are_vertices_and_no_linear_program_finds_a_point_beyond_them():
    """Three letters, three outputs: each listed point is feasible and has k·ℓ independent active constraints
    (exactly, in Fractions); and for random directions the linear program's maximum over the polytope (HiGHS)
    equals the best listed vertex, so none is missing."""
    a, delta = Fraction(2), Fraction(1, 10)
    rows, equalities = privacy_polytope_exact(3, 3, a, delta)
    V = cdd_vertices(3, 3, a, delta)
    assert len(V) == 393
    for Q in V:
        z = [v for row in Q for v in row]
        slack = [b - sum(c * v for c, v in zip(A, z)) for b, A in rows]
        assert min(slack) >= 0 and all(sum(row) == 1 for row in Q)
        assert exact_rank([A for (b, A), s in zip(rows, slack) if s == 0] + [A for _, A in equalities]) == 9
    A_ub = np.array([[float(c) for c in A] for _, A in rows])
    b_ub = np.array([float(b) for b, _ in rows])
    A_eq = np.array([[float(c) for c in A] for _, A in equalities])
    Vf = np.array([[float(v) for row in Q for v in row] for Q in V])
    rng = np.random.default_rng(36)
    for _ in range(60):
        c = rng.normal(size=9)
        res = linprog(-c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(3), bounds=(None, None), method="highs")
        assert abs(-res.fun - (Vf @ c).max()) < 1e-9


def mixture_pairs(rng, n):
    "Pairs on three letters: random, likelihood ratios tied, p with a zero, and p = q."
    pairs = []
    for i in range(n):
        p, q = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))
        if i % 5 == 1:
            q = p[[1, 0, 2]].copy()
        elif i % 5 == 2:
            q = np.array([p[0], p[1], 1.0]) / (p[0] + p[1] + 1.0)             # two symbols with equal ratios
        elif i % 5 == 3:
            p = np.array([0.0, p[1], p[2]]) / (p[1] + p[2])
        elif i % 5 == 4 and i % 10 == 9:
            q = p.copy()
        pairs.append((p, q))
    return pairs


def mp_mixture(p, q, a, delta, kind):
    "δ·D_f(p‖q) in mpmath plus (1 − δ) times the ε-LDP optimum of ldpbook.spr, ε = log a."
    with mp.workdps(MPMATH_DPS):
        d = mp.mpf(delta.numerator) / delta.denominator
        whole = mp_value([mp.mpf(float(x)) for x in p], [mp.mpf(float(x)) for x in q], kind, {})
        return d * whole + (1 - d) * mp.mpf(spr.divergence_optimal(p, q, float(np.log(float(a))),
                                                                    divergence=kind).value)


def best_vertex_mp(V, Vf, p, q, kind):
    "The largest D_f at the vertices: every vertex in floats, the ones within 1e-9 of the largest in mpmath."
    U, W = np.einsum("nky,k->ny", Vf, p), np.einsum("nky,k->ny", Vf, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        floats = divergence_terms(U, W, U - W, kind=kind, check=False).sum(axis=1)
    top = np.flatnonzero(floats >= floats.max() * (1 - 1e-9) - 1e-300)
    with mp.workdps(MPMATH_DPS):
        P, Qm = [mp.mpf(float(x)) for x in p], [mp.mpf(float(x)) for x in q]
        best = mp.mpf(0)
        for i in top.tolist():
            cols = [[mp.mpf(V[i][x][y].numerator) / V[i][x][y].denominator for x in range(3)]
                    for y in range(len(V[i][0]))]
            best = max(best, mp_value([mp.fsum(c * w for c, w in zip(col, P)) for col in cols],
                                      [mp.fsum(c * w for c, w in zip(col, Qm)) for col in cols], kind, {}))
        return best


@pytest.mark.parametrize("a, delta", [(Fraction(2), Fraction(1, 10)), (Fraction(3), Fraction(1, 1000)),
                                      (Fraction(3, 2), Fraction(1, 2)), (Fraction(20), Fraction(1, 20)),
                                      (Fraction(11, 10), Fraction(1, 5))])
def test_no_vertex_with_three_outputs_beats_the_mixture_of_the_identity_leak_and_spr(a, delta):
    """Three letters, three outputs, every vertex in mpmath: D_f never exceeds δ·D_f(p‖q) + (1 − δ)·V_ε for KL,
    χ² and Hellinger, and total variation reaches it (two outputs suffice for TV, and the mixture is TV's
    optimum)."""
    V = cdd_vertices(3, 3, a, delta)
    Vf = np.array([[[float(v) for v in row] for row in Q] for Q in V])
    for p, q in mixture_pairs(np.random.default_rng(int(a * 1000 + 1 / delta)), 12):
        for kind in ("kl", "chi2", "hellinger", "tv"):
            best, bound = best_vertex_mp(V, Vf, p, q, kind), mp_mixture(p, q, a, delta, kind)
            assert best <= bound * (1 + mp.mpf(1e-12)) + mp.mpf(1e-300), (kind, p, q)
            if kind == "tv":
                assert best >= bound * (1 - mp.mpf(1e-12)) - mp.mpf(1e-300), (p, q)


def test_no_vertex_with_four_outputs_beats_the_mixture():
    "Three letters, four outputs (10,144 vertices at e^ε = 2, δ = 1/5), KL, χ² and Hellinger, in mpmath."
    a, delta = Fraction(2), Fraction(1, 5)
    V = cdd_vertices(3, 4, a, delta)
    assert len(V) == 10144
    Vf = np.array([[[float(v) for v in row] for row in Q] for Q in V])
    for p, q in mixture_pairs(np.random.default_rng(44), 10):
        for kind in ("kl", "chi2", "hellinger"):
            assert best_vertex_mp(V, Vf, p, q, kind) <= mp_mixture(p, q, a, delta, kind) * (1 + mp.mpf(1e-12)) \
                + mp.mpf(1e-300)


def test_at_eps_zero_the_best_vertex_is_the_identity_leak():
    """The enumeration against a theorem (ε = 0, any alphabet): with k + 1 = 4 outputs the best of the 340 vertices
    is exactly δ·D_f(p‖q), the identity leak's value, in mpmath; neither more (the theorem) nor less (L_δ is there)."""
    a, delta = Fraction(1), Fraction(1, 10)
    V = cdd_vertices(3, 4, a, delta)
    assert len(V) == 340
    Vf = np.array([[[float(v) for v in row] for row in Q] for Q in V])
    for p, q in mixture_pairs(np.random.default_rng(5), 10):
        for kind in ("kl", "chi2", "hellinger"):
            best, leak = best_vertex_mp(V, Vf, p, q, kind), mp_mixture(p, q, a, delta, kind)
            assert abs(best - leak) <= mp.mpf(1e-30) * (1 + leak), (kind, p, q)
