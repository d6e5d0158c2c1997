"""Every channel the library returns is ε-LDP in real arithmetic, on its stored floating-point entries (no rtol), and
`is_ldp(..., rtol=0)` decides that exactly. The reference is mpmath at 60 digits: max_x Q(y|x) ≤ e^ε min_x Q(y|x)."""
import numpy as np
import mpmath as mp
import pytest

from ldpbook.chernoff import chernoff_optimal
from ldpbook.egamma import binary_rr_channel, egamma_optimal
from ldpbook.foundations import _at_most_exp, is_ldp, randomized_response
from ldpbook.spr import binary_mechanism, divergence_optimal, randomized_response_mechanism, spr_channel

MPMATH_DPS = 60                    # the mpmath precision of every test in this file (tests/conftest.py)
EPS = [0.0, 1e-300, 1e-12, 0.1, 0.5, 1.0, np.log(2), 2.0, 3.3, 5.0, 10.0, 20.0, 36.0, 40.0, 100.0, 300.0, 700.0, 708.0]


def ldp_by_mpmath(Q, eps):
    "Reference: every column's max ≤ e^ε · its min, in 60-digit arithmetic on the stored floats."
    if eps == np.inf:
        return True
    bound = mp.exp(mp.mpf(float(eps)))
    return all(mp.mpf(float(col.max())) <= bound * mp.mpf(float(col.min())) for col in np.asarray(Q).T)


@pytest.mark.parametrize("k", [2, 3, 5, 7, 10, 64])
def test_randomized_response_is_exactly_ldp_and_tight(k):
    for eps in EPS + list(np.linspace(0.05, 15, 120)):
        R = randomized_response(k, float(eps))
        assert ldp_by_mpmath(R, eps), (k, eps)
        assert is_ldp(R, eps, rtol=0)
        ratio = mp.mpf(float(R[0, 0])) / mp.mpf(float(R[0, 1]))
        assert ratio >= mp.exp(mp.mpf(float(eps))) * (1 - mp.mpf(2) ** -50), (k, eps)     # lowered by ulps only


def test_at_most_exp_agrees_with_mpmath_next_to_the_boundary():
    rng = np.random.default_rng(3)
    cases = 0
    for eps in EPS + list(rng.uniform(0, 50, 40)):
        for lo in (0.5, 1e-3, 1e-200, 5e-324, float(rng.uniform(1e-6, 1))):
            with np.errstate(over="ignore"):
                centre = float(lo * np.exp(eps))
            if not np.isfinite(centre) or centre > 1:
                continue
            hi = [centre]
            for _ in range(3):
                hi += [np.nextafter(hi[-1], 2.0)]
            hi += [np.nextafter(centre, 0.0), np.nextafter(np.nextafter(centre, 0.0), 0.0)]
            got = _at_most_exp(np.array(hi), np.full(len(hi), lo), float(eps))
            want = [mp.mpf(h) <= mp.exp(mp.mpf(float(eps))) * mp.mpf(lo) for h in hi]
            assert list(got) == want, (eps, lo)
            cases += len(hi)
    assert cases > 300
    assert list(_at_most_exp(np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0]), 3.0)) == [True, False, True]
    assert _at_most_exp(1.0, 0.0, np.inf)[0]


def test_is_ldp_without_slack_on_two_by_two_channels_at_the_boundary():
    for eps in (0.3, 1.0, 7.5):
        lo = float(0.5 * np.exp(-eps))
        hi_exact = float(lo * np.exp(eps))
        for hi in (np.nextafter(hi_exact, 0.0), hi_exact, np.nextafter(hi_exact, 1.0)):
            Q = np.array([[hi, 1 - hi], [lo, 1 - lo]])
            assert is_ldp(Q, eps, rtol=0) == ldp_by_mpmath(Q, eps), (eps, hi)


def test_the_library_mechanisms_are_exactly_ldp():
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(6):
        k = int(rng.integers(2, 9))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        for eps in (0.1, 1.0, 2.7, 9.0, 40.0):
            channels = [divergence_optimal(p, q, eps).channel, binary_mechanism(p, q, eps).channel,
                        randomized_response_mechanism(p, q, eps).channel,
                        egamma_optimal(p, q, eps, gamma=1.5).channel, binary_rr_channel(p > q, eps),
                        spr_channel([[0], list(range(1, k))], k, eps)]
            if eps <= 9:
                channels.append(chernoff_optimal(p, q, eps, tol=1e-3).channel)
            for Q in channels:
                assert ldp_by_mpmath(Q, eps) and is_ldp(Q, eps, rtol=0)
                checked += 1
    assert checked > 150


def test_one_symbol_randomized_response_at_any_eps():
    "k = 1 has no off-diagonal entry to compare with: the channel is [[1]] for every ε, at once."
    for eps in (0.0, 1.0, 800.0, 1e308, np.inf):
        assert randomized_response(1, eps).tolist() == [[1.0]]


def test_kov_lp_channels_are_exactly_ldp():
    "The LP's channel, normalised row by row, had column ratios up to 3.6e-15 above e^ε; it is capped exactly."
    from ldpbook.spr import kov_lp
    rng = np.random.default_rng(0)
    for _ in range(8):
        k = int(rng.integers(2, 6))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        for eps in (0.5, 1.0, 3.0):
            Q = kov_lp(p, q, eps).channel
            assert ldp_by_mpmath(Q, eps) and is_ldp(Q, eps, rtol=0)
            assert np.allclose(Q.sum(axis=1), 1, rtol=0, atol=1e-13)


def test_capped_lowers_to_the_largest_float_and_only_what_is_above():
    """`_capped` gives every entry above e^ε·(column minimum) the largest float at most that, in 60-digit arithmetic
    (the next float up is above it), and leaves every entry already at most that bit for bit: on columns whose
    largest entry sits within a few ulps of the bound on either side, where fl(lo·e^ε) itself is off by an ulp."""
    from ldpbook.foundations import _capped
    rng = np.random.default_rng(12)
    lowered = kept = stepped_up = 0
    for _ in range(400):
        eps = float(rng.choice([1e-9, 0.3, 1.0, 2.5, 9.0, 40.0]))
        lo = rng.uniform(1e-3, 0.2, 6)
        cap = lo * np.exp(eps)
        Q = np.vstack([lo, cap])
        for _ in range(int(rng.integers(0, 4))):               # a few ulps above or below the rounded product
            Q[1] = np.nextafter(Q[1], np.where(rng.random(6) < 0.5, 0.0, np.inf))
        got = _capped(Q, eps)
        for j in range(6):
            bound = mp.mpf(float(lo[j])) * mp.exp(mp.mpf(eps))
            if mp.mpf(float(Q[1, j])) <= bound:
                assert got[1, j] == Q[1, j]
                kept += 1
            else:
                assert mp.mpf(float(got[1, j])) <= bound < mp.mpf(float(np.nextafter(got[1, j], np.inf)))
                lowered += 1
                stepped_up += got[1, j] > np.exp(eps) * lo[j]
        assert np.array_equal(got[0], Q[0])
    assert lowered > 200 and kept > 200 and stepped_up > 0    # some largest floats lie above fl(lo·e^ε)
