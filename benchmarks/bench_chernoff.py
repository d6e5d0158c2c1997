"""Cost of ldpbook.chernoff.chernoff_optimal: dynamic-program calls and time, and what the curvature bound buys.

Baseline: the same branch-and-bound over λ with the Lipschitz "tent" bound only (|H'| ≤ L), the bound a first
look at the problem suggests. Its intervals must shrink to width ≈ tol·C*/L near the optimum, so it is run at a
loose tolerance (1e-3) where it still finishes (capped at 10,000 calls); the contender (tent and curvature bound) runs at the same
tolerance and at the default 1e-8.

Usage:
    python benchmarks/bench_chernoff.py            # k = 6, 100 sweeps and one k = 1000 instance (a few minutes)
    python benchmarks/bench_chernoff.py --quick    # smaller sweeps, no k = 1000
    python benchmarks/bench_chernoff.py --figure   # the chapter's full figure, extrapolated from a subsample
Times are CPU seconds of this process (time.process_time), less sensitive than wall time to other jobs.
"""
import argparse
import heapq
import time

import numpy as np

from ldpbook.chernoff import _Search, chernoff_optimal, log_ratio_range


def lipschitz_only(p, q, eps, tol, max_dp_calls=10_000, grid=8):
    "Branch-and-bound over λ with the tent bound (H(a) + H(b) + L h)/2 only; returns (value, upper, DP calls)."
    lo, hi = log_ratio_range(p, q, eps)
    L = max(hi, -lo)
    search = _Search(np.asarray(p, float), np.asarray(q, float), eps, len(p))
    lams = np.linspace(0.0, 1.0, grid + 1)
    values = [0.0] + [search.H(float(x)) for x in lams[1:-1]] + [0.0]
    heap = [(-(Ha + Hb + L * (b - a)) / 2, a, b, Ha, Hb)
            for a, b, Ha, Hb in zip(lams[:-1], lams[1:], values[:-1], values[1:])]
    heapq.heapify(heap)
    while -heap[0][0] - search.best.value > tol * search.best.value and search.calls < max_dp_calls:
        _, a, b, Ha, Hb = heapq.heappop(heap)
        m = 0.5 * (a + b)
        Hm = search.H(m)
        for x, y, Hx, Hy in ((a, m, Ha, Hm), (m, b, Hm, Hb)):
            heapq.heappush(heap, (-(Hx + Hy + L * (y - x)) / 2, x, y, Hx, Hy))
    return search.best.value, -heap[0][0], search.calls


def cpu(fn, *args, **kwargs):
    start = time.process_time()
    out = fn(*args, **kwargs)
    return out, time.process_time() - start


def sweep(k, pairs, eps_grid):
    rng = np.random.default_rng(0)
    P0, P1 = rng.dirichlet(np.ones(k), pairs), rng.dirichlet(np.ones(k), pairs)
    rows = {"tent only, tol 1e-3": [], "chernoff_optimal, tol 1e-3": [], "chernoff_optimal, tol 1e-8": []}
    worst = 0.0
    for t in range(pairs):
        for eps in eps_grid:
            (value, upper, calls), seconds = cpu(lipschitz_only, P0[t], P1[t], eps, 1e-3)
            rows["tent only, tol 1e-3"].append((calls, seconds))
            fast, seconds = cpu(chernoff_optimal, P0[t], P1[t], eps, tol=1e-3)
            rows["chernoff_optimal, tol 1e-3"].append((fast.dp_calls, seconds))
            exact, seconds = cpu(chernoff_optimal, P0[t], P1[t], eps)
            rows["chernoff_optimal, tol 1e-8"].append((exact.dp_calls, seconds))
            worst = max(worst, abs(value - exact.value) / exact.value)
            assert value <= exact.upper_bound and exact.value <= upper * (1 + 1e-12)
    print(f"k = {k}: {pairs} pairs × ε ∈ {list(eps_grid)}")
    base = np.median([c for c, _ in rows["tent only, tol 1e-3"]])
    for name, data in rows.items():
        calls = np.array([c for c, _ in data])
        secs = np.array([s for _, s in data])
        print(f"  {name:28s} DP calls median {np.median(calls):6.0f} (min {calls.min()}, max {calls.max()}), "
              f"CPU per instance median {np.median(secs):.3f} s, tent-only / this: {base / np.median(calls):.0f}×")
    print(f"  the two searches' best values agree to {worst:.1e} (relative)")


def large(k=1000, eps_values=(0.5, 2.0, 8.0)):
    rng = np.random.default_rng(1)
    p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    for eps in eps_values:
        best, seconds = cpu(chernoff_optimal, p, q, eps)
        print(f"k = {k}, ε = {eps}: {seconds:.1f} s CPU, {best.dp_calls} DP calls, {best.num_outputs} blocks, "
              f"relative gap {best.gap / best.value:.1e}")


def figure(T=4, stride=5, jobs=2):
    """`ldpbook reproduce chernoff --full` (k = 6 and k = 100, 100 pairs × 100 ε each) extrapolated from its first T
    pairs × every `stride`-th ε, in CPU seconds of one process; the full run splits the pairs over `jobs` processes."""
    from ldpbook.chernoff import chernoff_figure_data
    grid = np.round(np.arange(1, 101) * 0.1, 10)
    total = 0.0
    for k in (6, 100):
        data, seconds = cpu(chernoff_figure_data, k, T=T, eps=grid[::stride])
        cells = T * grid[::stride].size
        full = seconds / cells * 100 * grid.size
        total += full
        print(f"k = {k}: {cells} of the 10,000 (pair, ε) cells in {seconds:.1f} s CPU, {seconds / cells * 1e3:.1f} ms per "
              f"cell, DP calls per cell median {np.median(data.dp_calls):.0f} (max {data.dp_calls.max()}), "
              f"max relative gap {data.max_gap:.1e} → full: {full / 60:.1f} min CPU")
    print(f"full figure: {total / 60:.1f} min CPU, {total / 60 / jobs:.1f} min on {jobs} processes (no other load)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sweeps, skip k = 1000")
    parser.add_argument("--figure", action="store_true", help="only the full chapter figure, extrapolated")
    args = parser.parse_args()
    if args.figure:
        figure()
        raise SystemExit
    sweep(6, 2 if args.quick else 10, (0.5, 2.0, 8.0))
    sweep(100, 1 if args.quick else 3, (0.5, 2.0, 8.0))
    if not args.quick:
        large()
