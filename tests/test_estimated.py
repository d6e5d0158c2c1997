"""Tests of ldpbook.estimated: the uniform Lipschitz bound against random ε-LDP channels
and perturbations for every divergence, the l1 radii and the plug-in certificate's
coverage by simulation, the sample size against exact arithmetic (two outputs),
enumeration and Monte Carlo (more outputs), the shipped data set, bad inputs, and the maximin design over
coordinate boxes against a vertex program, a search over channels with more outputs and mpmath."""

import itertools
import math
import sys
import zlib
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import linprog

from forked_script import ForkedScript
from ldpbook.estimated import (
    MAX_TYPES,
    _lattice_miss,
    _types_miss,
    _worst_case,
    divergence_constants,
    l1_radius,
    load_health_visits,
    maximin_optimal,
    np_power,
    output_lipschitz,
    plugin_optimal,
    sample_size,
    sample_size_details,
)
from ldpbook.foundations import LinearFree, divergence, is_ldp, randomized_response
from ldpbook.spr import binary_mechanism, divergence_optimal, spr_channel

MPMATH_DPS = 40                    # the mpmath precision of every test in this file (tests/conftest.py)

KINDS = [
    ("kl", {}),
    ("tv", {}),
    ("chi2", {}),
    ("hellinger", {}),
    ("egamma", {"gamma": 0.5}),
    ("egamma", {"gamma": 1.0}),
    ("egamma", {"gamma": 1.5}),
    ("egamma", {"gamma": 3.0}),
    ("renyi", {"renyi_order": 0.3}),
    ("renyi", {"renyi_order": 0.5}),
    ("renyi", {"renyi_order": 2.0}),
    ("renyi", {"renyi_order": 4.0}),
]
F = {
    "kl": lambda t: t * math.log(t),
    "chi2": lambda t: (t - 1) ** 2,
    "hellinger": lambda t: (math.sqrt(t) - 1) ** 2,
    "tv": lambda t: 0.5 * abs(t - 1),
}


def random_ldp_channel(k, eps, rng):
    "A random mixture of randomized response on 1–3 random partitions of [k]."
    parts = []
    for _ in range(rng.integers(1, 4)):
        s = int(rng.integers(1, k + 1))
        label = rng.integers(0, s, k)
        parts.append(rng.random() * randomized_response(s, eps)[label])
    Q = np.hstack(parts)
    return Q / Q.sum(axis=1, keepdims=True)


def random_law(rng, k):
    "A Dirichlet(1/2) law with, now and then, zero masses."
    p = rng.dirichlet(np.full(k, 0.5))
    if rng.random() < 0.3:
        p[rng.integers(k)] = 0.0
        p = p / p.sum()
    return p


@pytest.mark.parametrize("kind, params", KINDS)
def test_lipschitz_bound_on_random_channels(kind, params):
    rng = np.random.default_rng(zlib.crc32(f"{kind}{params}".encode()))
    worst = 0.0
    for _ in range(1500):
        k = int(rng.integers(2, 8))
        eps = float(rng.choice([0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0]))
        Q = random_ldp_channel(k, eps, rng)
        assert is_ldp(Q, eps)
        p, q = random_law(rng, k), random_law(rng, k)
        s = float(rng.choice([1e-6, 1e-3, 0.1, 0.5, 1.0]))
        p2 = (1 - s) * p + s * random_law(rng, k)
        q2 = q if rng.random() < 0.3 else (1 - s) * q + s * random_law(rng, k)
        Lp, Lq = output_lipschitz(eps, divergence=kind, **params)
        change = abs(
            divergence(p @ Q, q @ Q, kind=kind, **params)
            - divergence(p2 @ Q, q2 @ Q, kind=kind, **params)
        )
        bound = Lp * np.abs(p - p2).sum() + Lq * np.abs(q - q2).sum()
        assert change <= bound * (1 + 1e-9) + 1e-13, (k, eps, change, bound)
        if bound > 1e-9:
            worst = max(worst, change / bound)
    if not (kind == "egamma" and params["gamma"] == 3.0):
        assert worst > 0.2  # the bound is not vacuous: changes come close


@pytest.mark.parametrize("eps", [0.05, 0.7, 2.0, 5.0])
@pytest.mark.parametrize("kind, params", KINDS[:8])
def test_constants_against_numerical_oscillation(kind, params, eps):
    "½ osc f′ and ½ osc (f − t f′) by finite differences on a grid of [e^-ε, e^ε]."
    f = F.get(kind) or (lambda t: max(t - params["gamma"], 0.0))
    t = np.exp(np.linspace(-eps, eps, 4001))
    h = 1e-7 * t
    slopes = np.array([(f(x + d) - f(x - d)) / (2 * d) for x, d in zip(t, h)])
    a = 0.5 * (slopes.max() - slopes.min())
    values = np.array([f(x) for x in t]) - t * slopes
    b = 0.5 * (values.max() - values.min())
    got = divergence_constants(eps, divergence=kind, **params)
    assert got[0] == pytest.approx(a, rel=1e-3, abs=1e-6)
    assert got[1] == pytest.approx(b, rel=1e-3, abs=1e-6)


@pytest.mark.parametrize("alpha", [0.2, 0.5, 0.8, 1.5, 3.0])
def test_renyi_constants_in_mpmath(alpha):
    "D_α changes along a two-output path no faster than the constants allow."
    eps = 1.3
    a, b = divergence_constants(eps, divergence="renyi", renyi_order=alpha)
    w = mp.e**eps / (1 + mp.e**eps)

    def renyi(pu, pv):
        u = [w * pu + (1 - w) * (1 - pu), (1 - w) * pu + w * (1 - pu)]
        v = [w * pv + (1 - w) * (1 - pv), (1 - w) * pv + w * (1 - pv)]
        s = mp.fsum(x**alpha * y ** (1 - alpha) for x, y in zip(u, v))
        return mp.log(s) / (alpha - 1)

    for pu, pv in [(1, 0), (0.9, 0.1), (0.3, 0.8), (0, 1)]:
        d_u = mp.diff(
            lambda x: renyi(x, mp.mpf(pv)), mp.mpf(pu) - (1e-20 if pu == 1 else 0)
        )
        d_v = mp.diff(
            lambda x: renyi(mp.mpf(pu), x), mp.mpf(pv) + (1e-20 if pv == 0 else 0)
        )
        # moving mass s from one symbol to the other changes ‖Δp‖₁ by 2s
        assert abs(d_u) / 2 <= math.tanh(eps / 2) * a * (1 + 1e-9)
        assert abs(d_v) / 2 <= math.tanh(eps / 2) * b * (1 + 1e-9)


def test_tv_constant_is_attained():
    eps, s = 1.0, 0.1
    Q = randomized_response(2, eps)
    p, p2, q = np.array([1.0, 0.0]), np.array([1 - s, s]), np.array([0.5, 0.5])
    change = divergence(p @ Q, q @ Q, kind="tv") - divergence(p2 @ Q, q @ Q, kind="tv")
    Lp, _ = output_lipschitz(eps, divergence="tv")
    assert change == pytest.approx(Lp * 2 * s, rel=1e-12)


def test_callable_and_linear_free_bounds_cover_the_named_constants():
    for eps in (0.1, 1.0, 3.0):
        named = output_lipschitz(eps, divergence="kl")
        plain = output_lipschitz(eps, divergence=F["kl"], f_slope_at_inf=np.inf)
        phi = LinearFree(lambda t: (1 + t) * math.log1p(t) - t if t > -1 else 1.0)
        free = output_lipschitz(eps, divergence=phi)
        for bound in (plain, free):
            assert all(
                x * (1 - 1e-9) <= y <= x * (1 + 1e-4) for x, y in zip(named, bound)
            )


def test_lipschitz_edges():
    assert output_lipschitz(0.0) == (0.0, 0.0)
    assert output_lipschitz(np.inf, divergence="tv") == (0.5, 0.5)
    assert output_lipschitz(np.inf) == (np.inf, np.inf)
    for alpha in (0.5, 2.0):                    # Rényi without privacy: unbounded, never NaN
        assert output_lipschitz(np.inf, divergence="renyi", renyi_order=alpha) == (np.inf, np.inf)
    assert output_lipschitz(1.0, divergence="egamma", gamma=3.0) == (
        0.0,
        0.0,
    )  # e^1 < 3
    a, b = output_lipschitz(800.0, divergence="hellinger")
    assert math.isfinite(a) and a == b


@pytest.mark.parametrize("n, k, delta", [(50, 2, 0.1), (200, 7, 0.05), (100, 30, 0.1)])
def test_l1_radius_covers(n, k, delta):
    rng = np.random.default_rng(n + k)
    r = l1_radius(n, k, delta)
    weissman = math.sqrt(2 * (math.log(2.0**k - 2) + math.log(1 / delta)) / n)
    mcdiarmid = math.sqrt((k - 1) / n) + math.sqrt(2 * math.log(1 / delta) / n)
    assert r == pytest.approx(min(weissman, mcdiarmid, 2.0), rel=1e-12)
    for p in (np.full(k, 1 / k), rng.dirichlet(np.ones(k))):
        dev = np.abs(rng.multinomial(n, p, size=20000) / n - p).sum(axis=1)
        assert np.mean(dev > r) <= delta
    assert l1_radius(10, 1, 0.5) == 0.0 and l1_radius(1, 1000, 0.5) == 2.0


@pytest.mark.parametrize(
    "kind, params",
    [("kl", {}), ("tv", {}), ("egamma", {"gamma": 2.0}), ("hellinger", {})],
)
def test_certificate_coverage(kind, params):
    "Many pilots from a known pair: the certificate holds at least at the stated rate."
    rng = np.random.default_rng(11)
    p = np.array([0.05, 0.10, 0.20, 0.30, 0.25, 0.10])
    q = np.array([0.30, 0.25, 0.20, 0.15, 0.07, 0.03])
    eps, confidence, reps, n = 2.0, 0.8, 300, 150
    optimum = divergence_optimal(p, q, eps, divergence=kind, **params).value
    holds, naive_fails = 0, 0
    for _ in range(reps):
        d = plugin_optimal(
            rng.choice(6, n, p=p),
            rng.choice(6, n, p=q),
            eps,
            k=6,
            divergence=kind,
            confidence=confidence,
            **params,
        )
        value = divergence(
            p @ d.mechanism.channel, q @ d.mechanism.channel, kind=kind, **params
        )
        holds += (
            d.lower_bound <= value * (1 + 1e-12)
            and optimum <= d.upper_bound
            and optimum - value <= d.regret_bound * (1 + 1e-12) + 1e-15
        )
        naive_fails += d.estimate > value  # no margin: fails about half the time
        assert (
            d.regret_bound <= 2 * d.margin * (1 + 1e-12) and d.confidence == confidence
        )
    assert holds / reps >= confidence
    assert naive_fails / reps > 0.2  # the check can fail: a zero margin would


def test_plugin_matches_the_empirical_optimum():
    x0, x1 = np.array([0, 0, 1, 2, 2, 2]), np.array([1, 1, 2, 0, 3])
    d = plugin_optimal(x0, x1, 1.0, k=5)
    p_hat, q_hat = np.bincount(x0, minlength=5) / 6, np.bincount(x1, minlength=5) / 5
    assert np.array_equal(d.p_hat, p_hat) and np.array_equal(d.q_hat, q_hat)
    assert d.estimate == divergence_optimal(p_hat, q_hat, 1.0).value
    Lp, Lq = output_lipschitz(1.0)
    assert d.margin == pytest.approx(
        Lp * l1_radius(6, 5, 0.025) + Lq * l1_radius(5, 5, 0.025)
    )
    assert d.lower_bound == max(d.estimate - d.margin, 0.0)
    assert plugin_optimal(x0, x1, 1.0, k=5, ell=2).mechanism.num_outputs <= 2
    with pytest.raises(Exception):
        d.estimate = 1.0


def np_power_mpmath(u1, v1, n, alpha):
    "Exact randomized NP power from the counts of an output with v1 > u1, in 40 digits."
    u1, v1, alpha = mp.mpf(u1), mp.mpf(v1), mp.mpf(alpha)
    size, power = mp.mpf(0), mp.mpf(0)
    for t in range(n, -1, -1):
        m0 = mp.binomial(n, t) * u1**t * (1 - u1) ** (n - t)
        m1 = mp.binomial(n, t) * v1**t * (1 - v1) ** (n - t)
        if size + m0 > alpha:
            return power + (alpha - size) / m0 * m1
        size, power = size + m0, power + m1
    return mp.mpf(1)


@pytest.mark.parametrize("seed", range(6))
def test_two_output_sample_size_is_exact(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 7))
    p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    eps = float(rng.choice([1.0, 2.0, 4.0]))
    alpha, beta = float(rng.choice([0.01, 0.05, 0.1])), float(rng.choice([0.1, 0.2]))
    Q = binary_mechanism(p, q, eps).channel
    found = sample_size_details(p, q, eps, alpha=alpha, beta=beta, channel=Q)
    assert found.method == "binomial" and found.lower_bound == found.n
    u, v = p @ Q, q @ Q
    i = 1 if v[1] > u[1] else 0
    n = next(
        n for n in range(1, 5000) if np_power_mpmath(u[i], v[i], n, alpha) >= 1 - beta
    )
    assert found.n == n
    assert float(np_power_mpmath(u[i], v[i], n, alpha)) == pytest.approx(
        found.power, abs=1e-12
    )


def np_power_by_sequences(u, v, n, alpha):
    "NP power by enumerating all m^n output sequences (no types, no sorting of types)."
    m = u.size
    seqs = np.array(list(itertools.product(range(m), repeat=n)))
    log0, log1 = np.log(u)[seqs].sum(axis=1), np.log(v)[seqs].sum(axis=1)
    llr = np.round(log1 - log0, 9)
    mass0, mass1 = np.exp(log0), np.exp(log1)
    power, size = 0.0, 0.0
    for value in np.unique(llr)[::-1]:
        at = llr == value
        if size + mass0[at].sum() > alpha:
            return power + (alpha - size) / mass0[at].sum() * mass1[at].sum()
        size, power = size + mass0[at].sum(), power + mass1[at].sum()
    return 1.0


def test_types_power_against_sequences():
    rng = np.random.default_rng(5)
    for _ in range(8):
        m = int(rng.integers(3, 5))
        u, v = rng.dirichlet(np.ones(m)), rng.dirichlet(np.ones(m))
        if rng.random() < 0.4:  # ties: two outputs with equal ratios
            v[1] = v[0] * u[1] / u[0]
            v = v / v.sum()
        for n in (1, 3, 6):
            alpha = float(rng.choice([0.05, 0.2]))
            exact = np_power_by_sequences(u, v, n, alpha)
            assert 1 - _types_miss(u, v, n, alpha) == pytest.approx(exact, abs=1e-12)
            assert 1 - _lattice_miss(u, v, n, alpha) <= exact + 1e-9  # NP is most powerful


def monte_carlo_np_power(u, v, n, alpha, rng, reps=400_000):
    "The randomized LR test, its threshold and randomization estimated under H0."
    llr = np.log(v) - np.log(u)
    stat0 = np.round(rng.multinomial(n, u, reps) @ llr, 9)
    stat1 = np.round(rng.multinomial(n, v, reps) @ llr, 9)
    values, counts = np.unique(stat0, return_counts=True)
    tail = np.cumsum(counts[::-1])[::-1] / reps  # P0(stat ≥ value)
    j = int(np.argmax(tail <= alpha)) - 1 if tail[-1] <= alpha else values.size - 1
    c = values[j]
    above = np.mean(stat0 > c)
    gamma = (alpha - above) / np.mean(stat0 == c)
    return np.mean(stat1 > c) + gamma * np.mean(stat1 == c), reps


def test_multi_output_sample_size_against_simulation():
    rng = np.random.default_rng(8)
    p = np.array([0.05, 0.10, 0.20, 0.30, 0.25, 0.10])
    q = np.array([0.25, 0.25, 0.20, 0.15, 0.10, 0.05])
    Q = spr_channel(((0, 1), (2,), (3, 4, 5)), 6, 2.0)
    found = sample_size_details(p, q, 2.0, channel=Q)
    assert found.method == "types"
    u, v = p @ Q, q @ Q
    for n, side in ((found.n, 1), (found.n - 1, -1)):
        power, reps = monte_carlo_np_power(u, v, n, 0.05, rng)
        se = math.sqrt(0.8 * 0.2 / reps)
        exact = 1 - _types_miss(u, v, n, 0.05)
        assert abs(power - exact) < 5 * se + 1e-3
        assert side * (exact - 0.8) >= 0


def test_lattice_method_brackets_the_exact_answer():
    rng = np.random.default_rng(4)
    p, q = rng.dirichlet(np.ones(7)), rng.dirichlet(np.ones(7))
    Q = randomized_response(7, 0.7)
    found = sample_size_details(p, q, 0.7, channel=Q)
    u, v = p @ Q, q @ Q
    assert found.lower_bound <= found.n
    if found.method == "lattice":
        assert _lattice_miss(u, v, found.n, 0.05) <= 0.2
        power, reps = monte_carlo_np_power(u, v, found.n, 0.05, rng, reps=200_000)
        assert power >= 0.8 - 5 * math.sqrt(0.16 / reps)  # NP is at least as powerful
    assert sample_size(p, q, 0.7, channel=Q) == found.n


def test_default_channel_and_trivial_cases():
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5])
    Q = divergence_optimal(p, q, 1.0).channel
    assert sample_size(p, q, 1.0) == sample_size(p, q, 1.0, channel=Q)
    assert sample_size(p, q, 1.0, alpha=0.5, beta=0.5) == 0
    assert sample_size([1.0, 0.0], [0.0, 1.0], np.inf) == 1  # one output decides
    assert MAX_TYPES >= 10_000


def test_bad_inputs():
    p, q = np.array([0.6, 0.4]), np.array([0.3, 0.7])
    x = np.array([0, 1, 1])
    cases = [
        (lambda: output_lipschitz(-1.0), ValueError, "eps"),
        (lambda: output_lipschitz(1.0, divergence="nope"), ValueError, "divergence"),
        (lambda: output_lipschitz(1.0, divergence="renyi"), ValueError, "renyi_order"),
        (lambda: output_lipschitz(1.0, 2.0), TypeError, "positional"),
        (lambda: plugin_optimal(x.astype(float), x, 1.0), TypeError, "x0"),
        (lambda: plugin_optimal(x, np.array([True, False]), 1.0), TypeError, "x1"),
        (lambda: plugin_optimal(x, -x, 1.0), ValueError, "non-negative"),
        (lambda: plugin_optimal(x.reshape(3, 1), x, 1.0), ValueError, "1-D"),
        (
            lambda: plugin_optimal(np.array([], dtype=int), x, 1.0),
            ValueError,
            "non-empty",
        ),
        (lambda: plugin_optimal(x, x, 1.0, k=1), ValueError, "[0, k)"),
        (lambda: plugin_optimal(x, x, 1.0, k=2, confidence=1.0), ValueError, "confidence"),
        (lambda: plugin_optimal(x, x, 1.0, k=2, confidence=True), TypeError, "confidence"),
        (lambda: plugin_optimal(x, x, 1.0, k=2, ell=0), ValueError, "ell"),
        (lambda: plugin_optimal(x, x, float("nan"), k=2), ValueError, "eps"),
        (lambda: l1_radius(0, 3, 0.1), ValueError, "n"),
        (lambda: l1_radius(10, 3, 1.5), ValueError, "delta"),
        (lambda: sample_size(p, q, 1.0, alpha=0.0), ValueError, "alpha"),
        (lambda: sample_size(p, q, 1.0, beta=1.2), ValueError, "beta"),
        (lambda: sample_size(p, q, 1.0, alpha="0.05"), TypeError, "alpha"),
        (lambda: sample_size(p, p, 1.0), ValueError, "equal"),
        (
            lambda: sample_size(p, q, 1.0, channel=np.eye(3)),
            ValueError,
            "row per symbol",
        ),
        (lambda: sample_size(p, q, 1.0, channel=np.eye(2)), ValueError, "eps-LDP"),
        (
            lambda: sample_size(p, q, 1.0, channel=[[0.5, 0.6], [0.5, 0.5]]),
            ValueError,
            "channel",
        ),
        (lambda: sample_size([0.5, 0.6], q, 1.0), ValueError, "sum to 1"),
        (lambda: sample_size(p, q, 1.0, 0.05), TypeError, "positional"),
    ]
    for call, error, words in cases:
        with pytest.raises(error, match=None) as info:
            call()
        assert words in str(info.value), (words, str(info.value))
        assert "0.6" not in str(info.value) and "0.7" not in str(info.value)


def test_shipped_data_set(tmp_path):
    data = load_health_visits()
    assert data.visits.shape == data.coinsurance.shape == (20190,)
    assert set(np.unique(data.coinsurance)) == {0, 25, 50, 95, 100}
    x0, x1 = data.populations()
    assert x0.size == 10997 and x1.size == 9193 and x0.max() <= 6 and x1.min() >= 0
    assert np.bincount(data.symbols(), minlength=7)[0] == int(np.sum(data.visits == 0))
    assert np.all(data.symbols()[data.visits >= 10] == 6)
    assert not data.visits.flags.writeable
    good = tmp_path / "good.csv"
    good.write_text("# a comment\nmdvis,coinsurance\n3,0\n12,95\n")
    small = load_health_visits(good)
    assert small.visits.tolist() == [3, 12] and small.symbols().tolist() == [3, 6]
    head = "mdvis,coinsurance\n"
    for name, text in [
        ("header.csv", "visits,rate\n1,0\n"),
        ("float.csv", head + "1.5,0\n"),
        ("neg.csv", head + "-1,0\n"),
        ("short.csv", head + "1\n"),
        ("empty.csv", head),
    ]:
        (tmp_path / name).write_text(text)
        with pytest.raises(ValueError, match="path"):
            load_health_visits(tmp_path / name)
    with pytest.raises(FileNotFoundError, match="path"):
        load_health_visits(tmp_path / "missing.csv")


def run_cli(*args):
    "The command line as a user runs it: a child process, its exit code and output."
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "ldpbook.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_design_command(tmp_path):
    import json
    from ldpbook.estimated import certified_design
    rng = np.random.default_rng(2)
    x0, x1 = rng.choice(4, 800, p=[0.1, 0.2, 0.3, 0.4]), rng.choice(4, 700, p=[0.4, 0.3, 0.2, 0.1])
    (tmp_path / "x0.csv").write_text("x0\n" + "\n".join(map(str, x0)))
    (tmp_path / "x1.json").write_text(json.dumps([int(v) for v in x1]))
    done = run_cli("design", tmp_path / "x0.csv", tmp_path / "x1.json", "--eps", "1",
                   "--confidence", "0.9", "--alpha", "0.01", "--beta", "0.1")
    assert done.returncode == 0, done.stderr
    assert "without --k" in done.stderr and done.stderr.count("\n") == 1   # the deprecated default, noted
    out = json.loads(done.stdout)
    ref = certified_design(x0, x1, 1.0, k=4, confidence=0.9, level=0.01, power=0.9)
    given = run_cli("design", tmp_path / "x0.csv", tmp_path / "x1.json", "--eps", "1", "--k", "4",
                    "--confidence", "0.9", "--alpha", "0.01", "--beta", "0.1")
    assert given.returncode == 0 and given.stderr == "" and given.stdout == done.stdout
    assert out["pilot_sizes"] == [800, 700] and out["k"] == 4
    assert out["design_sizes"] == [200, 175] and out["holdout_sizes"] == [600, 525]
    plugin = ref.plugin                                  # the Lipschitz certificate of the printed mechanism
    assert out["estimate"] == pytest.approx(plugin.estimate, rel=1e-12)
    assert out["lower_bound"] == pytest.approx(plugin.lower_bound, rel=1e-12, abs=1e-15)
    assert out["regret_bound"] == pytest.approx(plugin.regret_bound, rel=1e-12)
    assert out["partition"] == [list(b) for b in ref.mechanism.partition]
    size = out["sample_size"]
    assert size["n"] == ref.n and size["n"] > 0 and "true pair" in size["for"] and "0.9" in size["for"]
    p_hat, q_hat = np.bincount(x0, minlength=4) / 800, np.bincount(x1, minlength=4) / 700
    n = sample_size(p_hat, q_hat, 1.0, alpha=0.01, beta=0.1, channel=ref.mechanism.channel)
    assert size["n_plugin"] == n and "estimated pair" in size["n_plugin_for"]
    assert out["merged_outputs"] == [int(y) for y in np.flatnonzero(ref.merged)]
    text = run_cli("design", tmp_path / "x0.csv", tmp_path / "x1.json", "--eps", "1", "--k", "4",
                   "--confidence", "0.9", "--alpha", "0.01", "--beta", "0.1", "--format", "text",
                   "--out", tmp_path / "report.txt")
    assert text.returncode == 0 and text.stdout.startswith("wrote ")
    report = (tmp_path / "report.txt").read_text()
    assert f"n = {ref.n} respondents" in report and f"(not certified): {n}" in report


def test_design_command_errors(tmp_path):
    "The refusals run in processes forked from one start of the command (tests/forked_script.py), held to a real start."
    (tmp_path / "same.csv").write_text("\n".join(["0", "1"] * 20))
    equal = run_cli("design", tmp_path / "same.csv", tmp_path / "same.csv", "--eps", "1", "--k", "2")
    assert equal.returncode == 0 and '"n": null' in equal.stdout and '"reason"' in equal.stdout
    forked = ForkedScript(Path(sys.executable).with_name("ldpbook"))
    real, fork = run_cli("design", "0,1,7.5", "1,0", "--eps", "1"), forked("design", "0,1,7.5", "1,0", "--eps", "1")
    assert (fork.returncode, fork.stdout, fork.stderr) == (real.returncode, real.stdout, real.stderr)
    pilot = ",".join(["0", "1", "2"] * 10)
    for args, words in [(("0,1,7.5", "1,0", "--eps", "1"), "whole numbers"),
                        (("0,1,-3", "1,0", "--eps", "1"), "whole numbers"),
                        (("0,1,2000000", "1,0", "--eps", "1"), "below"),
                        ((pilot, pilot, "--eps", "1", "--k", "1"), "[0, k)"),
                        ((pilot, pilot, "--eps", "-1"), "eps"),
                        ((pilot, pilot, "--eps", "1", "--beta", "2"), "beta"),
                        ((pilot, pilot, "--eps", "1", "--confidence", "1"), "confidence"),
                        (("0,1,2", pilot, "--eps", "1", "--k", "3"), "x0 must hold at least"),
                        (("2," * 29 + "2", "2," * 29 + "2", "--eps", "1", "--k", "3"), "two different symbols"),
                        ((pilot, pilot, "--eps", "1", "--divergence", "nope"), "divergence"),
                        ((pilot, pilot, "--eps", "1", "--format", "xml"), "format"),
                        ((pilot, pilot, "--eps", "1", "--out", tmp_path / "no" / "such" / "f.json"), "--out"),
                        (("0,1", tmp_path / "missing.csv", "--eps", "1"), "no such file")]:
        done = forked("design", *args)
        assert done.returncode == 2 and done.stdout == "", (args, done.stderr)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert done.stderr.startswith("ldpbook design: error:") and words in done.stderr, (args, done.stderr)
        assert "7.5" not in done.stderr and "2000000" not in done.stderr
    forked.close()


def test_survey_test_command(tmp_path):
    "ldpbook survey-test on CSV files and the design report, against the API; its refusals."
    import json
    from ldpbook.estimated import survey_test, two_group_test
    forked = ForkedScript(Path(sys.executable).with_name("ldpbook"))
    p, q = [0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]
    Q = spr_channel([[0, 1], [2, 3]], 4, 1.0)
    (tmp_path / "design.json").write_text(json.dumps({"channel": Q.tolist(), "k": 4}))
    answers = [1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1]
    (tmp_path / "answers.csv").write_text("answer\n" + "\n".join(map(str, answers)))
    done = forked("survey-test", "np", tmp_path / "answers.csv", "--p", ",".join(map(str, p)),
                  "--q", ",".join(map(str, q)), "--channel", tmp_path / "design.json", "--deterministic")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    ref = survey_test(answers, p, q, channel=Q, randomized=False)
    assert out["pvalue"] == ref.pvalue and out["reject"] == ref.reject and out["method"] == "binomial"
    done = forked("survey-test", "groups", tmp_path / "answers.csv", "0,0,1,0,0,1,0", "--format", "text")
    ref = two_group_test(answers, [0, 0, 1, 0, 0, 1, 0])
    assert done.returncode == 0 and f"p-value {ref.pvalue:.4g}" in done.stdout and "fisher" in done.stdout
    for args, words in [(("np", tmp_path / "answers.csv", "--p", "0.5,0.5", "--q", "0.2,0.8", "--channel",
                          tmp_path / "missing.json"), "no such file"),
                        (("np", tmp_path / "answers.csv", "--p", "0.5,0.6,0,0", "--q", ",".join(map(str, q)),
                          "--channel", tmp_path / "design.json"), "sum to 1"),
                        (("np", "0,1,7", "--p", ",".join(map(str, p)), "--q", ",".join(map(str, q)),
                          "--channel", tmp_path / "design.json"), "answers"),
                        (("groups", "0,1", "0,1", "--level", "2"), "--level"),
                        (("groups", "0,1.5", "0,1"), "whole numbers")]:
        done = forked("survey-test", *args)
        assert done.returncode == 2 and done.stdout == "", (args, done.stderr)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and words in done.stderr, \
            (args, done.stderr)
    forked.close()


def test_berry_esseen_bound_by_simulation():
    "The Berry–Esseen test: level at most α and power at least the bound, by simulation."
    from ldpbook.estimated import BERRY_ESSEEN, _berry_esseen_miss
    from scipy import stats
    rng = np.random.default_rng(9)
    u, v = np.array([0.3, 0.3, 0.4]), np.array([0.25, 0.3, 0.45])
    n, alpha, reps = 3000, 0.05, 40_000
    llr = np.log(v) - np.log(u)
    m0, s0 = u @ llr, math.sqrt(u @ (llr - u @ llr) ** 2)
    e0 = BERRY_ESSEEN * (u @ np.abs(llr - m0) ** 3) / (s0 ** 3 * math.sqrt(n))
    t = n * m0 + s0 * math.sqrt(n) * stats.norm.ppf(1 - alpha + e0)
    level = np.mean(rng.multinomial(n, u, reps) @ llr > t)
    power = np.mean(rng.multinomial(n, v, reps) @ llr > t)
    bound = 1 - _berry_esseen_miss(u, v, n, alpha)
    se = math.sqrt(0.25 / reps)
    assert level <= alpha + 3 * se and power >= bound - 3 * se and 0 < bound < power


def test_tiny_eps_sample_sizes_are_certified_and_fast():
    p = np.array([0.28, 0.19, 0.14, 0.10, 0.12, 0.11, 0.06])
    q = np.array([0.35, 0.19, 0.14, 0.09, 0.10, 0.08, 0.05])
    binary = sample_size_details(p, q, 1e-3)                       # two outputs: exact
    assert binary.method == "binomial" and binary.n > 10**8
    rr = sample_size_details(p, q, 1e-3, channel=randomized_response(7, 1e-3))
    assert rr.method == "berry-esseen" and rr.lower_bound <= rr.n and rr.n > binary.n
    with pytest.raises(ValueError, match="too close"):
        sample_size(p, q, 1e-9)


@pytest.mark.parametrize("kind, params", KINDS)
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_constants_are_sharp_in_the_limit(kind, params, eps):
    """Binary RR with p = (1, 0), q = (0, 1) puts the output ratios at e^{±ε}; moving both laws inward by s,
    the change over the bound tends to 1 as s → 0 for every divergence but Rényi with α > 1 (bound loose there)."""
    Lp, Lq = output_lipschitz(eps, divergence=kind, **params)
    if Lp == Lq == 0:                                    # E_γ outside (e^{−ε}, e^{ε}): constant, nothing to test
        return
    Q, s = randomized_response(2, eps), 1e-7
    p, q = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    ratios = []
    inward_p, inward_q = np.array([1 - s, s]), np.array([s, 1 - s])
    for p2, q2 in [(inward_p, q), (p, inward_q), (inward_p, inward_q)]:
        change = abs(divergence(p @ Q, q @ Q, kind=kind, **params) - divergence(p2 @ Q, q2 @ Q, kind=kind, **params))
        ratios.append(change / (Lp * np.abs(p - p2).sum() + Lq * np.abs(q - q2).sum()))
    if kind == "renyi" and params["renyi_order"] > 1:
        assert max(ratios) < 0.9
    else:
        assert all(abs(r - 1) < 1e-5 for r in ratios), ratios


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_egamma_at_the_ends_of_the_ratio_range(eps):
    "γ = e^{±ε}: the constants are 0 (a kink at an end costs nothing), and E_γ is constant on ε-LDP outputs."
    rng = np.random.default_rng(int(eps * 10))
    for gamma, constant in ((math.exp(eps), 0.0), (math.exp(-eps), 1 - math.exp(-eps))):
        assert output_lipschitz(eps, divergence="egamma", gamma=gamma) == (0.0, 0.0)
        for _ in range(200):
            k = int(rng.integers(2, 7))
            Q = random_ldp_channel(k, eps, rng)
            value = divergence(random_law(rng, k) @ Q, random_law(rng, k) @ Q, kind="egamma", gamma=gamma)
            assert value == pytest.approx(constant, abs=1e-12)


def test_types_power_is_the_linear_programming_optimum():
    "The most powerful level-α test over all randomized tests on types, by a linear program, independent of NP."
    from scipy.optimize import linprog
    from ldpbook.estimated import _types
    rng = np.random.default_rng(11)
    for _ in range(8):
        u, v = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))
        n, alpha = int(rng.integers(2, 10)), float(rng.choice([0.01, 0.05, 0.2]))
        N = _types(n, 3)
        log_count = np.array([math.lgamma(n + 1) - sum(math.lgamma(c + 1) for c in row) for row in N])
        P0, P1 = np.exp(log_count + N @ np.log(u)), np.exp(log_count + N @ np.log(v))
        lp = linprog(-P1, A_ub=[P0], b_ub=[alpha], bounds=[(0, 1)] * len(P0), method="highs")
        assert 1 - _types_miss(u, v, n, alpha) == pytest.approx(-lp.fun, abs=1e-8)


def test_berry_esseen_level_and_power_by_enumeration():
    "The Berry–Esseen test's exact level (≤ α) and power (≥ the bound), by enumerating the multinomial types."
    from scipy import stats
    from ldpbook.estimated import BERRY_ESSEEN, _berry_esseen_miss, _types
    rng = np.random.default_rng(12)
    n, alpha = 150, 0.05
    N = _types(n, 3)
    log_count = np.array([math.lgamma(n + 1) - sum(math.lgamma(c + 1) for c in row) for row in N])
    checked = 0
    while checked < 3:
        u = rng.dirichlet(np.full(3, 3.0))
        v = 0.8 * u + 0.2 * rng.dirichlet(np.full(3, 3.0))
        llr = np.log(v) - np.log(u)
        m0, s0 = u @ llr, math.sqrt(u @ (llr - u @ llr) ** 2)
        e0 = BERRY_ESSEEN * (u @ np.abs(llr - m0) ** 3) / (s0**3 * math.sqrt(n))
        if e0 >= alpha:
            continue
        t = n * m0 + s0 * math.sqrt(n) * stats.norm.ppf(1 - alpha + e0)
        reject = N @ llr > t
        level = np.exp(log_count + N @ np.log(u))[reject].sum()
        power = np.exp(log_count + N @ np.log(v))[reject].sum()
        assert level <= alpha and power >= 1 - _berry_esseen_miss(u, v, n, alpha)
        checked += 1


def test_data_set_ships_inside_the_package():
    "The default data file is a package resource (so an installed wheel has it), read by the default loader."
    import importlib.resources
    resource = importlib.resources.files("ldpbook").joinpath("data", "randhie_visits.csv")
    assert resource.is_file()
    assert load_health_visits(Path(str(resource))).visits.size == load_health_visits().visits.size == 20190


def test_numbers_in_the_exercise_solutions(monkeypatch):
    """The chapter's solutions quote numbers their code is not run for: the bootstrap quantiles of the RAND sample
    size at ε = 1 (est-ex-uncertain-n) and the lattice test's n against its number of levels R (est-ex-lattice)."""
    import ldpbook.estimated as est
    x0, x1 = load_health_visits().populations()
    p, q = np.bincount(x0, minlength=7) / x0.size, np.bincount(x1, minlength=7) / x1.size
    rng, sizes = np.random.default_rng(0), []
    for _ in range(200):
        b0, b1 = rng.choice(x0, x0.size), rng.choice(x1, x1.size)
        sizes.append(sample_size(np.bincount(b0, minlength=7) / b0.size, np.bincount(b1, minlength=7) / b1.size, 1.0))
    low, high = np.quantile(sizes, [0.1, 0.9])
    assert 820 <= low <= 860 and 1210 <= high <= 1250 and sample_size(p, q, 1.0) == 1050
    u, v = p @ randomized_response(7, 1.0), q @ randomized_response(7, 1.0)
    needed = {}
    for levels in (4, 8, 16, 32, 64, 128):
        def weights(u, v, n, levels=levels):
            llr = np.log(v) - np.log(u)
            return np.rint(levels * llr / np.abs(llr).max()).astype(np.int64)
        monkeypatch.setattr(est, "_lattice_weights", weights)
        needed[levels] = est._smallest(lambda n: est._lattice_miss(u, v, n, 0.05), 0.2 - 1e-9)[0]
    assert needed == {4: 3581, 8: 3545, 16: 3543, 32: 3539, 64: 3538, 128: 3538}


def test_bad_arguments_of_the_chapter_name_the_argument_and_the_rule():
    "Each public function refuses bad input by naming the argument and the rule, never with the data's values."
    x0, x1 = [0, 1, 1, 2, 3, 0], [3, 2, 2, 1, 3, 3]
    s, m0, m1 = np.array([0.1, 0.5, 0.9]), np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    cases = [
        (lambda: divergence_constants(math.nan), ValueError, "eps must not be NaN"),
        (lambda: divergence_constants(-1.0), ValueError, "eps must be non-negative"),
        (lambda: divergence_constants("0.5"), TypeError, "eps must be a real number"),
        (lambda: divergence_constants(1.0, divergence=[0.7123]), ValueError, "divergence kind"),
        (lambda: np_power([[0.7123], [0.2, 0.3]], m0, m1, 0.1), TypeError, "statistic"),
        (lambda: np_power([], [], [], 0.1), ValueError, "statistic must be a non-empty"),
        (lambda: np_power(s, [0.7123, -0.2, 0.5], m1, 0.1), ValueError, "mass0 must have non-negative"),
        (lambda: np_power(s, m0, [0.7123, 0.2], 0.1), ValueError, "mass1 must be a 1-D array of the length"),
        (lambda: np_power(s, m0, m1, 1.7123), ValueError, "alpha must lie in [0, 1]"),
        (lambda: plugin_optimal([[0], [1, 2]], x1, 1.0), TypeError, "x0"),
        (lambda: plugin_optimal(x0, [0.7123, 1.0], 1.0), TypeError, "x1"),
        (lambda: plugin_optimal(x0, x1, 1.0, k=10**9), ValueError, "k must be at most 1000000"),
        (lambda: plugin_optimal(x0, [3, 7123456], 1.0), ValueError, "symbols below 1000000"),
        (lambda: plugin_optimal(x0, x1, 1.0, k=3), ValueError, "symbols in [0, k)"),
        (lambda: sample_size([0.5, 0.5], [0.9, 0.1], 0.0), ValueError, "equal at this eps"),
        (lambda: load_health_visits(0.7123), TypeError, "path must be a str or a path-like object"),
    ]
    for call, error, words in cases:
        with pytest.raises(error) as info:
            call()
        assert words in str(info.value), (words, str(info.value))
        assert "7123" not in str(info.value)


def test_np_power_by_hand_and_the_certificate_at_eps_infinity():
    # the largest value 0.9 has mass 0.2 under H0: rejecting it with probability 0.1/0.2 gives power 0.5 · 0.5
    assert np_power(np.array([0.1, 0.5, 0.9]), np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5]), 0.1) == 0.25
    # ε = ∞: no uniform Lipschitz bound for KL, so the certificate is the vacuous limit of the finite-ε ones
    d = plugin_optimal([0, 1, 1, 2, 3, 0], [3, 2, 2, 1, 3, 3], math.inf, k=4)
    assert (d.lower_bound, d.upper_bound, d.regret_bound, d.margin) == (0.0, math.inf, math.inf, math.inf)
    # TV keeps finite constants at ε = ∞ (a_f = b_f = 1/2, tanh(∞) = 1): a finite certificate
    assert output_lipschitz(math.inf, divergence="tv") == (0.5, 0.5)
    d = plugin_optimal([0, 1, 1, 2, 3, 0], [3, 2, 2, 1, 3, 3], math.inf, k=4, divergence="tv")
    assert math.isfinite(d.upper_bound) and d.lower_bound <= d.estimate <= d.upper_bound


def test_sample_size_search_starts_at_the_data_processing_bound(monkeypatch):
    """No n below kl(α‖1 − β)/D(u‖v) can reach the power, so the search starts there: a pair that needs more than
    2^40 respondents is refused without one power evaluation, and the sizes found equal a search from n = 1."""
    import ldpbook.estimated as est
    calls = []
    real = est._binomial_miss
    monkeypatch.setattr(est, "_binomial_miss", lambda *a: calls.append(a[2]) or real(*a))
    with pytest.raises(ValueError, match="2\\^40"):
        est.sample_size([1.0, 0.0], [0.0, 1.0], 1e-6)
    assert calls == []
    for p, q, eps in (([0.6, 0.4], [0.4, 0.6], 0.3), ([0.9, 0.1], [0.2, 0.8], 1.0)):
        u, v = est._output_pair(np.array(p), np.array(q), eps, None)
        from_one = est._smallest(lambda n: real(u, v, n, 0.05), 0.2)[0]
        assert est.sample_size(p, q, eps) == from_one
        assert min(calls[-20:]) >= est._kl_lower_bound(u, v, 0.05, 0.2)


def binary_sample_size_mpmath(u1, v1, alpha, beta, near):
    "The smallest n whose 40-digit NP power reaches 1 − β, searched around `near` (power is non-decreasing in n)."
    n, target = near, 1 - mp.mpf(beta)
    while np_power_mpmath(u1, v1, n, alpha) < target:
        n += 1
    while n > 1 and np_power_mpmath(u1, v1, n - 1, alpha) >= target:
        n -= 1
    return n


@pytest.mark.parametrize("u1, v1, alpha, beta", [(0.3, 0.7, 0.05, 3e-15), (0.45, 0.55, 0.05, 1e-14),
                                                 (0.3, 0.7, 0.05, 3e-16), (0.3, 0.7, 1e-30, 1e-12)])
def test_two_output_sample_size_is_exact_for_tiny_beta(u1, v1, alpha, beta):
    """A type-II error of 1e-15 is below the spacing of float64 numbers near 1: the engine must sum the accepted
    H1 mass, not take 1 − power (which gave 129 for 130 and 2150 for 2152)."""
    p, q = np.array([1 - u1, u1]), np.array([1 - v1, v1])
    found = sample_size_details(p, q, math.inf, alpha=alpha, beta=beta, channel=np.eye(2))
    assert found.method == "binomial"
    assert found.n == binary_sample_size_mpmath(u1, v1, alpha, beta, found.n)


def test_beta_that_rounds_one_minus_beta_to_one_is_not_refused():
    "1 − 1e-20 == 1.0 in float64; the data-processing bound must not turn that into 'no sample size up to 2^40'."
    p, q = np.array([0.7, 0.3]), np.array([0.3, 0.7])
    found = sample_size_details(p, q, math.inf, alpha=0.05, beta=1e-20, channel=np.eye(2))
    assert found.n == binary_sample_size_mpmath(0.3, 0.7, 0.05, 1e-20, found.n)


def types_sample_size_by_enumeration(u, v, alpha, beta, near):
    "The smallest n whose NP power (types enumerated in mpmath, LR ties to 1e-25) reaches 1 − β, from `near` on."
    lu, lv = [mp.log(mp.mpf(x)) for x in u], [mp.log(mp.mpf(x)) for x in v]

    def miss(n):
        rows, log_factorial = [], [mp.loggamma(x + 1) for x in range(n + 1)]     # each log x! once: the same numbers
        for bars in itertools.combinations(range(n + len(u) - 1), len(u) - 1):
            ends = (-1, *bars, n + len(u) - 1)
            N = [ends[i + 1] - ends[i] - 1 for i in range(len(u))]
            log_count = log_factorial[n] - sum(log_factorial[x] for x in N)
            l0 = log_count + sum(x * a for x, a in zip(N, lu))
            l1 = log_count + sum(x * a for x, a in zip(N, lv))
            rows.append((l1 - l0, mp.exp(l0), mp.exp(l1)))
        rows.sort(key=lambda r: -r[0])
        size, rejected, i = mp.mpf(0), mp.mpf(0), 0
        while i < len(rows):
            j, m0, m1 = i, mp.mpf(0), mp.mpf(0)
            while j < len(rows) and abs(rows[j][0] - rows[i][0]) < mp.mpf(10) ** -25:
                m0, m1, j = m0 + rows[j][1], m1 + rows[j][2], j + 1
            if size + m0 > alpha:
                return 1 - rejected - (mp.mpf(alpha) - size) / m0 * m1
            size, rejected, i = size + m0, rejected + m1, j
        return mp.mpf(0)

    n = near
    while miss(n) > beta:
        n += 1
    while n > 1 and miss(n - 1) <= beta:
        n -= 1
    return n


@pytest.mark.parametrize("alpha, beta", [(1e-15, 0.2), (0.05, 1e-10)])
def test_multi_output_sample_size_for_tiny_alpha_or_beta(alpha, beta):
    """Below the FFT's round-off the lattice test cannot certify a level or a power: the old code answered 'no
    sample size up to 2^40 reaches the power' for a three-output pair that needs about 200 respondents."""
    p = np.array([0.05, 0.10, 0.20, 0.30, 0.25, 0.10])
    q = np.array([0.25, 0.25, 0.20, 0.15, 0.10, 0.05])
    Q = spr_channel(((0, 1), (2,), (3, 4, 5)), 6, 2.0)
    found = sample_size_details(p, q, 2.0, alpha=alpha, beta=beta, channel=Q)
    assert found.method == "types"
    mp.mp.dps = 50
    try:
        assert found.n == types_sample_size_by_enumeration(p @ Q, q @ Q, alpha, beta, found.n)
    finally:
        mp.mp.dps = 40


def test_tiny_alpha_beyond_the_types_is_refused_by_name():
    "Seven outputs at a tiny level: neither exact method applies, and the refusal names alpha and the rule."
    p = np.array([0.28, 0.19, 0.14, 0.10, 0.12, 0.11, 0.06])
    q = np.array([0.35, 0.19, 0.14, 0.09, 0.10, 0.08, 0.05])
    with pytest.raises(ValueError, match="alpha and beta below"):
        sample_size(p, q, 1.0, alpha=1e-12, channel=randomized_response(7, 1.0))


def test_output_impossible_under_one_hypothesis_at_large_n():
    """ε = ∞ and an output that only H1 produces, with probability 1e-6: rejecting when it appears (level 0)
    reaches power 0.8 at n = 1,609,438, so the answer is at most that — the old Berry–Esseen step took the mean of
    an infinite log-ratio (NaN) and refused with 'no sample size up to 2^40'."""
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.5 - 1e-6, 0.5, 1e-6])
    found = sample_size_details(p, q, math.inf, channel=np.eye(3))
    seen_once = math.ceil(math.log(0.2) / math.log1p(-1e-6))       # (1 − 1e-6)^n ≤ 0.2
    assert found.method == "berry-esseen" and found.lower_bound <= found.n <= seen_once


def test_np_power_refuses_ties_and_masses_that_are_not_probabilities():
    """Two equal values are one threshold value: randomizing it as a whole gives power 0.5 here, splitting the tie
    gave 0.2. Masses that do not sum to 1 have no level α to speak of."""
    s, m0, m1 = np.array([1.0, 1.0]), np.array([0.5, 0.5]), np.array([0.2, 0.8])
    with pytest.raises(ValueError, match="statistic must hold distinct values"):
        np_power(s, m0, m1, 0.5)
    assert np_power(np.array([1.0]), np.array([1.0]), np.array([1.0]), 0.5) == 0.5   # the tie merged
    with pytest.raises(ValueError, match="mass0 must sum to 1"):
        np_power(np.array([0.0, 1.0]), np.array([0.5, 0.7]), np.array([0.5, 0.5]), 0.1)
    with pytest.raises(ValueError, match="mass1 must sum to 1"):
        np_power(np.array([0.0, 1.0]), np.array([0.5, 0.5]), np.array([0.5, 0.4]), 0.1)


def test_certificate_needs_the_alphabet_fixed_in_advance():
    """The chapter's example: pilots of three draws from p = (0.9, 0.1), q = (0.99, 0.01) both show only symbol 0
    with probability 0.9³·0.99³ = 0.71; with k read off the pilot the certificate then claims an optimum of 0, with
    k = 2 given it covers (exact enumeration over the 2⁶ pilots)."""
    p, q, eps, confidence = np.array([0.9, 0.1]), np.array([0.99, 0.01]), 1.0, 0.9
    optimum = divergence_optimal(p, q, eps).value
    covered, inferred_fails = 0.0, 0.0
    for bits in itertools.product((0, 1), repeat=6):
        x0, x1 = np.array(bits[:3]), np.array(bits[3:])
        chance = np.prod(p[x0]) * np.prod(q[x1])
        d = plugin_optimal(x0, x1, eps, k=2, confidence=confidence)
        value = divergence(p @ d.mechanism.channel, q @ d.mechanism.channel)
        covered += chance * (d.lower_bound <= value and optimum <= d.upper_bound)
        with pytest.warns(DeprecationWarning, match="without k is deprecated"):
            inferred = plugin_optimal(x0, x1, eps, confidence=confidence)
        inferred_fails += chance * (inferred.upper_bound < optimum)
    assert covered >= confidence and abs(inferred_fails - 0.9**3 * 0.99**3) < 1e-12


# ---- Robust design over coordinate boxes (maximin_optimal) ----

def _box(center, width):
    return np.array([np.clip(center - width, 0, 1), np.clip(center + width, 0, 1)])


def _vertices(box):
    "Every vertex of {lo ≤ p ≤ hi} ∩ simplex, by enumeration: all coordinates at an end but one."
    lo, hi = box
    out = []
    for free in range(lo.size):
        others = [x for x in range(lo.size) if x != free]
        for ends in itertools.product((0, 1), repeat=lo.size - 1):
            p = np.empty(lo.size)
            p[others] = [hi[x] if e else lo[x] for x, e in zip(others, ends)]
            p[free] = 1 - p[others].sum()
            if lo[free] - 1e-12 <= p[free] <= hi[free] + 1e-12:
                out.append(p)
    return np.array(out)


def _vertex_maximin_tv(p_box, q_box, eps):
    "The maximin over binary channels with every pair of vertices as a cut, the eps-LDP constraints pairwise."
    D = np.array([p - q for p in _vertices(p_box) for q in _vertices(q_box)])
    k, e = D.shape[1], math.exp(eps)
    unit = np.eye(k + 1)
    rows = [r for x, y in itertools.permutations(range(k), 2) for r in (unit[x] - e * unit[y], e * unit[y] - unit[x])]
    A = np.vstack([np.array(rows), np.column_stack((-D, np.ones(len(D))))])
    b = np.concatenate([np.tile([0.0, e - 1], len(rows) // 2), np.zeros(len(D))])
    res = linprog(-unit[k], A_ub=A, b_ub=b, bounds=[(0, 1)] * k + [(None, None)])
    return -res.fun


def _separated_classes(ks, count, seed):
    "Random box classes that exclude p′ = q′ (the refused ones skipped), with the pair they are built around."
    rng, out = np.random.default_rng(seed), []
    while len(out) < count:
        k = int(rng.choice(ks))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        width = rng.uniform(0.005, 0.25)
        p_box, q_box = _box(p, width), _box(q, width)
        try:
            maximin_optimal(p_box, q_box, 1.0)
        except ValueError:
            continue
        out.append((p_box, q_box))
    return out


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
def test_maximin_tv_equals_the_vertex_program(eps):
    for p_box, q_box in _separated_classes((2, 3, 4), 12, seed=int(eps * 10)):
        design = maximin_optimal(p_box, q_box, eps)
        exact = _vertex_maximin_tv(p_box, q_box, eps)
        assert design.value == pytest.approx(exact, abs=1e-9) and design.upper_bound == pytest.approx(exact, abs=1e-9)
        assert is_ldp(design.channel, eps, rtol=0) and design.channel.shape == (p_box.shape[1], 2)


def _worst_tv_lp(Q, p_box, q_box):
    "min over the class of TV(Qᵀp′, Qᵀq′), for any channel: p′, q′ and the |·| of each output as slack variables."
    k, m = Q.shape
    n = 2 * k + m                                    # p′, q′, t
    A, b = [], []
    for y in range(m):                               # ±(Qᵀ(p′ − q′))_y ≤ t_y
        for s in (1, -1):
            row = np.zeros(n)
            row[:k], row[k:2 * k], row[2 * k + y] = s * Q[:, y], -s * Q[:, y], -1
            A.append(row)
            b.append(0.0)
    eq = np.zeros((2, n))
    eq[0, :k], eq[1, k:2 * k] = 1, 1
    c = np.concatenate([np.zeros(2 * k), 0.5 * np.ones(m)])
    bounds = [tuple(x) for x in p_box.T] + [tuple(x) for x in q_box.T] + [(0, None)] * m
    return linprog(c, A_ub=np.array(A), b_ub=b, A_eq=eq, b_eq=[1, 1], bounds=bounds).fun


def _random_ldp_channel(k, m, eps, rng):
    "A random eps-LDP channel: Q(y|x) ∝ θ_y e^{(eps/2) z_xy}, z in [0, 1] (the row sums differ by e^{eps/2} at most)."
    Q = rng.dirichlet(np.ones(m)) * np.exp(0.5 * eps * rng.random((k, m)))
    return Q / Q.sum(axis=1, keepdims=True)


def test_more_outputs_do_not_beat_the_binary_maximin_tv():
    "The theorem's second part, refuted by search if false: random and locally improved channels with 3-5 outputs."
    rng, eps, closest = np.random.default_rng(5), 1.0, -1.0
    for p_box, q_box in _separated_classes((3, 4, 5), 6, seed=11):
        design, k = maximin_optimal(p_box, q_box, eps), p_box.shape[1]
        v = design.channel[:, 1]
        assert _worst_tv_lp(design.channel, p_box, q_box) == pytest.approx(design.value, abs=1e-9)
        for m in (3, 4, 5):
            split = rng.dirichlet(np.ones(m - 1))
            Q = np.column_stack([1 - v] + [v * s for s in split])          # the optimum with outputs split
            best = _worst_tv_lp(Q, p_box, q_box)
            assert best == pytest.approx(design.value, abs=1e-9)
            for _ in range(60):                                            # a local search from there
                R = _random_ldp_channel(k, m, eps, rng)
                trial = (1 - 0.2) * Q + 0.2 * R if rng.random() < 0.5 else R
                value = _worst_tv_lp(trial, p_box, q_box)
                closest = max(closest, value - design.upper_bound)
                if value > best:
                    Q, best = trial, value
            assert best <= design.upper_bound + 1e-9
    assert closest > -0.05                     # the search came near the bound, not only far below it


def _mp_divergence(a, b, kind):
    a, b = mp.mpf(a), mp.mpf(b)
    if kind == "kl":
        term = lambda u, w: 0 if u == 0 else u * mp.log(u / w)
        return term(a, b) + term(1 - a, 1 - b)
    return (mp.sqrt(a) - mp.sqrt(b)) ** 2 + (mp.sqrt(1 - a) - mp.sqrt(1 - b)) ** 2     # hellinger: Σ (√u − √v)²


@pytest.mark.parametrize("kind", ["kl", "hellinger"])
def test_the_worst_case_of_a_channel_against_a_grid_in_mpmath(kind):
    "The corner rule of part 1: no point of a 41 × 41 grid over the two means' rectangle is lower than its value."
    rng, separated = np.random.default_rng(21), 0
    for p_box, q_box in _separated_classes((3, 4), 6, seed=3):
        for _ in range(4):
            v = rng.uniform(0.27, 0.73, p_box.shape[1])                   # eps-LDP at eps = 1
            value = _worst_case(v, p_box, q_box, kind)[0]
            means = [[float(x @ v) for x in _vertices(box)] for box in (p_box, q_box)]
            grid = [np.linspace(min(m), max(m), 41) for m in means]
            least = min(_mp_divergence(a, b, kind) for a in grid[0] for b in grid[1])
            if max(min(means[0]), min(means[1])) <= min(max(means[0]), max(means[1])):
                assert value == 0.0                     # the means can meet: D(c, c) = 0
            else:                                       # the grid holds the corners: nothing below the nearest
                assert value == pytest.approx(float(least), rel=1e-9, abs=1e-15)
                separated += 1
    assert separated >= 8


@pytest.mark.parametrize("kind, params", [("kl", {}), ("hellinger", {}), ("renyi", {"renyi_order": 2.0}),
                                          ("chi2", {}), ("egamma", {"gamma": 0.8})])
def test_the_certified_search_brackets_every_binary_channel(kind, params):
    "No binary channel — random, threshold (SPR) or near the optimum — has a worst case above the upper bound."
    rng = np.random.default_rng(8)
    lo, hi = randomized_response(2, 1.0)[1, 0], randomized_response(2, 1.0)[0, 0]
    for p_box, q_box in _separated_classes((3, 4, 6), 5, seed=4):
        design, k = maximin_optimal(p_box, q_box, 1.0, divergence=kind, **params), p_box.shape[1]
        assert design.value <= design.upper_bound and design.upper_bound - design.value <= 1e-4 * design.value
        assert is_ldp(design.channel, 1.0, rtol=0)
        assert _worst_case(design.channel[:, 1], p_box, q_box, kind, **params)[0] == design.value
        candidates = [np.where(np.array(bits), hi, lo) for bits in itertools.product((0, 1), repeat=k)]
        candidates += [rng.uniform(lo, hi, k) for _ in range(40)]
        candidates += [np.clip(design.channel[:, 1] + rng.normal(0, 0.01, k), lo, hi) for _ in range(40)]
        for v in candidates:
            assert _worst_case(v, p_box, q_box, kind, **params)[0] <= design.upper_bound * (1 + 1e-9)


def test_the_search_for_kl_agrees_with_a_fine_scan_of_its_one_variable():
    "max over β of KL(α*(β), β) by 250 programs, against the search's bracket (its 1e-4 gap)."
    from ldpbook.estimated import _maximin_lp
    for p_box, q_box in _separated_classes((4, 5), 3, seed=9):
        design = maximin_optimal(p_box, q_box, 1.0, divergence="kl")
        floor, top = _maximin_lp(p_box, q_box, 1.0, "least")[0], _maximin_lp(p_box, q_box, 1.0, "low", beta=1.0)[0]
        scan = 0.0
        for beta in np.linspace(floor + 1e-9, top, 250):
            alpha = _maximin_lp(p_box, q_box, 1.0, "low", beta=beta)[0]
            if alpha is not None and alpha > beta:
                scan = max(scan, float(_mp_divergence(alpha, beta, "kl")))
        assert design.value * (1 - 1e-6) <= design.upper_bound and scan <= design.upper_bound * (1 + 1e-7)
        assert scan >= design.value * (1 - 1e-2)      # the scan's grid comes within 1% of the channel found


def test_weakening_the_tangent_bound_is_caught():
    "A bound from the tangents with the slopes halved undercuts a real channel's worst case: the test above bites."
    import ldpbook.estimated as est
    original = est._maximin_lp

    def halved(*args, **kwargs):
        value, v, slope = original(*args, **kwargs)
        return value, v, None if slope is None else 0.5 * slope
    p_box, q_box = _separated_classes((5,), 1, seed=2)[0]
    honest = maximin_optimal(p_box, q_box, 1.0, divergence="kl")
    est._maximin_lp = halved
    try:
        weak = maximin_optimal(p_box, q_box, 1.0, divergence="kl", rtol=1e-3)
    finally:
        est._maximin_lp = original
    assert weak.upper_bound < honest.value          # a channel found beats the weakened "upper bound"


@pytest.mark.parametrize("eps", [1e-12, 1e-3, 0.5, 5.0, 30.0, 700.0])
def test_the_maximin_channel_is_exactly_private_at_every_eps(eps):
    p_box, q_box = _box(np.array([0.5, 0.3, 0.2]), 0.02), _box(np.array([0.1, 0.3, 0.6]), 0.02)
    for kind in ("tv", "kl"):
        design = maximin_optimal(p_box, q_box, eps, divergence=kind, max_lps=40)
        Q = design.channel
        assert is_ldp(Q, eps, rtol=0) and design.eps == eps
        for y in range(2):                                   # and in mpmath: max ≤ e^ε min, column by column
            assert mp.mpf(float(Q[:, y].max())) <= mp.exp(eps) * mp.mpf(float(Q[:, y].min()))
        assert np.allclose(Q.sum(axis=1), 1) and design.value <= design.upper_bound * (1 + 1e-9) + 1e-15
        p, q = design.p_worst, design.q_worst
        assert np.all(p >= p_box[0] - 1e-15) and np.all(p <= p_box[1] + 1e-15) and abs(p.sum() - 1) < 1e-12
        assert np.all(q >= q_box[0] - 1e-15) and np.all(q <= q_box[1] + 1e-15) and abs(q.sum() - 1) < 1e-12
    assert maximin_optimal(p_box, q_box, 0.0).value == 0.0


def test_the_refusal_is_exactly_the_class_with_equal_laws():
    "Part 1: refused exactly when a law lies in both boxes (a feasibility program), never otherwise."
    rng = np.random.default_rng(13)
    accepted = refused = 0
    for _ in range(200):
        k = int(rng.integers(2, 6))
        p_box, q_box = _box(rng.dirichlet(np.ones(k)), rng.uniform(0, 0.4)), _box(rng.dirichlet(np.ones(k)),
                                                                                    rng.uniform(0, 0.4))
        both = np.array([np.maximum(p_box[0], q_box[0]), np.minimum(p_box[1], q_box[1])])
        common = np.all(both[0] <= both[1]) and linprog(np.zeros(k), A_eq=np.ones((1, k)), b_eq=[1],
                                                       bounds=list(zip(both[0], both[1]))).status == 0
        if common:
            with pytest.raises(ValueError, match="p_box, q_box: the boxes meet inside the simplex"):
                maximin_optimal(p_box, q_box, 1.0)
            refused += 1
        else:
            assert maximin_optimal(p_box, q_box, 1.0).value > 0
            accepted += 1
    assert accepted > 20 and refused > 20
    # overlapping in every coordinate, yet separated by the sums: accepted
    p_box = np.array([[0.3, 0.3, 0.0], [0.5, 0.5, 0.2]])
    q_box = np.array([[0.0, 0.0, 0.5], [0.35, 0.35, 0.9]])
    assert maximin_optimal(p_box, q_box, 1.0).value > 0


SECRET = 0.123456789


@pytest.mark.parametrize("args, kwargs, error, match", [
    (([[0.1, 0.2], [0.5, 0.9], [0.1, 0.1]], [[0.5, 0.1], [0.9, 0.5]], 1.0), {}, ValueError, "p_box must have shape"),
    (([0.1, 0.9], [[0.5, 0.1], [0.9, 0.5]], 1.0), {}, ValueError, "p_box must be a 2-D array"),
    (([[0.6, 0.1], [0.5, 0.5]], [[0.5, 0.1], [0.9, 0.5]], 1.0), {}, ValueError, "p_box must satisfy 0 ≤ lower"),
    (([[-0.1, 0.1], [0.5, 0.9]], [[0.5, 0.1], [0.9, 0.5]], 1.0), {}, ValueError, "p_box must satisfy 0 ≤ lower"),
    (([[0.1, 0.1], [0.5, 0.4]], [[0.5, 0.1], [0.9, 0.5]], 1.0), {}, ValueError, "p_box holds no probability"),
    (([[0.0, 0.5], [0.2, 1.0]], [[0.6, 0.6], [0.9, 0.9]], 1.0), {}, ValueError, "q_box holds no probability"),
    (([[0.0, 0.6], [0.4, 1.0]], [[0.6, 0.0, 0.0], [1.0, 0.4, 0.1]], 1.0), {}, ValueError, "same number of symbols"),
    (([[0.0, 0.5], [0.5, 1.0]], [[0.4, 0.0], [1.0, 0.6]], 1.0), {}, ValueError, "the boxes meet"),
    (([[np.nan, 0.6], [0.4, 1.0]], [[0.6, 0.0], [1.0, 0.4]], 1.0), {}, ValueError, "p_box must hold finite"),
    (([["a", 0.6], [0.4, 1.0]], [[0.6, 0.0], [1.0, 0.4]], 1.0), {}, TypeError, "p_box"),
    (([[0.0, 0.6], [0.4, 1.0]], [[0.6, 0.0], [1.0, 0.4]], -1.0), {}, ValueError, "eps"),
    (([[0.0, 0.6], [0.4, 1.0]], [[0.6, 0.0], [1.0, 0.4]], math.inf), {}, ValueError, "eps"),
    (([[0.0, 0.6], [0.4, 1.0]], [[0.6, 0.0], [1.0, 0.4]], 1.0), {"rtol": 0.0}, ValueError, "rtol"),
    (([[0.0, 0.6], [0.4, 1.0]], [[0.6, 0.0], [1.0, 0.4]], 1.0), {"max_lps": 2}, ValueError, "max_lps"),
    (([[0.0, 0.6], [0.4, 1.0]], [[0.6, 0.0], [1.0, 0.4]], 1.0), {"max_lps": 5.5}, TypeError, "max_lps"),
    (([[0.0, 0.6], [0.4, 1.0]], [[0.6, 0.0], [1.0, 0.4]], 1.0), {"divergence": "kl2"}, ValueError, "divergence"),
    (([[0.0, 0.6], [0.4, 1.0]], [[0.6, 0.0], [1.0, 0.4]], 1.0), {"divergence": "renyi"}, ValueError, "renyi_order"),
])
def test_maximin_optimal_refuses_bad_input(args, kwargs, error, match):
    with pytest.raises(error, match=match) as caught:
        maximin_optimal(*args, **kwargs)
    assert str(SECRET)[:6] not in str(caught.value)


def test_a_box_message_never_shows_the_data():
    with pytest.raises(ValueError) as caught:
        maximin_optimal([[SECRET, 0.6], [0.1, 1.0]], [[0.6, 0.0], [1.0, SECRET]], 1.0)
    assert "1234" not in str(caught.value)


def test_the_maximin_design_releases_through_its_channel_and_round_trips():
    from ldpbook.foundations import from_json
    design = maximin_optimal([[0.0, 0.6], [0.4, 1.0]], [[0.6, 0.0], [1.0, 0.4]], 1.0, divergence="kl")
    loaded = from_json(design.to_json())
    assert np.array_equal(loaded.channel, design.channel) and loaded.value == design.value
    x = np.repeat([0, 1], 20000)
    y = design.sample(x, rng=3)
    assert design.num_outputs == 2 and set(np.unique(y)) <= {0, 1}
    for s in (0, 1):
        assert abs(y[x == s].mean() - design.channel[s, 1]) < 0.015


def test_the_search_keeps_to_its_budget_and_says_how_wide_it_left_the_gap():
    p_box, q_box = _separated_classes((5,), 1, seed=2)[0]
    full = maximin_optimal(p_box, q_box, 1.0, divergence="kl")
    for budget in (3, 5, 8):
        short = maximin_optimal(p_box, q_box, 1.0, divergence="kl", max_lps=budget)
        assert short.linear_programs <= budget
        assert short.value <= full.upper_bound * (1 + 1e-9) and short.upper_bound >= full.value * (1 - 1e-9)
    assert maximin_optimal(p_box, q_box, 1.0, divergence="kl", max_lps=3).upper_bound > full.upper_bound * 1.01
