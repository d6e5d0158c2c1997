"""Cross-checks of ldpbook.egamma against the SPR chapter (ldpbook.spr): the closed form equals the SPR dynamic program
and the Kairouz–Oh–Viswanath LP; the Rényi optimum of the DP is the true optimum (monotone reduction)."""
import itertools

import numpy as np
import pytest

from ldpbook.egamma import egamma_closed_form, egamma_optimal
from ldpbook.foundations import divergence, is_ldp

spr = pytest.importorskip("ldpbook.spr")


def rel_diff(a, b, floor=1e-6):
    "Relative difference; values below `floor` (round-off around an exact 0) are compared absolutely, scaled by it."
    return abs(a - b) / max(abs(a), abs(b), floor)


def instances(n, seed, gamma_range=(1.0, 20.0)):
    "Random (p, q, ε, γ): k ≤ 8, ε log-uniform on [0.01, 10], γ uniform on `gamma_range`, zeros in q half the time."
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k = int(rng.integers(2, 9))
        p = rng.dirichlet(np.full(k, rng.choice([0.3, 1.0, 3.0])))
        q = rng.dirichlet(np.full(k, rng.choice([0.3, 1.0, 3.0])))
        if rng.random() < 0.5:
            drop = rng.random(k) < 0.35
            drop[rng.integers(k)] = False
            q[drop] = 0.0
            q /= q.sum()
        eps = float(np.exp(rng.uniform(np.log(0.01), np.log(10))))
        yield p, q, eps, float(rng.uniform(*gamma_range))


@pytest.mark.parametrize("gamma_range, seed", [((1.0, 20.0), 0), ((1.0, 1.0), 1), ((0.0, 1.0), 2)])
def test_closed_form_equals_kov_lp_and_spr_dp(gamma_range, seed):
    n = 300 if gamma_range == (1.0, 20.0) else 60
    for p, q, eps, gamma in instances(n, seed, gamma_range):
        mech = egamma_optimal(p, q, eps, gamma=gamma)
        dp = spr.divergence_optimal(p, q, eps, divergence="egamma", gamma=gamma)
        lp = spr.kov_lp(p, q, eps, divergence="egamma", gamma=gamma)
        assert rel_diff(mech.value, dp.value) <= 1e-9, (p, q, eps, gamma)
        assert rel_diff(mech.value, lp.value) <= 1e-9, (p, q, eps, gamma)
        assert is_ldp(mech.channel, eps)
        achieved = divergence(mech.channel.T @ p, mech.channel.T @ q, kind="egamma", gamma=gamma)
        assert rel_diff(achieved, mech.value) <= 1e-9
        # ldpbook.spr's evaluation of the same two-block partition gives the same value
        blocks = [b for b in mech.partition if b]
        assert rel_diff(spr.spr_mechanism(p, q, eps, blocks, divergence="egamma", gamma=gamma).value, mech.value) <= 1e-9


def test_every_output_budget_at_least_two_is_enough():
    for p, q, eps, gamma in itertools.islice(instances(40, 3), 40):
        value = egamma_optimal(p, q, eps, gamma=gamma).value
        for ell in range(2, p.size + 1):
            assert rel_diff(spr.divergence_optimal(p, q, eps, divergence="egamma", ell=ell, gamma=gamma).value, value) <= 1e-9
        assert spr.divergence_optimal(p, q, eps, divergence="egamma", ell=1, gamma=gamma).value == pytest.approx(
            max(1 - gamma, 0), abs=1e-15)


def test_batch_values_equal_the_vectorised_closed_form():
    rng = np.random.default_rng(4)
    P0, P1 = rng.dirichlet(np.ones(6), size=20), rng.dirichlet(np.ones(6), size=20)
    eps = np.array([0.05, 0.5, 1.0, 2.0, 5.0])
    for gamma in (0.5, 1.0, 3.0):
        batch = spr.divergence_optimal_values(P0, P1, eps, divergence="egamma", gamma=gamma)
        e = np.array([divergence(a, b, kind="egamma", gamma=gamma) for a, b in zip(P0, P1)])
        closed = egamma_closed_form(e[:, None], eps[None, :], gamma=gamma)
        assert np.max(np.abs(batch - closed) / np.maximum(np.abs(closed), 1e-6)) <= 1e-9


def test_the_spr_binary_mechanism_is_the_gamma_one_case():
    for p, q, eps, _ in itertools.islice(instances(50, 5), 50):
        assert rel_diff(spr.binary_mechanism(p, q, eps, divergence="tv").value,
                        egamma_optimal(p, q, eps, gamma=1.0).value) <= 1e-12


def _contiguous_partitions(order):
    "All partitions of the sequence `order` into contiguous blocks (2^(k−1) of them)."
    k = len(order)
    for cuts in itertools.product((False, True), repeat=k - 1):
        blocks, start = [], 0
        for i, cut in enumerate(cuts, start=1):
            if cut:
                blocks.append(order[start:i])
                start = i
        blocks.append(order[start:])
        yield blocks


@pytest.mark.parametrize("alpha", [0.3, 0.5, 2.0, 4.0])
def test_renyi_optimum_of_the_dp_is_the_true_optimum(alpha):
    "Monotone reduction: the DP's D_α equals brute force over contiguous partitions and the KOV LP, beats random Q."
    rng = np.random.default_rng(int(alpha * 10))
    for _ in range(12):
        k = int(rng.integers(2, 7))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        eps = float(rng.choice([0.3, 1.0, 3.0, 6.0]))
        mech = spr.divergence_optimal(p, q, eps, divergence="renyi", renyi_order=alpha)
        direct = divergence(mech.channel.T @ p, mech.channel.T @ q, kind="renyi", renyi_order=alpha)
        assert rel_diff(direct, mech.value) <= 1e-9
        order = list(np.argsort(p / q))
        best = 0.0
        for blocks in _contiguous_partitions(order):
            s = len(blocks)
            Q = np.full((k, s), 1 / (np.exp(eps) + s - 1))
            for j, block in enumerate(blocks):
                Q[block, j] = np.exp(eps) / (np.exp(eps) + s - 1)
            best = max(best, divergence(Q.T @ p, Q.T @ q, kind="renyi", renyi_order=alpha))
        assert rel_diff(best, mech.value) <= 1e-9
        assert rel_diff(spr.kov_lp(p, q, eps, divergence="renyi", renyi_order=alpha).value, mech.value) <= 1e-9
        for _ in range(20):
            A = np.exp(rng.uniform(0, eps / 2, (k, 4))) * rng.exponential(size=4)
            Q = A / A.sum(axis=1, keepdims=True)
            assert divergence(Q.T @ p, Q.T @ q, kind="renyi", renyi_order=alpha) <= mech.value * (1 + 1e-12)
