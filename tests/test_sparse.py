"""Tests for ldpbook.sparse: closed forms vs brute force, Theorem 1 vs foundations, sampling, bad input."""
import inspect
import math

import mpmath
import numpy as np
import pytest
from scipy import stats
from scipy.special import ive

import ldpbook.sparse as sparse_module
from ldpbook.foundations import is_ldp, ldp_epsilon, privacy_defect
from ldpbook.sparse import (
    DefectDecomposition, SparseKernelMechanism, first_distance_moment, graph_ball_supports, graph_distances,
    poisson_binomial, poisson_binomial_pmf, range_defect, shell_ratio_epsilon, skellam_cdf, skellam_logpmf,
    skellam_pmf, skellam_privacy_loss, skellam_sf, sparse_exponential, sparse_randomized_response, sparse_rr_calibration,
    sparse_rr_defect, sparse_rr_line_defect, sparse_rr_r1, sparse_staircase, sweep_radius, table_one, truncated_additive,
    truncated_additive_defect, truncated_skellam, truncated_skellam_defect, truncated_skellam_leakage,
    truncated_skellam_normalizer,
)

TOL = 1e-12


def brute_pair_defect(mechanism, x, x_prime, eps):
    "Δ_ε(x, x') from foundations.privacy_defect on the 2-row materialised channel."
    return privacy_defect(mechanism.channel([x, x_prime]).matrix, eps)[0, 1]


def random_sparse_arrays(rng, k, m, zero_prob=0.3):
    "A random k×m kernel and support mask with at least one positive-mass point per row."
    K = rng.random((k, m)) * (rng.random((k, m)) > zero_prob)
    mask = rng.random((k, m)) < 0.6
    for i in range(k):
        if not np.any(mask[i] & (K[i] > 0)):
            j = rng.integers(m)
            mask[i, j], K[i, j] = True, 0.1 + rng.random()
    return K, mask


# ---------------------------------------------------------------- Theorem 1 and foundations

def test_theorem1_decomposition_matches_privacy_defect():
    rng = np.random.default_rng(0)
    for _ in range(120):
        k, m = int(rng.integers(2, 6)), int(rng.integers(2, 9))
        K, mask = random_sparse_arrays(rng, k, m)
        mech = SparseKernelMechanism.from_arrays(K, mask)
        matrix = mech.channel().matrix
        eps = float(rng.choice([0.0, rng.exponential(1.0), 50.0, 800.0]))
        D = privacy_defect(matrix, eps)
        positive = (matrix > 0)
        for a in range(k):
            for b in range(k):
                d = mech.defect(a, b, eps)
                assert d.total == pytest.approx(D[a, b], abs=TOL)
                assert d.support_leakage + d.overlap_excess == d.total
                assert d.support_leakage == pytest.approx(matrix[a, positive[a] & ~positive[b]].sum(), abs=TOL)
                assert d.support_leakage >= 0 and d.overlap_excess >= 0


def test_theorem1_on_callable_mechanisms_on_the_integers():
    rng = np.random.default_rng(1)
    for _ in range(40):
        width = int(rng.integers(0, 5))
        shift = int(rng.integers(-2, 3))
        weights = rng.random(2 * width + 1) + 0.05
        mech = SparseKernelMechanism(lambda x, ys: weights[ys - x - shift + width] * (1 + 0.1 * np.sin(x)),
                                     lambda x: np.arange(x + shift - width, x + shift + width + 1))
        eps = float(rng.exponential(1.0))
        xs = rng.integers(-5, 6, size=2)
        assert mech.defect(int(xs[0]), int(xs[1]), eps).total == pytest.approx(
            brute_pair_defect(mech, int(xs[0]), int(xs[1]), eps), abs=TOL)


def test_pure_ldp_agrees_with_foundations_is_ldp():
    rng = np.random.default_rng(2)
    for trial in range(150):
        k, m = int(rng.integers(2, 6)), int(rng.integers(2, 7))
        common = trial % 2 == 0
        if common:
            mech = SparseKernelMechanism.from_arrays(rng.random((k, m)) + 0.05)
        else:
            mech = SparseKernelMechanism.from_arrays(*random_sparse_arrays(rng, k, m))
        matrix = mech.channel().matrix
        true_eps = ldp_epsilon(matrix)
        assert mech.pure_epsilon() == pytest.approx(true_eps, abs=TOL) or (np.isinf(true_eps) and np.isinf(mech.pure_epsilon()))
        for eps in (0.0, 0.5 * true_eps if np.isfinite(true_eps) else 3.0, true_eps if np.isfinite(true_eps) else 1e3,
                    1.01 * true_eps if np.isfinite(true_eps) else 1e6, np.inf):
            assert mech.is_pure_ldp(eps) == is_ldp(matrix, eps)


def test_pure_ldp_on_a_relation_allows_different_components():
    mech = SparseKernelMechanism(lambda x, ys: np.exp(-np.abs(ys - x)),
                                 lambda x: np.arange(0, 3) if x < 5 else np.arange(10, 14), inputs=(0, 1, 10, 11))
    assert mech.pure_epsilon() == np.inf
    assert np.isfinite(mech.pure_epsilon(H=1))
    assert mech.is_pure_ldp(mech.pure_epsilon(H=1), H=1)
    assert not mech.is_pure_ldp(100.0)


def test_zero_mass_points_are_removed():
    mech = SparseKernelMechanism.from_arrays([[1.0, 0.0, 3.0], [0.0, 2.0, 2.0]], np.ones((2, 3), dtype=bool))
    law = mech.pmf(0)
    assert law.outputs.tolist() == [0, 2]
    assert law.probabilities.tolist() == pytest.approx([0.25, 0.75], abs=TOL)
    d = mech.defect(0, 1, 0.0)
    assert d.support_leakage == pytest.approx(0.25, abs=TOL)


def test_log_kernel_keeps_underflowing_masses_in_the_support():
    mech = SparseKernelMechanism(lambda x, ys: -800.0 * np.abs(ys - x), lambda x: np.arange(x - 1, x + 2), log_kernel=True)
    law = mech.pmf(0)
    assert law.outputs.tolist() == [-1, 0, 1]
    assert law.log_probabilities[0] == pytest.approx(-800.0, rel=1e-12)
    assert mech.defect(0, 1, 1.0).total == pytest.approx(1.0, abs=TOL)


# ---------------------------------------------------------------- sampling

@pytest.mark.parametrize("mech, x", [
    (sparse_randomized_response(3, 1.0), 5),
    (truncated_skellam(2.5, 4), -2),
    (poisson_binomial([[0.2, 0.5, 0.9, 0.6], [0.4, 0.4, 0.4, 0.4]], support=1), 1),
    (sparse_exponential(-np.abs(np.subtract.outer(np.arange(5), np.arange(7))).astype(float), 0.7, 2), 3),
])
def test_sample_frequencies_match_pmf(mech, x):
    law = mech.pmf(x)
    draws = mech.sample(x, rng=np.random.default_rng(11), size=100_000)
    assert set(np.unique(draws)) <= set(law.outputs.tolist())
    counts = np.array([(draws == y).sum() for y in law.outputs])
    assert stats.chisquare(counts, counts.sum() * law.probabilities).pvalue > 1e-4


def test_sample_is_reproducible_and_scalar_without_size():
    mech = truncated_skellam(1.0, 3)
    assert isinstance(mech.sample(0, rng=3), int)
    assert np.array_equal(mech.sample(0, rng=3, size=50), mech.sample(0, rng=3, size=50))
    assert mech.sample(0, rng=np.random.default_rng(0), size=0).size == 0


# ---------------------------------------------------------------- sparse randomized response (Proposition 4)

def test_sparse_rr_line_closed_form_vs_brute_force():
    rng = np.random.default_rng(4)
    for _ in range(250):
        t = int(rng.integers(0, 9))
        h = int(rng.integers(1, 2 * t + 4))                   # includes h > 2t
        eps = float(rng.choice([0.0, rng.exponential(1.5), 300.0]))
        kind = rng.integers(3)
        if kind == 0:
            closed, mech = sparse_rr_line_defect(h, t, eps), sparse_randomized_response(t, eps)
        else:
            p = 1.0 if (t == 0 or kind == 1) else float(rng.uniform(1 / (2 * t + 1), 1))   # q = 0 when p = 1
            closed, mech = sparse_rr_line_defect(h, t, eps, p=p), sparse_randomized_response(t, p=p)
        brute = mech.defect(0, h, eps)
        assert closed.total == pytest.approx(brute.total, abs=TOL)
        assert closed.support_leakage == pytest.approx(brute.support_leakage, abs=TOL)
        assert closed.total == pytest.approx(brute_pair_defect(mech, 0, h, eps), abs=TOL)
        assert mech.defect(h, 0, eps).total == pytest.approx(brute.total, abs=TOL)


def test_sparse_rr_set_form_vs_brute_force_including_q_zero():
    rng = np.random.default_rng(5)
    alphabet = np.arange(9)
    for trial in range(24):
        s = int(rng.integers(1, 6))
        p = 1.0 if (s == 1 or trial % 4 == 0) else float(rng.uniform(1 / s, 1))
        q = 0.0 if s == 1 else (1 - p) / (s - 1)
        supports = [np.sort(np.r_[x, rng.choice(np.delete(alphabet, x), s - 1, replace=False)]) for x in alphabet]
        mask = np.array([np.isin(alphabet, S) for S in supports])
        K = np.where(np.eye(9, dtype=bool), p, np.where(mask, q, 0.0))
        mech = SparseKernelMechanism.from_arrays(K, mask)
        eps = float(rng.exponential(1.0))
        D = privacy_defect(mech.channel().matrix, eps)
        for x in alphabet:
            for xp in alphabet:
                if x != xp:
                    closed = sparse_rr_defect(x, xp, supports[x], supports[xp], p, q, eps)
                    brute = mech.defect(int(x), int(xp), eps)
                    assert closed.total == pytest.approx(D[x, xp], abs=TOL)
                    assert closed.support_leakage == pytest.approx(brute.support_leakage, abs=TOL)


def test_sparse_rr_calibration_and_r1():
    for t in range(6):
        for eps in (0.0, 1.0, 7.5, 700.0):
            p, q = sparse_rr_calibration(t, eps)
            assert p + 2 * t * q == pytest.approx(1.0, abs=TOL)
            if t:
                assert math.log(p) - math.log(q) == pytest.approx(eps, abs=1e-9)
            mech = sparse_randomized_response(t, eps)
            assert sparse_rr_r1(t, eps) == pytest.approx(first_distance_moment(mech, 0), abs=TOL)
    # calibrated defect is nondecreasing in h, so the range maximum sits at h = H
    for t in range(5):
        totals = [sparse_rr_line_defect(h, t, 1.0).total for h in range(1, 2 * t + 3)]
        assert np.all(np.diff(totals) >= -TOL)
        for H in range(1, 6):
            assert range_defect(sparse_randomized_response(t, 1.0), 1.0, H).total == pytest.approx(
                sparse_rr_line_defect(H, t, 1.0).total, abs=TOL)


# ---------------------------------------------------------------- truncated additive (Proposition 5)

def test_truncated_additive_closed_form_vs_brute_force():
    rng = np.random.default_rng(6)
    for _ in range(200):
        r = int(rng.integers(0, 12))
        h = int(rng.integers(1, 2 * r + 4))                   # includes h > 2r
        half = rng.random(r + 1) * (rng.random(r + 1) > 0.25)
        half[0] = max(half[0], 0.05)
        phi = np.concatenate([half[:0:-1], half])
        eps = float(rng.exponential(1.0))
        closed, mech = truncated_additive_defect(phi, r, eps, h), truncated_additive(phi, r)
        brute = mech.defect(0, h, eps)
        assert closed.total == pytest.approx(brute.total, abs=TOL)
        assert closed.total == pytest.approx(brute_pair_defect(mech, 0, h, eps), abs=TOL)
        assert mech.defect(h, 0, eps).total == pytest.approx(brute.total, abs=TOL)      # symmetry
        if np.all(half > 0):
            assert closed.support_leakage == pytest.approx(brute.support_leakage, abs=TOL)
        if h > 2 * r:
            assert closed == DefectDecomposition(1.0, 0.0)


def test_truncated_additive_accepts_callable_pmf():
    phi = lambda k: np.exp(-0.4 * np.abs(k))
    assert truncated_additive_defect(phi, 5, 1.0, 2).total == pytest.approx(
        truncated_additive_defect(phi(np.arange(-5, 6)), 5, 1.0, 2).total, abs=TOL)


# ---------------------------------------------------------------- Skellam (Propositions 6-9)

MUS = [0.01, 0.05, 0.3, 1.0, 2.0, 7.0, 25.0, 80.0, 200.0]


def test_skellam_pmf_and_logpmf():
    k = np.arange(-400, 401)
    for mu in MUS:
        psi = skellam_pmf(k, mu)
        assert psi.sum() == pytest.approx(1.0, abs=1e-13)
        assert np.allclose(psi[350:451], stats.skellam.pmf(k[350:451], mu / 2, mu / 2), rtol=1e-9, atol=1e-300)
        positive = psi > 1e-250
        assert np.allclose(skellam_logpmf(k[positive], mu), np.log(psi[positive]), rtol=1e-13, atol=1e-12)
    # large μ: no overflow; large |k|: no wrong zeros in the log domain
    assert np.all(np.isfinite(skellam_pmf([0, 50, 300], 1e4))) and skellam_pmf(0, 1e4) > 0
    logs = skellam_logpmf(np.array([150, 300, 1000]), 0.01)
    assert np.all(np.isfinite(logs)) and np.all(np.diff(logs) < 0)
    series_vs_direct = skellam_logpmf(np.array([149]), 0.01)        # ive(149, .01) ≈ 1e-700: series branch
    w = 0.005 ** 2                                                    # (μ/2)²: first three series terms
    expected = 149 * math.log(0.005) - math.lgamma(150) - 0.01 + math.log1p(w / 150 + w * w / (2 * 150 * 151))
    assert series_vs_direct[0] == pytest.approx(expected, rel=1e-14)


def test_skellam_cdf_and_sf_vs_direct_sums():
    k = np.arange(-4000, 4001)
    m = np.arange(-40, 41)
    for mu in MUS:
        psi = skellam_pmf(k, mu)
        cdf = np.array([math.fsum(psi[:4000 + j + 1]) for j in m])
        upper = np.array([math.fsum(psi[4000 + j + 1:]) for j in m])
        assert np.max(np.abs(skellam_cdf(m, mu) - cdf)) < 1e-13
        tail = upper > 1e-280
        assert np.max(np.abs(skellam_sf(m, mu)[tail] - upper[tail]) / upper[tail]) < 1e-9


def test_truncated_skellam_closed_forms_vs_brute_force():
    rng = np.random.default_rng(7)
    for trial in range(220):
        mu = MUS[trial % len(MUS)] if trial < 2 * len(MUS) else float(10 ** rng.uniform(-2, math.log10(200)))
        r = int(rng.integers(0, 26))
        h = int(rng.integers(1, 2 * r + 4))                   # includes h > 2r
        eps = float(rng.choice([0.0, rng.exponential(1.5), 40.0]))
        closed = truncated_skellam_defect(mu, r, eps, h)
        mech = truncated_skellam(mu, r)
        brute = mech.defect(0, h, eps)
        assert closed.total == pytest.approx(brute.total, abs=TOL)
        assert closed.support_leakage == pytest.approx(brute.support_leakage, abs=TOL)
        assert closed.overlap_excess == pytest.approx(brute.overlap_excess, abs=TOL)
        assert closed.total == pytest.approx(brute_pair_defect(mech, 0, h, eps), abs=TOL)
        window = skellam_pmf(np.arange(-r, r + 1), mu)
        assert truncated_skellam_normalizer(mu, r) == pytest.approx(math.fsum(window), abs=TOL)
        if h <= 2 * r:
            assert truncated_skellam_leakage(mu, r, h) == pytest.approx(math.fsum(window[:h]) / math.fsum(window), abs=TOL)
        # Proposition 9: positive overlap iff some overlap index satisfies the Bessel-ratio condition (31)
        k = np.arange(h - r, r + 1)
        losses = skellam_privacy_loss(k, h, mu)
        assert (closed.overlap_excess > 0) == bool(np.any(losses > eps))
        if k.size:
            ratio = ive(np.abs(k), mu) / ive(np.abs(k - h), mu)
            finite = np.isfinite(ratio) & (ratio > 0)
            assert np.allclose(losses[finite], np.log(ratio[finite]), rtol=1e-10, atol=1e-10)


def test_truncated_skellam_matches_generic_additive():
    for mu, r, h in ((0.5, 3, 2), (2.0, 6, 5), (150.0, 20, 9)):
        phi = lambda k: skellam_pmf(k, mu)
        assert truncated_additive_defect(phi, r, 1.0, h).total == pytest.approx(
            truncated_skellam_defect(mu, r, 1.0, h).total, abs=TOL)


def test_table_one_skellam_plateau():
    sk = sweep_radius(lambda r: truncated_skellam(2.0, r), range(12, 16), 1.0, 3)
    assert all(abs(d.total - 0.553032) < 1e-5 and d.separation == 3 for d in sk)


# ---------------------------------------------------------------- range defect

def test_range_defect_finite_alphabet_vs_brute_force():
    rng = np.random.default_rng(8)
    for _ in range(30):
        k, m = int(rng.integers(2, 7)), int(rng.integers(2, 8))
        mech = SparseKernelMechanism.from_arrays(*random_sparse_arrays(rng, k, m))
        eps, H = float(rng.exponential(1.0)), int(rng.integers(1, k))
        D = privacy_defect(mech.channel().matrix, eps)
        gaps = np.abs(np.subtract.outer(np.arange(k), np.arange(k)))
        result = range_defect(mech, eps, H)
        assert result.total == pytest.approx(D[(gaps >= 1) & (gaps <= H)].max(), abs=TOL)
        a, b = result.pair
        assert abs(a - b) == result.separation and D[a, b] == pytest.approx(result.total, abs=TOL)
        assert result.support_leakage + result.overlap_excess == pytest.approx(result.total, abs=TOL)
        assert np.nanmax(result.totals) == pytest.approx(result.total, abs=TOL)


def test_range_defect_uses_both_orders_on_the_integers():
    weights = np.array([1.0, 3.0, 1.0, 0.5])                  # asymmetric window {x-1, x, x+1, x+2}
    mech = SparseKernelMechanism(lambda x, ys: weights[ys - x + 1], lambda x: np.arange(x - 1, x + 3))
    result = range_defect(mech, 0.5, 2)
    brute = max(mech.defect(a, b, 0.5).total for a, b in ((0, 1), (1, 0), (0, 2), (2, 0), (0, -1), (-1, 0), (0, -2), (-2, 0)))
    assert result.total == pytest.approx(brute, abs=TOL)


def test_range_defect_with_graph_distances_and_staircase_shell_ratio():
    n = 10
    A = np.zeros((n, n))
    A[np.arange(n), (np.arange(n) + 1) % n] = 1
    A = A + A.T                                              # cycle: vertex transitive, A_x constant
    rng = np.random.default_rng(9)
    for _ in range(20):
        r, H = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        weights = np.sort(rng.random(r + 1) + 0.2)[::-1]
        mech = sparse_staircase(weights, A, r)
        dist = graph_distances(A)
        eps = shell_ratio_epsilon(weights, H) + 1e-9
        for a in range(n):
            for b in range(n):
                if 1 <= dist[a, b] <= H:
                    assert mech.defect(a, b, eps).overlap_excess == 0.0
        line = sparse_staircase(weights, "line", r)
        assert range_defect(line, eps, H).overlap_excess == 0.0
        assert range_defect(mech, eps, H, distances=dist).overlap_excess == 0.0


def test_graph_distances_and_balls():
    A = np.zeros((6, 6))
    for a, b in ((0, 1), (1, 2), (2, 3), (1, 4)):
        A[a, b] = A[b, a] = 1
    d = graph_distances(A)
    assert d[0, 3] == 3 and d[4, 3] == 3 and np.isinf(d[5, 0])
    balls = graph_ball_supports(A, 1)
    assert balls[1].tolist() == [True, True, True, False, True, False]
    uniform = SparseKernelMechanism.from_arrays(balls.astype(float), balls)
    assert uniform.defect(0, 3, 3.0).total == pytest.approx(1.0, abs=TOL)    # Proposition 1: disjoint balls


# ---------------------------------------------------------------- exponential, Poisson binomial

def test_sparse_exponential_bounds():
    labels = np.arange(7)
    dist = np.abs(np.subtract.outer(labels, labels))
    circle = -np.minimum(dist, 7 - dist).astype(float)
    for eta in (0.1, 0.5, 2.0):
        mech = sparse_exponential(circle, eta, np.ones((7, 7), dtype=bool))
        assert mech.pure_epsilon() <= eta * 3 + TOL           # equal normalisers: η Δ_u
        assert mech.pure_epsilon() == pytest.approx(ldp_epsilon(mech.channel().matrix), abs=TOL)
        line = sparse_exponential(-dist.astype(float), eta, np.ones((7, 7), dtype=bool))
        assert line.pure_epsilon() <= 2 * eta * 6 + TOL
    sparse = sparse_exponential(circle, 1.0, 1)
    assert sparse.pure_epsilon() == np.inf


def test_poisson_binomial_pmf_vs_enumeration():
    rng = np.random.default_rng(10)
    probs = rng.random((3, 5))
    beta = poisson_binomial_pmf(probs)
    for x in range(3):
        brute = np.zeros(6)
        for bits in np.ndindex(*(2,) * 5):
            bits = np.array(bits)
            brute[bits.sum()] += np.prod(np.where(bits == 1, probs[x], 1 - probs[x]))
        assert np.allclose(beta[x], brute, atol=1e-14)
    mech = poisson_binomial(probs, support=1)
    D = privacy_defect(mech.channel().matrix, 0.3)
    for a in range(3):
        for b in range(3):
            assert mech.defect(a, b, 0.3).total == pytest.approx(D[a, b], abs=TOL)
    full = poisson_binomial(probs)
    assert full.is_pure_ldp(1.0) == is_ldp(full.channel().matrix, 1.0)


# ---------------------------------------------------------------- bad input

def raises(exc, fn, *args, match=None, **kwargs):
    with pytest.raises(exc, match=match):
        fn(*args, **kwargs)


def test_bad_kernels_and_supports():
    ok = np.ones((1, 2), dtype=bool)
    raises(ValueError, SparseKernelMechanism.from_arrays, [[1.0, -0.5]], ok, match="non-negative")
    raises(ValueError, SparseKernelMechanism.from_arrays, [[1.0, np.nan]], ok, match="finite")
    raises(ValueError, SparseKernelMechanism.from_arrays, [[1.0, np.inf]], ok, match="finite")
    raises(ValueError, SparseKernelMechanism.from_arrays, [[0.0, 0.0]], ok, match="zero mass")
    raises(ValueError, SparseKernelMechanism.from_arrays, [[1.0, 1.0]], np.zeros((1, 2), dtype=bool), match="empty")
    raises(TypeError, SparseKernelMechanism.from_arrays, [[1.0, 1.0]], [[1, 1]], match="support must be an array of booleans")
    raises(ValueError, SparseKernelMechanism.from_arrays, [1.0, 1.0], match="2-D")
    raises(ValueError, SparseKernelMechanism.from_arrays, [[np.nan, 0.0]], ok, log_kernel=True, match="NaN")
    raises(TypeError, SparseKernelMechanism.from_arrays, [[0.5 + 0j, 0.5]], ok, match="real")    # not cast (ComplexWarning)
    raises(TypeError, SparseKernelMechanism.from_arrays, [[0.5 + 0j, 0.5]], ok, log_kernel=True)
    support = lambda x: np.arange(x - 1, x + 2)
    for kernel, match in ((lambda x, ys: -np.ones(ys.size), "non-negative"), (lambda x, ys: np.full(ys.size, np.nan), "finite"),
                          (lambda x, ys: np.full(ys.size, np.inf), "finite"), (lambda x, ys: np.zeros(ys.size), "zero mass"),
                          (lambda x, ys: np.ones(2), "one value per output")):
        raises(ValueError, SparseKernelMechanism(kernel, support).pmf, 0, match=match)
    raises(ValueError, SparseKernelMechanism(lambda x, ys: np.full(ys.size, np.inf), support, log_kernel=True).pmf, 0, match="inf")
    raises(ValueError, SparseKernelMechanism(lambda x, ys: np.ones(ys.size), lambda x: []).pmf, 0, match="empty")
    raises(TypeError, SparseKernelMechanism(lambda x, ys: np.ones(ys.size), lambda x: [0.5, 1.5]).pmf, 0, match="integers")
    raises(TypeError, SparseKernelMechanism, np.ones((2, 2)), support)
    raises(ValueError, SparseKernelMechanism, lambda x, ys: ys, support, inputs=(1, 1))


def test_bad_inputs_to_methods():
    mech = SparseKernelMechanism.from_arrays(np.ones((2, 3)))
    raises(ValueError, mech.pmf, 5, match="not in the input alphabet")
    raises(TypeError, mech.pmf, 0.5, match="integer")
    raises(TypeError, mech.pmf, True, match="integer")
    raises(ValueError, mech.defect, 0, 1, -1.0, match="non-negative")
    raises(ValueError, mech.defect, 0, 1, np.nan, match="NaN")
    raises(TypeError, mech.sample, 0, rng="seed")
    raises(ValueError, mech.sample, 0, rng=0, size=-1)
    raises(ValueError, mech.is_pure_ldp, 1.0, rtol=-1.0)
    line = truncated_skellam(1.0, 2)
    raises(ValueError, line.channel, match="inputs must be given")
    raises(ValueError, line.pure_epsilon, match="inputs must be given")
    raises(ValueError, range_defect, line, 1.0, 0)
    raises(TypeError, range_defect, line, 1.0, 2.0)
    raises(ValueError, range_defect, line, 1.0, 2, distances=np.zeros((2, 2)))
    raises(ValueError, range_defect, mech, 1.0, 2, distances=np.zeros((3, 3)), match="distances")


@pytest.mark.parametrize("fn, args, exc", [
    (truncated_skellam, (1.0, 1.5), TypeError), (truncated_skellam, (1.0, 2.0), TypeError),
    (truncated_skellam, (1.0, -1), ValueError), (truncated_skellam, (0.0, 2), ValueError),
    (truncated_skellam, (-1.0, 2), ValueError), (truncated_skellam, (np.inf, 2), ValueError),
    (truncated_skellam, (np.nan, 2), ValueError), (truncated_additive, (np.ones(3), 1.5), TypeError),
    (sparse_randomized_response, (1.5, 1.0), TypeError), (sparse_randomized_response, (-1, 1.0), ValueError),
    (sparse_staircase, ([1.0, 0.5], "line", 1.0), TypeError), (graph_ball_supports, (np.ones((2, 2)), 0.5), TypeError),
    (truncated_skellam_defect, (1.0, 2, 1.0, 0), ValueError), (truncated_skellam_defect, (1.0, 2.5, 1.0, 1), TypeError),
    (truncated_skellam_leakage, (1.0, 2, 1.5), TypeError), (truncated_additive_defect, (np.ones(3), 1, 1.0, 0), ValueError),
    (sparse_rr_line_defect, (0, 2, 1.0), ValueError), (sparse_rr_line_defect, (1, 2, -1.0), ValueError),
    (skellam_pmf, ([0.5], 1.0), TypeError), (skellam_cdf, ([1], 0.0), ValueError), (skellam_sf, (1.5, 1.0), TypeError),
    (sweep_radius, (lambda r: truncated_skellam(1.0, r), [0.5], 1.0, 2), TypeError),
])
def test_bad_parameters(fn, args, exc):
    raises(exc, fn, *args)


def test_bad_shell_weights_and_graphs():
    raises(ValueError, sparse_staircase, [0.5, 1.0], "line", 1, match="non-increasing")
    raises(ValueError, sparse_staircase, [1.0, 0.0], "line", 1, match="positive")
    raises(ValueError, sparse_staircase, [1.0, -0.5], "line", 1)
    raises(ValueError, sparse_staircase, [1.0, 0.5, 0.2], "line", 1, match="r \\+ 1")
    raises(ValueError, sparse_staircase, [1.0, np.nan], "line", 1)
    raises(ValueError, sparse_staircase, [1.0, 0.5], "circle", 1, match="line")
    raises(ValueError, sparse_staircase, [1.0, 0.5], np.ones((2, 3)), 1, match="square")
    raises(ValueError, sparse_staircase, [1.0, 0.5], np.ones((2, 2)), 1, kind="metric", match="kind")
    raises(ValueError, sparse_staircase, [1.0, 0.5], np.array([[0, 1.5], [1.5, 0]]), 1, kind="distance")
    raises(ValueError, sparse_staircase, [1.0, 0.5], np.array([[0, 1], [2, 0]]), 1, kind="distance")
    raises(ValueError, shell_ratio_epsilon, [0.2, 1.0], 1, match="non-increasing")
    raises(ValueError, graph_distances, -np.ones((2, 2)))
    raises(ValueError, graph_distances, np.ones((2, 3)))


def test_bad_rr_parameters():
    raises(TypeError, sparse_randomized_response, 2)                          # neither eps nor p
    raises(TypeError, sparse_randomized_response, 2, 1.0, p=0.5)              # both
    raises(ValueError, sparse_randomized_response, 2, p=0.1, match="p ≥ q")   # p < q
    raises(ValueError, sparse_randomized_response, 2, p=1.5)
    raises(ValueError, sparse_randomized_response, 0, p=0.5, match="t = 0")
    S0, S1 = [0, 1, 2], [1, 2, 3]
    raises(ValueError, sparse_rr_defect, 0, 0, S0, S0, 0.5, 0.25, 1.0, match="differ")
    raises(ValueError, sparse_rr_defect, 0, 1, [1, 2, 3], S1, 0.5, 0.25, 1.0, match="contain")
    raises(ValueError, sparse_rr_defect, 0, 1, S0, [1, 2], 0.5, 0.25, 1.0, match="same size")
    raises(ValueError, sparse_rr_defect, 0, 1, S0, S1, 0.5, 0.3, 1.0, match="p \\+ \\(s − 1\\) q = 1")
    raises(ValueError, sparse_rr_defect, 0, 1, S0, S1, 0.2, 0.4, 1.0)
    raises(TypeError, sparse_rr_defect, 0, 1, [0.0, 1.0, 2.0], S1, 0.5, 0.25, 1.0)


def test_bad_additive_pmfs_and_poisson_binomial():
    raises(ValueError, truncated_additive, [1.0, 2.0, 3.0], 1, match="symmetric")
    raises(ValueError, truncated_additive, [0.0, 0.0, 0.0], 1, match="positive mass")
    raises(ValueError, truncated_additive, [1.0, 1.0], 1, match="2r \\+ 1")
    raises(ValueError, truncated_additive, [1.0, -1.0, 1.0], 1)
    raises(ValueError, truncated_additive, lambda k: np.where(k == 0, np.inf, 1.0), 1)
    raises(ValueError, poisson_binomial, [[0.5, 1.2]], match="\\[0, 1\\]")
    raises(ValueError, poisson_binomial, [0.5, 0.2], match="2-D")
    raises(ValueError, poisson_binomial, [[0.5, np.nan]])
    raises(ValueError, poisson_binomial, [[1.0, 1.0]], support=np.array([[True, True, False]]), match="zero mass")
    raises(ValueError, sparse_exponential, np.ones((2, 2)), 0.0, 1, match="positive")
    raises(ValueError, sparse_exponential, [[1.0, np.inf]], 1.0, 1, match="finite")
    raises(TypeError, sparse_exponential, lambda x, ys: ys, 1.0, np.ones((2, 2), dtype=bool))
    raises(ValueError, sparse_exponential(lambda x, ys: np.full(ys.size, np.nan), 1.0, 1).pmf, 0, match="finite")


# ---------------------------------------------------------------- memory grows with the data, not with a parameter

def log_ive_reference(v, z):
    """log(e^{−z} I_v(z)) in mpmath from Poisson's integral I_v(z) = (z/2)^v/(√π Γ(v+½)) ∫_{−1}^{1} (1−t²)^{v−½} e^{zt} dt
    (integer v ≥ 0): a positive integrand, integrated around its peak; independent of series and expansions."""
    import mpmath
    with mpmath.workdps(30):
        v, z = mpmath.mpf(v), mpmath.mpf(z)
        a = v - mpmath.mpf(1) / 2
        peak = (-a + mpmath.sqrt(a * a + z * z)) / z
        log_top = a * mpmath.log(1 - peak ** 2) + z * (peak - 1)
        width = 1 / mpmath.sqrt(2 * (z + a) / (1 - peak ** 2))
        points = sorted({-1, 1} | {max(-1, min(1, peak + j * width)) for j in (-40, -10, -3, 0, 3, 10, 40)})
        integral = mpmath.quad(lambda t: mpmath.exp(a * mpmath.log(1 - t * t) + z * (t - 1) - log_top), points)
        return float(v * mpmath.log(z / 2) - mpmath.log(mpmath.sqrt(mpmath.pi)) - mpmath.loggamma(v + mpmath.mpf(1) / 2)
                     + mpmath.log(integral) + log_top)


def test_skellam_logpmf_far_tail_at_large_mu_in_bounded_memory():
    "2000 points beyond where ψ underflows at μ = 10⁶: a few MiB (the power series alone would need 8 GiB)."
    import tracemalloc
    k = np.arange(40_000, 42_000)
    tracemalloc.start()
    values = skellam_logpmf(k, 1e6)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16 * 2 ** 20 and np.all(np.isfinite(values)) and np.all(np.diff(values) < 0)
    for j in (0, 999, 1999):
        reference = log_ive_reference(int(k[j]), 1e6)
        assert abs(values[j] - reference) <= 1e-9 * abs(reference)


@pytest.mark.parametrize("mu, v", [(0.01, 200), (1e-6, 40), (2.0, 500), (3e4, 5000), (1e3, 3000), (1e6, 36000)])
def test_skellam_logpmf_tail_against_mpmath(mu, v):
    reference = log_ive_reference(v, mu)
    assert abs(float(skellam_logpmf(v, mu)) - reference) <= 1e-10 * abs(reference)
    assert float(skellam_logpmf(-v, mu)) == float(skellam_logpmf(v, mu))


@pytest.mark.parametrize("call", [
    lambda: truncated_skellam(2.0, 10 ** 9), lambda: truncated_skellam_defect(2.0, 10 ** 9, 1.0, 3),
    lambda: truncated_additive(lambda k: np.exp(-np.abs(k)), 10 ** 9),
    lambda: truncated_additive_defect(lambda k: np.exp(-np.abs(k)), 10 ** 9, 1.0, 1),
    lambda: sparse_randomized_response(10 ** 9, 1.0), lambda: sparse_exponential(lambda x, ys: -np.abs(ys - x), 1.0, 10 ** 9),
    lambda: range_defect(sparse_randomized_response(2, 1.0), 1.0, 10 ** 9),
    lambda: graph_distances(__import__("scipy.sparse").sparse.eye(10 ** 6, format="csr")),
    lambda: SparseKernelMechanism(lambda x, ys: np.ones(ys.shape), lambda x: np.arange(2 ** 23)).pmf(0),
])
def test_parameter_sized_allocations_are_refused_with_the_size(call):
    with pytest.raises(ValueError, match="supported"):
        call()


def test_range_defect_on_a_finite_alphabet_with_huge_H_is_cheap():
    mech = SparseKernelMechanism.from_arrays(np.ones((3, 4)), np.ones((3, 4), dtype=bool))
    result = range_defect(mech, 1.0, 10 ** 12)
    assert result.totals.shape == (2,)          # separations 1 and 2 occur among inputs {0, 1, 2}


def test_shell_ratio_epsilon_in_linear_time_equals_all_pairs():
    rng = np.random.default_rng(11)
    for _ in range(50):
        a = np.sort(rng.exponential(size=int(rng.integers(1, 9))))[::-1] + 1e-3
        H = int(rng.integers(1, 10))
        j = np.arange(a.size)
        brute = max(np.log(a[x] / a[y]) for x in j for y in j if abs(x - y) <= H)
        assert abs(shell_ratio_epsilon(a, H) - brute) < TOL
    big = np.exp(-np.arange(200_001) / 1e4)
    assert abs(shell_ratio_epsilon(big, 3) - 3e-4) < 1e-12


# ---------------------------------------------------------------- API shape (0.2.0): keyword-only options, old forms

def public_callables():
    "The constructor; the public functions and methods of every module are checked in tests/test_api_shape.py."
    return [SparseKernelMechanism]


@pytest.mark.parametrize("fn", public_callables(), ids=lambda fn: fn.__qualname__)
def test_keyword_only_after_the_first_default_and_type_hints(fn):
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if p.name != "self"]
    first_default = next((i for i, p in enumerate(params) if p.default is not p.empty), len(params))
    for p in params[first_default + 1:]:
        assert p.kind is p.KEYWORD_ONLY, f"{fn.__qualname__}: {p.name} must be keyword-only"
    assert all(p.annotation is not p.empty for p in params), fn.__qualname__
    assert inspect.isclass(fn) or sig.return_annotation is not sig.empty, fn.__qualname__


def test_table_one_is_a_reproduction_helper_outside_the_api():
    assert "table_one" not in sparse_module.__all__
    rr, sk = table_one(range(0, 2))                           # the CLI's call `table_one(radii)`
    assert len(rr) == len(sk) == 2


def same_range_defect(a, b):
    return (a.total == b.total and a.pair == b.pair and a.separation == b.separation and a.r1 == b.r1
            and np.array_equal(a.totals, b.totals))


def test_old_positional_forms_warn_and_give_the_same_result():
    drifting = SparseKernelMechanism(lambda x, ys: np.exp(-np.abs(ys - x) * (1 + 0.1 * x)), lambda x: np.arange(x - 2, x + 3))
    with pytest.warns(DeprecationWarning, match="ldpbook.*center="):
        old = range_defect(drifting, 0.5, 3, 4)
    assert same_range_defect(old, range_defect(drifting, 0.5, 3, center=4))
    assert not same_range_defect(old, range_defect(drifting, 0.5, 3))       # center matters here
    A = np.zeros((6, 6))
    A[np.arange(5), np.arange(1, 6)] = 1
    A = A + A.T
    path = sparse_staircase([1.0, 0.6], A, 1)
    dist = graph_distances(A)
    with pytest.warns(DeprecationWarning, match="ldpbook.*distances="):
        old = range_defect(path, 0.3, 2, 0, dist)
    assert same_range_defect(old, range_defect(path, 0.3, 2, distances=dist))

    with pytest.warns(DeprecationWarning, match="ldpbook.*kind="):
        old = sparse_staircase([1.0, 0.6], dist, 1, "distance")
    assert np.array_equal(old.channel().matrix, sparse_staircase([1.0, 0.6], dist, 1, kind="distance").channel().matrix)
    assert np.array_equal(old.channel().matrix, path.channel().matrix)

    with pytest.warns(DeprecationWarning, match="ldpbook.*p="):
        old = sparse_rr_line_defect(2, 3, 0.4, 0.7)
    assert old == sparse_rr_line_defect(2, 3, 0.4, p=0.7)

    P = [[0.2, 0.5, 0.9, 0.6], [0.4, 0.4, 0.4, 0.4]]
    with pytest.warns(DeprecationWarning, match="ldpbook.*support="):
        old = poisson_binomial(P, 1)
    assert np.array_equal(old.channel().matrix, poisson_binomial(P, support=1).channel().matrix)

    with pytest.warns(DeprecationWarning, match="ldpbook.*eps=.*H=.*mu="):
        old_rr, old_sk = table_one(range(0, 3), 0.8, 2, 1.5)
    new_rr, new_sk = table_one(range(0, 3), eps=0.8, H=2, mu=1.5)
    assert all(same_range_defect(a, b) for a, b in zip(old_rr + old_sk, new_rr + new_sk))

    mech = truncated_skellam(2.0, 4)
    with pytest.warns(DeprecationWarning, match="ldpbook.*rng=.*size="):
        old = mech.sample(1, 7, 50)
    assert np.array_equal(old, mech.sample(1, rng=7, size=50))

    blocks = SparseKernelMechanism(lambda x, ys: np.exp(-np.abs(ys - x)), lambda x: np.arange(0, 3) if x < 5 else np.arange(10, 14),
                                   inputs=(0, 1, 10, 11))
    with pytest.warns(DeprecationWarning, match="ldpbook.*H="):
        old = blocks.pure_epsilon(None, 1)
    assert old == blocks.pure_epsilon(H=1) and np.isfinite(old)


@pytest.mark.parametrize("call", [       # the 0.1 forms with one more argument warn: tests/test_deprecations.py
    lambda: sweep_radius(lambda r: truncated_skellam(1.0, r), [1, 2], 1.0, 2, 0, 1),
    lambda: sparse_exponential(lambda x, ys: -np.abs(ys - x), 1.0, 1, (0, 1), 2),
    lambda: sparse_rr_r1(2, 1.0, 0.5, 1),
    lambda: sparse_randomized_response(2, 1.0, 0.5),
    lambda: SparseKernelMechanism.from_arrays(np.ones((2, 2)), None, (0, 1)),
    lambda: SparseKernelMechanism(lambda x, ys: np.ones(ys.size), lambda x: np.arange(x, x + 2), (0, 1)),
    lambda: SparseKernelMechanism.from_arrays(np.ones((2, 2))).is_pure_ldp(1.0, None, 1),
    lambda: range_defect(truncated_skellam(1.0, 2), 1.0, 2, 0, None, 5),         # more than the old positional forms
    lambda: poisson_binomial([[0.5, 0.5]], None, 1),
    lambda: truncated_skellam(1.0, 2).sample(0, 1, 5, 6),
])
def test_keyword_only_options_refuse_positional_use(call):
    with pytest.raises(TypeError, match="positional"):
        call()


def test_range_defect_refuses_distances_that_are_not_non_negative_integers():
    "A NaN distance made its pair vanish from the maximum (a smaller δ_H, silently); 1.5 was read as separation 1."
    mech = SparseKernelMechanism.from_arrays(np.eye(3) + 0.1)
    good = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=float)
    assert range_defect(mech, 1.0, 2, distances=good).total > 0
    for bad in (np.nan, 1.5, -1.0):
        d = good.copy()
        d[0, 1] = d[1, 0] = bad
        raises(ValueError, range_defect, mech, 1.0, 2, distances=d, match="distances")
    with_inf = good.copy()
    with_inf[0, 2] = with_inf[2, 0] = np.inf                       # unreachable: allowed, never in the relation
    assert range_defect(mech, 1.0, 2, distances=with_inf).separation == 1


def test_sparse_randomized_response_at_eps_infinity_is_the_identity():
    "ε = ∞ was refused by the calibration and the closed forms, though every other defect in the chapter takes it."
    assert sparse_rr_calibration(3, np.inf) == (1.0, 0.0) and sparse_rr_r1(3, np.inf) == 0.0
    mech = sparse_randomized_response(3, np.inf)
    assert mech.pmf(0).outputs.tolist() == [0]
    for h in (1, 3, 4, 7):
        closed = sparse_rr_line_defect(h, 3, np.inf)
        assert closed.total == 1.0 == mech.defect(0, h, np.inf).total
    assert sparse_rr_defect(0, 1, [0, 1], [0, 1], 0.5, 0.5, np.inf).total == 0.0


def test_calibrated_sparse_rr_line_defect_where_q_underflows():
    """For ε > 745, q_t = 1/(e^ε + 2t) underflows to 0 and the closed form took the mechanism for the identity:
    Δ(0, h) = 1 for h ≤ t instead of h·q_t ≈ 1e-324. Reference: h/(e^ε + 2t) in mpmath."""
    t = 3
    for eps in (1e-12, 0.5, 30.0, 700.0, 745.0, 746.0, 800.0, 1e4):
        for h in range(1, t + 1):
            got = sparse_rr_line_defect(h, t, eps)
            with mpmath.workdps(50):
                want = h / (mpmath.exp(mpmath.mpf(eps)) + 2 * t)
            assert got.overlap_excess == 0.0                      # p_t = e^ε q_t exactly
            assert abs(mpmath.mpf(got.total) - want) <= max(1e-12 * want, mpmath.mpf("1e-320")), (eps, h)
            assert abs(got.total - sparse_randomized_response(t, eps).defect(0, h, eps).total) <= 1e-12 * want + 1e-320
    assert sparse_rr_line_defect(7, t, 1.0).total == 1.0             # disjoint windows: exactly one


def test_design_figure_laplace_below_sparse_rr_below_delta_one_third():
    """The design section's claim, from independent sums: drawn as polylines over r = 0..15 at (ε, H) = (1, 3), the
    truncated discrete Laplace curve (η = ε/H) lies below the calibrated sparse-RR curve exactly where δ_3 < 0.333
    (the book said 0.35, but the RR point t = 3, δ_3 = 0.344, lies below the Laplace curve)."""
    e = math.e

    def worst_defect(law, r):                      # max over h = 1..3 and both orders of Σ [Q(y|0) − e Q(y|±h)]₊
        best = 0.0
        for h in (1, 2, 3):
            for a, b in ((0, h), (h, 0)):
                ys = np.arange(-r - 3, r + 4)
                best = max(best, np.maximum(law(ys - a) - e * law(ys - b), 0).sum())
        return best

    def rr_point(t):
        p, q = e / (e + 2 * t), 1 / (e + 2 * t)
        return q * t * (t + 1), worst_defect(lambda j: np.where(j == 0, p, np.where(np.abs(j) <= t, q, 0.0)), t)

    def laplace_point(r):
        j = np.arange(-r, r + 1)
        Z = np.exp(-np.abs(j) / 3).sum()
        law = lambda k: np.where(np.abs(k) <= r, np.exp(-np.abs(k) / 3) / Z, 0.0)
        return float((np.abs(j) * law(j)).sum()), worst_defect(law, r)

    rr = np.array([rr_point(t) for t in range(16)])
    lap = np.array([laplace_point(r) for r in range(16)])
    grid = np.linspace(0.9, min(rr[-1, 0], lap[-1, 0]), 100001)
    diff = np.interp(grid, *lap.T) - np.interp(grid, *rr.T)
    crossings = np.flatnonzero(np.diff(np.sign(diff)) != 0)
    delta_cross = np.interp(grid[crossings[-1]], *rr.T)
    assert 0.33 < delta_cross < 0.335 and np.all(diff[crossings[-1] + 1:] < 0)
    assert rr[3, 1] < 0.35 and np.interp(rr[3, 0], *lap.T) > rr[3, 1]       # the counterexample to "< 0.35"


def test_range_defect_on_the_integer_line_holds_few_laws_in_memory():
    """On ℤ, range_defect kept the law of every input it met: 2H + 1 windows (H = 200, r = 5000: about 100 MB; the
    allowed H = 2^16 with wide windows would need terabytes). Every pair holds the centre, so three laws suffice."""
    import tracemalloc
    mech = truncated_additive(lambda k: np.exp(-np.abs(k) / 50.0), 5000)
    tracemalloc.start()
    result = range_defect(mech, 0.5, 200)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20e6, peak
    for h in (1, 57, 200):            # the same values as the closed form (22), both orders
        assert result.totals[h - 1] == pytest.approx(truncated_additive_defect(
            lambda k: np.exp(-np.abs(k) / 50.0), 5000, 0.5, h).total, rel=1e-12)


def test_no_inputs_is_refused_by_name():
    "A channel or a pure epsilon over an empty list of inputs has no meaning: a ValueError naming `inputs`."
    mech = sparse_randomized_response(3, 1.0)
    for call in (lambda: mech.channel([]), lambda: mech.channel(np.zeros((0, 2), dtype=int)),
                 lambda: mech.pure_epsilon([])):
        with pytest.raises(ValueError, match="inputs must hold at least one input"):
            call()
