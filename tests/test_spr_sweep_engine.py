"""The sweep engine for KL batches (`_kl_dinkelbach`: scores with the instances last, certifying passes without
back-pointers, maximisers recovered by a traceback through the table) against independent references.

* Edge instances (exact ties, zero masses on one or both sides, masses of 1e-300, zero-mass padding groups,
  ε = 0, ε small enough that c·TV is near the kernel's 1e-2 threshold, ε = 27.5 where w = e^{−ε} ≈ 1.1e-12 is
  near its 1e-12 threshold) against the arbitrary-precision enumeration of every contiguous partition of
  tests/test_exact_spr.py (exact rationals, mpmath, no DP).
* A larger sweep against the paper's layered program (`spr_dp`, no Dinkelbach, no table), in batches small
  enough that every path of the engine runs: the cold first pass with pointers, certifying passes, traceback,
  passes over all columns and over gathered ones.
* The parts against the general engine: the same scores bitwise, the same maxima bitwise, and a traceback that
  returns a maximiser of the pass whatever partitions it is told to check first.
"""
import numpy as np
import pytest

from ldpbook import spr as spr_module
from ldpbook.spr import divergence_optimal_values, spr_dp
from test_exact_spr import _close, reference_optimum


def edge_pair(rng, k):
    "A pair with exact ties, zeros on either side or both, and tiny masses, but far apart (TV ≥ 0.3)."
    while True:
        p, q = rng.dirichlet(np.full(k, 0.4)), rng.dirichlet(np.full(k, 0.4))
        if k >= 3:
            q[1] = q[0] * p[1] / p[0]                       # an exact tie of likelihood ratios
        if k >= 4 and rng.random() < 0.5:
            p[rng.integers(k)] = 0.0
        if k >= 4 and rng.random() < 0.5:
            q[rng.integers(k)] = 0.0
        if k >= 5 and rng.random() < 0.4:
            j = rng.integers(k)
            p[j] = q[j] = 0.0                               # a symbol of no mass (and a padding group)
        if k >= 5 and rng.random() < 0.4:
            p[rng.integers(k)] = 1e-300
        p, q = p / p.sum(), q / q.sum()
        if 0.5 * np.abs(p - q).sum() >= 0.3:
            return p, q


class Calls:
    "Counts what the engine did: batches on the KL path, cold first passes, tracebacks, gathered passes."

    def __init__(self, monkeypatch):
        self.batches = self.cold = self.tracebacks = self.gathered = self.full = 0
        self.width = None
        for name in ("_kl_dinkelbach", "_traceback", "_max_pass"):
            monkeypatch.setattr(spr_module, name, getattr(self, name[1:])(getattr(spr_module, name)))

    def kl_dinkelbach(self, f):
        def wrapped(batch, ratio, cuts, workspace=None, cold=False, **kw):
            self.batches, self.cold, self.width = self.batches + 1, self.cold + bool(cold), batch.w.size
            return f(batch, ratio, cuts, workspace, cold, **kw)
        return wrapped

    def traceback(self, f):
        def wrapped(*args):
            self.tracebacks += 1
            return f(*args)
        return wrapped

    def max_pass(self, f):
        def wrapped(rows, penalty, n_groups, pointers=False):
            self.gathered += penalty.size < self.width
            self.full += penalty.size == self.width
            return f(rows, penalty, n_groups, pointers)
        return wrapped


def test_kl_sweep_is_exact_on_edge_instances(monkeypatch):
    rng = np.random.default_rng(2024)
    T = 8
    pairs = [edge_pair(rng, int(rng.integers(2, 8))) for _ in range(T)]
    k = max(p.size for p, _ in pairs)
    P0, P1 = np.zeros((T, k)), np.zeros((T, k))
    for t, (p, q) in enumerate(pairs):                      # pad with zero-mass symbols to a common k
        P0[t, :p.size], P1[t, :q.size] = p, q
    grid = np.array([0.0, 0.04, 0.1, 0.5, 1.0, 2.5, 6.0, 12.0, 20.0, 27.5])
    monkeypatch.setattr(spr_module, "_SWEEP_BATCH", 2 * T * k * (k + 1) // 2)   # two values of ε per batch
    calls = Calls(monkeypatch)
    V = divergence_optimal_values(P0, P1, grid)
    assert calls.batches >= 3 and calls.cold == 1 and calls.tracebacks >= 1
    bad = []
    for t in range(T):
        for e, eps in enumerate(grid):
            ref, _ = reference_optimum(P0[t], P1[t], float(eps), "kl", {})
            if not _close(V[t, e], ref, 1e-9):
                bad.append((t, eps, V[t, e], float(ref)))
    assert not bad, bad


@pytest.mark.parametrize("seed", [0, 1])
def test_kl_sweep_equals_the_layered_program(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    T, k = 12, 36
    pairs = [edge_pair(rng, k) for _ in range(T)]
    P0, P1 = np.array([p for p, _ in pairs]), np.array([q for _, q in pairs])
    grid = np.round(np.concatenate(([0.0], np.arange(1, 40) * 0.3)), 10)
    monkeypatch.setattr(spr_module, "_SWEEP_BATCH", 3 * T * k * (k + 1) // 2)   # three values of ε per batch
    calls = Calls(monkeypatch)
    V = divergence_optimal_values(P0, P1, grid)
    assert calls.tracebacks >= 5 and calls.gathered >= 1 and calls.full >= calls.batches
    for t in range(T):
        for e in range(grid.size):
            ref = spr_dp(P0[t], P1[t], grid[e])[0]
            assert abs(V[t, e] - ref) <= 1e-9 * abs(ref) + 1e-300, (t, grid[e], V[t, e], ref)


@pytest.mark.parametrize("n_eps, per_batch", [(101, 11), (101, 10), (101, 5), (101, 2), (101, 1), (7, 11), (1, 4),
                                               (10, 3), (2, 2), (3, 7), (40, 6), (0, 3)])
def test_sweep_schedule_solves_every_eps_once_from_its_neighbour(n_eps, per_batch):
    batches = spr_module._sweep_schedule(n_eps, per_batch)
    if n_eps == 0:
        assert batches == []
        return
    assert sorted(position for batch in batches for position, _ in batch) == list(range(n_eps))
    assert all(len(batch) <= per_batch for batch in batches)
    cold = [position for position, source in batches[0]]
    assert all(source is None for _, source in batches[0])
    assert len(cold) == min(n_eps, (per_batch + 1) // 2)            # half the batch starts cold, not all of it
    assert per_batch % 2 == 0 or cold[0] == 0                       # an odd batch: one segment starts at ε = 0
    for before, batch in zip(batches, batches[1:]):
        assert batch and all(source is not None and abs(before[source][0] - position) == 1
                             for position, source in batch)


def kl_batch(rng, n, k):
    pairs = [edge_pair(rng, k) for _ in range(n)]
    eps = rng.uniform(0.3, 12.0, n)
    a, b, d = spr_module._padded_groups(np.array([p for p, _ in pairs]), np.array([q for _, q in pairs]), 1.0)
    return spr_module._Batch(a, b, d, np.exp(-eps), -np.expm1(-eps), "kl", {}, logw=-eps)


def test_parts_agree_with_the_general_engine():
    rng = np.random.default_rng(7)
    batch = kl_batch(rng, 9, 14)
    n, n_groups = batch.a.shape
    assert spr_module._kl_kernel(batch)
    S = spr_module._Scores(batch, store=False)
    ca, cb = (np.multiply(x.T, batch.c, order="C") for x in (batch.a, batch.b))
    table = [np.empty((i, n)) for i in range(1, n_groups + 1)]
    for (i, row), (j, general) in zip(spr_module._kl_rows(ca, cb, batch.w, table), S.rows()):
        assert i == j
        np.testing.assert_array_equal(row, general.T)                # the same numbers, transposed
    penalty = rng.uniform(0.0, 0.05, n) * batch.w
    H, M, back = spr_module._max_pass(enumerate(table, 1), penalty, n_groups, pointers=True)
    N, count, ptr = spr_module._penalised_pass(S, penalty)
    np.testing.assert_array_equal(spr_module._pointers_to_cuts(back), spr_module._pointers_to_cuts(ptr))
    np.testing.assert_array_equal(H[n_groups] + penalty * count, N)


def test_traceback_returns_a_maximiser_whatever_it_checks_first():
    rng = np.random.default_rng(8)
    batch = kl_batch(rng, 11, 16)
    n, n_groups = batch.a.shape
    ca, cb = (np.multiply(x.T, batch.c, order="C") for x in (batch.a, batch.b))
    flat = np.empty(n * n_groups * (n_groups + 1) // 2)
    ends = n * np.arange(n_groups + 1) * np.arange(1, n_groups + 2) // 2
    table = [flat[ends[i - 1]:ends[i]].reshape(i, n) for i in range(1, n_groups + 1)]
    penalty = rng.uniform(0.0, 0.05, n) * batch.w
    H, M, back = spr_module._max_pass(spr_module._kl_rows(ca, cb, batch.w, table), penalty, n_groups, True)
    best = spr_module._pointers_to_cuts(back)
    cols = np.arange(n)
    guesses = {"the maximiser": best, "one block": np.eye(1, n_groups + 1, 0, dtype=bool) | np.eye(
        1, n_groups + 1, n_groups, dtype=bool), "singletons": np.ones((n, n_groups + 1), dtype=bool)}
    for _ in range(3):
        random = rng.random((n, n_groups + 1)) < 0.3
        random[:, 0] = random[:, n_groups] = True
        guesses[f"random {_}"] = random
    for name, old in guesses.items():
        old = np.broadcast_to(old, (n, n_groups + 1)).copy()
        cuts = spr_module._traceback(flat, n, H, M, cols, old)
        assert np.all(cuts[:, 0]) and np.all(cuts[:, n_groups]), name
        A, B, Dd, inst, s = spr_module._cut_blocks(batch, cuts)
        total = np.bincount(inst, spr_module._kl_scores(batch, A, B, Dd, inst), minlength=n) - penalty * s
        np.testing.assert_allclose(total, H[n_groups], rtol=1e-12, atol=1e-15, err_msg=name)


def per_pair_groups(P0, P1, gamma=1.0):
    "The padded group masses built pair by pair with `_lr_order` (exact re-sorting of close keys, tie groups)."
    groups = [spr_module._group_masses(p, q, *spr_module._lr_order(p, q)[:2], gamma) for p, q in zip(P0, P1)]
    out = np.zeros((3, len(groups), max(g[0].size for g in groups)))
    for t, g in enumerate(groups):
        for j in range(3):
            out[j, t, :g[j].size] = g[j]
    return out


def count_calls(monkeypatch, name):
    "Replace spr_module.<name> by a wrapper that counts its calls; returns the counter (a one-element list)."
    calls, f = [0], getattr(spr_module, name)

    def wrapped(*args, **kwargs):
        calls[0] += 1
        return f(*args, **kwargs)
    monkeypatch.setattr(spr_module, name, wrapped)
    return calls


def test_padded_groups_sorts_plain_pairs_in_one_call(monkeypatch):
    from fractions import Fraction
    rng = np.random.default_rng(11)
    P0, P1 = rng.dirichlet(np.ones(40), 7), rng.dirichlet(np.ones(40), 7)
    calls = count_calls(monkeypatch, "_lr_order")
    a, b, d = spr_module._padded_groups(P0, P1, 0.7)
    assert calls[0] == 0                                     # the one-call path: no pair went through _lr_order
    np.testing.assert_array_equal(np.stack((a, b, d)), per_pair_groups(P0, P1, 0.7))
    for t in range(7):                                       # one symbol per group, in increasing exact ratio
        ratios = [Fraction(float(x)) / Fraction(float(y)) for x, y in zip(a[t], b[t])]
        assert ratios == sorted(ratios) and len(set(ratios)) == 40
        assert sorted(a[t].tolist()) == sorted(P0[t].tolist())
        np.testing.assert_array_equal(d[t], a[t] - 0.7 * b[t])


@pytest.mark.parametrize("defect", ["tie", "one ulp", "zero in p", "zero in both"])
def test_padded_groups_sends_other_pairs_to_the_exact_order(monkeypatch, defect):
    rng = np.random.default_rng(12)
    P0, P1 = rng.dirichlet(np.ones(12), 5), rng.dirichlet(np.ones(12), 5)
    p, q = P0[3], P1[3]
    if defect == "tie":
        q[1] = q[0] * p[1] / p[0]
    elif defect == "one ulp":                                # two ratios a few ulps apart: re-sorted exactly
        q[1] = np.nextafter(q[0] * p[1] / p[0], 1.0)
    elif defect == "zero in p":
        p[2] = 0.0
    else:
        p[2] = q[2] = 0.0
    calls = count_calls(monkeypatch, "_lr_order")
    got = np.stack(spr_module._padded_groups(P0, P1, 1.0))
    assert calls[0] == 5                                     # every pair through the exact order
    np.testing.assert_array_equal(got, per_pair_groups(P0, P1))


def test_last_marked_and_below_against_loops():
    rng = np.random.default_rng(13)
    for trial in range(40):
        n, width = int(rng.integers(1, 9)), int(rng.integers(1, 30))
        mask = rng.random((n, width)) < rng.random()
        mask[:, 0] = True
        last = spr_module._last_marked(mask)
        below = spr_module._below(mask)
        for m in range(n):
            for c in range(width):
                assert last[m, c] == max(j for j in range(c + 1) if mask[m, j])
                assert below[m, c] == (0 if c == 0 else max(j for j in range(c) if mask[m, j]))
        inst, pos = spr_module._nonzero(mask)
        np.testing.assert_array_equal(np.stack((inst, pos)), np.stack(np.nonzero(mask)))


@pytest.mark.parametrize("ell", [None, 2])
def test_plain_sweep_in_uneven_batches_equals_the_layered_program(monkeypatch, ell):
    """Dirichlet pairs (the one-call grouping), batches of two and three values of ε: the warm start of each batch
    reuses the previous batch's blocks, unless the budget ell changed its partitions or the batch starts two
    neighbours from one position (the second batch, next to the middle of a segment)."""
    rng = np.random.default_rng(14)
    T, k = 6, 24
    P0, P1 = rng.dirichlet(np.ones(k), T), rng.dirichlet(np.ones(k), T)
    grid = np.round(np.arange(14) * 0.7, 10)                 # 14 values: batches of 2, 3, 3, 3 and 3
    monkeypatch.setattr(spr_module, "_SWEEP_BATCH", 3 * T * k * (k + 1) // 2)
    lr, blocks = count_calls(monkeypatch, "_lr_order"), count_calls(monkeypatch, "_cut_blocks")
    V = divergence_optimal_values(P0, P1, grid, ell=ell)
    assert lr[0] == 0
    assert [len(b) for b in spr_module._sweep_schedule(grid.size, 3)] == [2, 3, 3, 3, 3]
    assert blocks[0] == (6 if ell is None else 9)            # with the budget, each warm start recomputes its blocks
    for t in range(T):
        for e in range(grid.size):
            ref = spr_dp(P0[t], P1[t], grid[e], ell=ell)[0]
            assert abs(V[t, e] - ref) <= 1e-9 * abs(ref) + 1e-300, (t, grid[e], V[t, e], ref)
