"""Exactness at the edges, against an independent arbitrary-precision reference (issue: exact at the edges).

The reference works on the float inputs as exact rationals (`fractions.Fraction`): it sorts the symbols by
their exact likelihood ratio, enumerates every contiguous partition (and, for small k, every set partition),
sums each block's masses exactly and evaluates the block score with mpmath at 80 digits or more (enough digits
that the cancellation inside φ(t) near t = 0 costs nothing). It shares no code with the library: no DP, no
score formula, no prefix sums.

Definition evaluated (the library's, see nbs/00_foundations.ipynb, "Exact in floating point"): for smooth f the linear-free
f̄(t) = f(t) − f'(1)(t − 1), for TV and E_γ f itself; Rényi is log S/(α − 1) with S = 1 + (α − 1)·H̄ when
|(α − 1)H̄| ≤ 1/2 and S = Σ u^α v^{1−α}/D otherwise. For inputs that sum to 1 exactly these are all D_f.

The CI part draws a few hundred edge instances per divergence; set LDPBOOK_LONG_EXACT=1 for a longer sweep.
"""
import itertools
import math
import os
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from ldpbook.foundations import LinearFree, divergence, perspective, privacy_defect
from ldpbook.spr import (binary_mechanism, divergence_optimal, divergence_optimal_values, kov_lp,
                         randomized_response_mechanism)
from brute_force import set_partitions as _set_partitions

LONG = os.environ.get("LDPBOOK_LONG_EXACT") == "1"
N_INSTANCES = 2000 if LONG else 200
BASE_DPS = 80
RTOL = 1e-9


def tri(t):
    "Triangular discrimination f(t) = (t − 1)²/(t + 1): a callable f that works on floats and on mpf."
    return (t - 1) / (t + 1) * (t - 1)


# ---------------------------------------------------------------- the reference

class Ref:
    "Exact block scores of one instance (p, q, ε, divergence) with exact rational masses."

    def __init__(self, p, q, eps, kind, params):
        self.p = [Fraction(float(x)) for x in p]
        self.q = [Fraction(float(x)) for x in q]
        self.kind, self.params = kind, params
        self.gamma = Fraction(float(params.get("gamma", 1.0)))
        with mpmath.workdps(BASE_DPS):
            if eps == math.inf:
                self.w, self.c = mpmath.mpf(0), mpmath.mpf(1)
            else:
                self.w = mpmath.exp(-mpmath.mpf(eps))
                self.c = -mpmath.expm1(-mpmath.mpf(eps))
        self.cache = {}

    def masses(self, block):
        P = sum((self.p[x] for x in block), Fraction(0))
        Q = sum((self.q[x] for x in block), Fraction(0))
        return P, Q

    def score(self, block):
        "Exact score of one block (a frozenset of symbols): an mpf, or +inf."
        key = frozenset(block)
        if key not in self.cache:
            self.cache[key] = self._score(*self.masses(key))
        return self.cache[key]

    def _score(self, P, Q):
        kind, w, c = self.kind, self.w, self.c
        with mpmath.workdps(BASE_DPS):
            u, v = w + c * mpmath.mpf(P), w + c * mpmath.mpf(Q)
            if kind == "egamma":
                return self._egamma(P, Q)
            delta = c * mpmath.mpf(P - Q)                     # exact difference, then 80 digits
            if kind == "tv":
                return abs(delta) / 2
            if kind == "chi2":
                return delta ** 2 / v if v > 0 else (mpmath.inf if u > 0 else mpmath.mpf(0))
            if kind == "hellinger":
                return delta ** 2 / (mpmath.sqrt(u) + mpmath.sqrt(v)) ** 2 if u + v > 0 else mpmath.mpf(0)
            if v == 0:
                if u == 0:
                    return mpmath.mpf(0)
                if kind == "renyi" and self.params["renyi_order"] < 1:
                    a = mpmath.mpf(self.params["renyi_order"])
                    return a * u / (1 - a)
                if callable(kind):
                    return u * 1                                  # tri: f'(∞) = 1, f'(1) = 0
                return mpmath.inf
            t, r = delta / v, u / v                           # r = 1 + t, kept separately: t may be ≈ −1
        digits = BASE_DPS + (int(-mpmath.log10(abs(t))) + 5 if 0 < abs(t) < 1 else 0)
        with mpmath.workdps(digits):                            # enough digits for the cancellation at t ≈ 0
            t, r = +t, (1 + t if abs(t) < mpmath.mpf(1) / 2 else +r)
            if kind == "kl":
                body = r * mpmath.log(r) - t if r > 0 else mpmath.mpf(1)
            elif kind == "renyi":
                a = mpmath.mpf(self.params["renyi_order"])
                body = (r ** a - 1 - a * t) / (a - 1)
            else:
                body = tri(r)
            return +(v * body)

    def _egamma(self, P, Q):
        for digits in (BASE_DPS, 800):
            with mpmath.workdps(digits):
                w, c = (self.w, self.c) if digits == BASE_DPS else self._wc(digits)
                x = w * (1 - mpmath.mpf(self.gamma)) + c * mpmath.mpf(P - self.gamma * Q)
                scale = w * abs(1 - mpmath.mpf(self.gamma)) + c * abs(mpmath.mpf(P - self.gamma * Q))
                if abs(x) > mpmath.mpf(10) ** (-BASE_DPS + 20) * scale:
                    return max(x, mpmath.mpf(0))
        return max(x, mpmath.mpf(0))

    def _wc(self, digits):
        eps = self.eps_float
        if eps == math.inf:
            return mpmath.mpf(0), mpmath.mpf(1)
        return mpmath.exp(-mpmath.mpf(eps)), -mpmath.expm1(-mpmath.mpf(eps))

    def value(self, blocks):
        "Exact value of a partition (a list of blocks covering the support)."
        s = len(blocks)
        with mpmath.workdps(BASE_DPS):
            denom = 1 + (s - 1) * self.w
            scores = [self.score(b) for b in blocks]
            if any(mpmath.isinf(x) for x in scores):
                return mpmath.inf
            total = mpmath.fsum(scores) / denom
            if self.kind != "renyi":
                return total
            a = mpmath.mpf(self.params["renyi_order"])
            x = (a - 1) * total
            if abs(x) <= mpmath.mpf(1) / 2:
                return mpmath.log1p(x) / (a - 1)
            cross = mpmath.fsum(self._cross(b, a) for b in blocks) / denom
            return mpmath.log(cross) / (a - 1) if cross > 0 else mpmath.inf

    def _cross(self, block, a):
        P, Q = self.masses(frozenset(block))
        u, v = self.w + self.c * mpmath.mpf(P), self.w + self.c * mpmath.mpf(Q)
        if u == 0:
            return mpmath.mpf(0)
        if v == 0:
            return mpmath.inf if a > 1 else mpmath.mpf(0)
        return u ** a * v ** (1 - a)


def reference_optimum(p, q, eps, kind, params, set_partitions=False):
    "max over contiguous partitions of the exactly sorted support (and, optionally, over all set partitions)."
    ref = Ref(p, q, eps, kind, params)
    ref.eps_float = eps
    support = [x for x in range(len(p)) if ref.p[x] + ref.q[x] > 0]
    order = sorted(support, key=lambda x: ref.p[x] / (ref.p[x] + ref.q[x]))
    best = None
    n = len(order)
    for mask in range(2 ** max(n - 1, 0)):
        cuts = [0] + [i + 1 for i in range(n - 1) if mask >> i & 1] + [n]
        blocks = [order[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
        val = ref.value(blocks)
        best = val if best is None or val > best else best
    if set_partitions:
        best_set = max(ref.value(blocks) for blocks in _set_partitions(support))
        assert _close(best_set, best, 1e-20), "a set partition beats every contiguous partition"
    return best, ref


def _close(got, ref, rtol=RTOL):
    "got within rtol of ref (relative), or both infinite, or |got| ≤ 1e-300 when ref = 0."
    if mpmath.isinf(ref) or abs(ref) > 1.7e308 or (isinstance(got, float) and math.isinf(got)):
        ref = mpmath.inf if abs(ref) > 1.7e308 else ref                # beyond the float range: inf
        return mpmath.isinf(ref) and math.isinf(float(got)) and float(got) > 0
    ref = mpmath.mpf(ref)
    if ref == 0:
        return abs(got) <= 1e-300
    return abs(mpmath.mpf(got) - ref) <= rtol * abs(ref) + mpmath.mpf(10) ** -300


# ---------------------------------------------------------------- instance generator

KINDS = [("tv", {}), ("kl", {}), ("chi2", {}), ("hellinger", {}), ("egamma", None), ("renyi-low", None),
         ("renyi-high", None), ("callable", {})]
KIND_IDS = [k for k, _ in KINDS]


def draw_kind(rng, name):
    if name == "egamma":
        return "egamma", {"gamma": float(rng.choice([0.0, rng.uniform(0, 1), 1.0, 10 ** rng.uniform(0, 6)]))}
    if name == "renyi-low":
        return "renyi", {"renyi_order": float(rng.choice([rng.uniform(0.001, 1), 1 - 10 ** rng.uniform(-9, -1)]))}
    if name == "renyi-high":
        return "renyi", {"renyi_order": float(rng.choice([1 + 10 ** rng.uniform(-9, 0), 10 ** rng.uniform(0.1, 3)]))}
    if name == "callable":
        return tri, {"f_slope_at_inf": 1.0}
    return name, {}


def draw_eps(rng, name):
    if rng.random() < 0.12:
        return math.inf
    if rng.random() < 0.05:                                    # the values-only path: any finite ε
        return float(10 ** rng.uniform(math.log10(710), 6))
    lo = -4 if name == "callable" else -12                      # a black-box f cannot resolve u/v − 1 < 1e-12
    return float(10 ** rng.uniform(lo, math.log10(700)))


def _sparse_dirichlet(rng, k):
    "Dirichlet(0.1); its draws can underflow to all zeros (NaN), then one symbol takes all the mass."
    with np.errstate(invalid="ignore", divide="ignore"):
        x = rng.dirichlet(np.full(k, 0.1))
    if not np.all(np.isfinite(x)) or x.sum() == 0:
        x = np.zeros(k)
        x[rng.integers(k)] = 1.0
    return x


def draw_pair(rng, name):
    """Edge pairs: sparse Dirichlet(0.1) floored at 1e-300, exact zeros, tiny-mass differences, ties."""
    k = int(rng.integers(2, 8))
    style = rng.choice(["sparse", "tiny", "ties", "plain"], p=[0.45, 0.25, 0.15, 0.15])
    if name == "callable":                     # a black box f at the float u/v: exact only where u/v − 1 is resolved
        style = "plain"
    p, q = _sparse_dirichlet(rng, k), _sparse_dirichlet(rng, k)
    if style == "plain":
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    if style in ("sparse", "ties"):
        p, q = np.maximum(p, 1e-300), np.maximum(q, 1e-300)
        for arr in (p, q):
            if rng.random() < 0.4:
                arr[rng.integers(k)] = 0.0
        if rng.random() < 0.15:
            j = rng.integers(k)
            p[j] = q[j] = 0.0
    if style == "tiny":                                        # q differs from p only by tiny masses
        q = p.copy()
        for _ in range(int(rng.integers(1, 3))):
            i, j = rng.choice(k, 2, replace=False)
            t = 10 ** rng.uniform(-300, -8)
            q[i] += t
            q[j] = max(q[j] - t, 0.0)
        if rng.random() < 0.3:
            p[rng.integers(k)] = 10 ** rng.uniform(-300, -20)
    if style == "ties" and k >= 3:                             # exact ties: powers of two keep them exact
        q[1] = q[0] * p[1] / p[0] if p[0] > 0 and q[0] > 0 else q[1]
        p[2], q[2] = p[0] / 4, q[0] / 4
    for arr in (p, q):
        if arr.sum() == 0:
            arr[rng.integers(k)] = 1.0
    if p.sum() <= 0.5 or q.sum() <= 0.5 or abs(p.sum() - 1) > 1e-10 or abs(q.sum() - 1) > 1e-10:
        p, q = p / p.sum(), q / q.sum()
    return p, q


def instances(name, n, seed):
    rng = np.random.default_rng([seed, KIND_IDS.index(name)])
    for _ in range(n):
        kind, params = draw_kind(rng, name)
        yield draw_pair(rng, name), draw_eps(rng, name), kind, params


# ---------------------------------------------------------------- the tests

def blocks_of(mech):
    return [list(b) for b in mech.partition]


@pytest.mark.parametrize("name", KIND_IDS)
def test_divergence_optimal_is_exact_on_edge_instances(name):
    failures = []
    for n, ((p, q), eps, kind, params) in enumerate(instances(name, N_INSTANCES, 12)):
        best, ref = reference_optimum(p, q, eps, kind, params, set_partitions=(n % 10 == 0))
        can_store = not (708.4 < eps < math.inf)
        if can_store:
            mech = divergence_optimal(p, q, eps, divergence=kind, **params)
            value = mech.value
            support_blocks = [[x for x in b if ref.p[x] + ref.q[x] > 0] for b in blocks_of(mech)]
            support_blocks = [b for b in support_blocks if b]
            achieved = ref.value(support_blocks)
            checks = {"value": _close(value, best), "partition": _close(achieved, best),
                      "nonnegative": value >= 0}
        else:
            value, checks = None, {}
        batch = divergence_optimal_values(p[None], q[None], [eps], divergence=kind, **params)[0, 0]
        checks["optimal_values"] = _close(batch, best) and (value is None or _close(batch, value, 1e-12))
        if not all(checks.values()):
            failures.append((n, name, eps, params, [c for c, ok in checks.items() if not ok],
                             float(best), value, float(batch)))
    assert not failures, f"{len(failures)} failures, first: {failures[:3]}"


@pytest.mark.parametrize("name", ["kl", "chi2", "renyi-high", "egamma"])
def test_channel_achieves_the_value(name):
    """D_f of the returned float channel, evaluated exactly, equals the value — up to what storing the channel
    in floats allows: its entries e^ε/(e^ε+s−1) carry 1e-16 relative error, which moves D_f by about 1e-15/c."""
    for (p, q), eps, kind, params in itertools.islice(instances(name, 60, 7), 60):
        if 708.4 < eps < math.inf:
            continue
        mech = divergence_optimal(p, q, eps, divergence=kind, **params)
        Q = [[Fraction(float(x)) for x in row] for row in mech.channel]
        P0 = [Fraction(float(x)) for x in p]
        P1 = [Fraction(float(x)) for x in q]
        s = mech.channel.shape[1]
        out0 = [sum(P0[x] * Q[x][j] for x in range(len(p))) for j in range(s)]
        out1 = [sum(P1[x] * Q[x][j] for x in range(len(p))) for j in range(s)]
        ref = Ref([1.0] * s, [1.0] * s, math.inf, kind, params)     # w = 0, c = 1: plain outputs
        ref.eps_float = math.inf
        ref.p, ref.q = out0, out1
        got = ref.value([[j] for j in range(s)])
        c = 1.0 if eps == math.inf else -math.expm1(-eps)
        # below 1e-15 the float channel cannot tell: its outputs also carry lo·(Σp − Σq), the inputs' last bit
        assert _close(mech.value, got, max(RTOL, 1e-14 / c)) or abs(mech.value - float(got)) <= 1e-15, (eps, params)


@pytest.mark.parametrize("name", ["kl", "tv", "hellinger", "renyi-low", "renyi-high", "egamma", "chi2"])
def test_fixed_partition_mechanisms_are_exact(name):
    for (p, q), eps, kind, params in instances(name, 80, 3):
        if 708.4 < eps < math.inf:
            continue
        ref = Ref(p, q, eps, kind, params)
        ref.eps_float = eps
        for mech in (binary_mechanism(p, q, eps, divergence=kind, **params),
                     randomized_response_mechanism(p, q, eps, divergence=kind, **params)):
            blocks_all = [list(b) for b in mech.partition]
            exact = ref.value(blocks_all)
            assert _close(mech.value, exact), (eps, params, mech.partition, mech.value, float(exact))
            assert mech.value >= 0


@pytest.mark.parametrize("name", ["kl", "tv", "chi2", "hellinger", "renyi-low", "renyi-high", "egamma"])
def test_divergence_is_exact(name):
    for (p, q), _, kind, params in instances(name, 150, 5):
        ref = Ref(p, q, math.inf, kind, params)
        ref.eps_float = math.inf
        exact = ref.value([[x] for x in range(p.size)])
        got = divergence(p, q, kind=kind, **params)
        assert got >= 0 and _close(got, exact), (params, got, float(exact))


def test_privacy_defect_is_exact():
    rng = np.random.default_rng(4)
    for _ in range(60):
        k, m = int(rng.integers(2, 6)), int(rng.integers(2, 6))
        Q = rng.dirichlet(np.full(m, 0.3), size=k)
        Q = np.maximum(Q, 1e-300)
        Q /= Q.sum(axis=1, keepdims=True)
        eps = float(10 ** rng.uniform(-12, math.log10(700)))
        D = privacy_defect(Q, eps)
        with mpmath.workdps(60):
            e = mpmath.exp(mpmath.mpf(eps))
            for x in range(k):
                for y in range(k):
                    exact = mpmath.fsum(max(mpmath.mpf(Q[x, j]) - e * mpmath.mpf(Q[y, j]), 0) for j in range(m))
                    assert _close(float(D[x, y]), exact), (eps, x, y)


@pytest.mark.parametrize("name", ["kl", "hellinger", "renyi-high", "tv"])
def test_kov_lp_agrees_with_the_reference(name):
    """The LP is exact to its certified dual gap (1e-9) on instances whose masses are not tiny: its
    tolerances are absolute, so masses far below them are outside its domain."""
    rng = np.random.default_rng([9, KIND_IDS.index(name)])
    for _ in range(12):
        k = int(rng.integers(2, 6))
        p, q = rng.dirichlet(np.full(k, 0.5)), rng.dirichlet(np.full(k, 0.5))
        eps = float(10 ** rng.uniform(-6, 1.3))
        kind, params = draw_kind(rng, name) if name != "renyi-high" else ("renyi", {"renyi_order": 3.0})
        best, _ = reference_optimum(p, q, eps, kind, params)
        assert _close(kov_lp(p, q, eps, divergence=kind, **params).value, best, 2e-9), (eps, params)


@pytest.mark.parametrize("k", [1000] + ([10_000] if LONG else []))
@pytest.mark.parametrize("name", ["kl", "renyi-low", "hellinger"])
def test_large_partition_admits_no_improving_single_boundary_move(k, name):
    """At k = 10³ (10⁴ in the long run) no exact single-boundary move — shift a boundary by one symbol, remove
    it, or split a block in two — improves the returned partition."""
    rng = np.random.default_rng([k, KIND_IDS.index(name)])
    p, q = rng.dirichlet(np.full(k, 0.3)), rng.dirichlet(np.full(k, 0.3))
    p[rng.integers(k, size=5)] = 1e-200
    p /= p.sum()
    eps = 2.0 if name != "hellinger" else 0.05
    kind, params = ("renyi", {"renyi_order": 0.4}) if name == "renyi-low" else (name, {})
    mech = divergence_optimal(p, q, eps, divergence=kind, **params)
    ref = Ref(p, q, eps, kind, params)
    ref.eps_float = eps
    order = [x for b in mech.partition for x in b]
    bounds = np.cumsum([0] + [len(b) for b in mech.partition])
    base = ref.value([order[a:b] for a, b in zip(bounds[:-1], bounds[1:])])
    assert _close(mech.value, base)
    step = max(1, k // 200)                                  # splits on a grid; every boundary is moved
    candidates = []
    for j in range(1, len(bounds) - 1):
        for shift in (-1, 1):
            new = bounds.copy()
            new[j] += shift
            if new[j - 1] < new[j] < new[j + 1]:
                candidates.append(new)
        candidates.append(np.delete(bounds, j))
    for j in range(len(bounds) - 1):
        for cut in range(bounds[j] + 1, bounds[j + 1], step):
            candidates.append(np.sort(np.append(bounds, cut)))
    for new in candidates:
        val = ref.value([order[a:b] for a, b in zip(new[:-1], new[1:])])
        assert val <= base * (1 + mpmath.mpf(RTOL)), "a single-boundary move improves the partition"


# ---------------------------------------------------------------- a user's f given exactly: LinearFree

def _phi_kl(d):
    "KL's φ(t) = (1 + t) log1p(t) − t, by its Taylor series Σ_{n≥2} (−t)^n/(n(n−1)) near 0 (no cancellation)."
    if abs(d) < 0.01:
        return sum((-d) ** n / (n * (n - 1)) for n in range(2, 12))
    return (1 + d) * math.log1p(d) - d if d > -1 else 1.0


# name: (LinearFree, the reference kind it must equal, its reference parameters)
LINEAR_FREE = {
    "lf-kl": (LinearFree(_phi_kl, name="KL"), "kl", {}),
    "lf-chi2": (LinearFree(lambda d: d * d, name="chi2"), "chi2", {}),
    "lf-tri": (LinearFree(lambda d: d * d / (2 + d), slope_at_inf=1.0, name="triangular"), tri, {}),
}


def linear_free_instances(name, n, seed):
    "The built-in kinds' edge generator (masses to 1e-300, zeros, tiny differences, ε in [1e-12, 700] ∪ {∞})."
    rng = np.random.default_rng([seed, 100 + sorted(LINEAR_FREE).index(name)])
    for _ in range(n):
        yield draw_pair(rng, "kl"), draw_eps(rng, "kl")


def beyond_float_range(name, eps):
    """Whether a LinearFree with φ'(∞) = ∞ may need φ beyond the float range at this ε: at a block of zero q-mass,
    t = u/v − 1 reaches e^ε, and φ(t) = t² overflows above ε ≈ 354, t·log t above ε ≈ 708 (as u/v itself does)."""
    return math.isinf(LINEAR_FREE[name][0].slope_at_inf) and (354 if name == "lf-chi2" else 708) < eps < math.inf


@pytest.mark.parametrize("name", sorted(LINEAR_FREE))
def test_linear_free_is_exact_on_edge_instances(name):
    lf, ref_kind, ref_params = LINEAR_FREE[name]
    failures = []
    for n, ((p, q), eps) in enumerate(linear_free_instances(name, 100, 21)):
        best, ref = reference_optimum(p, q, eps, ref_kind, ref_params, set_partitions=(n % 10 == 0))
        checks = {}
        value = None
        try:
            batch = divergence_optimal_values(p[None], q[None], [eps], divergence=lf)[0, 0]
            mech = None if 708.4 < eps < math.inf else divergence_optimal(p, q, eps, divergence=lf)
        except ValueError as err:              # φ beyond the float range at a zero q-mass: refused, never inf
            assert beyond_float_range(name, eps) and "slope_at_inf" in str(err), (eps, str(err))
            continue
        if mech is not None:
            value = mech.value
            blocks = [[x for x in b if ref.p[x] + ref.q[x] > 0] for b in blocks_of(mech)]
            checks = {"value": _close(value, best), "partition": _close(ref.value([b for b in blocks if b]), best),
                      "nonnegative": value >= 0}
            for fixed in (binary_mechanism(p, q, eps, divergence=lf),
                          randomized_response_mechanism(p, q, eps, divergence=lf)):
                checks["fixed"] = checks.get("fixed", True) and fixed.value >= 0 and _close(
                    fixed.value, ref.value([list(b) for b in fixed.partition]))
        checks["optimal_values"] = _close(batch, best) and (value is None or _close(batch, value, 1e-12))
        if name == "lf-kl":                                          # the same numbers as the named kind
            named = divergence_optimal_values(p[None], q[None], [eps], divergence="kl")[0, 0]
            checks["equals 'kl'"] = _close(batch, named, 1e-12)
        if not all(checks.values()):
            failures.append((n, eps, [c for c, ok in checks.items() if not ok], float(best), value, float(batch)))
    assert not failures, f"{len(failures)} failures, first: {failures[:3]}"


@pytest.mark.parametrize("name", sorted(LINEAR_FREE))
def test_linear_free_divergence_is_exact(name):
    lf, ref_kind, ref_params = LINEAR_FREE[name]
    for (p, q), _ in linear_free_instances(name, 60, 22):
        ref = Ref(p, q, math.inf, ref_kind, ref_params)
        ref.eps_float = math.inf
        exact = ref.value([[x] for x in range(p.size)])
        got = divergence(p, q, kind=lf)
        assert got >= 0 and _close(got, exact), (got, float(exact))
        assert np.all(perspective(p, q, kind=lf) >= 0)


def test_linear_free_rejects_invalid_phi_and_parameters():
    p, q = np.array([0.5, 0.5]), np.array([0.25, 0.75])
    for bad in (LinearFree(lambda d: d), LinearFree(lambda d: d * d + 1), LinearFree(lambda d: -d * d),
                LinearFree(lambda d: abs(d) ** 0.5)):
        with pytest.raises(ValueError, match="phi|slope_at_inf|convex|f\\(1\\)"):
            divergence_optimal(p, q, 1.0, divergence=bad)
    for slope in (-1.0, math.nan):                      # refused when the object is made
        with pytest.raises(ValueError, match="slope_at_inf"):
            LinearFree(lambda d: d * d, slope_at_inf=slope)
    with pytest.raises(TypeError, match="phi"):
        LinearFree("not a function")
    with pytest.raises(TypeError, match="LinearFree"):
        divergence_optimal_values(p[None], q[None], [1.0], divergence=LINEAR_FREE["lf-kl"][0], f_slope_at_inf=1.0)


def test_kov_lp_accepts_linear_free():
    "The staircase LP with a LinearFree χ² against the mpmath optimum (not-tiny masses: the LP's domain)."
    rng = np.random.default_rng(23)
    lf = LINEAR_FREE["lf-chi2"][0]
    for _ in range(6):
        k = int(rng.integers(2, 5))
        p, q = rng.dirichlet(np.full(k, 0.5)), rng.dirichlet(np.full(k, 0.5))
        eps = float(10 ** rng.uniform(-3, 1))
        best, _ = reference_optimum(p, q, eps, "chi2", {})
        assert _close(kov_lp(p, q, eps, divergence=lf).value, best, 2e-9), eps


@pytest.mark.parametrize("kind, params", [("kl", {}), ("renyi", {"renyi_order": 3.0}), ("renyi", {"renyi_order": 0.5}),
                                          ("chi2", {}), ("hellinger", {})])
@pytest.mark.parametrize("eps", [700.0, 705.0, 708.0, 708.39])
def test_largest_eps_with_subnormal_masses(kind, params, eps):
    """ε above 705 with a mass of 5e-324: an output's v is e^{-ε} ≈ 1e-307, so u/v·log(u/v) overflows while the
    term u·log(u/v) does not (KL was inf before): equal to the arbitrary-precision optimum over all set partitions."""
    p, q = np.array([5e-324, 0.5, 0.5]), np.array([0.5, 5e-324, 0.5])
    ref, _ = reference_optimum(p, q, eps, kind, params, set_partitions=True)
    for ell in (None, 2):
        got = divergence_optimal(p, q, eps, divergence=kind, ell=ell, **params).value
        if ell is None:
            assert _close(got, ref), (got, float(ref))
        else:
            assert math.isfinite(got) and got <= float(ref) * (1 + 1e-12)


# ---------------------------------------------------------------- exact zeros at ε = ∞ and at large ε (issue 39)

ZERO_EPS = [math.inf, 50.0, 300.0, 700.0]
N_ZERO_PAIRS = 24 if LONG else 4
ZERO_KINDS = [("tv", {}), ("kl", {}), ("chi2", {}), ("hellinger", {}), ("egamma", {"gamma": 0.5}),
              ("egamma", {"gamma": 4.0}), ("renyi", {"renyi_order": 0.5}), ("renyi", {"renyi_order": 2.0}),
              ("renyi", {"renyi_order": 300.0}), (tri, {"f_slope_at_inf": 1.0}), ("lf-kl", None), ("lf-chi2", None)]


def zero_mass_pairs(n, seed):
    """Pairs on k ≤ 6 symbols with exact zeros: symbols with p = 0 < q, with q = 0 < p (most pairs have one: the
    optimum is then ∞ at ε = ∞ for KL, χ² and Rényi of order > 1), and with p = q = 0; masses are multiples of
    2^-20 that sum to 1 exactly."""
    rng = np.random.default_rng(seed)
    while n:
        k = int(rng.integers(3, 7))
        roles = rng.choice(4, size=k, p=[0.4, 0.25, 0.25, 0.1])     # both > 0, p = 0, q = 0, both = 0
        if rng.random() < 0.75:
            roles[rng.integers(k)] = 2
        p, q = (rng.integers(1, 2 ** 17, size=k).astype(float) for _ in range(2))
        p[(roles == 1) | (roles == 3)] = 0.0
        q[(roles == 2) | (roles == 3)] = 0.0
        if p.sum() == 0 or q.sum() == 0:
            continue
        for arr in (p, q):                             # exact: the remainder goes to the largest mass
            arr /= 2 ** 20
            arr[np.argmax(arr)] += 1 - arr.sum()
        assert p.sum() == 1 and q.sum() == 1
        n -= 1
        yield p, q


def best_by_budget(ref, support, budgets, set_partitions=False):
    "The exact optimum with at most ℓ blocks for each ℓ in `budgets` (None: no budget), over contiguous partitions."
    order = sorted(support, key=lambda x: ref.p[x] / (ref.p[x] + ref.q[x]))
    n = len(order)
    best = dict.fromkeys(budgets)
    for mask in range(2 ** max(n - 1, 0)):
        cuts = [0] + [i + 1 for i in range(n - 1) if mask >> i & 1] + [n]
        value = ref.value([order[a:b] for a, b in zip(cuts[:-1], cuts[1:])])
        for ell in budgets:
            if (ell is None or len(cuts) - 1 <= ell) and (best[ell] is None or value > best[ell]):
                best[ell] = value
    if set_partitions:                                 # the theorem: some optimum is contiguous, under a budget too
        values = [(len(b), ref.value(b)) for b in _set_partitions(support)]
        for ell in budgets:
            top = max(value for s, value in values if ell is None or s <= ell)
            assert _close(top, best[ell], 1e-20), ("a set partition beats every contiguous partition", ell)
    return best


@pytest.mark.parametrize("eps", ZERO_EPS, ids=[f"eps={e:g}" for e in ZERO_EPS])
def test_exact_zeros_agree_with_brute_force_for_every_budget(eps):
    """Every check agrees: the value of `divergence_optimal` and `divergence_optimal_values`, and the exact value of
    the partition returned, equal the brute-force optimum for ℓ ∈ {2, 3, none}, also where it is ∞ (ε = ∞ with a
    symbol of q = 0 < p: a Rényi order of 300 once returned 4.868 there, a finite score that overflowed tying with
    the infinite ones) and where it is huge but finite (ε = 700)."""
    failures, checks_run = [], 0
    for n, (p, q) in enumerate(zero_mass_pairs(N_ZERO_PAIRS, 39)):
        support = [x for x in range(p.size) if p[x] + q[x] > 0]
        for kind_name, params in ZERO_KINDS:
            kind = kind_name
            if params is None:                                        # a LinearFree against its named kind
                kind, (ref_kind, params) = LINEAR_FREE[kind_name][0], LINEAR_FREE[kind_name][1:]
            else:
                ref_kind = kind
            ref = Ref(p, q, eps, ref_kind, params)
            ref.eps_float = eps
            best = best_by_budget(ref, support, (2, 3, None), set_partitions=(n % 4 == 0))
            for ell in (2, 3, None):
                if isinstance(kind, LinearFree) and beyond_float_range(kind_name, eps):
                    with pytest.raises(ValueError, match="slope_at_inf"):      # refused: never inf, never rounded
                        divergence_optimal(p, q, eps, divergence=kind, ell=ell, **params)
                    checks_run += 4
                    continue
                mech = divergence_optimal(p, q, eps, divergence=kind, ell=ell, **params)
                blocks = [[x for x in b if p[x] + q[x] > 0] for b in mech.partition]
                batch = divergence_optimal_values(p[None], q[None], [eps], divergence=kind, ell=ell, **params)[0, 0]
                checks = {"value": _close(mech.value, best[ell]), "values": _close(batch, best[ell]),
                          "partition": _close(ref.value([b for b in blocks if b]), best[ell]),
                          "budget": ell is None or len(mech.partition) <= ell}
                checks_run += len(checks)
                if not all(checks.values()):
                    failures.append((n, getattr(kind, "name", kind), params, ell,
                                     [c for c, ok in checks.items() if not ok], float(best[ell]), mech.value))
    assert checks_run == N_ZERO_PAIRS * len(ZERO_KINDS) * 3 * 4
    assert not failures, f"{len(failures)} of {checks_run} checks disagree, first: {failures[:3]}"


def test_the_reported_infinite_optimum():
    "The reproducer of the issue: the output set {0, 4} has mass under p and none under q, so the optimum is ∞."
    p = [7.724761962890625e-05, 0.03512382507324219, 0.07765388488769531, 0.0, 0.8871450424194336]
    q = [0.0, 0.0075664520263671875, 0.0001220703125, 0.9923114776611328, 0.0]
    for ell in (2, 3, None):
        mech = divergence_optimal(p, q, math.inf, divergence="renyi", renyi_order=300.0, ell=ell)
        assert mech.value == math.inf
        assert any(sum(q[x] for x in b) == 0 < sum(p[x] for x in b) for b in mech.partition)
