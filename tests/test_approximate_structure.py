"""Tests of the structure of the budgeted optimum in nbs/08_approximate.ipynb (approx-lem-region,
approx-thm-sorted-rows, approx-cor-four-rows), from the outside.

The region lemma: its test of privacy (the largest minus e^ε times the smallest mass of each output set) against the
definition (every ordered pair of rows), in exact rationals on channels at the boundary; the region's linear program
against the hockey-stick program in random directions. The theorem: the channel its proof builds (the vertices of the
region of an optimal channel, chosen letter by letter through tangents at the optimal output ratios, with the
proof's tie-breaks) is at least as good as the optimum, has sorted rows, and is private. Its rows are computed here
in exact rationals from the best of every vertex cddlib lists (three letters with three and four outputs, four
letters with three), so the privacy check is exact; on five and six letters from the certified answer of
`divergence_optimal(..., ell=3)`. The corollary: the three-output optimum equals the best four-letter optimum over
the partitions of the sorted letters into four runs (through the image hull on five and six letters, through the
exact 4 × 3 vertex list on six and seven), and the check can fail: runs of a wrong order fall short. The finite
candidate set (approx-prop-candidates): the vertices of Θ(ε, δ) listed by cddlib in exact rationals from the
proposition's 27 inequalities, every candidate exactly private, and the best over the walks and runs against the
exact 4 × 3 vertex lists and the image hull.

Tangents are written here from the divergences' formulas, not taken from the package. LDPBOOK_APPROX_FULL=1 runs
larger families."""
import itertools
import os
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import linprog

from ldpbook.approximate import _certified_budget, divergence_optimal
from ldpbook.foundations import divergence_from_sum, divergence_terms, privacy_defect
from test_approximate import MPMATH_DPS, cdd_vertices, exact_solve, mixture_pairs, mp_value
from test_approximate_budget import near_best

FULL = os.environ.get("LDPBOOK_APPROX_FULL") == "1"
KINDS = (("kl", {}), ("chi2", {}), ("hellinger", {}), ("renyi", {"renyi_order": 2.0}),
         ("renyi", {"renyi_order": 0.5}))


def output_sets(ell):
    return [S for s in range(1, ell) for S in itertools.combinations(range(ell), s)]


def ldp_by_pairs(Q, a, d):
    "The definition: Q(S|x) − a·Q(S|x') ≤ d for every proper output set S and ordered pair of rows."
    return all(sum(r[y] for y in S) - a * sum(r2[y] for y in S) <= d
               for S in output_sets(len(Q[0])) for r in Q for r2 in Q)


def ldp_by_region(Q, a, d):
    "The region lemma (a): max_x Q(S|x) − a·min_x Q(S|x) ≤ d for every proper output set S."
    return all(max(sum(r[y] for y in S) for r in Q) - a * min(sum(r[y] for y in S) for r in Q) <= d
               for S in output_sets(len(Q[0])))


@pytest.mark.parametrize("k, ell, a, delta", [(3, 3, Fraction(2), Fraction(1, 10)), (2, 4, Fraction(3), Fraction(1, 5)),
                                              (3, 2, Fraction(1), Fraction(1, 3))])
def test_the_region_decides_privacy_as_the_pairs_do_in_exact_rationals(k, ell, a, delta):
    """Every vertex of the polytope (on its boundary), mixed with random rational channels, at δ and just below it:
    the two tests agree on every channel, and both verdicts occur."""
    rng, verdicts = np.random.default_rng(ell * 10 + k), []
    for V in cdd_vertices(k, ell, a, delta):
        R = [[Fraction(int(c), 997) for c in rng.multinomial(997, np.ones(ell) / ell)] for _ in range(k)]
        s = Fraction(int(rng.integers(0, 30)), 300)
        Q = [[(1 - s) * v + s * r for v, r in zip(Vx, Rx)] for Vx, Rx in zip(V, R)]
        for d in (delta, delta * Fraction(19, 20), delta * Fraction(1, 2)):
            verdicts.append((ldp_by_pairs(Q, a, d), ldp_by_region(Q, a, d)))
    assert all(v == w for v, w in verdicts)
    assert 0 < sum(v for v, _ in verdicts) < len(verdicts)


def region_program(k, ell, eps, delta):
    "Unknowns vec Q, then m_S and M_S: m_S ≤ Q(S|x) ≤ M_S and M_S − e^ε m_S ≤ δ, written row by row."
    sets, n = output_sets(ell), k * ell
    N, A, b = n + 2 * len(sets), [], []
    for s, S in enumerate(sets):
        for x in range(k):
            row = np.zeros(N)
            row[[x * ell + y for y in S]], row[n + len(sets) + s] = 1.0, -1.0         # Q(S|x) − M_S ≤ 0
            A.append(row), b.append(0.0)
            A.append(-row + 0.0), b.append(0.0)
            A[-1][n + len(sets) + s], A[-1][n + s] = 0.0, 1.0                          # m_S − Q(S|x) ≤ 0
        row = np.zeros(N)
        row[n + len(sets) + s], row[n + s] = 1.0, -np.exp(eps)
        A.append(row), b.append(delta)
    return np.array(A), np.array(b), N


def stick_program(k, ell, eps, delta):
    "Q(S|x) − e^ε Q(S|x') ≤ δ for every proper S and ordered pair."
    A = []
    for S in output_sets(ell):
        for x, x2 in itertools.permutations(range(k), 2):
            row = np.zeros(k * ell)
            row[[x * ell + y for y in S]] += 1.0
            row[[x2 * ell + y for y in S]] -= np.exp(eps)
            A.append(row)
    return np.array(A), np.full(len(A), delta)


@pytest.mark.parametrize("k, ell, eps, delta", [(2, 3, 0.0, 0.2), (3, 3, 1.0, 0.05), (5, 3, 3.0, 1e-3),
                                                (4, 4, 0.5, 0.3), (9, 2, 2.0, 0.01), (12, 3, 1.0, 0.1)])
def test_the_region_program_has_the_optima_of_the_hockey_sticks(k, ell, eps, delta):
    """Random directions: the same optimum over both descriptions (the projection of approx-lem-region (c)), and the
    region program's channel passes every hockey stick."""
    A, b = stick_program(k, ell, eps, delta)
    Ar, br, N = region_program(k, ell, eps, delta)
    rows = np.kron(np.eye(k), np.ones((1, ell)))
    for c in np.random.default_rng(k * ell).normal(size=(6, k * ell)):
        direct = linprog(-c, A_ub=A, b_ub=b, A_eq=rows, b_eq=np.ones(k), bounds=(0, 1), method="highs")
        region = linprog(-np.append(c, np.zeros(N - c.size)), A_ub=Ar, b_ub=br,
                         A_eq=np.hstack((rows, np.zeros((k, N - c.size)))), b_eq=np.ones(k), bounds=(0, 1),
                         method="highs")
        assert abs(direct.fun - region.fun) <= 1e-9
        Q = np.clip(region.x[:k * ell], 0, None).reshape(k, ell)
        assert privacy_defect(Q, eps).max() <= delta + 1e-9


def tangent(t, kind, params):
    """(f̄′(t), f̄(t) − t f̄′(t)) for the linear-free f̄ of the divergence, from its formula; the second in closed form
    (1 − t, 1 − t², 1 − √t, 1 − t^α), not as a difference of two large numbers."""
    if kind == "kl":
        return np.log(t), 1 - t
    if kind == "chi2":
        return 2 * (t - 1), 1 - t * t
    if kind == "hellinger":
        return 1 - t ** -0.5, 1 - np.sqrt(t)
    r = params["renyi_order"]
    return r * (t ** (r - 1) - 1) / (r - 1), 1 - t ** r


def region_vertices(Q):
    """The vertices of the region of Q's minima and maxima, exactly: every choice of ℓ − 1 bounds
    m_S ≤ r(S) ≤ M_S made tight with Σ r = 1, solved in Fractions, kept if it meets every bound."""
    ell, sets = len(Q[0]), output_sets(len(Q[0]))
    masses = [[sum(r[y] for y in S) for r in Q] for S in sets]
    lo, hi = [min(m) for m in masses], [max(m) for m in masses]
    found = set()
    for tight in itertools.combinations([(s, lo[s]) for s in range(len(sets))] + [(s, hi[s]) for s in
                                                                                 range(len(sets))], ell - 1):
        M = [[Fraction(1)] * ell] + [[Fraction(int(y in sets[s])) for y in range(ell)] for s, _ in tight]
        r = exact_solve(M, [Fraction(1)] + [v for _, v in tight])
        if r is not None and all(lo[s] <= sum(r[y] for y in S) <= hi[s] for s, S in enumerate(sets)):
            found.add(tuple(r))
    return [list(r) for r in sorted(found)]


def mp_defect(W, eps):
    "The largest hockey-stick sum between rows of W (Fractions), in 60-digit mpmath."
    with mp.workdps(60):
        e, R = mp.exp(mp.mpf(eps)), [[mp.mpf(v.numerator) / v.denominator for v in row] for row in W]
        return max(mp.fsum(max(a - e * b, 0) for a, b in zip(r, r2)) for r in R for r2 in R)


def sorted_rows(Q, p, q, kind, params):
    """The channel of the proof of approx-thm-sorted-rows: for each letter the vertex of Q's region maximising
    (p_x g + q_x h)·r, ties by h·r (by g·r where p_x = 0, after h·r), then by w·r, every key compared exactly (the
    float tangents taken as rationals); g, h the tangents at Q's output ratios, 0 and ∞ replaced by 1e-40 and 1e40
    (a step of the proof's limit: for Hellinger the tangent's value at 0 is 1 − √t). Q and the result in Fractions."""
    ell = len(Q[0])
    u, v = (np.array([float(sum(Fraction(float(w)) * row[y] for w, row in zip(x, Q))) for y in range(ell)])
            for x in (p, q))
    t = [1.0 if a == b == 0 else 1e40 if b == 0 else min(max(a / b, 1e-40), 1e40) for a, b in zip(u, v)]
    g, h = ([Fraction(float(c)) for c in col] for col in zip(*(tangent(s, kind, params) for s in t)))
    w = [Fraction(float(c)) for c in np.sqrt([2.0, 3.0, 5.0, 7.0][:ell])]
    V, chosen = region_vertices(Q), []
    for a, b in zip(map(Fraction, map(float, p)), map(Fraction, map(float, q))):
        best = V
        for key in (([a * gy + b * hy for gy, hy in zip(g, h)], h, w) if a > 0 else (h, g, w)):
            values = [sum(k * r for k, r in zip(key, row)) for row in best]
            best = [row for row, s in zip(best, values) if s == max(values)]
        chosen.append(best[0])
    return chosen


def mp_of(Q, p, q, kind, params):
    "D_f of the channel Q (Fractions or floats) for the pair, in mpmath."
    with mp.workdps(MPMATH_DPS):
        cols = [[mp.mpf(Fraction(r[y]).numerator) / Fraction(r[y]).denominator for r in Q] for y in range(len(Q[0]))]
        P, R = [mp.mpf(float(x)) for x in p], [mp.mpf(float(x)) for x in q]
        return mp_value([mp.fsum(c * w for c, w in zip(col, P)) for col in cols],
                        [mp.fsum(c * w for c, w in zip(col, R)) for col in cols], kind, params)


def runs_of(W, p, q):
    "The number of distinct rows and of runs of equal rows along the letters sorted by q/p (p = 0 last)."
    order = sorted(range(len(p)), key=lambda x: (p[x] == 0, q[x] / p[x] if p[x] > 0 else 0.0))
    runs = 1 + sum(W[x] != W[z] for x, z in zip(order[:-1], order[1:]))
    return len({tuple(r) for r in W}), runs


def best_exact_vertex(V, p, q, kind, params):
    "The vertex of largest D_f (floats first, the near-best again in mpmath)."
    values = {int(i): mp_of(V[i], p, q, kind, params) for i in near_best(V, p, q, kind, params)}
    i = max(values, key=values.get)
    return V[i], values[i]


@pytest.mark.parametrize("k, ell, a, delta", [
    (3, 3, Fraction(2), Fraction(1, 10)), (3, 3, Fraction(20), Fraction(1, 1000)),
    (3, 3, Fraction(11, 10), Fraction(1, 2)), (3, 4, Fraction(2), Fraction(1, 2)),
    (4, 3, Fraction(3), Fraction(1, 20))])
def test_the_sorted_rows_of_the_best_exact_vertex_are_optimal_and_exactly_private(k, ell, a, delta):
    """From the best of every vertex (cddlib): the proof's channel is (ε, δ)-LDP in exact rationals, its rows are
    vertices of the region on runs of the likelihood-ratio order (at most four for three outputs), and its value
    is the optimum to 1e-12 relative (mpmath); random pairs, tied ratios, zeros in p, p = q."""
    V = cdd_vertices(k, ell, a, delta)
    rng = np.random.default_rng(int(a * 7) + k + ell)
    pairs = mixture_pairs(rng, 5) if k == 3 else [(rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k)))
                                                  for _ in range(3)]
    for p, q in pairs:
        for kind, params in KINDS[:4] if ell == 3 else KINDS[:1]:
            Qs, best = best_exact_vertex(V, p, q, kind, params)
            if best == 0:
                continue                                         # p = q: every channel is optimal
            W = sorted_rows(Qs, p, q, kind, params)
            assert ldp_by_pairs(W, a, delta)
            rows, runs = runs_of(W, p, q)
            assert runs == rows and (ell > 3 or rows <= 4)
            got = mp_of(W, p, q, kind, params)
            assert got == best or got >= best * (1 - mp.mpf(1e-12))


def issue_instance(rng, k):
    "A pair on k letters with ties and zeros (as the issue's family), ε from 1e-3 to 20, δ from 1e-12 to 0.5."
    p, q = rng.dirichlet(np.full(k, rng.choice([0.3, 1.0, 3.0]))), rng.dirichlet(np.ones(k))
    if rng.random() < 0.3:
        q[rng.integers(k)] = 0.0
    if rng.random() < 0.3:
        p[rng.integers(k)] = 0.0
    if rng.random() < 0.4:
        p[1], q[1] = p[0], q[0]
    p, q = p / p.sum(), q / q.sum()
    return p, q, float(10 ** rng.uniform(-3, np.log10(20))), float(10 ** rng.uniform(-12, np.log10(0.5)))


def answer(p, q, eps, delta, kind, params):
    try:
        return divergence_optimal(p, q, eps, delta=delta, divergence=kind, ell=3, **params)
    except NotImplementedError:
        return None


def test_the_sorted_rows_of_the_certified_optimum_on_five_and_six_letters():
    """From `divergence_optimal(..., ell=3)`'s channel: the proof's channel is at least as good (1e-10 relative, and
    1e-15 absolute: the tangents are floats, so the linear function maximised is known to about 1e-16; its value in
    mpmath), has at most four rows on runs of the sorted letters, and its rows (exact rationals, vertices of
    the region of the stored channel, which is exactly private) are private in 60-digit arithmetic."""
    rng, checked = np.random.default_rng(70), 0
    for i in range(30 if FULL else 8):
        k = 5 + i % 2
        p, q, eps, delta = issue_instance(rng, k)
        kind, params = KINDS[i % len(KINDS)]
        mech = answer(p, q, eps, delta, kind, params)
        if mech is None or not np.isfinite(mech.value) or mech.value == 0:
            continue
        Qf = [[Fraction(float(v)) for v in row] for row in mech.channel]
        W = sorted_rows(Qf, p, q, kind, params)
        rows, runs = runs_of(W, p, q)
        assert rows <= 4 and runs == rows
        assert mp_defect(W, eps) <= mp.mpf(delta) * (1 + mp.mpf(10) ** -40)        # exact rows: the region lemma (b)
        own = mp_of(mech.channel.tolist(), p, q, kind, params)
        assert mp_of(W, p, q, kind, params) >= own * (1 - mp.mpf(1e-10)) - mp.mpf(1e-15)   # float tangents
        checked += 1
    assert checked >= (20 if FULL else 5)


def merged(p, q, order, cuts):
    return [np.array([w[b].sum() for b in np.split(order, cuts)]) for w in (p, q)]


def ratio_order(p, q):
    return np.lexsort((np.divide(q, p, out=np.zeros_like(q), where=p > 0), p == 0))


@pytest.mark.parametrize("i", range(6 if FULL else 3))
def test_four_runs_give_the_three_output_optimum_through_the_image_hull(i):
    """Five and six letters: the image hull's optimum equals the best over the partitions of the sorted letters into
    four runs of the four-letter optimum (each by the image hull too, on another problem), 1e-9 relative."""
    rng = np.random.default_rng(80 + i)
    p, q, eps, delta = issue_instance(rng, 5 + i % 2)
    eps, delta = min(eps, 8.0), max(delta, 1e-8)             # where the float certificate closes: seconds a call
    kind, params = KINDS[i % len(KINDS)]
    whole = answer(p, q, eps, delta, kind, params)
    order, values = ratio_order(p, q), []
    for cuts in itertools.combinations(range(1, p.size), 3):
        P, R = merged(p, q, order, cuts)
        part = answer(P / P.sum(), R / R.sum(), eps, delta, kind, params)
        values.append(None if part is None else part.value)
    if whole is None or None in values:
        pytest.skip("a certificate did not close (a refusal the budget tests count)")
    if np.isinf(whole.value):                                  # q has a zero where p has mass: a leak of it
        assert max(values) == np.inf
    else:
        assert abs(max(values) - whole.value) <= 1e-9 * whole.value


def perspective(u, v, kind, params):
    """Σ_y φ(u_y, v_y) over the last axis, from the formulas of the linear-free terms: u log(u/v) − u + v,
    (u − v)²/v, (√u − √v)², (u^α v^(1−α) − v − α(u − v))/(α − 1); ∞ where v = 0 < u (KL, χ², Rényi α > 1)."""
    u, v = np.maximum(u, 0.0), np.maximum(v, 0.0)
    leak, w = (v == 0) & (u > 0), np.where(v > 0, v, 1.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if kind == "kl":
            t = np.where(leak, np.inf, np.where(u > 0, u * np.log(u / w), 0.0) - u + v)
        elif kind == "chi2":
            t = np.where(leak, np.inf, (u - v) ** 2 / w)
        elif kind == "hellinger":
            t = (np.sqrt(u) - np.sqrt(v)) ** 2
        else:
            r = params["renyi_order"]
            t = (np.where(v > 0, u ** r * w ** (1 - r), 0.0) - v - r * (u - v)) / (r - 1)
            t = np.where(leak, np.inf, t) if r > 1 else t
    return t.sum(axis=-1)


def four_runs_reference(V, p, q, kind, params, order=None):
    """The best perspective sum over every partition of the letters, sorted by q/p (or in `order`), into four
    non-empty runs (merged into four letters) and every channel of V (n, 4, 3), e.g. every exact vertex of the 4 × 3
    polytope: approx-cor-four-rows, without Θ or the search."""
    order, best = ratio_order(p, q) if order is None else order, 0.0
    for cuts in itertools.combinations(range(1, p.size), 3):
        P, R = merged(p, q, order, cuts)
        best = max(best, float(perspective(np.einsum("nby,b->ny", V, P), np.einsum("nby,b->ny", V, R),
                                           kind, params).max()))
    return best


@pytest.mark.parametrize("a, delta", [(Fraction(3), Fraction(1, 1000)), (Fraction(11, 10), Fraction(1, 2))])
def test_four_runs_through_the_exact_four_letter_vertices_give_the_image_hull_optimum(a, delta):
    """Six and seven letters: the best over four runs and every vertex of the 4 × 3 polytope (cddlib) equals the
    certified image hull (1e-9 relative); the same runs in the order of p alone fall short somewhere (the check
    can fail)."""
    Vf = np.array(cdd_vertices(4, 3, a, delta), dtype=float)
    eps, d = float(np.log(float(a))), float(delta)
    rng, short = np.random.default_rng(int(a * 10)), 0
    for i, kind in enumerate(("kl", "chi2", "hellinger", "kl")):
        k = 6 + i % 2
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        runs = four_runs_reference(Vf, p, q, kind, {})
        hull = divergence_from_sum(_certified_budget(p, q, eps, d, 3, kind, {})[0], kind=kind)
        assert abs(runs - hull) <= 1e-9 * hull
        short += four_runs_reference(Vf, p, q, kind, {}, np.argsort(p)) < hull * (1 - 1e-6)
    assert short > 0


SIDES = [(0, 1), (2, 0), (1, 1), (0, 0), (2, 1), (1, 0)]       # r_y = M_y (1) or m_y (0), by the outward normals


def corner(i, theta):
    "Corner i of R(m, M), θ = (m_0, m_1, m_2, M_0, M_1, M_2): where the lines of sides i and i + 1 meet."
    (y, b), (z, c) = SIDES[i], SIDES[(i + 1) % 6]
    r = [None] * 3
    r[y], r[z] = theta[3 * b + y], theta[3 * c + z]
    r[3 - y - z] = 1 - r[y] - r[z]
    return r


def theta_vertices_exact(a, delta):
    """The vertices of Θ(ε, δ) of approx-prop-candidates by cddlib in exact rationals: 0 ≤ m ≤ M ≤ 1,
    M − a·m ≤ δ, (1 − m) − a(1 − M) ≤ δ, and each corner's third coordinate within its bounds (b − A θ ≥ 0)."""
    import cdd.gmp as cdd
    rows = []
    for y in range(3):
        m, M = [0] * 6, [0] * 6
        m[y], M[3 + y] = 1, 1
        for A, b in (([-v for v in m], 0), (M, 1), ([u - v for u, v in zip(m, M)], 0),
                     ([u - a * v for u, v in zip(M, m)], delta), ([a * u - v for u, v in zip(M, m)], delta + a - 1)):
            rows.append([Fraction(b)] + [-Fraction(v) for v in A])
    unit = [[Fraction(int(i == j)) for j in range(6)] for i in range(6)]
    for i in range(6):
        w = 3 - SIDES[i][0] - SIDES[(i + 1) % 6][0]
        base = corner(i, [Fraction(0)] * 6)[w]
        lin = [corner(i, unit[j])[w] - base for j in range(6)]        # the third coordinate is affine in θ
        low, high = [-v for v in lin], list(lin)
        low[w] += 1                                                    # m_w − (base + lin·θ) ≤ 0
        high[3 + w] -= 1                                               # base + lin·θ − M_w ≤ 0
        rows.append([base] + [-v for v in low])
        rows.append([-base] + [-v for v in high])
    mat = cdd.matrix_from_array(rows, rep_type=cdd.RepType.INEQUALITY)
    gens = cdd.copy_generators(cdd.polyhedron_from_matrix(mat)).array
    assert all(g[0] == 1 for g in gens)
    return [[Fraction(v) for v in g[1:]] for g in gens]


def best_over_walks(TH, p, q, kind, params):
    "approx-prop-candidates' maximum: vertices θ, twelve walks, partitions of the sorted letters into four runs."
    walks = np.array([[(s + d * j) % 6 for j in range(4)] for s in range(6) for d in (1, -1)])
    C = np.array([[corner(i, t) for i in range(6)] for t in TH], dtype=float)[:, walks].reshape(-1, 4, 3)
    order, best = ratio_order(p, q), 0.0
    for cuts in itertools.combinations_with_replacement(range(p.size + 1), 3):
        P, R = merged(p, q, order, cuts)
        U, W = C.transpose(0, 2, 1) @ P, C.transpose(0, 2, 1) @ R
        with np.errstate(divide="ignore", invalid="ignore"):
            best = max(best, float(np.nanmax(divergence_terms(U, W, U - W, kind=kind, check=False, **params)
                                             .sum(axis=1))))
    return best


@pytest.mark.parametrize("a, delta", [(Fraction(2), Fraction(1, 10)), (Fraction(20), Fraction(1, 1000)),
                                      (Fraction(11, 10), Fraction(1, 2)), (Fraction(1), Fraction(1, 5))])
def test_the_candidates_are_private_and_reach_the_best_exact_vertex_on_four_letters(a, delta):
    """Θ's vertices in exact rationals: the six corners at each are (ε, δ)-LDP together (exactly), and the best over
    the walks and runs equals the best of every vertex of the 4 × 3 polytope (cddlib) within 1e-12 relative, for
    random pairs, ties and zeros, for KL, χ², Hellinger and Rényi."""
    TH = theta_vertices_exact(a, delta)
    assert all(ldp_by_pairs([corner(i, t) for i in range(6)], a, delta) for t in TH)
    V = cdd_vertices(4, 3, a, delta)
    rng = np.random.default_rng(int(a * 10) + delta.denominator)
    for j in range(6):
        p, q = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
        if j == 1:
            p[2], q[2] = p[3], q[3]                                  # a tie
        if j == 2:
            p[0] = 0.0                                               # a zero in p
        p, q = p / p.sum(), q / q.sum()
        kind, params = KINDS[j % 4]
        _, best = best_exact_vertex(V, p, q, kind, params)
        got = best_over_walks(TH, p, q, kind, params)
        if kind == "renyi":
            got = divergence_from_sum(got, kind=kind, **params)
        assert abs(got - float(best)) <= 1e-12 * float(best) + 1e-300


@pytest.mark.parametrize("i", range(4))
def test_the_candidates_reach_the_image_hull_on_five_to_seven_letters(i):
    """Irrational ε: Θ's vertices for e^ε rounded to a rational (a relative change of 1e-16), the best over the walks
    and runs against the image hull (`divergence_optimal` up to six letters, `_certified_budget` at seven)."""
    rng = np.random.default_rng(90 + i)
    k, (kind, params) = 5 + i % 3, KINDS[i % 4]
    p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    eps, delta = float(rng.uniform(0.1, 4)), float(10 ** rng.uniform(-6, -0.5))
    TH = theta_vertices_exact(Fraction(float(np.exp(eps))), Fraction(delta))
    got = best_over_walks(TH, p, q, kind, params)
    if k <= 6:
        hull = divergence_optimal(p, q, eps, delta=delta, divergence=kind, ell=3, **params).value
    else:
        hull = divergence_from_sum(_certified_budget(p, q, eps, delta, 3, kind, params)[0], kind=kind, **params)
    if kind == "renyi":
        got = divergence_from_sum(got, kind=kind, **params)
    assert abs(got - hull) <= 1e-9 * hull
