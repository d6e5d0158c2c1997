"""The certified engine for one large instance (nbs/01_spr.ipynb, "A million symbols: divide and conquer,
certified"): the divide-and-conquer candidate, the quadtree certificate, its rectangle bounds, the repair, and the
whole solver against the O(k²) program, brute force and the 80-digit references of tests/test_exact_spr.py."""
import itertools

import numpy as np
import pytest

from ldpbook import spr
from ldpbook.spr import divergence_optimal

from test_exact_spr import KIND_IDS, Ref, _close, blocks_of, instances, reference_optimum

KINDS = [("kl", {}), ("hellinger", {}), ("chi2", {}), ("tv", {}), ("egamma", {"gamma": 1.5}),
         ("renyi", {"renyi_order": 2.0}), ("renyi", {"renyi_order": 0.5})]


def line_of(p, q, eps, kind="kl", params=None):
    return spr._Line(spr._single_batch(np.asarray(p, float), np.asarray(q, float), eps, kind, dict(params or {})))


def brute_H(line, mu):
    "H_j = max over all partitions of the first j groups of Σ(μ̃ − μ), by enumerating their cut sets (no DP)."
    H = [0.0]
    for j in range(1, line.n + 1):
        best = -np.inf
        for mask in range(2 ** (j - 1)):
            cuts = [0] + [t for t in range(1, j) if mask >> (t - 1) & 1] + [j]
            s = line.scores(np.array(cuts[:-1]), np.array(cuts[1:])) - mu
            best = max(best, float(s.sum()))
        H.append(best)
    return np.array(H)


def candidate(line, mu):
    n = line.n
    G = np.concatenate(([0.0], line.scores(np.zeros(n, dtype=np.int64), np.arange(1, n + 1)) - mu))
    return spr._rounds(line, mu, G, np.zeros(n + 1, dtype=np.int64), np.minimum(np.arange(n + 1), 1))


def violated(line, H, mu, eta=spr._ETA):
    "Every cell (i, j) where the inequality fails beyond the rounding the arbiter allows, by checking all pairs."
    i, j = np.triu_indices(line.n + 1, 1)
    S = line.scores(i, j)
    tau = eta * (np.abs(S) + mu) + 4 * spr._U * (np.abs(H[i]) + np.abs(H[j]) + mu)
    bad = S > H[j] - H[i] + mu + tau
    return set(zip(i[bad].tolist(), j[bad].tolist()))


# ---------------------------------------------------------------- the solver against the O(k²) program

@pytest.mark.parametrize("kind,params", KINDS, ids=[f"{k}-{p}" for k, p in KINDS])
@pytest.mark.parametrize("eps", [0.3, 1.0, 5.0])
def test_certified_solve_equals_the_quadratic_program(kind, params, eps, monkeypatch):
    rng = np.random.default_rng([3, int(eps * 10), KINDS.index((kind, params))])
    p, q = rng.dirichlet(np.ones(1500)), rng.dirichlet(np.ones(1500))
    monkeypatch.setattr(spr, "_FAST_GROUPS", 10 ** 9)
    slow = divergence_optimal(p, q, eps, divergence=kind, **params)
    stats = {}
    batch = spr._single_batch(p, q, eps, kind, params)
    ratio, cuts = spr._certified_solve(batch, stats)
    assert not stats["fallback"] and stats["open_cells"] == 0      # the certified path did the work
    monkeypatch.setattr(spr, "_FAST_GROUPS", 1000)
    fast = divergence_optimal(p, q, eps, divergence=kind, **params)
    assert abs(fast.value - slow.value) <= 1e-12 * abs(slow.value)
    assert abs(ratio[0] - spr._solve(batch.take([0]))[0][0]) <= 1e-12 * abs(ratio[0])


def test_the_public_api_routes_large_instances_to_the_certified_engine(monkeypatch):
    calls = []
    real = spr._certified_solve
    monkeypatch.setattr(spr, "_certified_solve", lambda batch, *a, **k: calls.append(1) or real(batch, *a, **k))
    rng = np.random.default_rng(1)
    k = spr._FAST_GROUPS
    p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    divergence_optimal(p, q, 2.0)
    assert calls
    divergence_optimal(p[:100] / p[:100].sum(), q[:100] / q[:100].sum(), 2.0)
    assert len(calls) == 1                                   # small instances keep the O(k²) engine


# ---------------------------------------------------------------- the 80-digit references

@pytest.mark.parametrize("name", KIND_IDS)
def test_certified_engine_is_exact_on_edge_instances(name, monkeypatch):
    "Every edge instance of tests/test_exact_spr.py, solved by the certified engine, against the 80-digit optimum."
    monkeypatch.setattr(spr, "_FAST_GROUPS", 1)
    failures = []
    for n, ((p, q), eps, kind, params) in enumerate(instances(name, 60, 21)):
        if not eps < 708.4:
            continue
        best, ref = reference_optimum(p, q, eps, kind, params)
        mech = divergence_optimal(p, q, eps, divergence=kind, **params)
        blocks = [[x for x in b if ref.p[x] + ref.q[x] > 0] for b in blocks_of(mech)]
        if not (_close(mech.value, best) and _close(ref.value([b for b in blocks if b]), best)):
            failures.append((n, eps, params, float(best), mech.value))
    assert not failures, failures[:3]


# ---------------------------------------------------------------- the certificate and its bounds

@pytest.mark.parametrize("pieces", [0, 1, 8])
@pytest.mark.parametrize("seed", range(6))
def test_rectangle_bounds_hold_on_every_cell(seed, pieces, monkeypatch):
    """Bound (a) and the tilted test (b) on aligned rectangles of every level, with the ranges read whole
    (pieces = 8 ≥ the levels here), in pairs of halves (1) and as one piece (0): (b) proves only what every cell
    of the rectangle satisfies, checked cell by cell, and the bounds are not vacuous."""
    monkeypatch.setattr(spr, "_PIECES", pieces)
    rng = np.random.default_rng(seed)
    kind, params = KINDS[seed % len(KINDS)]
    line = line_of(rng.dirichlet(np.full(40, 0.5)), rng.dirichlet(np.full(40, 0.5)), [0.2, 1.0, 6.0][seed % 3],
                   kind, params)
    n, mu = line.n, 0.01
    H = candidate(line, mu)[0] + rng.normal(0, 1e-3 if seed % 2 else 1e-6, n + 1) * (np.arange(n + 1) > 0)
    L, bounds = spr._tables(line, H)
    tight = proofs = 0
    for _ in range(60):
        l = int(rng.integers(1, L + 1))
        a, b = sorted(int(x) for x in rng.integers(0, 1 << (L - l), 2))
        s = 1 << l                                                        # the rectangle as `_descend` makes it
        i0, i1 = a * s, min(a * s + s - 1, n - 1)
        j0, j1 = max(b * s, i0 + 1), min(b * s + s - 1, n)
        if i0 > i1 or j0 > j1:
            continue
        cells = [(i, j) for i in range(i0, i1 + 1) for j in range(j0, j1 + 1) if i < j]
        corners, S = spr._corner_scores(line, *(np.array([x]) for x in (i0, i1, j0, j1)))
        top = max(float(s[0]) for s in S)
        exact = line.scores(np.array([c[0] for c in cells]), np.array([c[1] for c in cells]))
        assert exact.max() <= top * (1 + 1e-12) + 1e-300                     # (a): corners bound every cell
        tight += exact.max() >= 0.5 * top
        proved = spr._tilted(line, H, mu, bounds, [np.array([x]) for x in (i0, i1, j0, j1)], corners, S, l)[0]
        slack = min(H[j] - H[i] + mu - s for (i, j), s in zip(cells, exact))
        assert not proved or slack >= 0                                   # (b) proves only true inequalities
        proofs += bool(proved)
    assert tight >= 5 and proofs >= (0 if seed % 2 or pieces == 0 else 3)   # neither bound is vacuous


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0, 12.0])
def test_the_tilt_on_the_kl_kernel_is_the_gradient(eps):
    """`_Line.slope` on the KL kernel (analytic) agrees with central differences of the scores, and with the
    80-digit derivative of u log(u/v) at a few masses."""
    import mpmath
    rng = np.random.default_rng(5)
    line = line_of(rng.dirichlet(np.ones(50)), rng.dirichlet(np.ones(50)), eps)
    assert line.kl
    P, Q = rng.uniform(1e-4, 0.9, 20), rng.uniform(1e-4, 0.9, 20)
    tP, tQ = line.slope(P, Q, P * 1e-6, Q * 1e-6)
    h = 1e-5
    assert np.allclose(tP, (line.at(P * (1 + h), Q) - line.at(P * (1 - h), Q)) / (2 * h * P), rtol=1e-6, atol=1e-9)
    assert np.allclose(tQ, (line.at(P, Q * (1 + h)) - line.at(P, Q * (1 - h))) / (2 * h * Q), rtol=1e-6, atol=1e-9)
    mpmath.mp.dps = 80
    w, c = mpmath.mpf(line.w), mpmath.mpf(float(line.batch.c[0]))
    for t in range(3):
        f = lambda x, y: (w + c * x) * mpmath.log((w + c * x) / (w + c * y))
        x, y = mpmath.mpf(P[t]), mpmath.mpf(Q[t])
        assert abs(tP[t] - float(mpmath.diff(lambda z: f(z, y), x))) <= 1e-12 * (1 + abs(tP[t]))
        assert abs(tQ[t] - float(mpmath.diff(lambda z: f(x, z), y))) <= 1e-12 * (1 + abs(tQ[t]))


@pytest.mark.parametrize("pieces", [0, 2])
def test_the_certificate_with_coarse_pieces_still_certifies_the_optimum(pieces, monkeypatch):
    """Reading the ranges in fewer pieces weakens the tilted test but never its soundness: at k = 3000 with
    ranges read in one or four pieces, the solver still returns the O(k²) program's optimum."""
    monkeypatch.setattr(spr, "_PIECES", pieces)
    rng = np.random.default_rng(8)
    p, q = rng.dirichlet(np.ones(3000)), rng.dirichlet(np.ones(3000))
    for eps in (1.0, 5.0):
        batch, stats = spr._single_batch(p, q, eps, "kl", {}), {}
        fast = spr._certified_solve(batch, stats)[0][0]
        plain = spr._solve(batch, certified=False)[0][0]
        assert abs(fast - plain) <= 1e-12 * plain and not stats["fallback"]


@pytest.mark.parametrize("seed", range(8))
def test_the_certificate_reports_every_violated_cell(seed):
    rng = np.random.default_rng(seed)
    kind, params = KINDS[seed % len(KINDS)]
    line = line_of(rng.dirichlet(np.full(9, 0.4)), rng.dirichlet(np.full(9, 0.4)), [0.5, 2.0, 8.0][seed % 3],
                   kind, params)
    mu = 0.3 * float(line.scores(np.array([0]), np.array([line.n]))[0]) + 1e-9
    H = brute_H(line, mu)
    assert violated(line, H, mu) == set()
    cells, _ = spr._certify(line, H, mu)
    assert spr._within_rounding(line, H, mu, cells)[0].all()             # the exact H is certified
    planted = H.copy()
    j = int(rng.integers(1, line.n + 1))
    planted[j] -= 1e-6 * (1 + abs(H[j]))                                  # one prefix value too low
    truth = violated(line, planted, mu)
    assert truth and all(c[1] == j for c in truth)
    cells, _ = spr._certify(line, planted, mu)
    assert truth <= set(map(tuple, cells.tolist()))


def test_the_certificate_opens_little_of_the_plane():
    rng = np.random.default_rng(0)
    k = 4000
    line = line_of(rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k)), 5.0)
    batch = line.batch
    ratio, _ = spr._solve(batch)
    mu = float(ratio[0]) * line.w
    H = candidate(line, mu)[0]
    cells, opened = spr._certify(line, H, mu)
    assert cells.size == 0 and opened < 20 * line.n                       # O(k) rectangles, not k²/2 cells


# ---------------------------------------------------------------- where the monotone maximisers fail

# Found by search (51,789 random pairs with k ≤ 8 and random penalties; two hits, both at a penalty near 0, where
# the best partitions have many blocks): the divide and conquer misses a maximiser
NON_MONOTONE = [
    ([0.05818119619247036, 0.027563499427652575, 0.03926320403415778, 3.5491921661516443e-06, 1.6383875418467851e-09,
      0.205689495335921, 0.6692990541792446],
     [0.07664520987582017, 0.02965824404587157, 0.12444277984502336, 4.40961212989535e-06, 0.1206988114677405,
      0.2424003430784291, 0.40615020207498553],
     1.5186277326588287, 'renyi', {'renyi_order': 0.5}, 1e-12),
    ([0.016794219736644845, 0.0068516781286548185, 0.021795829171352154, 0.0514771924138095, 0.2291736556528074,
      0.2531246528164317, 0.03592806598259103, 0.38485470609770855],
     [0.054371247661090576, 0.02984456923965642, 0.34250741483781283, 0.16533288748215233, 0.014659746372508775,
      0.11640933107174166, 0.055056242749441334, 0.22181856058559613],
     3.906178070179102, 'renyi', {'renyi_order': 0.5}, 1e-12),
]


def test_repair_fixes_a_non_monotone_candidate():
    assert NON_MONOTONE
    for p, q, eps, kind, params, mu in NON_MONOTONE:
        line = line_of(p, q, eps, kind, params)
        H, P, cnt = candidate(line, mu)
        exact = brute_H(line, mu)
        assert np.any(H < exact - 1e-9 * np.abs(exact))                  # the candidate is wrong here
        cells, _ = spr._certify(line, H, mu)
        assert cells.size                                                 # and the certificate says so
        H2, P2, cnt2, _ = spr._repair(line, H, P, cnt, mu, cells)
        assert np.allclose(H2, exact, rtol=1e-12, atol=1e-15)
        assert spr._certify(line, H2, mu)[0].size == 0


def test_certified_solve_survives_a_wrong_candidate(monkeypatch):
    "Plant a candidate that only looks at the last three rows: the certificate must catch it, the result stay exact."
    def short_sighted(line, G, mu, rows=None):
        n = line.n
        C, P = np.full(n + 1, -np.inf), np.zeros(n + 1, dtype=np.int64)
        for j in range(1, n + 1):
            i = np.arange(max(0, j - 3), j)
            val = G[i] + line.scores(i, np.full(i.size, j))
            C[j], P[j] = val.max() - mu, i[np.argmax(val)]
        return C, P

    rng = np.random.default_rng(4)
    p, q = rng.dirichlet(np.ones(300)), rng.dirichlet(np.ones(300))
    for eps in (1.0, 5.0):
        batch = spr._single_batch(p, q, eps, "kl", {})
        want = spr._solve(batch)[0][0]
        monkeypatch.setattr(spr, "_dc_round", short_sighted)
        stats = {}
        got = spr._certified_solve(batch, stats)[0][0]
        monkeypatch.undo()
        assert stats["open_cells"] > 0
        assert abs(got - want) <= 1e-12 * abs(want)


def adversarial_family():
    "The instances where the certificate works hardest, as found by search: near ties, sparse pairs at large ε."
    rng = np.random.default_rng(17)
    k = 1000
    for spread in (1e-3, 1e-6):                                            # every ratio within `spread` of 1
        near = np.full(k, 1 / k) * (1 + spread * rng.uniform(-1, 1, k))
        yield near / near.sum(), np.full(k, 1 / k), 2.0, "kl", {}
    for alpha, eps in ((0.05, 10.0), (3.0, 10.0), (0.05, 0.1)):
        yield rng.dirichlet(np.full(k, alpha)), rng.dirichlet(np.full(k, alpha)), eps, "kl", {}
    for p, q, eps, kind, params, _ in NON_MONOTONE:
        yield np.array(p), np.array(q), eps, kind, params


@pytest.mark.parametrize("case", range(7))
def test_certified_engine_equals_the_quadratic_program_on_the_adversarial_family(case, monkeypatch):
    p, q, eps, kind, params = list(adversarial_family())[case]
    monkeypatch.setattr(spr, "_FAST_GROUPS", 10 ** 9)
    slow = divergence_optimal(p, q, eps, divergence=kind, **params)
    monkeypatch.setattr(spr, "_FAST_GROUPS", 1)
    fast = divergence_optimal(p, q, eps, divergence=kind, **params)
    assert abs(fast.value - slow.value) <= 1e-12 * abs(slow.value)
    stats = {}
    spr._certified_solve(spr._single_batch(p, q, eps, kind, params), stats)
    assert not stats["fallback"]                                          # certified (and repaired), not replaced
    if case == 2:                                                         # sparse, ε = 10: the repair is needed
        assert stats["repaired_columns"] > 0


# ---------------------------------------------------------------- output budgets: a price per block

def budget_optimum(p, q, eps, kind, params, ell):
    "max over contiguous partitions with at most ell blocks of the exactly sorted support, in 80 digits."
    ref = Ref(p, q, eps, kind, params)
    ref.eps_float = eps
    order = sorted((x for x in range(len(p)) if ref.p[x] + ref.q[x] > 0),
                   key=lambda x: ref.p[x] / (ref.p[x] + ref.q[x]))
    n, best = len(order), None
    for mask in range(2 ** max(n - 1, 0)):
        if bin(mask).count("1") + 1 > ell:
            continue
        cuts = [0] + [i + 1 for i in range(n - 1) if mask >> i & 1] + [n]
        val = ref.value([order[a:b] for a, b in zip(cuts[:-1], cuts[1:])])
        best = val if best is None or val > best else best
    return best


def budgets(batch):
    "The unconstrained optimum's boundaries and every budget 1 ≤ ell below its number of blocks."
    free = spr._solve(batch, certified=False)[1]
    return free, range(1, int(free.sum()) - 1)


@pytest.mark.parametrize("kind,params", KINDS, ids=[f"{k}-{p}" for k, p in KINDS])
def test_a_price_per_block_equals_the_layered_program(kind, params, monkeypatch):
    "Every budget below the unconstrained optimum's blocks, k = 1500, ε = 3 and 8: certified, equal to `_layered`."
    monkeypatch.setattr(spr, "_FAST_GROUPS", 1000)
    rng = np.random.default_rng([5, KINDS.index((kind, params))])
    p, q = rng.dirichlet(np.full(1500, 0.5)), rng.dirichlet(np.full(1500, 0.5))
    tried = 0
    for eps in (3.0, 8.0):
        batch = spr._single_batch(p, q, eps, kind, params)
        free, ells = budgets(batch)
        for ell in ells:
            stats = {}
            cuts = spr._budgeted(batch, ell, free, stats)
            assert not stats["layered"] and stats["certified"] and cuts.sum() - 1 == ell
            got, want = (spr._partition_ratios(batch, c)[0] for c in (cuts, spr._layered(batch, ell)))
            assert abs(got - want) <= 1e-12 * abs(want)
            tried += 1
    assert tried >= 2


@pytest.mark.parametrize("seed", range(4))
def test_budgeted_engine_equals_brute_force_in_80_digits(seed, monkeypatch):
    "Small pairs through the public API with every budget, the certified path forced, against enumeration."
    monkeypatch.setattr(spr, "_FAST_GROUPS", 1)
    rng = np.random.default_rng([6, seed])
    kind, params = KINDS[(0, 1, 2, 5)[seed]]                     # (TV's optima have two blocks: no budget binds)
    used = []
    real = spr._lagrangian_budget
    monkeypatch.setattr(spr, "_lagrangian_budget", lambda *a, **k: used.append(1) or real(*a, **k))
    for _ in range(6):
        k = int(rng.integers(5, 9))
        p, q, eps = rng.dirichlet(np.full(k, 0.4)), rng.dirichlet(np.full(k, 0.4)), float(rng.choice([2.0, 6.0, 12.0]))
        for ell in range(2, k + 1):                               # (one block: the value is round-off)
            got = divergence_optimal(p, q, eps, divergence=kind, ell=ell, **params)
            assert len(got.partition) <= ell
            assert _close(got.value, budget_optimum(p, q, eps, kind, params, ell))
    assert used                                                   # the price search ran


@pytest.mark.parametrize("plant", ["the certificate fails", "no price gives ell blocks"])
def test_a_budget_the_price_cannot_certify_falls_back_to_the_layered_program(plant, monkeypatch):
    """No search above found an instance where s ↦ N_s is not concave, so the two ways the search gives up are
    planted: a certificate that fails, and penalised passes that return the partition they start from (the
    search then meets two neighbours on the hull). The answer must come from `_layered`, and be its optimum."""
    monkeypatch.setattr(spr, "_FAST_GROUPS", 1000)
    rng = np.random.default_rng(8)
    p, q = rng.dirichlet(np.ones(1200)), rng.dirichlet(np.ones(1200))
    batch = spr._single_batch(p, q, 6.0, "kl", {})
    free, ells = budgets(batch)
    ell = max(ells)
    assert ell >= 2
    if plant == "the certificate fails":
        monkeypatch.setattr(spr, "_certify", lambda line, H, mu, P=None: (np.array([[0, line.n]] * 5), 1))
        monkeypatch.setattr(spr, "_within_rounding", lambda line, H, mu, cells: (np.zeros(len(cells), bool), 0.0))
        monkeypatch.setattr(spr, "_repair", lambda line, H, P, cnt, mu, cells: (H, P, cnt, 1))
    else:
        monkeypatch.setattr(spr, "_rounds", lambda line, mu, G, P, cnt: (G, P, cnt))
    stats = {}
    cuts = spr._budgeted(batch, ell, free, stats)
    assert stats["layered"] and not stats["certified"]
    monkeypatch.undo()
    assert np.array_equal(cuts, spr._layered(batch, ell))


def test_several_large_pairs_go_to_the_certified_engine_and_equal_the_quadratic_batches(monkeypatch):
    "divergence_optimal_values with three pairs of 1500 groups (threshold 1000), with and without a budget."
    rng = np.random.default_rng(9)
    P0, P1 = rng.dirichlet(np.ones(1500), 3), rng.dirichlet(np.ones(1500), 3)
    grid = [0.0, 0.5, 2.0, 6.0]
    for ell in (None, 3):
        monkeypatch.setattr(spr, "_FAST_GROUPS", 10 ** 9)
        slow = spr.divergence_optimal_values(P0, P1, grid, ell=ell)
        calls = []
        real = spr._certified_solve
        monkeypatch.setattr(spr, "_certified_solve", lambda batch, *a, **k: calls.append(1) or real(batch, *a, **k))
        monkeypatch.setattr(spr, "_FAST_GROUPS", 1000)
        fast = spr.divergence_optimal_values(P0, P1, grid, ell=ell)
        monkeypatch.undo()
        assert len(calls) == 3 * 3                                # every pair at every ε > 0
        assert np.allclose(fast, slow, rtol=1e-12, atol=0)
        assert np.all(fast[:, 0] == 0)


def test_settled_rounds_agree_with_their_pointers_where_plain_rounds_do_not():
    """Far from the penalty of its start (μ = 3.3 ρ*w, k = 20,000, ε = 6), `_rounds` leaves columns whose pointers
    trace partitions worth 4e-4 more than H says, and the certificate cannot close them; `_settled` restarts the
    rounds from those values until none is left, and the certificate then closes every cell."""
    rng = np.random.default_rng([11, 0])
    p, q = rng.dirichlet(np.ones(20_000)), rng.dirichlet(np.ones(20_000))
    batch = spr._single_batch(p, q, 6.0, "kl", {})
    ratio, free = spr._solve(batch)
    line = spr._Line(batch)
    mu = 3.3 * ratio[0] * line.w
    start = spr._warm_values(line, free, mu)
    H, P, _ = spr._rounds(line, mu, *start)
    assert np.max(spr._along_pointers(line, P, mu)[0] - H) > 1e-4                      # the case
    H, P, cnt = spr._settled(line, mu, *start)
    val = spr._along_pointers(line, P, mu)[0]
    assert np.all(val - H <= 1e-14 * (np.abs(H) + mu))
    assert spr._certify(line, H, mu, P=P)[0].size == 0
    i = np.arange(0, line.n, 997)                                                        # and the values are those
    exact = [max(H[t] + line.scores(np.array([t]), np.array([j]))[0] - mu for t in range(j)) for j in i[1:8]]
    assert np.allclose(H[i[1:8]], exact, rtol=1e-12, atol=0)                             # of the recursion


def test_values_along_pointers_equal_a_walk_down_each_chain():
    "`_along_pointers` (pointer doubling) against walking each prefix's chain of back-pointers one link at a time."
    rng = np.random.default_rng(12)
    line = line_of(rng.dirichlet(np.ones(300)), rng.dirichlet(np.ones(300)), 2.0)
    n, mu = line.n, 0.01
    P = np.concatenate(([0], [int(rng.integers(0, j)) for j in range(1, n + 1)]))
    val, cnt = spr._along_pointers(line, P, mu)
    for j in range(n + 1):
        total, blocks, at = 0.0, 0, j
        while at > 0:
            total += line.scores(np.array([P[at]]), np.array([at]))[0] - mu
            blocks, at = blocks + 1, P[at]
        assert cnt[j] == blocks and abs(val[j] - total) <= 1e-13 * (abs(total) + blocks * mu)


# ---------------------------------------------------------------- the engine's plumbing against plain forms

def dc_round_by_recursion(S, G, mu, rows):
    """One `_dc_round` written as the recursion it describes, on a full table S[i, j] of scores: the middle column
    of [cl, ch] takes the first maximiser over the allowed rows ol..oh (positions in `rows`, those below the
    column), which bounds the rows of the columns left and right of it."""
    n = S.shape[1] - 1
    C, P = np.full(n + 1, -np.inf), np.zeros(n + 1, dtype=np.int64)

    def solve(cl, ch, ol, oh):
        if cl > ch:
            return
        mid = (cl + ch) // 2
        allowed = [t for t in range(ol, oh + 1) if rows[t] < mid]
        val = [G[rows[t]] + S[rows[t], mid] for t in allowed]
        best = int(np.argmax(val))
        C[mid], P[mid] = val[best] - mu, rows[allowed[best]]
        solve(cl, mid - 1, ol, allowed[best])
        solve(mid + 1, ch, allowed[best], oh)

    solve(int(rows[0]) + 1, n, 0, len(rows) - 1)
    return C, P


@pytest.mark.parametrize("seed", range(6))
def test_a_round_equals_the_recursion_it_vectorises(seed):
    """`_dc_round` (ranges indexed by a running count, the rows below a column by a rank table, first maximisers by
    the range of each hit) takes the same maxima and the same first maximisers as the plain recursion, on all rows
    and on subsets of them, with ties planted (equal scores) where the first maximiser decides."""
    rng = np.random.default_rng([37, seed])
    n = 200
    p, q = rng.dirichlet(np.full(n, 0.3)), rng.dirichlet(np.full(n, 0.3))
    line = line_of(p, q, [0.5, 2.0, 6.0][seed % 3])
    i, j = np.triu_indices(n + 1, 1)
    S = np.full((n + 1, n + 1), -np.inf)
    S[i, j] = line.scores(i, j)
    mu = 0.3 * float(np.median(S[i, j]))
    G = np.concatenate(([0.0], rng.normal(0, 0.01, n)))
    if seed % 2:                                                  # every row ties at the first middle column
        G[1:n // 2] = 1.0 - S[1:n // 2, (n + 1) // 2]
    for rows in (None, np.sort(rng.choice(n, 40, replace=False)), np.array([3, 4, 5, n - 1])):
        C, P = spr._dc_round(line, G, mu, rows)
        want_C, want_P = dc_round_by_recursion(S, G, mu, np.arange(n) if rows is None else rows)
        assert np.array_equal(C, want_C) and np.array_equal(P, want_P)


def test_block_masses_by_ranges_and_packed_prefix_sums_are_the_plain_ones():
    """`_Line.masses` with one end per range (`cnt` the range of each block) gives the floats of the same call with
    the ends repeated, and both are within 4 ulps of the exactly rounded sums of the blocks' group masses."""
    import math
    rng = np.random.default_rng(38)
    n = 500
    p, q = rng.dirichlet(np.full(n, 0.2)), rng.dirichlet(np.full(n, 0.2))
    line = line_of(p, q, 1.0)
    ends = np.sort(rng.choice(np.arange(2, n + 1), 60, replace=False))
    cnt = rng.integers(1, 3, ends.size)
    cnt = np.minimum(cnt, ends)
    seg = np.repeat(np.arange(ends.size), cnt)
    starts = np.concatenate([np.arange(e - c, e) for e, c in zip(ends, cnt)])
    by_range = line.masses(starts, ends, seg)
    plain = line.masses(starts, ends[seg])
    assert all(np.array_equal(x, y) for x, y in zip(by_range[:2], plain[:2]))
    a, b = line.batch.a[0], line.batch.b[0]
    for t, (s, e) in enumerate(zip(starts, ends[seg])):
        for got, mass in ((by_range[0][t], a), (by_range[1][t], b)):
            exact = math.fsum(mass[s:e])
            assert abs(got - exact) <= 4 * np.spacing(exact)


@pytest.mark.parametrize("kind,params", [("kl", {}), ("hellinger", {}), ("renyi", {"renyi_order": 2.0})])
def test_corner_scores_are_the_scores_at_the_corners(kind, params):
    """`_Line.corners` (u and v formed once per side on the KL kernel) equals `_Line.at` at each corner, and on the
    KL kernel `_Line.at` (scalar w, c) equals the table's kernel `_kl_scores` bit for bit."""
    rng = np.random.default_rng(39)
    line = line_of(rng.dirichlet(np.ones(50)), rng.dirichlet(np.ones(50)), 3.0, kind, params)
    P, Q = np.sort(rng.random((2, 1000)), axis=0), np.sort(rng.random((2, 1000)), axis=0)
    got = line.corners(P, Q)
    want = [line.at(x, y) for x in P for y in Q]
    assert all(np.array_equal(g, w, equal_nan=True) for g, w in zip(got, want))
    if line.kl:
        zero = np.zeros(1000, dtype=np.intp)
        assert np.array_equal(line.at(P[0], Q[1]), spr._kl_scores(line.batch, P[0], Q[1], None, zero))


@pytest.mark.parametrize("blocks", [3, 4096, 4097, 9000])
def test_boundaries_from_pointers_on_short_and_long_walks(blocks):
    "`_cuts_from_pointers` (numpy scalars, then a list past 4,096 links) against a walk on a Python list."
    rng = np.random.default_rng(blocks)
    n = 12_000
    cuts = np.sort(rng.choice(np.arange(1, n), blocks - 1, replace=False))
    bounds = np.concatenate(([0], cuts, [n]))
    P = np.zeros(n + 1, dtype=np.int64)
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        P[lo + 1:hi + 1] = lo
    want, at = {n}, n
    while at > 0:
        at = int(P[at])
        want.add(at)
    got = spr._cuts_from_pointers(P, n)
    assert set(np.flatnonzero(got[0]).tolist()) == want and got[0].sum() == blocks + 1
