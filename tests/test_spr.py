"""Tests of ldpbook.spr: exactness against brute force and the KOV LP, privacy, sampling, edge cases, bad input."""
import numpy as np
import pytest

from ldpbook.foundations import divergence, is_ldp, perspective, randomized_response
from ldpbook.spr import (KOV_MAX_K, binary_mechanism, divergence_optimal, divergence_optimal_values,
                         interval_scores, joint_range, kov_lp, randomized_response_mechanism,
                         sort_by_likelihood_ratio, spr_channel, spr_mechanism)
from ldpbook import spr as spr_module

DIVERGENCES = [("kl", {}), ("tv", {}), ("chi2", {}), ("hellinger", {}), ("egamma", {"gamma": 1.7}),
               ("egamma", {"gamma": 0.6}), ("renyi", {"renyi_order": 0.5}), ("renyi", {"renyi_order": 2.5})]
IDS = [k + "".join(f"-{v}" for v in p.values()) for k, p in DIVERGENCES]


def random_pair(rng, k):
    """A random pair with, at random, likelihood-ratio ties, q = 0 < p, p = 0 < q and p = q = 0 symbols."""
    p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    if k >= 3 and rng.random() < 0.3:                       # ties: symbol 1 proportional to symbol 0
        q[1] = q[0] * p[1] / p[0]
    if k >= 3 and rng.random() < 0.2:
        q[rng.integers(k)] = 0.0
    if k >= 3 and rng.random() < 0.2:
        p[rng.integers(k)] = 0.0
    if k >= 4 and rng.random() < 0.15:
        j = rng.integers(k)
        p[j] = q[j] = 0.0
    p, q = p / p.sum(), q / q.sum()
    if rng.random() < 0.03:
        q = p.copy()
    return p, q


def brute_force(p, q, eps, kind, params, ell=None):
    """Best value over all contiguous partitions of the symbols sorted by p/(p+q), computed from the outputs
    M_ν(j) = Σ_x P_ν(x) Q(j|x) directly (no homogeneity, no tie merging, no prefix sums)."""
    k = p.size
    ell = k if ell is None else ell
    with np.errstate(invalid="ignore", divide="ignore"):
        key = np.where(p + q > 0, p / (p + q), -1.0)
    order = np.argsort(key, kind="stable")
    masks = np.arange(2 ** (k - 1))
    cut_after = (masks[:, None] >> np.arange(k - 1)[None, :]) & 1          # (n, k−1)
    block_of = np.concatenate([np.zeros((masks.size, 1), int), np.cumsum(cut_after, axis=1)], axis=1)
    s = block_of[:, -1] + 1
    low = np.exp(-eps)
    high = 1.0 / (1.0 + (s - 1) * low)
    onehot = (block_of[:, :, None] == np.arange(k)[None, None, :])         # (n, position, block)
    mp = np.einsum("nkb,k->nb", onehot, p[order])
    mq = np.einsum("nkb,k->nb", onehot, q[order])
    used = np.arange(k)[None, :] < s[:, None]
    M0 = np.where(used, high[:, None] * (low + (1 - low) * mp), 0.0)      # = high·mp + low·high·(1 − mp)
    M1 = np.where(used, high[:, None] * (low + (1 - low) * mq), 0.0)
    total = perspective(M0, M1, kind=kind, **params).sum(axis=1)
    values = spr_module.divergence_from_sum(total, kind=kind, **params)
    return float(np.max(np.where(s <= ell, values, -np.inf)))


def rel_close(a, b, rtol=1e-9, atol=1e-13):
    return abs(a - b) <= rtol * max(abs(a), abs(b)) + atol


@pytest.mark.parametrize("kind,params", DIVERGENCES, ids=IDS)
def test_matches_brute_force(kind, params):
    rng = np.random.default_rng(abs(hash(str((kind, params)))) % 2 ** 32)
    for trial in range(120):
        k = int(rng.integers(1, 11))
        p, q = random_pair(rng, k)
        eps = float(rng.choice([0.0, 0.05, 0.4, 1.0, 2.5, 6.0, 15.0]))
        ell = int(rng.integers(1, k + 1))
        for budget in (None, ell):
            best = divergence_optimal(p, q, eps, divergence=kind, ell=budget, **params)
            ref = brute_force(p, q, eps, kind, params, budget)
            assert rel_close(best.value, ref), (k, eps, budget, best.value, ref)
            assert budget is None or best.num_outputs <= budget


@pytest.mark.parametrize("kind,params", DIVERGENCES[:6] + DIVERGENCES[7:], ids=IDS[:6] + IDS[7:])
def test_matches_kov_lp(kind, params):
    rng = np.random.default_rng(abs(hash(str((kind, params, "lp")))) % 2 ** 32)
    for trial in range(100):
        k = int(rng.integers(2, 8 if trial % 10 else 9))
        p, q = random_pair(rng, k)
        if np.any((q == 0) & (p > 0)) and kind in ("chi2", "renyi"):
            q = 0.9 * q + 0.1 / k                              # keep the LP bounded at these ε
        eps = float(rng.choice([0.01, 0.1, 0.5, 1.0, 3.0, 8.0]))
        lp = kov_lp(p, q, eps, divergence=kind, **params)
        best = divergence_optimal(p, q, eps, divergence=kind, **params)
        assert rel_close(lp.value, best.value, rtol=1e-9, atol=1e-14), (k, eps, lp.value, best.value)
        assert lp.value <= lp.upper_bound * (1 + 1e-9) + 1e-15
        assert is_ldp(lp.channel, eps, rtol=1e-6)


def test_kov_lp_small_eps_trap():
    rng = np.random.default_rng(0)
    for trial in range(20):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        for eps in (1e-4, 1e-3, 1e-2):
            assert rel_close(kov_lp(p, q, eps).value, divergence_optimal(p, q, eps).value, rtol=1e-8)


def test_channel_is_ldp_and_achieves_value():
    rng = np.random.default_rng(5)
    for trial in range(150):
        k = int(rng.integers(1, 30))
        p, q = random_pair(rng, k)
        eps = float(rng.choice([0.0, 0.3, 1.0, 4.0, 50.0, 700.0]))
        kind, params = DIVERGENCES[trial % len(DIVERGENCES)]
        best = divergence_optimal(p, q, eps, divergence=kind, **params)
        assert is_ldp(best.channel, eps) and is_ldp(best.channel, eps, rtol=1e-12)   # exact up to rounding
        assert np.allclose(best.channel.sum(axis=1), 1.0, rtol=0, atol=1e-15)
        direct = divergence(best.channel.T @ p, best.channel.T @ q, kind=kind, **params)
        assert rel_close(direct, best.value, rtol=1e-9, atol=1e-12), (k, eps, kind, direct, best.value)
        flat = sorted(x for block in best.partition for x in block)
        assert flat == list(range(k))
        ratios = [min(p[list(b)].sum() / max(q[list(b)].sum(), 1e-300), 1e300) for b in best.partition]
        assert all(a <= b * (1 + 1e-12) for a, b in zip(ratios, ratios[1:])) or len(ratios) == 1


def test_no_random_ldp_channel_beats_the_optimum():
    rng = np.random.default_rng(11)
    for trial in range(40):
        k, m = int(rng.integers(2, 7)), int(rng.integers(2, 6))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        eps = float(rng.choice([0.2, 1.0, 3.0]))
        opt = divergence_optimal(p, q, eps).value
        opt_m = divergence_optimal(p, q, eps, ell=min(m, k)).value
        # random ε-LDP channels: Q(y|x) ∝ a_y(x) with a ∈ [1, e^{ε/2}], so every column ratio is ≤ e^ε;
        # half of the exponents sit at the corners 0 or 1, where the optimum lives
        expo = np.where(rng.random((2000, k, m)) < 0.5, rng.random((2000, k, m)) < 0.5, rng.random((2000, k, m)))
        Q = np.exp(eps / 2 * expo)
        Q /= Q.sum(axis=2, keepdims=True)
        assert np.all(Q.max(axis=1) <= np.exp(eps) * Q.min(axis=1) * (1 + 1e-12))
        values = perspective(np.einsum("nkm,k->nm", Q, p), np.einsum("nkm,k->nm", Q, q), kind="kl").sum(axis=1)
        assert values.max() <= opt * (1 + 1e-12)
        if m <= k:
            assert values.max() <= opt_m * (1 + 1e-12)


def test_sample_frequencies_match_channel():
    p, q = np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.4, 0.3, 0.2, 0.1])
    best = divergence_optimal(p, q, 2.0)
    n = 100_000
    for x in range(4):
        y = best.sample(np.full(n, x), rng=x)
        freq = np.bincount(y, minlength=best.num_outputs) / n
        assert np.all(np.abs(freq - best.channel[x]) < 5 * np.sqrt(best.channel[x] / n) + 1e-12)
    y = best.sample(np.array([[0, 1], [2, 3]]), rng=np.random.default_rng(0))
    assert y.shape == (2, 2)


def test_edge_cases():
    assert divergence_optimal([1.0], [1.0], 3.0).value == 0.0
    assert divergence_optimal([0.2, 0.8], [0.2, 0.8], 3.0).partition == ((0, 1),)
    assert divergence_optimal([0.2, 0.8], [0.6, 0.4], 0.0).value == 0.0
    tie = divergence_optimal([0.1, 0.2, 0.7], [0.2, 0.4, 0.4], 5.0)
    assert tie.partition == ((0, 1), (2,))                  # tied symbols are never split
    assert sort_by_likelihood_ratio([0.5, 0.5, 0.0], [0.0, 0.5, 0.5]) == (((2,), (1,), (0,)), ())
    # ε from tiny to huge: finite, monotone in ε, continuous at the ends
    p, q = np.array([0.05, 0.15, 0.3, 0.5]), np.array([0.4, 0.3, 0.2, 0.1])
    eps = np.array([0.0, 1e-8, 1e-3, 0.5, 5.0, 50.0, 300.0, 700.0, np.inf])
    values = divergence_optimal_values(p[None], q[None], eps)[0]
    assert np.all(np.isfinite(values)) and np.all(np.diff(values) >= -1e-15)
    assert rel_close(values[-2], divergence(p, q), rtol=1e-13) and values[-1] == pytest.approx(divergence(p, q))
    small = divergence_optimal(p, q, 1e-4).value
    assert 0 < small < 1e-8                                  # O(ε²)
    # q(x) = 0 < p(x): infinite KL without privacy, finite with it, infinite at ε = ∞
    p0, q0 = np.array([0.5, 0.3, 0.2]), np.array([0.6, 0.4, 0.0])
    assert np.isfinite(divergence_optimal(p0, q0, 700.0).value)
    assert divergence_optimal(p0, q0, np.inf).value == np.inf


def test_interval_scores_match_blocks():
    rng = np.random.default_rng(2)
    p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
    M = interval_scores(p, q, 1.5, divergence="hellinger")
    groups, _ = sort_by_likelihood_ratio(p, q)
    w = np.exp(-1.5)
    for t in range(6):
        for i in range(t + 1, 7):
            block = sum(groups[t:i], ())
            u, v = w + (1 - w) * p[list(block)].sum(), w + (1 - w) * q[list(block)].sum()
            assert M[t, i] == pytest.approx(perspective(u, v, kind="hellinger"), rel=1e-12, abs=1e-15)
    assert np.all(np.isneginf(M[np.tril_indices(7)]))


def test_divergence_optimal_values_equals_loop():
    rng = np.random.default_rng(4)
    pairs = [random_pair(rng, 9) for _ in range(6)]
    P0, P1 = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
    grid = [3.0, 0.0, 0.7, 12.0, 1.1, 0.2, np.inf]
    for kind, params in DIVERGENCES[:5]:
        for ell in (None, 1, 3):
            V = divergence_optimal_values(P0, P1, grid, divergence=kind, ell=ell, **params)
            for t in range(6):
                for e, eps in enumerate(grid):
                    ref = divergence_optimal(P0[t], P1[t], eps, divergence=kind, ell=ell, **params).value
                    assert rel_close(V[t, e], ref, rtol=1e-12, atol=1e-15) or V[t, e] == ref


def test_dinkelbach_equals_layered_program_at_moderate_k():
    rng = np.random.default_rng(8)
    for trial in range(4):
        k = 60
        p, q = rng.dirichlet(np.ones(k) * 0.5), rng.dirichlet(np.ones(k) * 0.5)
        for eps in (0.5, 3.0, 9.0):
            fast = divergence_optimal(p, q, eps)
            plain, cuts = spr_module.spr_dp(p, q, eps)
            assert rel_close(fast.value, plain, rtol=1e-12)
            batch = spr_module._single_batch(p, q, eps, "kl", {})
            layered = spr_module._values_from_cuts(batch.a, batch.b, batch.d, batch.w, batch.c,
                                                   spr_module._layered(batch, k), "kl", {})
            assert rel_close(fast.value, float(layered[0]), rtol=1e-12)


def test_large_instance_without_table(monkeypatch):
    monkeypatch.setattr(spr_module, "_TABLE_BUDGET", 100)   # force the O(k)-memory path
    rng = np.random.default_rng(9)
    p, q = rng.dirichlet(np.ones(40)), rng.dirichlet(np.ones(40))
    slow = divergence_optimal(p, q, 4.0, ell=5)
    fast = divergence_optimal(p, q, 4.0)
    monkeypatch.undo()
    assert rel_close(slow.value, divergence_optimal(p, q, 4.0, ell=5).value, rtol=1e-12)
    assert rel_close(fast.value, divergence_optimal(p, q, 4.0).value, rtol=1e-12)


def test_callable_divergence_matches_kind():
    rng = np.random.default_rng(6)
    p, q = rng.dirichlet(np.ones(7)), rng.dirichlet(np.ones(7))
    a = divergence_optimal(p, q, 1.2, divergence=lambda t: (t - 1.0) ** 2)
    b = divergence_optimal(p, q, 1.2, divergence="chi2")
    assert rel_close(a.value, b.value, rtol=1e-12) and a.partition == b.partition


def test_baselines():
    rng = np.random.default_rng(12)
    for trial in range(30):
        k = int(rng.integers(2, 12))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        eps = float(rng.choice([0.1, 1.0, 5.0]))
        opt = divergence_optimal(p, q, eps).value
        binary = binary_mechanism(p, q, eps)
        rr = randomized_response_mechanism(p, q, eps)
        assert binary.value <= opt * (1 + 1e-12) and rr.value <= opt * (1 + 1e-12)
        assert np.array_equal(rr.channel, randomized_response(k, eps))
        assert rel_close(rr.value, divergence(rr.channel.T @ p, rr.channel.T @ q), rtol=1e-12)
        high = set(np.flatnonzero(p >= q).tolist())
        assert set(binary.partition[-1]) == high
    assert binary_mechanism([0.5, 0.5], [0.5, 0.5], 1.0).value == 0.0


def test_joint_range_paper_example():
    p, q = [0.04, 0.09, 0.22, 0.47, 0.18], [0.25, 0.49, 0.13, 0.10, 0.03]
    counts = [int(joint_range(p, q, eps).extreme.sum()) for eps in (0.4, 2.0, 5.0)]
    assert counts == [4, 6, 10]
    J = joint_range(p, q, 2.0)
    assert J.u.shape == (10, 2) and np.allclose(J.u.sum(axis=1), 1) and np.allclose(J.v.sum(axis=1), 1)
    # with ℓ = 3 the best candidate is the ℓ = 3 optimum
    J3 = joint_range(p, q, 1.0, ell=3)
    best = max(perspective(u, v, kind="kl").sum() for u, v in zip(J3.u, J3.v))
    assert rel_close(best, divergence_optimal(p, q, 1.0, ell=3).value, rtol=1e-12)
    assert J3.extreme.any()


def test_spr_channel_and_mechanism():
    Q = spr_channel([(0, 1), (2, 3, 4), (5,)], 6, np.log(2.0))
    assert np.allclose(Q * 4, [[2, 1, 1], [2, 1, 1], [1, 2, 1], [1, 2, 1], [1, 2, 1], [1, 1, 2]])
    deterministic = spr_channel([(1,), (0,)], 2, np.inf)
    assert np.array_equal(deterministic, [[0, 1], [1, 0]])


BAD_PAIRS = [
    (([0.5, 0.6], [0.5, 0.5]), ValueError, "p must sum to 1"),
    (([0.5, 0.5], [1.2, -0.2]), ValueError, "q must have non-negative"),
    (([0.5, 0.5], [0.2, 0.3, 0.5]), ValueError, "same length"),
    (([[0.5, 0.5]], [0.5, 0.5]), ValueError, "1-D"),
    (([np.nan, 1.0], [0.5, 0.5]), ValueError, "finite"),
    ((["a", "b"], [0.5, 0.5]), TypeError, "p must be an array"),
]


@pytest.mark.parametrize("args,err,match", BAD_PAIRS)
@pytest.mark.parametrize("fn", [divergence_optimal, kov_lp, binary_mechanism, randomized_response_mechanism,
                                joint_range, sort_by_likelihood_ratio])
def test_bad_distributions(fn, args, err, match):
    with pytest.raises(err, match=match):
        fn(*args) if fn is sort_by_likelihood_ratio else fn(*args, 1.0)


@pytest.mark.parametrize("eps,err", [(-0.1, ValueError), (float("nan"), ValueError), ("1", TypeError),
                                     (True, TypeError), (None, TypeError)])
def test_bad_eps(eps, err):
    p, q = [0.3, 0.7], [0.6, 0.4]
    for fn in (divergence_optimal, kov_lp, binary_mechanism, randomized_response_mechanism, joint_range):
        with pytest.raises(err, match="eps"):
            fn(p, q, eps)
    with pytest.raises(err, match="eps"):
        spr_channel([(0,), (1,)], 2, eps)
    with pytest.raises((ValueError, TypeError), match="eps"):
        divergence_optimal_values([p], [q], [0.5, eps])
    with pytest.raises(ValueError, match="eps must be finite"):
        kov_lp(p, q, np.inf)


def test_bad_ell_and_divergence():
    p, q = [0.2, 0.3, 0.5], [0.5, 0.3, 0.2]
    with pytest.raises(ValueError, match="ell must satisfy"):
        divergence_optimal(p, q, 1.0, ell=0)
    with pytest.raises(ValueError, match="ell must satisfy"):
        divergence_optimal(p, q, 1.0, ell=4)
    with pytest.raises(TypeError, match="ell must be an integer"):
        divergence_optimal(p, q, 1.0, ell=2.0)
    with pytest.raises(ValueError, match="ell must satisfy"):
        divergence_optimal_values([p], [q], [1.0], ell=5)
    with pytest.raises(ValueError, match="divergence kind"):
        divergence_optimal(p, q, 1.0, divergence="js")
    with pytest.raises(ValueError, match="gamma"):
        divergence_optimal(p, q, 1.0, divergence="egamma")
    with pytest.raises(ValueError, match="renyi_order"):
        divergence_optimal_values([p], [q], [1.0], divergence="renyi")
    with pytest.raises(TypeError, match="unexpected keyword"):
        divergence_optimal(p, q, 1.0, divergence="kl", gamma=2.0)
    with pytest.raises(ValueError, match="convex"):
        divergence_optimal(p, q, 1.0, divergence=lambda t: -((t - 1.0) ** 2))


def test_bad_batch_and_partition_and_sizes():
    with pytest.raises(ValueError, match="2-D"):
        divergence_optimal_values([0.5, 0.5], [0.5, 0.5], [1.0])
    with pytest.raises(ValueError, match="same shape"):
        divergence_optimal_values([[0.5, 0.5]], [[0.2, 0.3, 0.5]], [1.0])
    with pytest.raises(ValueError, match="row 1"):
        divergence_optimal_values([[0.5, 0.5], [0.6, 0.6]], [[0.5, 0.5], [0.5, 0.5]], [1.0])
    with pytest.raises(ValueError, match="1-D"):
        divergence_optimal_values([[0.5, 0.5]], [[0.5, 0.5]], [[1.0]])
    with pytest.raises(ValueError, match="KOV_MAX_K"):
        kov_lp(np.full(KOV_MAX_K + 1, 1 / (KOV_MAX_K + 1)), np.full(KOV_MAX_K + 1, 1 / (KOV_MAX_K + 1)), 1.0)
    with pytest.raises(ValueError, match="disjoint"):
        spr_channel([(0,), (0, 1)], 2, 1.0)
    with pytest.raises(ValueError, match="non-empty"):
        spr_channel([(), (0, 1)], 2, 1.0)
    with pytest.raises(TypeError, match="partition"):
        spr_mechanism([0.5, 0.5], [0.2, 0.8], 1.0, [("a",), (1,)])
    with pytest.raises(ValueError, match="max_points"):
        joint_range(np.full(12, 1 / 12), np.full(12, 1 / 12), 1.0, ell=6, max_points=1000)


def test_egamma_and_tv_optima_are_binary():
    """Theorem 3.3 of the paper: for E_γ (hence TV) some optimal mechanism has two outputs; the tie-merging
    step returns one."""
    rng = np.random.default_rng(13)
    for trial in range(100):
        k = int(rng.integers(2, 14))
        p, q = random_pair(rng, k)
        eps = float(rng.choice([0.1, 1.0, 4.0]))
        for kind, params in [("tv", {}), ("egamma", {"gamma": float(rng.choice([0.5, 1.0, 2.0, 6.0]))})]:
            best = divergence_optimal(p, q, eps, divergence=kind, **params)
            assert best.num_outputs <= 2
            budgeted = divergence_optimal(p, q, eps, divergence=kind, ell=k, **params)
            assert rel_close(best.value, budgeted.value, rtol=1e-14)


def test_channels_beyond_float_range_are_refused_not_rounded():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    mech = divergence_optimal(p, q, 708.0)
    assert is_ldp(mech.channel, 708.0)                       # the largest ε whose channel is still storable
    with pytest.raises(ValueError, match="too large to store"):
        divergence_optimal(p, q, 800.0)
    values = divergence_optimal_values(p[None], q[None], np.array([700.0, 800.0]))
    assert np.all(np.isfinite(values)) and values[0, 1] == pytest.approx(values[0, 0], rel=1e-12)
    assert divergence_optimal(p, p, 800.0).channel.shape == (3, 1)   # one block: no randomization to store


def test_sweep_batches_reuse_buffers_and_pass_subsets(monkeypatch):
    # a fine ε grid split into many batches: warm starts, a reused table buffer and passes on gathered subsets
    monkeypatch.setattr(spr_module, "_TABLE_BUDGET", 4 * 3 * 12 * 13 // 2)   # 3 values of ε per batch
    monkeypatch.setattr(spr_module, "_SWEEP_BATCH", 4 * 3 * 12 * 13 // 2)
    rng = np.random.default_rng(12)
    P0, P1 = rng.dirichlet(np.ones(12), 4), rng.dirichlet(np.ones(12), 4)
    grid = np.round(np.arange(0, 31) * 0.3, 10)
    for kind, params in DIVERGENCES[:5]:
        V = divergence_optimal_values(P0, P1, grid, divergence=kind, **params)
        for t in range(4):
            for e in range(0, grid.size, 5):
                ref = divergence_optimal(P0[t], P1[t], grid[e], divergence=kind, **params).value
                assert rel_close(V[t, e], ref, rtol=1e-12, atol=1e-15)


def test_stored_rows_equal_recomputed_rows_and_gathered_pass():
    rng = np.random.default_rng(13)
    b, m = 5, 9
    A, B = rng.dirichlet(np.ones(m), b), rng.dirichlet(np.ones(m), b)
    eps = rng.uniform(0.2, 6.0, b)
    w, c = np.exp(-eps), -np.expm1(-eps)
    for kind, params in DIVERGENCES[:5]:
        batch = spr_module._Batch(A, B, A - params.get("gamma", 1.0) * B, w, c, kind, params)
        S = spr_module._Scores(batch, workspace={})
        light = spr_module._Scores(batch, store=False)
        for (i, stored), (j, fresh) in zip(S.rows(), light.rows()):
            assert i == j
            np.testing.assert_array_equal(stored, fresh)
        keep = np.array([0, 2, 3])
        penalty = np.full(keep.size, 0.01)
        gathered = spr_module._penalised_pass(S, penalty, keep=keep)
        copied = spr_module._penalised_pass(S.subset(keep), penalty)
        for a, b_ in zip(gathered, copied):
            np.testing.assert_array_equal(a, b_)


def test_public_api_calls_the_engine():
    """The package registers the engine of "Making it fast"; without it the public API falls back to spr_dp."""
    assert spr_module._ENGINES["divergence_optimal"] is spr_module._engine_solution
    assert spr_module._ENGINES["divergence_optimal_values"] is spr_module._engine_values
    rng = np.random.default_rng(21)
    p, q = rng.dirichlet(np.ones(9)), rng.dirichlet(np.ones(9))
    fast = divergence_optimal(p, q, 1.3, ell=3)
    plain_value, plain_cuts = spr_module._plain_solution(p, q, 1.3, "kl", {}, 3)
    assert abs(fast.value - plain_value) <= 1e-12 * plain_value


FIGURE1_FILES = {6: "data/figure1_k6.csv", 100: "data/figure1_k100.csv"}


@pytest.mark.parametrize("k", [6, 100])
def test_shipped_figure1_data_match_the_code(k):
    """The shipped Figure 1 data are the paper-size run, and randomly chosen stored values recompute from the
    recorded seeds (pairs from default_rng(seed)), each by an independent public function."""
    from pathlib import Path
    from ldpbook.spr import read_figure1_data
    path = Path(__file__).resolve().parents[1] / FIGURE1_FILES[k]
    data = read_figure1_data(path)
    s = data.settings
    assert (s["k"], s["T"], s["n_boot"], s["seed"]) == (k, 100, 5000, 0)
    assert np.allclose(data.eps, np.arange(101) * 0.1, rtol=0, atol=1e-12)
    if k == 6:
        assert s["full"] and data.lp_cells == 100 * 101 and data.lp_gap < 1e-12
    rng = np.random.default_rng(s["seed"])
    P0, P1 = rng.dirichlet(np.ones(k), s["T"]), rng.dirichlet(np.ones(k), s["T"])
    pick = np.random.default_rng()                      # a fresh choice of stored points on every run
    for t, e in zip(pick.integers(0, s["T"], 4), pick.integers(0, data.eps.size, 4)):
        eps = float(data.eps[e])
        assert abs(data.base[t] - divergence(P0[t], P1[t])) <= 1e-12 * data.base[t]
        for name, fn in (("SPR", divergence_optimal), ("binary", binary_mechanism),
                         ("RR", randomized_response_mechanism)):
            stored, fresh = data.values[name][t, e], fn(P0[t], P1[t], eps).value
            assert abs(stored - fresh) <= 1e-9 * max(fresh, 1e-300), (name, int(t), eps)
        if k == 6 and e % 25 == 0:
            assert abs(kov_lp(P0[t], P1[t], eps).value - data.values["SPR"][t, e]) <= 1e-9 * max(
                data.values["SPR"][t, e], 1e-12)


def test_figure1_file_round_trip_and_bad_files(tmp_path):
    from ldpbook.spr import figure1_data, read_figure1_data, write_figure1_data
    d = figure1_data(5, T=7, eps=[0.0, 0.5, 3.0], n_boot=50, seed=3, boot_seed=4)
    write_figure1_data(d, tmp_path / "f.csv")
    back = read_figure1_data(tmp_path / "f.csv")
    assert back.settings == d.settings and back.lp_cells == d.lp_cells
    for name in ("SPR", "binary", "RR"):
        assert np.array_equal(back.values[name], d.values[name])          # repr round-trips every float
        assert np.array_equal(back.lower[name], d.lower[name]) and np.array_equal(back.mean[name], d.mean[name])
    (tmp_path / "bad.csv").write_text("t,eps\n0,1\n")
    with pytest.raises(ValueError, match="not a Figure 1 data file"):
        read_figure1_data(tmp_path / "bad.csv")
    lines = (tmp_path / "f.csv").read_text().splitlines()
    (tmp_path / "short.csv").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(ValueError, match="pairs"):
        read_figure1_data(tmp_path / "short.csv")
    with pytest.raises(TypeError, match="Figure1Data"):
        write_figure1_data({"k": 5}, tmp_path / "x.csv")


def test_three_cycle_perturbations_of_the_proof():
    """Lemma spr-lem-3cycle, numerically: on random staircase channels containing a 3-cycle (with ratios 0 and ∞
    at the ends), the two perturbations of the proof are feasible and move the image in opposite directions."""
    rng = np.random.default_rng(13)
    for trial in range(300):
        k, E = int(rng.integers(3, 7)), float(np.exp(rng.uniform(0.05, 5.0)))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        if trial % 3 == 0:
            q[np.argmax(p / q)] = 0.0                         # the last symbol gets ratio ∞
        if trial % 4 == 0:
            p[np.argmin(p / np.maximum(q, 1e-300))] = 0.0     # the first symbol gets ratio 0
        p, q = p / p.sum(), q / q.sum()
        with np.errstate(divide="ignore"):
            order = np.argsort(np.where(q > 0, p / np.where(q > 0, q, 1), np.inf), kind="stable")
        a, b, c = np.sort(rng.choice(k, 3, replace=False))
        a, b, c = order[a], order[b], order[c]                # three symbols in increasing likelihood ratio
        others = [x for x in range(k) if x not in (a, b, c)]
        theta = 1.0 / (3 + 2 * len(others) + 2 * (E - 1))    # every symbol covered by weight 2θ: row sums 1
        high = [{a, c}, {a, b}, {b, c}] + [{x} for x in others]
        weight = [theta] * 3 + [2 * theta] * len(others)
        Q = np.array([[wt * (E if x in h else 1.0) for h, wt in zip(high, weight)] for x in range(k)])
        assert np.allclose(Q.sum(axis=1), 1) and is_ldp(Q, np.log(E))
        i, j, jp = 0, 1, 2
        pbar, qbar = p @ Q[:, i], q @ Q[:, i]
        if pbar * q[b] >= p[b] * qbar:                        # Case I: column j' (011) and row a
            z, x = jp, a
            delta = pbar * q[a] - p[a] * qbar
            lam, mu = (pbar * q[b] - p[b] * qbar) / delta, (p[b] * q[a] - p[a] * q[b]) / delta
        else:                                                 # Case II: column j (110) and row c
            z, x = j, c
            delta = p[c] * qbar - pbar * q[c]
            lam, mu = (p[b] * qbar - pbar * q[b]) / delta, (p[c] * q[b] - p[b] * q[c]) / delta
        assert delta > 0 and lam >= 0 and mu > 0
        A, B = np.zeros_like(Q), np.zeros_like(Q)
        A[b, i], A[b, z] = 1.0, -1.0
        B[:, i], B[:, z] = -mu * Q[:, i], mu * Q[:, i]
        B[x, i] -= lam
        B[x, z] += lam
        gamma = 1e-3 * theta / max(1.0, lam)
        for D in (A, B):
            moved = Q + gamma * D
            assert np.all(moved >= 0) and np.allclose(moved.sum(axis=1), 1) and is_ldp(moved, np.log(E), rtol=1e-12)
        image = lambda D: np.concatenate([D.T @ p, D.T @ q])
        assert np.allclose(image(A), -image(B), rtol=0, atol=1e-13)
        assert abs(image(A)[i]) > 0 and image(A)[i] == p[b]


# ---------------------------------------------------------------- the 0.2.0 API shape and its deprecations

def _same_mechanism(a, b):
    return (a.value == b.value and a.partition == b.partition and np.array_equal(a.channel, b.channel)
            and a.eps == b.eps and a.divergence == b.divergence and dict(a.params) == dict(b.params))


def test_old_names_warn_and_agree_with_the_new_ones():
    from ldpbook.spr import optimal_mechanism, optimal_values
    p, q = np.array([0.5, 0.2, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
    new = divergence_optimal(p, q, 2.0, divergence="renyi", ell=2, renyi_order=2.0)
    with pytest.warns(DeprecationWarning, match="ldpbook 0.2.0: optimal_mechanism is deprecated; use divergence_opt"):
        assert _same_mechanism(optimal_mechanism(p, q, 2.0, divergence="renyi", ell=2, renyi_order=2.0), new)
    with pytest.warns(DeprecationWarning, match="ldpbook") as caught:            # 0.1's positional form
        assert _same_mechanism(optimal_mechanism(p, q, 2.0, "renyi", 2, renyi_order=2.0), new)
    assert any("write divergence=..., ell=..." in str(w.message) for w in caught)
    grid = [0.5, 3.0]
    V = divergence_optimal_values(p[None], q[None], grid, divergence="hellinger", ell=2)
    with pytest.warns(DeprecationWarning, match="ldpbook 0.2.0: optimal_values is deprecated"):
        assert np.array_equal(optimal_values(p[None], q[None], grid, divergence="hellinger", ell=2), V)
    with pytest.warns(DeprecationWarning, match="ldpbook"):
        assert np.array_equal(optimal_values(p[None], q[None], grid, "hellinger", 2), V)
    assert optimal_mechanism.__name__ == "optimal_mechanism" and optimal_values.__name__ == "optimal_values"


def test_options_passed_by_position_warn_and_agree():
    p, q = np.array([0.5, 0.2, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
    part = [(0,), (1, 2), (3,)]
    cases = [  # (old positional call, new keyword call)
        (lambda: spr_mechanism(p, q, 1.0, part, "egamma", gamma=2.0),
         lambda: spr_mechanism(p, q, 1.0, part, divergence="egamma", gamma=2.0)),
        (lambda: binary_mechanism(p, q, 1.0, "tv"), lambda: binary_mechanism(p, q, 1.0, divergence="tv")),
        (lambda: randomized_response_mechanism(p, q, 1.0, "chi2"),
         lambda: randomized_response_mechanism(p, q, 1.0, divergence="chi2")),
    ]
    for old, new in cases:
        with pytest.warns(DeprecationWarning, match="ldpbook 0.2.0: passing divergence to .* write divergence="):
            a = old()
        assert _same_mechanism(a, new())
    with pytest.warns(DeprecationWarning, match="ldpbook"):
        lp = kov_lp(p, q, 1.0, "renyi", renyi_order=3.0)
    assert lp.value == kov_lp(p, q, 1.0, divergence="renyi", renyi_order=3.0).value
    with pytest.warns(DeprecationWarning, match="ldpbook"):
        M = interval_scores(p, q, 1.0, "hellinger")
    assert np.array_equal(M, interval_scores(p, q, 1.0, divergence="hellinger"))
    masses = (np.array([0.3, 0.7]), np.array([0.6, 0.4]), np.array([-0.3, 0.3]))
    with pytest.warns(DeprecationWarning, match="ldpbook"):
        s = spr_module.block_score(*masses, 1.0, "tv")
    assert np.array_equal(s, spr_module.block_score(*masses, 1.0, divergence="tv"))
    with pytest.warns(DeprecationWarning, match="passing divergence, ell to spr_dp"):
        old = spr_module.spr_dp(p, q, 1.0, "kl", 2)
    assert old == spr_module.spr_dp(p, q, 1.0, divergence="kl", ell=2)
    with pytest.warns(DeprecationWarning, match="passing ell, max_points to joint_range"):
        J = joint_range(p, q, 1.0, 3, 1000)
    K = joint_range(p, q, 1.0, ell=3, max_points=1000)
    assert np.array_equal(J.u, K.u) and np.array_equal(J.extreme, K.extreme) and J.partitions == K.partitions
    mech = divergence_optimal(p, q, 1.0)
    x = np.arange(4).repeat(5)
    with pytest.warns(DeprecationWarning, match="passing rng to sample"):
        y = mech.sample(x, 7)
    assert np.array_equal(y, mech.sample(x, rng=7))


def test_new_signatures_refuse_options_by_position():
    p, q = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]
    with pytest.raises(TypeError, match=r"takes 3 positional arguments but 4 were given"):
        divergence_optimal(p, q, 1, 2)                        # never "divergence kind must be one of ..., got 2"
    with pytest.raises(TypeError, match=r"takes 3 positional arguments but 4 were given"):
        divergence_optimal_values([p], [q], [1.0], "kl")
    with pytest.raises(TypeError, match="positional"):        # beyond the old positional options
        spr_mechanism(p, q, 1.0, [(0, 1, 2)], "kl", "extra")
    with pytest.raises(TypeError, match="positional"):
        joint_range(p, q, 1.0, 2, 100, "extra")
    with pytest.raises(TypeError, match="multiple values"):
        kov_lp(p, q, 1.0, "kl", divergence="tv")
    with pytest.raises(TypeError, match="positional"):        # more than the 0.1 forms (which warn)
        spr_module.figure1_data(3, 2, None, False, 10, 0, 1, False, "extra")
    with pytest.raises(TypeError, match="positional"):
        spr_module.figure5_data(p, q, (1.0,), 100, 0, "extra")


def test_public_names_and_signatures_follow_the_api_shape():
    import inspect
    import ldpbook.spr as S
    hidden = {"Figure5Panel", "figure5_data", "plot_figure5", "Figure1Data", "figure1_data", "plot_figure1",
              "write_figure1_data", "read_figure1_data", "optimal_mechanism", "optimal_values"}
    assert not hidden & set(S.__all__)
    assert all(callable(getattr(S, name)) for name in hidden)           # still importable
    assert {"divergence_optimal", "divergence_optimal_values"} <= set(S.__all__)
    for method in (S.PartitionMechanism.sample,):
        assert inspect.signature(method).parameters["rng"].kind is inspect.Parameter.KEYWORD_ONLY
