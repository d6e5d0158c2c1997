"""Could the Fig. 1(b) sweep certify its optima from fewer scores than the full table? Measured at k = 100.

The speed guard's sweep (k = 100, 100 Dirichlet(1) pairs x 101 eps) fills, per instance, the table of all
k(k + 1)/2 = 5050 interval scores in its first Dinkelbach pass. A partition is certified optimal by potentials H
with H_0 = 0 and H_j - H_i >= mu(i, j) - rho w for all i < j (theorem "Dual certificate" in nbs/01_spr.ipynb);
the large-k engine checks that inequality over rectangles of (i, j) by bounds of the scores at the corners of
their mass boxes, plain and tilted (lemma "Rectangle bounds"). This script measures, on the sweep's own
instances, how far such rectangle tests get at k = 100 when fed the exact potentials of the optimum (those a
program restricted to some of the cells computes when its cells hold the best partition of every prefix):

1. where one sweep spends its CPU time (the first passes, which fill the table, and the rest), with the
   paper's DP timed on a subsample: the ratio the guard would show if everything but the first passes were free;
2. fixed tiles of side B off a band of width L around the diagonal (the band scored exactly, as a restricted
   program would): the share of tiles the plain corner test and the tilted test leave open, the share of instances
   whose tiles all close, and the scores a restricted program plus its repairs needs (the band and the cells
   of the tiles left open) against the table's 5050. No rounding margin is kept, so a rigorous test closes at
   most these;
3. the large-k engine's own quadtree certificate (`_certify`, rounding margins included) on these instances
   with the exact potentials: rectangles bounded by their four corner scores, tilted tests, CPU time;
4. what a score costs in the table (running sums, contiguous rows: `_kl_rows`) and read through index arrays,
   as a restricted program must read the cells it keeps (the same cells for every instance of a batch, or
   cells of its own per instance);
5. the floor of any design that computes every score of every instance with NumPy in float64: each elementwise
   pass of the first Dinkelbach pass (two running sums, u/v, its log, the product with u; the pass's sum and
   row maximum) timed alone over the sweep's 101 x 100 x 5050 cells, in the table's own row shapes.

Usage:
    python benchmarks/bench_spr_certificate.py             # all five (a few seconds)
    python benchmarks/bench_spr_certificate.py --pairs 20  # fewer pairs in parts 2 and 3
Times are CPU seconds of this process (time.process_time).
"""
import argparse
import time

import numpy as np

from bench_spr import paper_dp_value
from ldpbook import spr
from ldpbook.spr import divergence_optimal_values

K, T = 100, 100
GRID = np.round(np.arange(101) * 0.1, 10)
EPS = (0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 10.0)          # where parts 2 and 3 look


def sweep_pairs():
    "The speed guard's pairs (benchmarks/guard.py, spr_sweep_ratio)."
    rng = np.random.default_rng(0)
    return rng.dirichlet(np.ones(K), T), rng.dirichlet(np.ones(K), T)


def time_split(P0, P1, runs=5, stride=10):
    """Median CPU seconds of one sweep, of its first passes (table filled and row maxima taken), of the later
    passes and of the tracebacks, and the paper's DP extrapolated from every stride-th instance."""
    spent, first = {}, {"pending": False}
    max_pass, traceback, dinkelbach = spr._max_pass, spr._traceback, spr._kl_dinkelbach

    def timed(name, fn):
        def run(*args, **kwargs):
            start = time.process_time()
            out = fn(*args, **kwargs)
            key = name
            if name == "passes" and first["pending"]:
                key, first["pending"] = "first passes", False
            spent[key] = spent.get(key, 0.0) + time.process_time() - start
            return out
        return run

    def dink(*args, **kwargs):
        first["pending"] = True
        return dinkelbach(*args, **kwargs)

    spr._max_pass, spr._traceback, spr._kl_dinkelbach = timed("passes", max_pass), timed("tracebacks", traceback), dink
    try:
        divergence_optimal_values(P0, P1, GRID)                      # warm-up: buffers, caches
        rows = []
        for _ in range(runs):
            spent.clear()
            start = time.process_time()
            divergence_optimal_values(P0, P1, GRID)
            rows.append((time.process_time() - start, spent.get("first passes", 0.0), spent.get("passes", 0.0),
                         spent.get("tracebacks", 0.0)))
    finally:
        spr._max_pass, spr._traceback, spr._kl_dinkelbach = max_pass, traceback, dinkelbach
    total, firsts, later, back = np.median(np.array(rows), axis=0)
    cells = [(t, e) for t in range(T) for e in range(GRID.size)][::stride]
    start = time.process_time()
    for t, e in cells:
        paper_dp_value(P0[t], P1[t], GRID[e])
    base = (time.process_time() - start) * T * GRID.size / len(cells)
    return total, firsts, later, back, base


def optima(a, b, d, eps):
    "Optimal ratios of the pairs' instances at one eps, by the engine (`_solve`)."
    w, c = np.exp(-eps), -np.expm1(-eps)
    n = a.shape[0]
    batch = spr._Batch(a, b, d, np.full(n, w), np.full(n, c), "kl", {}, logw=np.full(n, -eps))
    return batch, spr._solve(batch)[0]


def exact_potentials(A, B, w, c, mu):
    """Exact potentials H (n, k + 1) of the penalised problems with penalties mu (n,), over the full table of
    plain KL scores u log(u/v) from the prefix masses A, B (n, k + 1), and the scores (n, k(k + 1)/2) by pair."""
    n, k1 = A.shape
    i, j = np.triu_indices(k1, 1)
    u, v = w + c * (A[:, j] - A[:, i]), w + c * (B[:, j] - B[:, i])
    S = u * np.log(u / v)
    H = np.zeros((n, k1))
    for col in range(1, k1):
        on = j == col
        H[:, col] = np.max(H[:, i[on]] + S[:, on], axis=1) - mu
    return H


def kl(P, Q, w, c):
    u, v = w + c * P, w + c * Q
    return u * np.log(u / v)


def tile_census(A, B, H, mu, w, c, side, band):
    """For the tiles I x J (rows of `side`, columns of `side` from each row tile's start + 1) lying wholly
    beyond the band j - i <= `band`: the shares of tiles not closed by the corner test and by the tilted test,
    the share of instances whose tiles all close (each test), and the mean number of scores a restricted program
    needs (the band's cells and those of the tiles the tilted test leaves open)."""
    n, k1 = A.shape
    k = k1 - 1
    open_corner, open_tilted, tiles = np.zeros(n), np.zeros(n), 0
    cells = np.full(n, float(sum(min(band, j) for j in range(1, k1))))
    for i0 in range(0, k, side):
        i1 = min(i0 + side - 1, k - 1)
        for j0 in range(i0 + 1, k1, side):
            j1 = min(j0 + side - 1, k)
            if j1 - i0 <= band:                                   # holds band cells: scored exactly
                continue
            tiles += 1
            lowP, highP = A[:, j0] - A[:, i1], A[:, j1] - A[:, i0]
            lowQ, highQ = B[:, j0] - B[:, i1], B[:, j1] - B[:, i0]
            box = [(x, y) for x in (lowP, highP) for y in (lowQ, highQ)]
            top = np.maximum.reduce([kl(x, y, w, c) for x, y in box])
            closed = top - mu <= H[:, j0:j1 + 1].min(axis=1) - H[:, i0:i1 + 1].max(axis=1)
            u, v = w + c * (lowP + highP) / 2, w + c * (lowQ + highQ) / 2
            tP, tQ = c * (np.log(u / v) + 1), -c * u / v                  # the gradient at the box's centre
            R = np.maximum.reduce([kl(x, y, w, c) - tP * x - tQ * y for x, y in box])
            phi = H - tP[:, None] * A - tQ[:, None] * B
            tilted = R - mu <= phi[:, j0:j1 + 1].min(axis=1) - phi[:, i0:i1 + 1].max(axis=1)
            open_corner += ~closed
            open_tilted += ~tilted
            cells += ~tilted * ((i1 - i0 + 1) * (j1 - j0 + 1))
    return (open_corner.mean() / tiles, open_tilted.mean() / tiles, np.mean(open_corner == 0),
            np.mean(open_tilted == 0), cells.mean(), tiles)


def quadtree_census(batch, ratio, pairs):
    """The engine's quadtree certificate `_certify` on the first `pairs` instances with their exact potentials
    (from the full table, by `_Line.scores`): rectangles bounded by corner scores, tilted tests and single cells
    per instance, open cells outside the rounding allowance, and CPU seconds per instance."""
    counts = {"corner": 0, "tilted": 0}
    corner_scores, tilted = spr._corner_scores, spr._tilted

    def corners(line, i0, *rest):
        counts["corner"] += i0.size
        return corner_scores(line, i0, *rest)

    def tilt(line, H, mu, bounds, rect, *rest, **kwargs):
        counts["tilted"] += rect[0].size
        return tilted(line, H, mu, bounds, rect, *rest, **kwargs)

    spr._corner_scores, spr._tilted = corners, tilt
    seconds, opened, left = 0.0, 0, 0
    try:
        for t in range(pairs):
            one = spr._Batch(*(x[t:t + 1] for x in (batch.a, batch.b, batch.d, batch.w, batch.c)), "kl", {},
                             logw=batch.logw[t:t + 1])
            line, mu = spr._Line(one), float(ratio[t] * batch.w[t])
            H, P = np.zeros(line.n + 1), np.zeros(line.n + 1, dtype=np.int64)
            for j in range(1, line.n + 1):                       # exact H over every start, first maximisers
                val = H[:j] + line.scores(np.arange(j), np.full(j, j))
                P[j] = int(np.argmax(val))
                H[j] = val[P[j]] - mu
            start = time.process_time()
            cells, count = spr._certify(line, H, mu, P=P)
            seconds += time.process_time() - start
            within, _ = spr._within_rounding(line, H, mu, cells)
            opened, left = opened + count, left + int((~within).sum())
    finally:
        spr._corner_scores, spr._tilted = corner_scores, tilted
    return counts["corner"] / pairs, counts["tilted"] / pairs, opened / pairs, left, seconds / pairs


def score_costs(P0, P1, share=0.3, repeat=5):
    """CPU nanoseconds per score: the table of a sweep batch (11 eps x the pairs) by `_kl_rows`, and a random
    `share` of its cells from prefix sums, gathered as whole rows (the same cells for every instance) and per
    instance (flat index arrays)."""
    a, b, _ = spr._padded_groups(P0, P1, 1.0)
    reps = 11
    a, b = np.tile(a, (reps, 1)), np.tile(b, (reps, 1))
    n, k = a.shape
    w = np.repeat(np.exp(-np.linspace(0.5, 10.0, reps)), P0.shape[0])
    c = -np.expm1(np.log(w))
    ca, cb = (np.multiply(x.T, c, order="C") for x in (a, b))
    flat = np.empty(n * k * (k + 1) // 2)
    ends = n * np.arange(k + 1) * np.arange(1, k + 2) // 2
    table = [flat[ends[i - 1]:ends[i]].reshape(i, n) for i in range(1, k + 1)]

    def fill():
        for _ in spr._kl_rows(ca, cb, w, table):
            pass

    A, B = (np.concatenate((np.zeros((n, 1)), np.cumsum(x, axis=1)), axis=1) for x in (a, b))
    i, j = np.triu_indices(k + 1, 1)
    keep = np.sort(np.random.default_rng(5).choice(i.size, int(share * i.size), replace=False))
    i, j = i[keep], j[keep]
    At, Bt = A.T.copy(), B.T.copy()

    def rows():
        return kl(At[j] - At[i], Bt[j] - Bt[i], w, c)

    inst = np.repeat(np.arange(n), i.size)
    start, end = inst * (k + 1) + np.tile(i, n), inst * (k + 1) + np.tile(j, n)
    Af, Bf, wi, ci = A.ravel(), B.ravel(), w[inst], c[inst]

    def ragged():
        return kl(Af[end] - Af[start], Bf[end] - Bf[start], wi, ci)

    out = []
    for fn, count in ((fill, flat.size), (rows, i.size * n), (ragged, i.size * n)):
        best = float("inf")
        for _ in range(repeat):
            begin = time.process_time()
            fn()
            best = min(best, time.process_time() - begin)
        out.append(best / count * 1e9)
    return out


def pass_costs(n=1100, repeat=3):
    """CPU milliseconds of each elementwise pass of a first Dinkelbach pass over the sweep's cells: rows of shape
    (i, n), i = 1..K, for n = 1100 instances (a sweep batch: 11 eps x 100 pairs), scaled to the sweep's 10,100
    instances. Best of `repeat`."""
    rng = np.random.default_rng(6)
    U, V, out = (rng.uniform(0.5, 1.5, (K, n)) for _ in range(3))
    x, H, top = rng.uniform(0, 0.01, n), rng.uniform(0, 1, (K, n)), np.empty(n)
    out32, V32 = np.empty((K, n), np.float32), V.astype(np.float32)
    passes = {"running sum (u)": lambda i: np.add(U[:i], x, out=U[:i]),
              "running sum (v)": lambda i: np.add(V[:i], x, out=V[:i]),
              "u / v": lambda i: np.divide(U[:i], V[:i], out=out[:i]),
              "log": lambda i: np.log(V[:i], out=out[:i]),
              "times u": lambda i: np.multiply(U[:i], V[:i], out=out[:i]),
              "pass: H + score": lambda i: np.add(H[:i], V[:i], out=out[:i]),
              "pass: row maximum": lambda i: np.maximum.reduce(V[:i], axis=0, out=top),
              "(log in float32)": lambda i: np.log(V32[:i], out=out32[:i])}
    scale = T * GRID.size / n
    costs = {}
    for name, op in passes.items():
        best = float("inf")
        for _ in range(repeat):
            begin = time.process_time()
            for i in range(1, K + 1):
                op(i)
            best = min(best, time.process_time() - begin)
        costs[name] = best * scale * 1e3
    return costs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=T, help="pairs in the tile census (the quadtree takes 20)")
    args = parser.parse_args()
    P0, P1 = sweep_pairs()

    total, firsts, later, back, base = time_split(P0, P1)
    print(f"1. One sweep (median of 5): {total:.3f} s CPU; first passes {firsts:.3f} s, later passes {later:.3f} s, "
          f"tracebacks {back:.3f} s, the rest {total - firsts - later - back:.3f} s.\n"
          f"   The paper's DP (extrapolated from 1 instance in 10): {base:.1f} s, so {base / total:.0f}x today; "
          f"100x needs {base / 100:.3f} s, and the first passes alone allow at most {base / firsts:.0f}x.")

    a, b, d = spr._padded_groups(P0[:args.pairs], P1[:args.pairs], 1.0)
    A, B = (np.concatenate((np.zeros((args.pairs, 1)), np.cumsum(x, axis=1)), axis=1) for x in (a, b))
    print("\n2. Fixed tiles beyond a band, with the exact potentials (no rounding margin: an upper bound on what "
          "closes).\n   eps  band side tiles  open: corner tilted   all closed: corner tilted   scores needed / 5050")
    for eps in EPS:
        batch, ratio = optima(a, b, d, eps)
        w, c = float(batch.w[0]), float(batch.c[0])
        H = exact_potentials(A, B, w, c, ratio * w)
        assert np.allclose(H[:, -1], ratio * (1 - w), rtol=1e-12, atol=0), "the potentials miss the optimum"
        for band, side in ((10, 4), (10, 8), (20, 4), (20, 10)):
            oc, ot, ac, at, cells, tiles = tile_census(A, B, H, ratio * w, w, c, side, band)
            print(f"  {eps:4.1f} {band:5d} {side:4d} {tiles:5d}        {oc:6.1%} {ot:6.1%}"
                  f"               {ac:6.1%} {at:6.1%}   {cells:6.0f} ({cells / 5050:.0%})")

    pairs = min(20, args.pairs)
    print(f"\n3. The engine's quadtree certificate with the exact potentials ({pairs} pairs per eps; per instance)."
          "\n   eps  corner-bounded rectangles (x4 scores)  tilted tests  opened  open cells  CPU per instance")
    for eps in EPS:
        batch, ratio = optima(a, b, d, eps)
        corner, tilt, opened, left, seconds = quadtree_census(batch, ratio, pairs)
        print(f"  {eps:4.1f}  {corner:8.0f} ({4 * corner:6.0f})                    {tilt:8.0f}  {opened:6.0f}"
              f"  {left:10d}  {seconds * 1e3:6.2f} ms")
    print(f"   (the whole sweep today: {total / (T * GRID.size) * 1e6:.0f} us per instance, "
          f"table included)")

    table, rows, ragged = score_costs(P0, P1)
    print(f"\n4. CPU per score (best of 5): the table {table:.2f} ns; 30% of the cells from prefix sums, gathered as "
          f"whole rows {rows:.2f} ns, per instance {ragged:.2f} ns.")

    costs = pass_costs()
    cells = T * GRID.size * K * (K + 1) // 2
    print(f"\n5. Each elementwise pass alone over the sweep's {cells:,} cells (CPU ms, best of 3):")
    for name, ms in costs.items():
        print(f"   {name:20s} {ms:6.1f}")
    scores = sum(costs[n] for n in ("u / v", "log", "times u"))
    sums = costs["running sum (u)"] + costs["running sum (v)"]
    dp = costs["pass: H + score"] + costs["pass: row maximum"]
    print(f"   the scores (u/v, log, times u) {scores:.0f} ms, their running sums {sums:.0f} ms, one pass of the "
          f"program {dp:.0f} ms:\n   {scores + dp:.0f}-{scores + sums + dp:.0f} ms for one pass over every cell "
          f"in float64, against {base / 100 * 1e3:.0f} ms for the whole sweep at 100x.")


if __name__ == "__main__":
    main()
