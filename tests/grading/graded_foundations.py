"""Tests written for grading the foundations chapter (`ldpbook.foundations`).

Each test grades one function, which it receives as its only argument (the student's function, called in another
process). Expected values come from closed forms, brute force over the entries of a channel or mpmath, computed
here; the grader's `ldpbook` is used only for functions that are not graded by the test.
"""
import math

import mpmath
import numpy as np

from ldpbook.assignments import grades, refused


def random_channel(k, m, seed):
    "A k × m row-stochastic matrix with positive entries."
    rows = np.random.default_rng(seed).uniform(0.05, 1.0, size=(k, m))
    return rows / rows.sum(axis=1, keepdims=True)


def log_ratio(a, b):
    "log a/b for masses a, b >= 0 (0/0 counts as 0, a/0 as inf)."
    return 0.0 if a == b == 0 else math.inf if b == 0 else -math.inf if a == 0 else math.log(a / b)


def worst_log_ratio(Q):
    "max over columns y and rows x, x' of log Q(y|x)/Q(y|x'), by brute force over the entries."
    Q = np.asarray(Q, dtype=float)
    return max(log_ratio(Q[x, y], Q[z, y]) for y in range(Q.shape[1]) for x in range(Q.shape[0])
               for z in range(Q.shape[0]))


# ------------------------------------------------------------------------------------------ randomized_response
@grades("randomized_response", points=2)
def test_randomized_response_entries_are_the_closed_form(randomized_response):
    "Q(x|x) = e^eps/(e^eps + k - 1) and Q(y|x) = 1/(e^eps + k - 1) for y != x."
    for k, eps in [(2, 1.0), (3, 0.3), (7, 2.5), (4, 10.0)]:
        Q = np.asarray(randomized_response(k, eps), dtype=float)
        assert Q.shape == (k, k)
        keep = float(mpmath.exp(eps) / (mpmath.exp(eps) + k - 1))
        other = float(1 / (mpmath.exp(eps) + k - 1))
        expected = np.full((k, k), other)
        np.fill_diagonal(expected, keep)
        assert np.allclose(Q, expected, rtol=1e-12, atol=0), f"wrong entries for k={k}, eps={eps}"


@grades("randomized_response")
def test_randomized_response_is_exactly_eps_ldp_and_no_better(randomized_response):
    "Rows sum to 1, the channel is eps-LDP, and its worst log-ratio is eps itself; a negative eps is refused."
    assert refused(randomized_response, 3, -1.0) == "ValueError", "eps = -1 must be refused"
    for k, eps in [(2, 0.5), (5, 1.5), (3, 4.0)]:
        Q = np.asarray(randomized_response(k, eps), dtype=float)
        assert np.allclose(Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert math.isclose(worst_log_ratio(Q), eps, rel_tol=1e-9)


@grades("randomized_response", points=2, hidden=True)
def test_randomized_response_at_the_edges_of_eps(randomized_response):
    "eps = 0 gives the uniform channel, eps = inf the identity, k = 1 the 1 × 1 channel [[1]]."
    assert np.allclose(np.asarray(randomized_response(4, 0.0), dtype=float), np.full((4, 4), 0.25), rtol=1e-12, atol=0)
    assert np.array_equal(np.asarray(randomized_response(3, np.inf), dtype=float), np.eye(3))
    assert np.array_equal(np.asarray(randomized_response(1, 2.0), dtype=float).reshape(1, 1), np.ones((1, 1)))


@grades("randomized_response", hidden=True)
def test_randomized_response_rejects_bad_input(randomized_response):
    "A negative or NaN eps, or k < 1, is refused with ValueError (a non-integer k with ValueError or TypeError)."
    for k, eps in [(3, -1.0), (3, float("nan")), (0, 1.0)]:
        assert refused(randomized_response, k, eps) == "ValueError", f"k={k}, eps={eps} must be refused"
    assert refused(randomized_response, 2.5, 1.0) in ("ValueError", "TypeError")


# ---------------------------------------------------------------------------------------------------- is_ldp
@grades("is_ldp", points=2)
def test_is_ldp_agrees_with_the_worst_ratio_of_random_channels(is_ldp):
    """Q is eps-LDP for eps 1% above its worst log-ratio and not for eps 1% below; rtol widens e^eps to
    e^eps (1 + rtol) both ways."""
    for seed, (k, m) in enumerate([(2, 2), (3, 4), (5, 3), (4, 6)]):
        Q = random_channel(k, m, seed)
        worst = worst_log_ratio(Q)
        assert is_ldp(Q, 1.01 * worst), f"a channel with worst log-ratio {worst:.3f} is {1.01 * worst:.3f}-LDP"
        assert not is_ldp(Q, 0.99 * worst), f"a channel with worst log-ratio {worst:.3f} is not {0.99 * worst:.3f}-LDP"
        wide, narrow = math.expm1(0.02 * worst), math.expm1(0.005 * worst)
        assert is_ldp(Q, 0.99 * worst, rtol=wide), f"e^{0.99 * worst:.3f} (1 + {wide:.4f}) is above the worst ratio"
        assert not is_ldp(Q, 0.99 * worst, rtol=narrow), \
            f"e^{0.99 * worst:.3f} (1 + {narrow:.4f}) is below the worst ratio"


@grades("is_ldp", points=2)
def test_is_ldp_with_zero_entries(is_ldp):
    """A column with both zero and positive entries is eps-LDP only for eps = inf; an all-zero column is harmless;
    a negative eps is refused."""
    Q = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    assert refused(is_ldp, Q, -1.0) == "ValueError", "eps = -1 must be refused"
    assert not is_ldp(Q, 50.0)
    assert is_ldp(Q, np.inf)
    R = np.array([[0.25, 0.75, 0.0], [0.5, 0.5, 0.0]])
    assert is_ldp(R, math.log(2.0) * 1.001)
    assert not is_ldp(R, math.log(2.0) * 0.99)


@grades("is_ldp", hidden=True)
def test_is_ldp_rtol_is_the_slack_on_e_eps(is_ldp):
    "The ratio 1.5 against e^eps = 1.5 (1 - 1e-6): refused with the default rtol, accepted with rtol = 1e-3."
    Q = np.array([[0.6, 0.4], [0.4, 0.6]])
    eps = math.log(1.5 * (1 - 1e-6))
    assert not is_ldp(Q, eps)
    assert is_ldp(Q, eps, rtol=1e-3)
    assert is_ldp(Q, math.log(1.5))          # exactly on the boundary, rounding absorbed by the default rtol


@grades("is_ldp", hidden=True)
def test_is_ldp_rejects_bad_input(is_ldp):
    "A negative eps, rows that do not sum to 1, negative or NaN entries are refused with ValueError."
    good = np.array([[0.5, 0.5], [0.25, 0.75]])
    for Q, eps in [(good, -1.0), ([[0.5, 0.6], [0.5, 0.5]], 1.0), ([[-0.1, 1.1], [0.5, 0.5]], 1.0),
                   ([[float("nan"), 1.0], [0.5, 0.5]], 1.0)]:
        assert refused(is_ldp, Q, eps) == "ValueError", f"is_ldp({Q}, {eps}) must be refused with ValueError"


# ---------------------------------------------------------------------------------------------------- divergence
def mp_divergence(u, v, kind, **params):
    "D_f(u‖v) in 50-digit arithmetic, from the definitions of the chapter (linear-free where it matters)."
    with mpmath.workdps(50):
        u, v = [mpmath.mpf(float(a)) for a in u], [mpmath.mpf(float(b)) for b in v]
        if kind == "tv":
            return float(sum(abs(a - b) for a, b in zip(u, v)) / 2)
        if kind == "kl":
            if any(a > 0 and b == 0 for a, b in zip(u, v)):
                return math.inf
            # Σ u log(u/v) − u + v: the same for probability vectors, and exact when their float sums are not 1
            return float(sum((a * mpmath.log(a / b) if a > 0 else 0) - a + b for a, b in zip(u, v)))
        if kind == "chi2":
            return float(sum((a - b) ** 2 / b for a, b in zip(u, v)))
        if kind == "egamma":
            return float(sum(max(a - params["gamma"] * b, 0) for a, b in zip(u, v)))
        if kind == "renyi":
            alpha = mpmath.mpf(params["renyi_order"])
            return float(mpmath.log(sum(a ** alpha * b ** (1 - alpha) for a, b in zip(u, v))) / (alpha - 1))
    raise AssertionError(kind)


def probability_pairs():
    "Fixed pairs of probability vectors with positive entries."
    for seed, k in enumerate((2, 3, 6)):
        rng = np.random.default_rng(100 + seed)
        u, v = rng.uniform(0.1, 1, k), rng.uniform(0.1, 1, k)
        yield u / u.sum(), v / v.sum()


@grades("divergence", points=2)
def test_divergence_known_values(divergence):
    """KL, TV and chi^2 of (1/2, 1/2) against (9/10, 1/10), and E_gamma, from the definitions; an unknown kind is
    refused."""
    u, v = [0.5, 0.5], [0.9, 0.1]
    assert refused(divergence, u, v, kind="no such divergence") == "ValueError", "an unknown kind must be refused"
    assert math.isclose(divergence(u, v, kind="kl"), 0.5 * math.log(0.5 / 0.9) + 0.5 * math.log(0.5 / 0.1),
                        rel_tol=1e-12)
    assert math.isclose(divergence(u, v, kind="tv"), 0.4, rel_tol=1e-12)
    assert math.isclose(divergence(u, v, kind="chi2"), 0.4 ** 2 / 0.9 + 0.4 ** 2 / 0.1, rel_tol=1e-12)
    assert math.isclose(divergence(u, v, kind="egamma", gamma=2.0), 0.3, rel_tol=1e-12)


@grades("divergence", points=2, hidden=True)
def test_divergence_kl_tv_chi2_against_mpmath(divergence):
    "KL, TV and chi^2 of a few pairs, one with a zero mass in u, against 50-digit values of the definitions."
    for u, v in [*probability_pairs(), (np.array([0.5, 0.0, 0.5]), np.array([0.2, 0.3, 0.5]))]:
        for kind in ("kl", "tv", "chi2"):
            got = divergence(u, v, kind=kind)
            assert math.isclose(got, mp_divergence(u, v, kind), rel_tol=1e-9), f"{kind} of {u}, {v}"


@grades("divergence", hidden=True)
def test_divergence_with_parameters(divergence):
    "E_gamma with gamma= and Renyi with renyi_order=, against 50-digit values."
    for u, v in probability_pairs():
        for gamma in (0.5, 1.0, 2.0):
            got = divergence(u, v, kind="egamma", gamma=gamma)
            assert math.isclose(got, mp_divergence(u, v, "egamma", gamma=gamma), rel_tol=1e-9, abs_tol=1e-15)
        for alpha in (0.5, 2.0, 3.0):
            got = divergence(u, v, kind="renyi", renyi_order=alpha)
            assert math.isclose(got, mp_divergence(u, v, "renyi", renyi_order=alpha), rel_tol=1e-9)


@grades("divergence")
def test_divergence_zero_masses(divergence):
    "0 log 0 = 0; KL is infinite where v = 0 < u; identical inputs give 0."
    u, v = np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.25, 0.5])
    assert math.isclose(divergence(u, v, kind="kl"), math.log(2.0), rel_tol=1e-12)
    assert divergence(v, u, kind="kl") == math.inf
    assert divergence(v, v, kind="kl") == 0.0


@grades("divergence", points=2, hidden=True)
def test_divergence_of_nearly_equal_vectors_is_exact(divergence):
    "u and v differing by 1e-9 per symbol: KL and chi^2 to 1e-9 relative (no cancellation)."
    v = np.array([0.3, 0.2, 0.5])
    u = v + np.array([1e-9, -3e-9, 2e-9])
    for kind in ("kl", "chi2"):
        expected = mp_divergence(u, v, kind)
        assert math.isclose(divergence(u, v, kind=kind), expected, rel_tol=1e-9), kind


@grades("divergence", hidden=True)
def test_divergence_rejects_bad_input(divergence):
    "Vectors of different lengths, negative masses, an unknown kind: ValueError."
    for args, kwargs in [(([0.5, 0.5], [0.2, 0.3, 0.5]), {}), (([1.5, -0.5], [0.5, 0.5]), {}),
                         (([0.5, 0.5], [0.2, 0.8]), {"kind": "no such divergence"})]:
        assert refused(divergence, *args, **kwargs) == "ValueError", f"divergence{args} {kwargs} must be refused"
