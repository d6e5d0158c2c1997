"""Tests of ldpbook.foundations: closed forms, independent brute-force checks, properties, every bad-input path."""
import inspect
import itertools

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import jensenshannon
from scipy.special import kl_div, rel_entr
from scipy.stats import chisquare

from ldpbook.foundations import (DIVERGENCE_KINDS, as_generator, check_channel, check_distribution, check_eps,
                                 divergence, divergence_from_sum, divergence_terms, is_approx_ldp, is_ldp, ldp_epsilon,
                                 perspective, privacy_defect, privatize, randomized_response)

KINDS = [("tv", {}), ("kl", {}), ("chi2", {}), ("hellinger", {}), ("egamma", {"gamma": 1.7}),
         ("egamma", {"gamma": 0.4}), ("renyi", {"renyi_order": 2.5}), ("renyi", {"renyi_order": 0.5})]


def random_distribution(rng, k, zeros=False):
    p = rng.dirichlet(np.ones(k))
    if zeros and k > 1:
        p[rng.random(k) < 0.3] = 0.0
        if p.sum() == 0:
            p[0] = 1.0
        p /= p.sum()
    return p


def random_channel(rng, k, m, zeros=False):
    Q = rng.dirichlet(np.ones(m), size=k)
    if zeros:
        Q[rng.random((k, m)) < 0.25] = 0.0
        Q[Q.sum(1) == 0, 0] = 1.0
        Q /= Q.sum(1, keepdims=True)
    return Q


# ----------------------------------------------------------------------------------------------------------------
# divergences against closed forms written independently here (and scipy where it has them)

def closed_form(u, v, kind, params):
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "tv":
            return 0.5 * np.abs(u - v).sum()
        if kind == "kl":
            return rel_entr(u, v).sum()
        if kind == "chi2":
            if np.any((v == 0) & (u > 0)):
                return np.inf
            s = v > 0
            return np.sum(u[s] ** 2 / v[s]) - 1.0
        if kind == "hellinger":
            return 2.0 - 2.0 * np.sum(np.sqrt(u * v))
        if kind == "egamma":
            return np.sum(np.maximum(u - params["gamma"] * v, 0))
        if kind == "renyi":
            a = params["renyi_order"]
            s = (u > 0) & (v > 0)
            if a > 1 and np.any((v == 0) & (u > 0)):
                return np.inf
            total = np.sum(u[s] ** a * v[s] ** (1 - a))
            return np.inf if total == 0 else np.log(total) / (a - 1)


@pytest.mark.parametrize("kind,params", KINDS)
def test_divergence_matches_closed_form_on_random_pairs(kind, params):
    rng = np.random.default_rng(1)
    for _ in range(300):
        k = rng.integers(1, 9)
        u, v = random_distribution(rng, k, zeros=True), random_distribution(rng, k, zeros=True)
        got, want = divergence(u, v, kind=kind, **params), closed_form(u, v, kind, params)
        if np.isinf(want):
            assert got == np.inf
        else:
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_kl_agrees_with_scipy_kl_div_and_rel_entr():
    rng = np.random.default_rng(2)
    for _ in range(100):
        u, v = random_distribution(rng, 6), random_distribution(rng, 6)
        assert divergence(u, v, kind="kl") == pytest.approx(kl_div(u, v).sum(), rel=1e-12)
        assert divergence(u, v, kind="kl") == pytest.approx(rel_entr(u, v).sum(), rel=1e-12)


def test_callable_f_jensen_shannon_matches_scipy():
    def js(t):
        return 0.5 * (t * np.log(t) - (1 + t) * np.log((1 + t) / 2)) if t > 0 else 0.5 * np.log(2)
    rng = np.random.default_rng(3)
    for _ in range(30):
        u, v = random_distribution(rng, 5, zeros=True), random_distribution(rng, 5, zeros=True)
        got = divergence(u, v, kind=js, f_slope_at_inf=0.5 * np.log(2))
        assert got == pytest.approx(jensenshannon(u, v) ** 2, rel=1e-9, abs=1e-12)


def test_callable_f_equals_builtin_kinds():
    rng = np.random.default_rng(4)
    u, v = random_distribution(rng, 7), random_distribution(rng, 7)
    assert divergence(u, v, kind=lambda t: t * np.log(t) if t > 0 else 0.0) == \
        pytest.approx(divergence(u, v, kind="kl"))
    assert divergence(u, v, kind=lambda t: (t - 1) ** 2) == pytest.approx(divergence(u, v, kind="chi2"))
    assert divergence(u, v, kind=lambda t: max(t - 2.0, 0.0)) == \
        pytest.approx(divergence(u, v, kind="egamma", gamma=2.0))


def test_zero_mass_conventions():
    u, v = np.array([0.5, 0.5, 0.0]), np.array([0.5, 0.0, 0.5])
    assert divergence(u, v, kind="kl") == np.inf
    assert divergence(u, v, kind="chi2") == np.inf
    assert divergence(u, v, kind="renyi", renyi_order=2.0) == np.inf
    assert divergence(u, v, kind="tv") == pytest.approx(0.5)
    assert divergence(u, v, kind="hellinger") == pytest.approx(1.0)
    assert divergence(u, v, kind="egamma", gamma=3.0) == pytest.approx(0.5)
    # disjoint supports: Rényi of order < 1 is infinite too, through the monotone map at total = 1/(1-alpha)
    assert divergence([1.0, 0.0], [0.0, 1.0], kind="renyi", renyi_order=0.5) == np.inf
    # nearly disjoint supports: the direct form keeps precision where the sum of f_alpha terms would cancel
    tiny = 1e-300
    got = divergence([1 - tiny, tiny], [tiny, 1 - tiny], kind="renyi", renyi_order=0.5)
    assert got == pytest.approx(-2 * np.log(2 * np.sqrt(tiny)), rel=1e-12)
    # 0·f(0/0) = 0 : a symbol with no mass under either law changes nothing
    assert divergence([0.3, 0.7, 0.0], [0.6, 0.4, 0.0], kind="kl") == \
        pytest.approx(divergence([0.3, 0.7], [0.6, 0.4], kind="kl"))
    with pytest.raises(ValueError, match="f_slope_at_inf"):
        divergence(u, v, kind=lambda t: (t - 1) ** 2)


def test_perspective_is_homogeneous_and_elementwise():
    rng = np.random.default_rng(5)
    a, b = rng.random((4, 5)), rng.random((4, 5))
    for kind, params in KINDS:
        g = perspective(a, b, kind=kind, **params)
        assert g.shape == (4, 5)
        assert np.allclose(perspective(3.0 * a, 3.0 * b, kind=kind, **params), 3.0 * g)
        assert np.allclose(perspective(a[0, 0], b[0, 0], kind=kind, **params), g[0, 0])


def test_divergence_from_sum_is_identity_except_renyi():
    assert divergence_from_sum(0.25, kind="kl") == 0.25
    assert divergence_from_sum(0.25, kind="renyi", renyi_order=2.0) == pytest.approx(np.log(1.25))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_data_processing_inequality(k, m, seed):
    rng = np.random.default_rng(seed)
    u, v = random_distribution(rng, k, zeros=True), random_distribution(rng, k, zeros=True)
    W = random_channel(rng, k, m, zeros=True)
    for kind, params in KINDS:
        before, after = divergence(u, v, kind=kind, **params), divergence(u @ W, v @ W, kind=kind, **params)
        assert after <= before + 1e-10 * (1 + abs(before)) or before == np.inf


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_divergences_are_permutation_invariant_and_vanish_on_equal_arguments(k, seed):
    rng = np.random.default_rng(seed)
    u, v = random_distribution(rng, k, zeros=True), random_distribution(rng, k, zeros=True)
    perm = rng.permutation(k)
    for kind, params in KINDS:
        d = divergence(u, v, kind=kind, **params)
        assert divergence(u[perm], v[perm], kind=kind, **params) == pytest.approx(d, rel=1e-12, abs=1e-15)
        assert d >= -1e-15 or (kind == "egamma" and params["gamma"] < 1)
        if not (kind == "egamma" and params["gamma"] < 1):
            assert abs(divergence(u, u, kind=kind, **params)) <= 1e-12


# ----------------------------------------------------------------------------------------------------------------
# LDP checks against the definition over all output sets

def brute_force_epsilon(Q):
    "Smallest ε with Q(S|x) ≤ e^ε Q(S|x') for every non-empty output set S (2^m sets)."
    k, m = Q.shape
    worst = 0.0
    for r in range(1, m + 1):
        for S in itertools.combinations(range(m), r):
            mass = Q[:, S].sum(axis=1)
            if mass.max() > 0 and mass.min() == 0:
                return np.inf
            if mass.max() > 0:
                worst = max(worst, np.log(mass.max() / mass.min()))
    return worst


def brute_force_defect(Q, eps):
    "max_S Q(S|x) − e^ε Q(S|x') for every ordered pair, over all output sets."
    k, m = Q.shape
    best = np.zeros((k, k))
    for r in range(1, m + 1):
        for S in itertools.combinations(range(m), r):
            mass = Q[:, S].sum(axis=1)
            best = np.maximum(best, mass[:, None] - np.exp(eps) * mass[None, :])
    return best


def test_ldp_epsilon_and_is_ldp_agree_with_brute_force_on_random_channels():
    rng = np.random.default_rng(6)
    for trial in range(300):
        k, m = rng.integers(1, 5), rng.integers(1, 6)
        Q = random_channel(rng, k, m, zeros=trial % 3 == 0)
        eps = ldp_epsilon(Q)
        want = brute_force_epsilon(Q)
        assert eps == pytest.approx(want, rel=1e-12, abs=1e-12) or (eps == want == np.inf)
        assert is_ldp(Q, np.inf)
        if np.isfinite(eps):
            assert is_ldp(Q, eps)
            if eps > 1e-6:
                assert not is_ldp(Q, eps * (1 - 1e-6), rtol=0)
        else:
            assert not is_ldp(Q, 1e6)


def test_ldp_boundary_cases():
    assert ldp_epsilon([[1.0]]) == 0.0 and is_ldp([[1.0]], 0.0)
    assert ldp_epsilon([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]]) == 0.0           # all-zero column
    assert ldp_epsilon([[1.0, 0.0], [0.5, 0.5]]) == np.inf                  # revealing column
    assert not is_ldp([[1.0, 0.0], [0.5, 0.5]], 700.0)
    Q = randomized_response(3, 2.0)
    assert is_ldp(Q, 2.0) and not is_ldp(Q, 2.0 - 1e-6)
    assert is_ldp(Q, 2.0 - 1e-12)          # inside the documented relative tolerance 1e-9
    assert not is_ldp(Q, 2.0 - 1e-6, rtol=0)


def test_privacy_defect_matches_brute_force_over_sets():
    rng = np.random.default_rng(7)
    for trial in range(150):
        k, m = rng.integers(1, 5), rng.integers(1, 6)
        Q = random_channel(rng, k, m, zeros=trial % 2 == 0)
        eps = float(rng.choice([0.0, 0.3, 1.0, 3.0]))
        assert np.allclose(privacy_defect(Q, eps), brute_force_defect(Q, eps), atol=1e-13)
        assert (privacy_defect(Q, eps).max() <= 1e-12) == is_ldp(Q, eps, rtol=0) or \
            abs(ldp_epsilon(Q) - eps) < 1e-9


def test_privacy_defect_at_large_and_infinite_eps():
    Q = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    D = privacy_defect(Q, np.inf)
    assert np.allclose(D, [[0.0, 0.5], [0.5, 0.0]])                       # support leakage only
    assert np.allclose(privacy_defect(Q, 800.0), D)                        # e^800 overflows; still exact
    assert not np.any(np.isnan(privacy_defect(randomized_response(4, 1.0), 1e5)))
    assert is_approx_ldp(Q, 5.0, 0.5) and not is_approx_ldp(Q, 5.0, 0.49)


# ----------------------------------------------------------------------------------------------------------------
# randomized response and privatize

@pytest.mark.parametrize("k", [1, 2, 3, 10])
@pytest.mark.parametrize("eps", [0.0, 0.5, 3.0, 700.0, 708.0, np.inf])
def test_randomized_response(k, eps):
    R = randomized_response(k, eps)
    assert R.shape == (k, k) and np.all(np.isfinite(R))
    assert np.allclose(R.sum(axis=1), 1.0, atol=1e-15)
    expected_eps = 0.0 if k == 1 else eps
    assert ldp_epsilon(R) == pytest.approx(expected_eps, rel=1e-12) or ldp_epsilon(R) == expected_eps
    if k > 1 and np.isfinite(eps) and eps < 700:
        assert R[0, 0] == pytest.approx(np.exp(eps) / (np.exp(eps) + k - 1), rel=1e-14)
    if eps == 0.0:
        assert np.allclose(R, 1.0 / k)


def test_privatize_frequencies_match_channel():
    rng = np.random.default_rng(8)
    Q = random_channel(rng, 4, 5, zeros=True)
    x = np.repeat(np.arange(4), 50_000)
    y = privatize(x, Q, rng=9)
    for s in range(4):
        counts = np.bincount(y[x == s], minlength=5)
        support = Q[s] > 0
        assert np.all(counts[~support] == 0)                               # impossible outputs never drawn
        assert chisquare(counts[support], 50_000 * Q[s, support]).pvalue > 1e-4


def test_privatize_shape_seed_and_scale():
    Q = randomized_response(6, 1.0)
    x = np.arange(12).reshape(3, 4) % 6
    assert privatize(x, Q, rng=1).shape == (3, 4)
    assert np.array_equal(privatize(x, Q, rng=1), privatize(x, Q, rng=1))
    assert privatize(np.array([], dtype=int), Q, rng=1).shape == (0,)
    big = privatize(np.zeros(1_000_000, dtype=np.int64), Q, rng=2)
    assert abs(np.mean(big == 0) - Q[0, 0]) < 5 * np.sqrt(Q[0, 0] * (1 - Q[0, 0]) / 1e6)


def test_privatize_never_draws_trailing_zero_outputs_despite_rounding():
    Q = np.array([[1 / 3, 1 / 3, 1 / 3, 0.0, 0.0]])
    y = privatize(np.zeros(200_000, dtype=int), Q, rng=3)
    assert y.max() <= 2


def test_as_generator():
    assert isinstance(as_generator(None), np.random.Generator)
    g = np.random.default_rng(0)
    assert as_generator(g) is g
    assert as_generator(5).random() == np.random.default_rng(5).random()
    assert as_generator(np.random.SeedSequence(5)).random() == np.random.default_rng(5).random()


# ----------------------------------------------------------------------------------------------------------------
# every bad-input path names the argument and the rule

BAD_DISTRIBUTIONS = [
    ([0.5, 0.6], ValueError, "sum to 1"),
    ([1.5, -0.5], ValueError, "non-negative"),
    ([0.5, np.nan], ValueError, "finite"),
    ([0.5, np.inf], ValueError, "finite"),
    ([[0.5, 0.5]], ValueError, "1-D"),
    ([], ValueError, "non-empty"),
    (["a", "b"], TypeError, "real numbers"),
    ([0.5 + 0j, 0.5], TypeError, "real"),
]


@pytest.mark.parametrize("p,err,msg", BAD_DISTRIBUTIONS)
def test_bad_distributions(p, err, msg):
    with pytest.raises(err, match=msg):
        check_distribution(p)
    with pytest.raises(err, match=r"\bu\b"):
        divergence(p, [0.5, 0.5])


BAD_CHANNELS = [
    ([[0.5, 0.6]], ValueError, "row 0"),
    ([0.5, 0.5], ValueError, "2-D"),
    ([[1.5, -0.5]], ValueError, "non-negative"),
    ([[np.nan, 1.0]], ValueError, "finite"),
    (np.zeros((0, 2)), ValueError, "non-empty"),
]


@pytest.mark.parametrize("Q,err,msg", BAD_CHANNELS)
@pytest.mark.parametrize("func", [lambda Q: is_ldp(Q, 1.0), ldp_epsilon, lambda Q: privacy_defect(Q, 1.0),
                                  lambda Q: privatize([0], Q), check_channel])
def test_bad_channels(Q, err, msg, func):
    with pytest.raises(err, match=msg):
        func(Q)


@pytest.mark.parametrize("eps,err,msg", [(-1.0, ValueError, "non-negative"), (np.nan, ValueError, "NaN"),
                                         ("1", TypeError, "real number"), (True, TypeError, "real number"),
                                         (None, TypeError, "real number")])
@pytest.mark.parametrize("func", [lambda e: is_ldp([[1.0]], e), lambda e: privacy_defect([[1.0]], e),
                                  lambda e: randomized_response(3, e), check_eps])
def test_bad_eps(eps, err, msg, func):
    with pytest.raises(err, match=msg):
        func(eps)


def test_eps_infinite_only_where_allowed():
    with pytest.raises(ValueError, match="finite"):
        check_eps(np.inf)
    assert check_eps(np.inf, allow_inf=True) == np.inf


def test_bad_divergence_arguments():
    u = [0.5, 0.5]
    with pytest.raises(ValueError, match="one of"):
        divergence(u, u, kind="kullback")
    with pytest.raises(ValueError, match="gamma="):
        divergence(u, u, kind="egamma")
    with pytest.raises(ValueError, match="renyi_order="):
        divergence(u, u, kind="renyi")
    with pytest.raises(ValueError, match="gamma must be non-negative"):
        divergence(u, u, kind="egamma", gamma=-1.0)
    with pytest.raises(ValueError, match="renyi_order must be positive and different from 1"):
        divergence(u, u, kind="renyi", renyi_order=1.0)
    with pytest.raises(ValueError, match="renyi_order must be non-negative"):
        divergence(u, u, kind="renyi", renyi_order=-2.0)
    with pytest.raises(ValueError, match="renyi_order must not be NaN"):
        divergence(u, u, kind="renyi", renyi_order=np.nan)
    with pytest.raises(TypeError, match="unexpected keyword"):
        divergence(u, u, kind="kl", gamma=2.0)
    with pytest.raises(ValueError, match="same length"):
        divergence(u, [0.2, 0.3, 0.5], kind="kl")
    with pytest.raises(ValueError, match="f must satisfy f\\(1\\) = 0"):
        divergence(u, u, kind=lambda t: t ** 2)
    with pytest.raises(ValueError, match="convex"):
        divergence(u, u, kind=lambda t: np.log(t) if t > 0 else 0.0)
    with pytest.raises(ValueError, match="broadcastable"):
        perspective([0.1, 0.2], [0.1, 0.2, 0.3])
    assert set(DIVERGENCE_KINDS) == {"tv", "kl", "chi2", "hellinger", "egamma", "renyi"}


def test_bad_randomized_response_and_privatize_arguments():
    with pytest.raises(ValueError, match="too large to store"):
        randomized_response(3, 5000.0)
    assert np.array_equal(randomized_response(1, 5000.0), [[1.0]])
    with pytest.raises(ValueError, match="k must be at least 1"):
        randomized_response(0, 1.0)
    with pytest.raises(TypeError, match="k must be an integer"):
        randomized_response(2.5, 1.0)
    Q = randomized_response(3, 1.0)
    with pytest.raises(ValueError, match=r"x must contain symbols in \[0, 3\)"):
        privatize([0, 3], Q)
    with pytest.raises(ValueError, match=r"x must contain symbols in \[0, 3\)"):
        privatize([-1], Q)
    with pytest.raises(TypeError, match="x must be an array of 64-bit integers"):
        privatize([0.0, 1.0], Q)
    with pytest.raises(TypeError, match="rng must be"):
        privatize([0], Q, rng="seed")
    with pytest.raises(ValueError, match="non-negative"):
        privatize([0], Q, rng=-1)
    with pytest.raises(ValueError, match="delta must be at most 1"):
        is_approx_ldp(Q, 1.0, 2.0)
    with pytest.raises(ValueError, match="rtol"):
        is_ldp(Q, 1.0, rtol=-1.0)


# ----------------------------------------------------------------------------------------------------------------
# the 0.2.0 API shape: keyword-only options, privatize(x, Q), old call forms warn for one version

def test_old_positional_kind_warns_and_gives_the_same_result():
    rng = np.random.default_rng(10)
    u, v = random_distribution(rng, 5), random_distribution(rng, 5)
    a, b = rng.random((3, 4)), rng.random((3, 4))
    for kind, params in KINDS:
        with pytest.warns(DeprecationWarning, match="ldpbook 0.2.0: passing kind to divergence by position"):
            old = divergence(u, v, kind, **params)
        assert old == divergence(u, v, kind=kind, **params)
        with pytest.warns(DeprecationWarning, match="ldpbook.*write kind=..."):
            old = perspective(a, b, kind, **params)
        assert np.array_equal(old, perspective(a, b, kind=kind, **params), equal_nan=True)
        diff = a - params.get("gamma", 1.0) * b
        with pytest.warns(DeprecationWarning, match="ldpbook.*divergence_terms"):
            old = divergence_terms(a, b, diff, kind, **params)
        assert np.array_equal(old, divergence_terms(a, b, diff, kind=kind, **params), equal_nan=True)
        with pytest.warns(DeprecationWarning, match="ldpbook.*divergence_from_sum"):
            old = divergence_from_sum(0.3, kind, **params)
        assert old == divergence_from_sum(0.3, kind=kind, **params)


def test_old_privatize_order_and_positional_rng_warn_and_give_the_same_draws():
    Q = randomized_response(4, 1.0)
    x = np.arange(12) % 4
    new = privatize(x, Q, rng=5)
    with pytest.warns(DeprecationWarning, match=r"ldpbook 0.2.0: privatize\(Q, x, rng\) is deprecated; write privatize\(x, Q, rng=\.\.\.\)"):
        assert np.array_equal(privatize(Q, x, rng=5), new)
    with pytest.warns(DeprecationWarning, match="ldpbook") as record:
        assert np.array_equal(privatize(Q, x, 5), new)
    messages = [str(w.message) for w in record]
    assert any("privatize(x, Q, rng=...)" in m for m in messages)
    with pytest.warns(DeprecationWarning, match="ldpbook 0.2.0: passing rng to privatize by position"):
        assert np.array_equal(privatize(x, Q, 5), new)
    # a 2-D x: told apart from the channel by its integer dtype (or, both integer, by which one is a channel)
    x2 = x.reshape(3, 4)
    with pytest.warns(DeprecationWarning, match="ldpbook"):
        assert np.array_equal(privatize(Q, x2, rng=5), new.reshape(3, 4))
    identity = np.eye(4, dtype=int)
    with pytest.warns(DeprecationWarning, match="ldpbook"):
        assert np.array_equal(privatize(identity, x2 + 0, rng=5), privatize(x2, identity, rng=5))
    assert np.array_equal(privatize(x2, identity, rng=5), x2)
    assert np.array_equal(privatize(Q=Q, x=x, rng=5), new)                # keywords: both versions agree
    # the old order's warning points at the caller, not at the library
    with pytest.warns(DeprecationWarning) as record:
        privatize(Q, x, 5)
    assert all(w.filename == __file__ for w in record)


def test_new_forms_do_not_warn():
    import warnings
    Q = randomized_response(3, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        privatize(np.array([[0, 1], [2, 0]]), Q, rng=1)
        privatize([0, 1, 2], Q.tolist(), rng=1)
        divergence([0.5, 0.5], [0.3, 0.7])
        divergence([0.5, 0.5], [0.3, 0.7], kind="renyi", renyi_order=2.0)
        perspective([0.5, 0.5], [0.3, 0.7], kind="egamma", gamma=2.0)
        divergence_terms([0.5], [0.3], [0.2], kind="chi2", check=False)


def test_keyword_only_options_refuse_positional_use():
    u, v = [0.5, 0.5], [0.3, 0.7]
    Q = randomized_response(3, 1.0)
    with pytest.raises(TypeError, match="takes 2 positional arguments"):
        divergence(u, v, "renyi", 2.0)                   # never "divergence kind must be one of ..."
    with pytest.raises(TypeError, match="takes 3 positional arguments"):
        divergence_terms(u, v, [0.2, -0.2], "kl", False)
    with pytest.raises(TypeError, match="takes 2 positional arguments"):
        privatize([0], Q, 1, 2)
    with pytest.raises(TypeError, match="multiple values for argument 'kind'"):
        divergence(u, v, "kl", kind="kl")
    with pytest.warns(DeprecationWarning, match="rtol"):        # the 0.1 form: warns for one version (0.2 notes)
        assert is_ldp(Q, 1.0, 1e-9) == is_ldp(Q, 1.0, rtol=1e-9)
    with pytest.warns(DeprecationWarning, match="atol"):
        assert is_approx_ldp(Q, 1.0, 0.1, 1e-12) == is_approx_ldp(Q, 1.0, 0.1, atol=1e-12)
    with pytest.raises(TypeError, match="positional"):
        is_ldp(Q, 1.0, 1e-9, 2)
    assert is_ldp(Q, 1.0, rtol=0.0) in (True, False) and is_approx_ldp(Q, 1.0, 0.1, atol=0.0)


def test_renamed_and_moved_to_keywords_helpers():
    from ldpbook.foundations import moved_to_keywords, renamed

    @moved_to_keywords("scale", "shift")
    def affine(x: float, *, scale: float = 1.0, shift: float = 0.0) -> float:
        return x * scale + shift

    assert inspect.signature(affine) == inspect.signature(affine.__wrapped__)
    with pytest.warns(DeprecationWarning, match="ldpbook 0.2.0: passing scale, shift to affine by position"):
        assert affine(2.0, 3.0, 1.0) == affine(2.0, scale=3.0, shift=1.0) == 7.0
    with pytest.raises(TypeError, match="takes 1 positional arguments"):
        affine(2.0, 3.0, 1.0, 0.0)
    old = renamed(affine, "affine_map")
    with pytest.warns(DeprecationWarning, match="ldpbook 0.2.0: affine_map is deprecated; use affine"):
        assert old(2.0, scale=3.0) == 6.0
    assert old.__name__ == "affine_map" and "Deprecated alias of `affine`" in old.__doc__


def test_public_api_has_type_hints_and_keyword_only_options():
    "The rules for every module are in tests/test_api_shape.py; here what is particular to foundations."
    from ldpbook import foundations
    assert "moved_to_keywords" not in foundations.__all__ and "renamed" not in foundations.__all__
    params = list(inspect.signature(privatize).parameters)
    assert params == ["x", "Q", "rng", "column"]
    assert all(inspect.signature(privatize).parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
               for name in ("rng", "column"))
    for func in (divergence, perspective, divergence_terms, divergence_from_sum):
        assert inspect.signature(func).parameters["kind"].kind is inspect.Parameter.KEYWORD_ONLY


def test_the_validation_rules_name_the_argument_and_the_rule_never_the_value():
    from ldpbook.foundations import (check_callable, check_instance, check_int, check_int_array, check_iterable,
                                     check_real, check_real_array)
    secret = 0.7182818
    for call, error, needle in [
        (lambda: check_real(secret, "level", low=0, high=0.5), ValueError, "level must lie in [0, 0.5]"),
        (lambda: check_real(0.0, "level", low=0, open_low=True), ValueError, "level must lie in (0, inf]"),
        (lambda: check_real(float("nan"), "level"), ValueError, "level must be finite"),
        (lambda: check_real(10**400, "level"), ValueError, "level is beyond the floating-point range"),
        (lambda: check_real(True, "level"), TypeError, "level must be a real number, got bool"),
        (lambda: check_real_array([[secret], [secret, 1]], "x"), TypeError, "x must be an array of real numbers"),
        (lambda: check_real_array([secret, float("inf")], "x"), ValueError, "x must hold finite numbers"),
        (lambda: check_real_array([secret], "x", ndim=2), ValueError, "x must be a 2-D array"),
        (lambda: check_int_array([1, 10**400], "labels"), TypeError, "labels must be an array of 64-bit integers"),
        (lambda: check_int_array([True], "labels"), TypeError, "labels must be an array of 64-bit integers"),
        (lambda: check_int(2**64, "n"), ValueError, "n must be at most 9223372036854775807"),
        (lambda: check_int(10**6, "n", maximum=1000), ValueError, "n must be at most 1000"),
        (lambda: check_int(-7182818, "n"), ValueError, "n must be at least 0"),
        (lambda: check_int(7182818.0, "n"), TypeError, "n must be an integer, got float"),
        (lambda: check_iterable(3.5, "grid"), TypeError, "grid must be an iterable"),
        (lambda: check_iterable("abc", "grid"), TypeError, "grid must be an iterable"),
        (lambda: check_callable(secret, "factory"), TypeError, "factory must be callable, got float"),
        (lambda: check_instance(secret, dict, "mechanism"), TypeError, "mechanism must be a dict, got float"),
    ]:
        with pytest.raises(error) as info:
            call()
        assert needle in str(info.value), (needle, str(info.value))
        assert "7182818" not in str(info.value)
    assert check_real(2, "x") == 2.0 and check_iterable(range(3), "r") == (0, 1, 2)
    assert check_int_array(np.array([1, 2], dtype=np.int32), "a").dtype == np.int64


@pytest.mark.parametrize("v_small", [1e-300, 6.6e-307, 3.3e-308, 5e-324])
def test_kl_and_renyi_terms_where_u_over_v_log_overflows(v_small):
    """u = 1/2 against v ≈ 1e-307: u/v is finite but (u/v)·log(u/v) overflows; the term u·log(u/v) − (u − v) does not
    (KL was inf before). Against 50-digit arithmetic on the same floats."""
    u, v = np.array([0.5, 0.5]), np.array([1.0, v_small])
    with mpmath.workdps(50):
        U, V = [mpmath.mpf(float(x)) for x in u], [mpmath.mpf(float(x)) for x in v]
        kl = mpmath.fsum(a * mpmath.log(a / b) - (a - b) for a, b in zip(U, V))
        cross = mpmath.fsum(a ** 3 * b ** -2 for a, b in zip(U, V))
    assert divergence(u, v, kind="kl") == pytest.approx(float(kl), rel=1e-13)
    assert divergence(u, v, kind="renyi", renyi_order=3.0) == pytest.approx(float(mpmath.log(cross) / 2), rel=1e-13)
