"""Tests of ldpbook.egamma that need nothing from ldpbook.spr: the closed form against a direct LP and brute force,
the swap identity, the privatized ROC curve, the ℓ_r bound, sampling and every bad-input path.
(The cross-checks against ldpbook.spr live in test_egamma_spr.py.)"""
import inspect
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ldpbook.egamma
from ldpbook.egamma import (EgammaMechanism, LrDistanceBound, PrivatizedROC, binary_rr_channel, egamma_closed_form,
                            egamma_lp, egamma_optimal, lr_distance, lr_distance_optimal, neyman_pearson_curve,
                            privatized_roc)
from ldpbook.foundations import divergence, is_ldp, randomized_response


def rel_diff(a, b, floor=1e-6):
    "Relative difference; values below `floor` (round-off around an exact 0) are compared absolutely, scaled by it."
    return abs(a - b) / max(abs(a), abs(b), floor)


def random_pair(rng, k, zeros=True):
    "Two random distributions on k symbols; with `zeros`, q has some zero masses (infinite likelihood ratios)."
    p = rng.dirichlet(np.full(k, rng.choice([0.3, 1.0, 3.0])))
    q = rng.dirichlet(np.full(k, rng.choice([0.3, 1.0, 3.0])))
    if zeros and k > 1 and rng.random() < 0.5:
        drop = rng.random(k) < 0.35
        drop[rng.integers(k)] = False
        q[drop] = 0.0
        q /= q.sum()
    return p, q


def random_ldp_channel(k, m, eps, rng):
    "A random ε-LDP channel: entries a_y e^{(ε/2)U}, rows normalised (every column ratio ≤ e^ε)."
    A = np.exp(rng.uniform(0, eps / 2, (k, m))) * rng.exponential(size=m)
    return A / A.sum(axis=1, keepdims=True)


def random_partition_channel(k, eps, rng):
    "Randomized response on the label of a random (not necessarily contiguous) partition of the k symbols."
    labels = np.unique(rng.integers(0, int(rng.integers(1, k + 1)), size=k), return_inverse=True)[1]
    s = labels.max() + 1
    Q = np.full((k, s), 1 / (np.exp(eps) + s - 1))
    Q[np.arange(k), labels] = np.exp(eps) / (np.exp(eps) + s - 1)
    return Q


def random_boundary_ldp_channel(k, eps, rng):
    "A channel near the boundary of the ε-LDP set: a random mixture (outputs tagged) of 1–3 random-partition SPR"
    "channels, then a random post-processing with probability ½. Both operations preserve ε-LDP."
    n = int(rng.integers(1, 4))
    weights = rng.dirichlet(np.ones(n))
    Q = np.hstack([w * random_partition_channel(k, eps, rng) for w in weights])
    if rng.random() < 0.5:
        W = rng.dirichlet(np.full(int(rng.integers(2, 5)), 0.3), size=Q.shape[1])
        Q = Q @ W
    return Q


def random_instances(n, seed, gamma_low=0.0, gamma_high=20.0, k_max=8):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k = int(rng.integers(1, k_max + 1))
        p, q = random_pair(rng, k)
        eps = float(np.exp(rng.uniform(np.log(0.01), np.log(10))))
        gamma = float(rng.choice([rng.uniform(gamma_low, 1.0), rng.uniform(1.0, gamma_high), 1.0]))
        yield p, q, eps, gamma


# ---------------------------------------------------------------- the closed form

def test_closed_form_equals_direct_lp_on_random_instances():
    worst = 0.0
    for p, q, eps, gamma in random_instances(300, seed=0):
        worst = max(worst, rel_diff(egamma_optimal(p, q, eps, gamma=gamma).value, egamma_lp(p, q, eps, gamma=gamma)))
    assert worst <= 1e-9


def test_channel_is_ldp_achieves_value_and_uses_the_threshold_set():
    for p, q, eps, gamma in random_instances(300, seed=1):
        mech = egamma_optimal(p, q, eps, gamma=gamma)
        assert isinstance(mech, EgammaMechanism)
        inside = np.flatnonzero(p >= gamma * q).tolist()
        two_blocks = 0 < len(inside) < p.size
        assert mech.channel.shape == (p.size, 2 if two_blocks else 1) and mech.num_outputs == len(mech.partition)
        assert is_ldp(mech.channel, eps)
        achieved = divergence(mech.channel.T @ p, mech.channel.T @ q, kind="egamma", gamma=gamma)
        assert rel_diff(achieved, mech.value) <= 1e-9
        assert mech.threshold_set == tuple(inside)
        assert all(mech.partition) and sorted(sum(mech.partition, ())) == list(range(p.size))
        assert mech.partition[-1] == mech.threshold_set if two_blocks else mech.partition == (tuple(range(p.size)),)
        assert mech.divergence == "egamma" and dict(mech.params) == {"gamma": gamma}
        assert abs(mech.nonprivate_value - divergence(p, q, kind="egamma", gamma=gamma)) < 1e-12


def test_no_set_partition_beats_the_closed_form():
    "Brute force: randomized response on the block label of every partition of 5 symbols (52, any order)."
    def partitions(items):
        if not items:
            yield []
            return
        for part in partitions(items[1:]):
            yield [[items[0]]] + part
            for i in range(len(part)):
                yield part[:i] + [[items[0]] + part[i]] + part[i + 1:]

    all_parts = list(partitions(list(range(5))))
    assert len(all_parts) == 52
    rng = np.random.default_rng(2)
    for _ in range(15):
        p, q = random_pair(rng, 5)
        eps, gamma = float(rng.uniform(0.05, 5)), float(rng.uniform(0.1, 8))
        best = 0.0
        for part in all_parts:
            s = len(part)
            Q = np.full((5, s), 1.0 / (np.exp(eps) + s - 1))
            for j, block in enumerate(part):
                Q[block, j] = np.exp(eps) / (np.exp(eps) + s - 1)
            best = max(best, divergence(Q.T @ p, Q.T @ q, kind="egamma", gamma=gamma))
        assert abs(best - egamma_optimal(p, q, eps, gamma=gamma).value) <= 1e-12


def test_random_ldp_channels_never_exceed_the_optimum():
    rng = np.random.default_rng(3)
    for _ in range(100):
        k = int(rng.integers(2, 7))
        p, q = random_pair(rng, k)
        eps, gamma = float(rng.uniform(0.05, 4)), float(rng.uniform(0, 6))
        opt = egamma_optimal(p, q, eps, gamma=gamma).value
        for Q in [random_ldp_channel(k, int(rng.integers(1, 6)), eps, rng) for _ in range(5)] + \
                 [random_boundary_ldp_channel(k, eps, rng) for _ in range(10)] + [randomized_response(k, eps)]:
            assert is_ldp(Q, eps)
            assert divergence(Q.T @ p, Q.T @ q, kind="egamma", gamma=gamma) <= opt + 1e-12


def test_closed_form_function_matches_and_broadcasts():
    rng = np.random.default_rng(4)
    for p, q, eps, gamma in itertools.islice(random_instances(200, seed=5), 200):
        e = divergence(p, q, kind="egamma", gamma=gamma)
        assert abs(float(egamma_closed_form(e, eps, gamma=gamma)) - egamma_optimal(p, q, eps, gamma=gamma).value) <= 1e-12
    eps = np.linspace(0, 5, 11)
    grid = egamma_closed_form(np.array([0.7, 0.4, 0.2])[None, :], eps[:, None], gamma=np.array([0.5, 1.0, 3.0])[None, :])
    assert grid.shape == (11, 3)
    assert np.all(np.diff(grid, axis=0) >= -1e-15)                     # non-decreasing in ε
    p, q = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
    tv = divergence(p, q, kind="tv")
    assert np.allclose(egamma_closed_form(tv, eps, gamma=1.0), np.tanh(eps / 2) * tv, rtol=1e-14, atol=0)


@pytest.mark.parametrize("gamma", [0.0, 0.3, 1.0, 2.0, 7.5])
def test_extreme_privacy_levels(gamma):
    p, q = np.array([0.5, 0.3, 0.2, 0.0]), np.array([0.1, 0.2, 0.3, 0.4])
    e = divergence(p, q, kind="egamma", gamma=gamma)
    assert egamma_optimal(p, q, 0.0, gamma=gamma).value == pytest.approx(max(1 - gamma, 0), abs=1e-15)
    assert egamma_optimal(p, q, np.inf, gamma=gamma).value == pytest.approx(e, abs=1e-15)
    for eps in (50.0, 700.0):                                          # no overflow, tends to E_γ(p‖q)
        v = egamma_optimal(p, q, eps, gamma=gamma).value
        assert np.isfinite(v) and v == pytest.approx(e, abs=1e-12)
    assert egamma_closed_form(e, 1e4, gamma=gamma) == pytest.approx(e, abs=1e-12)   # the value exists at any ε ...
    if 0 < np.count_nonzero(p >= gamma * q) < p.size:                        # ... binary RR is not storable there
        with pytest.raises(ValueError, match="too large to store"):
            egamma_optimal(p, q, 1e4, gamma=gamma)
    else:                                                                     # the constant channel (γ = 0) is
        assert egamma_optimal(p, q, 1e4, gamma=gamma).num_outputs == 1
    mech = egamma_optimal(p, q, np.inf, gamma=gamma)
    assert set(np.unique(mech.channel)) <= {0.0, 1.0}


def test_pure_privacy_kills_gamma_above_e_eps():
    rng = np.random.default_rng(6)
    for _ in range(50):
        p, q = random_pair(rng, 5)
        eps = float(rng.uniform(0.01, 3))
        assert egamma_optimal(p, q, eps, gamma=np.exp(eps) * (1 + rng.random())).value == 0.0


def test_gamma_zero_and_equal_hypotheses():
    p = np.array([0.2, 0.3, 0.5])
    assert egamma_optimal(p, p, 1.3, gamma=0.0).value == 1.0
    assert egamma_optimal(p, p, 1.3, gamma=2.0).value == 0.0
    assert egamma_optimal(p, p, 1.3, gamma=0.4).value == pytest.approx(0.6, abs=1e-15)
    assert egamma_optimal([1.0], [1.0], 2.0, gamma=0.5).value == pytest.approx(0.5)


def test_linear_contraction_bound_is_implied():
    "E*_γ ≤ (e^ε − γ)₊/(e^ε + 1) E_γ(p‖q) for γ ≥ 1, with equality for disjoint supports."
    for p, q, eps, gamma in random_instances(200, seed=7, gamma_low=1.0):
        e = divergence(p, q, kind="egamma", gamma=gamma)
        bound = max(np.exp(eps) - gamma, 0) / (np.exp(eps) + 1) * e
        assert egamma_optimal(p, q, eps, gamma=gamma).value <= bound + 1e-12
    for eps, gamma in ((0.5, 1.2), (2.0, 3.0), (4.0, 1.0)):
        assert egamma_optimal([1, 0], [0, 1], eps, gamma=gamma).value == pytest.approx(
            max(np.exp(eps) - gamma, 0) / (np.exp(eps) + 1), rel=1e-14)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=8), st.lists(st.floats(0, 1), min_size=1, max_size=8),
       st.floats(1e-3, 1e3))
@settings(max_examples=150)
def test_swap_identity(a, b, gamma):
    k = min(len(a), len(b))
    P, Q = np.array(a[:k]) + 1e-3, np.array(b[:k])
    P /= P.sum()
    Q = Q / Q.sum() if Q.sum() > 0 else np.full(k, 1 / k)
    lhs = divergence(P, Q, kind="egamma", gamma=gamma)
    rhs = (1 - gamma) + gamma * divergence(Q, P, kind="egamma", gamma=1 / gamma)
    assert abs(lhs - rhs) <= 1e-12 * max(1.0, gamma)


def test_sample_frequencies_and_reproducibility():
    mech = egamma_optimal([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], 1.0, gamma=1.0)
    x = np.repeat([0, 2], 20_000)
    y = mech.sample(x, rng=0)
    assert np.array_equal(y, mech.sample(x, rng=0))
    assert abs(y[:20_000].mean() - 1 / (1 + np.exp(-1))) < 0.01       # x = 0 ∈ S₁: release 1 w.p. e/(e+1)
    assert abs(y[20_000:].mean() - 1 / (1 + np.exp(1))) < 0.01


def test_results_are_frozen():
    mech = egamma_optimal([0.5, 0.5], [0.2, 0.8], 1.0, gamma=1.5)
    with pytest.raises(AttributeError):
        mech.value = 1.0
    with pytest.raises(ValueError):
        mech.channel[0, 0] = 0.5


# ---------------------------------------------------------------- ROC

def test_neyman_pearson_curve_vertices():
    fpr, tpr = neyman_pearson_curve([0.5, 0.3, 0.2, 0.0], [0.0, 0.2, 0.3, 0.5])
    assert np.allclose(fpr, [0, 0, 0.2, 0.5, 1.0]) and np.allclose(tpr, [0, 0.5, 0.8, 1.0, 1.0])


def test_private_curve_is_the_envelope_and_dominates_every_mechanism():
    rng = np.random.default_rng(8)
    alphas = np.linspace(0, 1, 81)
    for _ in range(40):
        k = int(rng.integers(2, 7))
        p, q = random_pair(rng, k)
        eps = float(rng.choice([0.0, 0.2, 1.0, 3.0, np.inf]))
        roc = privatized_roc(p, q, eps)
        assert isinstance(roc, PrivatizedROC)
        assert roc.fpr[0] == 0 and roc.tpr[0] == 0 and roc.fpr[-1] == 1 and roc.tpr[-1] == 1
        assert np.all(np.diff(roc.fpr) >= 0) and np.all(np.diff(roc.tpr) >= -1e-15)
        # envelope over γ of the lines E*_γ + γα
        with np.errstate(divide="ignore", invalid="ignore"):
            slopes = np.diff(roc.tpr) / np.diff(roc.fpr)
        grid = np.concatenate((np.geomspace(1e-3, 1e3, 121), slopes[np.isfinite(slopes)], [0.0]))
        values = np.array([egamma_optimal(p, q, eps, gamma=g).value for g in grid])
        envelope = np.min(values[None, :] + grid[None, :] * alphas[:, None], axis=1)
        assert np.max(np.abs(envelope - roc.tpr_at(alphas))) <= 1e-12
        # support function = E*_γ
        for g in (0.2, 1.0, 3.0):
            assert abs(np.max(roc.tpr - g * roc.fpr) - egamma_optimal(p, q, eps, gamma=g).value) <= 1e-12
        # concave: slopes non-increasing
        finite = slopes[np.isfinite(slopes)]
        assert np.all(np.diff(finite) <= 1e-9)
        if np.isfinite(eps) and eps > 0:
            for _ in range(6):
                Q = (random_ldp_channel(k, int(rng.integers(2, 6)), eps, rng) if rng.random() < 0.5
                     else random_boundary_ldp_channel(k, eps, rng))
                other = privatized_roc(p, q, eps, channel=Q)
                assert np.all(other.tpr_at(alphas, curve="channel") <= roc.tpr_at(alphas) + 1e-12)
        # the non-private curve dominates the private one
        assert np.all(roc.tpr_at(alphas) <= roc.tpr_at(alphas, curve="nonprivate") + 1e-12)


def test_roc_limits_and_gamma_points():
    p, q = np.array([0.04, 0.09, 0.22, 0.47, 0.18]), np.array([0.25, 0.49, 0.13, 0.10, 0.03])
    alphas = np.linspace(0, 1, 51)
    roc_inf = privatized_roc(p, q, np.inf)
    assert np.allclose(roc_inf.tpr_at(alphas), roc_inf.tpr_at(alphas, curve="nonprivate"), atol=1e-15)
    roc0 = privatized_roc(p, q, 0.0)
    assert np.allclose(roc0.tpr_at(alphas), alphas, atol=1e-15)
    roc = privatized_roc(p, q, 1.5, gammas=np.geomspace(0.05, 20, 25))
    assert np.allclose(roc.tpr_at(roc.gamma_fpr), roc.gamma_tpr, atol=1e-12)
    assert np.allclose(roc.gamma_tpr - roc.gammas * roc.gamma_fpr, roc.gamma_values, atol=1e-12)
    # the default fixed mechanism is the binary one on {p ≥ q}: it touches the optimal curve
    assert np.allclose(roc.channel, egamma_optimal(p, q, 1.5, gamma=1.0).channel)
    assert np.max(roc.channel_tpr - roc.channel_fpr) == pytest.approx(egamma_optimal(p, q, 1.5, gamma=1.0).value)


# ---------------------------------------------------------------- ℓ_r

@pytest.mark.parametrize("r", [1, 1.5, 2, 3, 10, np.inf])
def test_lr_bound_holds_on_random_ldp_channels_and_is_attained(r):
    rng = np.random.default_rng(9)
    for _ in range(60):
        k = int(rng.integers(2, 9))
        p, q = random_pair(rng, k)
        eps = float(rng.uniform(0.01, 6))
        b = lr_distance_optimal(p, q, eps, r=r)
        assert isinstance(b, LrDistanceBound)
        assert b.value == pytest.approx(2 ** (1 / r) * np.tanh(eps / 2) * divergence(p, q, kind="tv"), rel=1e-14)
        assert rel_diff(lr_distance(p, q, b.channel, r=r), b.value) <= 1e-12
        assert is_ldp(b.channel, eps)
        channels = [random_ldp_channel(k, int(rng.integers(2, 9)), eps, rng) for _ in range(4)]
        channels += [random_boundary_ldp_channel(k, eps, rng) for _ in range(6)]
        channels += [randomized_response(k, eps), random_partition_channel(k, eps, rng)]
        for Q in channels:
            assert is_ldp(Q, eps)
            assert lr_distance(p, q, Q, r=r) <= b.value * (1 + 1e-12) + 1e-15


def test_lr_r1_is_twice_the_tv_contraction():
    rng = np.random.default_rng(10)
    p, q = random_pair(rng, 6, zeros=False)
    b = lr_distance_optimal(p, q, 0.7, r=1)
    assert b.value == pytest.approx(2 * egamma_optimal(p, q, 0.7, gamma=1.0).value, rel=1e-14)


def test_lr_bound_fails_below_r_one():
    "For r < 1 randomized response beats the binary mechanism: why the corollary needs r ≥ 1."
    p, q = np.array([0.5, 0.5, 0.0, 0.0]), np.array([0.0, 0.0, 0.5, 0.5])
    w = randomized_response(4, 30.0).T @ (p - q)
    r = 0.5
    assert np.sum(np.abs(w) ** r) ** (1 / r) > 2 ** (1 / r) * np.tanh(15.0) * 1.0


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("gamma, err", [(-0.1, ValueError), (np.nan, ValueError), (np.inf, ValueError),
                                        ("2", TypeError), (True, TypeError), (None, TypeError)])
def test_bad_gamma(gamma, err):
    with pytest.raises(err, match="gamma"):
        egamma_optimal([0.5, 0.5], [0.2, 0.8], 1.0, gamma=gamma)
    with pytest.raises(err, match="gamma"):
        egamma_lp([0.5, 0.5], [0.2, 0.8], 1.0, gamma=gamma)
    with pytest.raises(err, match="gamma"):
        privatized_roc([0.5, 0.5], [0.2, 0.8], 1.0, gammas=[1.0, gamma])


@pytest.mark.parametrize("eps, err", [(-1.0, ValueError), (np.nan, ValueError), ("1", TypeError), (None, TypeError)])
def test_bad_eps(eps, err):
    for call in (lambda: egamma_optimal([0.5, 0.5], [0.2, 0.8], eps, gamma=1.0),
                 lambda: privatized_roc([0.5, 0.5], [0.2, 0.8], eps),
                 lambda: lr_distance_optimal([0.5, 0.5], [0.2, 0.8], eps, r=2),
                 lambda: binary_rr_channel(np.array([True, False]), eps)):
        with pytest.raises(err, match="eps"):
            call()


@pytest.mark.parametrize("p, q, match", [
    ([0.5, 0.4], [0.2, 0.8], "p must sum to 1"),
    ([0.5, 0.5], [0.2, 0.7], "q must sum to 1"),
    ([1.2, -0.2], [0.2, 0.8], "p must have non-negative"),
    ([0.5, np.nan], [0.2, 0.8], "p must have finite"),
    ([0.5, 0.5], [0.2, 0.3, 0.5], "same length"),
    ([[0.5, 0.5]], [[0.2, 0.8]], "1-D"),
    ([], [], "non-empty"),
])
def test_bad_distributions(p, q, match):
    for call in (lambda: egamma_optimal(p, q, 1.0, gamma=1.0), lambda: egamma_lp(p, q, 1.0, gamma=1.0),
                 lambda: privatized_roc(p, q, 1.0), lambda: lr_distance_optimal(p, q, 1.0, r=2),
                 lambda: neyman_pearson_curve(p, q)):
        with pytest.raises(ValueError, match=match):
            call()


def test_bad_distribution_types():
    with pytest.raises(TypeError, match="p must be"):
        egamma_optimal(["a", "b"], [0.5, 0.5], 1.0, gamma=1.0)
    with pytest.raises(TypeError, match="p must be"):
        egamma_optimal([0.5 + 0j, 0.5], [0.5, 0.5], 1.0, gamma=1.0)


@pytest.mark.parametrize("r, err", [(0.5, ValueError), (0, ValueError), (np.nan, ValueError), (-np.inf, ValueError),
                                    ("2", TypeError), (True, TypeError)])
def test_bad_r(r, err):
    with pytest.raises(err, match="r"):
        lr_distance_optimal([0.5, 0.5], [0.2, 0.8], 1.0, r=r)
    with pytest.raises(err, match="r"):
        lr_distance([0.5, 0.5], [0.2, 0.8], np.eye(2), r=r)


def test_bad_channels_and_misc():
    with pytest.raises(ValueError, match="rows"):
        privatized_roc([0.5, 0.5], [0.2, 0.8], 1.0, channel=np.eye(3))
    with pytest.raises(ValueError, match="channel"):
        privatized_roc([0.5, 0.5], [0.2, 0.8], 1.0, channel=[[0.5, 0.6], [0.5, 0.5]])
    with pytest.raises(ValueError, match="rows"):
        lr_distance([0.5, 0.5], [0.2, 0.8], np.eye(3), r=2)
    with pytest.raises(ValueError, match="gammas"):
        privatized_roc([0.5, 0.5], [0.2, 0.8], 1.0, gammas=[])
    with pytest.raises(TypeError, match="inside"):
        binary_rr_channel([1, 0], 1.0)
    roc = privatized_roc([0.5, 0.5], [0.2, 0.8], 1.0)
    with pytest.raises(ValueError, match="curve"):
        roc.tpr_at(0.5, curve="other")
    with pytest.raises(ValueError, match="alpha"):
        roc.tpr_at(1.5)


@pytest.mark.parametrize("kwargs, match", [
    (dict(eps=-1.0, gamma=1.0, e_gamma=0.5), "eps"),
    (dict(eps=1.0, gamma=np.nan, e_gamma=0.5), "gamma"),
    (dict(eps=1.0, gamma=np.inf, e_gamma=0.5), "gamma"),
    (dict(eps=1.0, gamma=-1.0, e_gamma=0.5), "gamma"),
    (dict(eps=1.0, gamma=1.0, e_gamma=1.5), "e_gamma"),
    (dict(eps=1.0, gamma=0.5, e_gamma=0.2), "e_gamma"),       # below (1 − γ)₊ = 0.5: impossible
    (dict(eps=1.0, gamma=1.0, e_gamma=np.nan), "e_gamma"),
])
def test_bad_closed_form_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        egamma_closed_form(**kwargs)


# ---------------------------------------------------------------- the API of ldpbook 0.2.0 and its deprecations

P_API, Q_API = np.array([0.04, 0.09, 0.22, 0.47, 0.18]), np.array([0.25, 0.49, 0.13, 0.10, 0.03])


def test_lr_distance_optimal_is_in_the_api_and_its_old_name_is_not():
    "Type hints and keyword-only options of every public function: tests/test_api_shape.py."
    assert "lr_distance_optimal" in ldpbook.egamma.__all__ and "lr_distance_bound" not in ldpbook.egamma.__all__


def test_gamma_by_position_warns_and_gives_the_same_result():
    new = egamma_optimal(P_API, Q_API, 2.0, gamma=2.0)
    with pytest.warns(DeprecationWarning, match="^ldpbook.*gamma=") as record:
        old = egamma_optimal(P_API, Q_API, 2.0, 2.0)
    assert record[0].filename == __file__                      # the warning points at the caller
    assert old.value == new.value and np.array_equal(old.channel, new.channel) and old.partition == new.partition
    with pytest.warns(DeprecationWarning, match="^ldpbook.*gamma="):
        assert egamma_lp(P_API, Q_API, 2.0, 2.0) == egamma_lp(P_API, Q_API, 2.0, gamma=2.0)
    with pytest.raises(TypeError, match="multiple values"):
        egamma_optimal(P_API, Q_API, 2.0, 2.0, gamma=2.0)


def test_closed_form_old_argument_order_warns_and_is_reordered():
    e = np.array([0.7, 0.3])
    new = egamma_closed_form(e, 1.5, gamma=[0.5, 2.0])
    message = r"^ldpbook.*egamma_closed_form\(eps, gamma, e_gamma\).*egamma_closed_form\(e_gamma, eps, gamma=\.\.\.\)"
    with pytest.warns(DeprecationWarning, match=message) as record:
        old = egamma_closed_form(1.5, [0.5, 2.0], e)
    assert record[0].filename == __file__
    assert np.array_equal(old, new)
    for call in (lambda: egamma_closed_form(1.5, [0.5, 2.0], e_gamma=e),
                 lambda: egamma_closed_form(1.5, gamma=[0.5, 2.0], e_gamma=e)):
        with pytest.warns(DeprecationWarning, match="^ldpbook"):
            assert np.array_equal(call(), new)
    assert np.array_equal(egamma_closed_form(eps=1.5, gamma=[0.5, 2.0], e_gamma=e), new)     # all by name: fine
    with pytest.raises(TypeError, match="gamma"):
        egamma_closed_form(0.5, 1.0)                                   # γ is required, by name
    with pytest.raises(TypeError, match="multiple values"):
        egamma_closed_form(1.5, [0.5, 2.0], e, gamma=1.0)


def test_lr_distance_old_argument_order_warns_and_is_reordered():
    Q = egamma_optimal(P_API, Q_API, 1.0, gamma=1.0).channel
    new = lr_distance(P_API, Q_API, Q, r=3)
    with pytest.warns(DeprecationWarning, match=r"^ldpbook.*lr_distance\(p, q, Q, r=\.\.\.\)") as record:
        assert lr_distance(Q, P_API, Q_API, 3) == new
    assert record[0].filename == __file__
    with pytest.warns(DeprecationWarning, match="^ldpbook"):
        assert lr_distance(Q.tolist(), P_API, Q_API, r=3) == new
    assert lr_distance(P_API, Q_API, Q) == lr_distance(P_API, Q_API, Q, r=2.0)         # r = 2 by default
    with pytest.raises(TypeError, match="positional"):
        lr_distance(P_API, Q_API, Q, 3)


def test_lr_distance_bound_is_the_old_name_of_lr_distance_optimal():
    from ldpbook.egamma import lr_distance_bound
    new = lr_distance_optimal(P_API, Q_API, 1.0, r=3)
    assert isinstance(new, LrDistanceBound) and new.num_outputs == 2 == len(new.partition)
    assert new.partition == ((0, 1), (2, 3, 4)) and new.partition[1] == new.threshold_set
    assert np.array_equal(new.sample(np.arange(5), rng=0), new.sample(np.arange(5), rng=0))
    assert lr_distance(P_API, Q_API, new.channel, r=3) == pytest.approx(new.value, rel=1e-14)   # it attains the value
    with pytest.warns(DeprecationWarning, match="^ldpbook.*lr_distance_bound.*lr_distance_optimal"):
        old = lr_distance_bound(P_API, Q_API, 1.0, r=3)
    assert old.value == new.value and np.array_equal(old.channel, new.channel)
    with pytest.warns(DeprecationWarning, match="^ldpbook") as record:
        old = lr_distance_bound(P_API, Q_API, 1.0, 3)                  # the book's old call: name and r by position
    messages = [str(w.message) for w in record]
    assert any("lr_distance_bound is deprecated" in m for m in messages) and any("passing r" in m for m in messages)
    assert old.value == new.value
    constant = lr_distance_optimal(P_API, P_API, 1.0)                  # p = q: one block, the constant channel
    assert constant.value == 0.0 and constant.partition == (tuple(range(5)),) and constant.num_outputs == 1


def test_tpr_at_curve_by_position_warns():
    roc = privatized_roc(P_API, Q_API, 1.0)
    alphas = np.linspace(0, 1, 11)
    with pytest.warns(DeprecationWarning, match="^ldpbook.*curve="):
        old = roc.tpr_at(alphas, "channel")
    assert np.array_equal(old, roc.tpr_at(alphas, curve="channel"))


@pytest.mark.parametrize("call", [       # privatized_roc's old positional form warns: tests/test_deprecations.py
    lambda: privatized_roc(P_API, Q_API, 1.0, [1.0], None, 3),
    lambda: lr_distance_optimal(P_API, Q_API, 1.0, 2.0),
    lambda: lr_distance(P_API, Q_API, np.eye(5), 2.0),
    lambda: egamma_optimal(P_API, Q_API, 1.0, 2.0, 3.0),
    lambda: egamma_lp(P_API, Q_API, 1.0, 2.0, 3.0),
    lambda: privatized_roc(P_API, Q_API, 1.0).tpr_at(0.5, "private", 1),
])
def test_options_refuse_positional_use_where_there_was_no_positional_form(call):
    with pytest.raises(TypeError, match="positional"):
        call()


def test_privatized_roc_of_a_given_channel_beyond_eps_745():
    """1/(e^ε+1) is 0 in floats for ε > 745: the homothety is then the identity, and the hull is the Neyman–Pearson
    curve itself (the slope from the origin to (0, 0) was 0/0, with a RuntimeWarning)."""
    p, q = np.array([0.5, 0.3, 0.2, 0.0]), np.array([0.0, 0.2, 0.3, 0.5])
    for eps in (750.0, 1e4):
        roc = privatized_roc(p, q, eps, channel=np.ones((4, 1)))
        assert roc.fpr.tolist() == [0.0, 0.0, 0.2, 0.5, 1.0] and roc.tpr.tolist() == [0.0, 0.5, 0.8, 1.0, 1.0]
        assert roc.tpr_at([0.0, 0.1])[1] == pytest.approx(0.65, rel=1e-12)


def test_binary_rr_on_any_set_achieves_the_max_over_the_set_and_its_complement():
    """The solution of exercise egamma-ex-break: binary RR on A gives max{0, 1 − γ, t(A), t(Aᶜ)}, with
    t(A) = [(1 − γ) + (e^ε − 1)(p(A) − γq(A))]/(e^ε + 1); without t(Aᶜ) (the book's earlier statement) the formula
    gives 0 for p = (0.9, 0.1), q = (0.1, 0.9), γ = 2, A = {1}, where the value is 0.414."""
    rng = np.random.default_rng(31)
    for _ in range(300):
        k = int(rng.integers(2, 7))
        p, q = random_pair(rng, k)
        A = rng.random(k) < 0.5
        A[rng.integers(k)] = True
        A[rng.integers(k)] = False if A.sum() > 1 else A[0]
        if A.all():
            continue
        eps, gamma = float(rng.uniform(0.01, 5)), float(np.exp(rng.uniform(-2, 2)))
        value = divergence(binary_rr_channel(A, eps).T @ p, binary_rr_channel(A, eps).T @ q, kind="egamma", gamma=gamma)
        e = np.exp(eps)
        t = [((1 - gamma) + (e - 1) * (p[S].sum() - gamma * q[S].sum())) / (e + 1) for S in (A, ~A)]
        assert value == pytest.approx(max(0.0, 1 - gamma, *t), rel=1e-12, abs=1e-15)
    p, q = np.array([0.9, 0.1]), np.array([0.1, 0.9])
    value = divergence(*(binary_rr_channel([False, True], 2.0).T @ v for v in (p, q)), kind="egamma", gamma=2.0)
    assert value == pytest.approx((-1 + (np.exp(2) - 1) * 0.7) / (np.exp(2) + 1), rel=1e-12) and value > 0.4


def test_egamma_lp_on_a_large_alphabet():
    """The LP had 2k(k − 1) dense constraint rows: k = 3000 asked for 2·3000·2999·3000 floats (430 GB). With the
    bounds t ≤ θ_x ≤ T it has 2k + 2 sparse rows and agrees with the closed form to solver tolerance."""
    rng = np.random.default_rng(41)
    p, q = rng.dirichlet(np.ones(3000)), rng.dirichlet(np.ones(3000))
    for eps, gamma in ((1.0, 1.5), (0.2, 0.7), (np.inf, 3.0)):
        assert abs(egamma_lp(p, q, eps, gamma=gamma) - egamma_optimal(p, q, eps, gamma=gamma).value) <= 1e-9
