"""Speed of ldpbook.spr against the paper's own method, run side by side in one process.

Baseline: the O(ℓk²) dynamic program of Ghazi et al. vectorised as their App. E.2 describes — sort by likelihood
ratio, interval scores μ[a:b] from prefix sums in the paper's form (1 + (e^ε − 1)Q) f(·), then one NumPy call per
layer s over the matrix A[r, i] = F[s−1, r] + μ[r+1:i] (ℓ = k layers), value max_s F[s, k]/(e^ε + s − 1).
Contender: `ldpbook.spr.divergence_optimal_values` (batched Dinkelbach passes) and `divergence_optimal` for one
large k.

Usage:
    python benchmarks/bench_spr.py            # full k = 100 Figure 1 sweep for both (about a minute)
    python benchmarks/bench_spr.py --quick    # baseline on a 1/50 subsample, extrapolated
Times are CPU seconds of this process (time.process_time) and wall seconds; ratios use CPU time, which is
less sensitive to other jobs on a shared machine. The baseline (about half a minute) runs once; our sweep
(about a second, so more exposed to bursts of load from other jobs) runs three times and the median counts.
"""
import argparse
import time
import tracemalloc

import numpy as np

from ldpbook.spr import divergence_optimal, divergence_optimal_values


def paper_dp_value(p, q, eps, ell=None):
    "The paper's vectorised DP for one instance (KL), as in App. E.2."
    k = p.size
    ell = k if ell is None else ell
    with np.errstate(divide="ignore", invalid="ignore"):
        order = np.argsort(p / (p + q), kind="stable")
    P = np.concatenate(([0.0], np.cumsum(p[order])))
    Q = np.concatenate(([0.0], np.cumsum(q[order])))
    e = np.exp(eps)
    U = 1 + (e - 1) * (P[None, :] - P[:, None])          # U[r, i]: block r+1..i
    V = 1 + (e - 1) * (Q[None, :] - Q[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        MU = U * np.log(U / V)
    MU[np.tril_indices(k + 1)] = -np.inf
    F = MU[0].copy()                                      # F[1, i] = μ[1:i]
    best = F[k] / e
    for s in range(2, ell + 1):
        F = (F[:, None] + MU).max(axis=0)                 # one call per layer
        best = max(best, F[k] / (e + s - 1))
    return best


def timed(fn, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.process_time() - cpu, time.perf_counter() - wall


def sweep(quick):
    T, k = 100, 100
    rng = np.random.default_rng(0)
    P0, P1 = rng.dirichlet(np.ones(k), T), rng.dirichlet(np.ones(k), T)
    grid = np.round(np.arange(101) * 0.1, 10)
    runs = [timed(divergence_optimal_values, P0, P1, grid) for _ in range(3)]   # ours is short: median of three runs
    V = runs[0][0]
    cpu_runs = sorted(r[1] for r in runs)
    cpu_fast, wall_fast = cpu_runs[1], sorted(r[2] for r in runs)[1]
    cells = [(t, e) for t in range(T) for e in range(grid.size)]
    if quick:
        cells = cells[::50]
    ref, cpu_base, wall_base = timed(lambda: np.array([paper_dp_value(P0[t], P1[t], grid[e]) for t, e in cells]))
    scale = T * grid.size / len(cells)
    got = np.array([V[t, e] for t, e in cells])
    rel = np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300))
    print(f"k = 100 sweep ({T} pairs × {grid.size} ε = {T * grid.size} instances)")
    print(f"  paper's DP : {cpu_base * scale:7.2f} s CPU, {wall_base * scale:7.2f} s wall"
          + (f"  (extrapolated from {len(cells)} instances)" if quick else ""))
    print(f"  divergence_optimal_values: {cpu_fast:7.2f} s CPU, {wall_fast:7.2f} s wall  (median of 3 runs; CPU "
          f"min {cpu_runs[0]:.2f}, max {cpu_runs[2]:.2f})")
    print(f"  speed-up (CPU) : {cpu_base * scale / cpu_fast:6.1f}× on the median "
          f"({cpu_base * scale / cpu_runs[2]:.1f}× on the slowest run)   max relative difference {rel:.1e}")
    assert all(np.array_equal(r[0], V) for r in runs), "divergence_optimal_values is not deterministic"
    return cpu_base * scale, cpu_fast, rel


def large(k=10_000, eps_values=(1.0, 5.0)):
    rng = np.random.default_rng(1)
    p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    rows = []
    for eps in eps_values:
        tracemalloc.start()
        best, cpu, wall = timed(divergence_optimal, p, q, eps)
        peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
        tracemalloc.stop()
        channel_mb = best.channel.nbytes / 2 ** 20
        print(f"k = {k}, ε = {eps}: {cpu:.2f} s CPU, {wall:.2f} s wall, {best.num_outputs} blocks, "
              f"value {best.value:.6f}, peak memory {peak:.1f} MiB (of which the k × s channel {channel_mb:.1f})")
        rows.append((eps, cpu, wall, best.num_outputs, peak))
    # the O(k³) method at this k: time the paper's DP at k = 400 and scale by (k/400)³
    small = 400
    ps, qs = rng.dirichlet(np.ones(small)), rng.dirichlet(np.ones(small))
    _, cpu_small, _ = timed(paper_dp_value, ps, qs, 5.0)
    minutes = cpu_small * (k / small) ** 3 / 60
    print(f"  paper's DP at k = {small}: {cpu_small:.2f} s CPU → about {minutes:.0f} min at k = {k} (O(k³)), "
          f"and {8 * (k + 1) ** 2 / 2 ** 30:.1f} GiB for its (k+1)² score matrix")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="run the baseline on a subsample and extrapolate")
    parser.add_argument("--skip-large", action="store_true", help="skip the k = 10,000 instances")
    args = parser.parse_args()
    sweep(args.quick)
    if not args.skip_large:
        large()
