"""Benchmarks for ldpbook.closeness (nbs/04_closeness.ipynb). Prints ratios against baselines run side by side.

1. rb_statistic (exact closed form, O(N_X + N_Y + k)) against
   (a) the obvious Monte Carlo average of the split statistic over random record-level splits, and
   (b) direct summation over hypergeometric pmfs (scipy.stats.hypergeom, double sums per cell);
   and its scaling for N = 10^4 .. 10^7 (time / N must stay flat).
2. One RB permutation test with the shared per-size table against recomputing rb_statistic per relabelling.
3. The full Figure 2 reproduction (5000 repetitions, 11 values of r, 8 tests) with n_jobs=2.

Usage: python benchmarks/bench_closeness.py [--quick] [--no-figure2]
(--quick: N up to 10^6 and 250 Figure 2 repetitions; --no-figure2: skip part 3)
"""
import sys
import time

import numpy as np
from scipy import stats

from ldpbook.closeness import _split_from_table, figure2, permutation_statistics, rb_statistic

QUICK = "--quick" in sys.argv
SKIP_FIGURE2 = "--no-figure2" in sys.argv


def timed(fn, *args, repeat=1, **kwargs):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, out


def rb_monte_carlo(x, y, k, n_splits, rng):
    "The obvious implementation: average Z over random record-level splits (shuffle, cut blocks, bincount)."
    m = min(x.size, y.size) // 2
    total = 0.0
    for _ in range(n_splits):
        px, py = rng.permutation(x.size)[:2 * m], rng.permutation(y.size)[:2 * m]
        table = np.stack([np.bincount(x[px[:m]], minlength=k), np.bincount(x[px[m:]], minlength=k),
                          np.bincount(y[py[:m]], minlength=k), np.bincount(y[py[m:]], minlength=k)], axis=1)
        total += _split_from_table(table)
    return total / n_splits


def rb_direct(x, y, k, cells):
    "Direct summation over scipy hypergeometric pmfs for the given cells (N_X = N_Y = 2m, so C^2 = u - C^1)."
    n = x.size
    m = n // 2
    u_all, v_all = np.bincount(x, minlength=k), np.bincount(y, minlength=k)
    total = 0.0
    for i in cells:
        u, v = u_all[i], v_all[i]
        a = np.arange(max(0, m - (n - u)), min(u, m) + 1)
        b = np.arange(max(0, m - (n - v)), min(v, m) + 1)
        pa, pb = stats.hypergeom.pmf(a, n, u, m), stats.hypergeom.pmf(b, n, v, m)
        cross = pa @ np.abs(a[:, None] - b[None, :]) @ pb
        total += 2 * cross - pa @ np.abs(2 * a - u) - pb @ np.abs(2 * b - v)
    return total


def main():
    rng = np.random.default_rng(0)
    k = 1000
    print("== rb_statistic: linear time (k = 1000 cells, N_X = N_Y = N)")
    sizes = [10 ** 4, 10 ** 5, 10 ** 6] + ([] if QUICK else [10 ** 7])
    per_n = []
    for n in sizes:
        x, y = rng.integers(0, k, n), rng.integers(0, k, n)
        t, _ = timed(rb_statistic, x, y, k=k, repeat=3 if n <= 10 ** 6 else 1)
        per_n.append(t / n)
        print(f"N = {n:>9,d}: {t:8.3f} s   {1e9 * t / n:7.1f} ns per observation")
    big = per_n[1:]
    print(f"time / N varies by a factor {max(big) / min(big):.2f} over N = 1e5 .. {sizes[-1]:.0e} (linear: ~1; at "
          f"N = 1e4 a fixed cost of a few ms - one small vector operation per distinct cell count - dominates)")

    print("\n== rb_statistic at N = 10^6 against the baselines")
    n = 10 ** 6
    x, y = rng.integers(0, k, n), rng.integers(0, k, n)
    t_exact, exact = timed(rb_statistic, x, y, k=k, repeat=3)
    n_splits = 20 if QUICK else 100
    t_mc, approx = timed(rb_monte_carlo, x, y, k, n_splits, rng)
    print(f"exact closed form: {t_exact:.3f} s (value {exact:.3f})")
    print(f"Monte Carlo average of {n_splits} splits: {t_mc:.2f} s ({t_mc / n_splits * 1e3:.1f} ms per split; value "
          f"{approx:.1f}, still inexact)  ->  ratio {t_mc / t_exact:.0f}x; the exact value costs as much as "
          f"{t_exact / (t_mc / n_splits):.1f} splits")
    cells = np.arange(25 if QUICK else 100)
    t_direct, part = timed(rb_direct, x, y, k, cells)
    t_direct_all = t_direct * k / cells.size
    print(f"direct summation over hypergeometric pmfs: {t_direct:.2f} s for {cells.size} of {k} cells -> "
          f"{t_direct_all:.1f} s extrapolated to all cells  ->  ratio {t_direct_all / t_exact:.0f}x")
    tx, ty = np.bincount(x, minlength=k), np.bincount(y, minlength=k)
    from ldpbook.closeness import _rb_cell_values
    ours = _rb_cell_values(tx[cells], ty[cells], n, n).sum()
    print(f"agreement on those cells: |closed form - direct| = {abs(ours - part):.2e} (relative "
          f"{abs(ours - part) / abs(part):.1e})")

    print("\n== one RB permutation test (B = 199, N_X = N_Y = 1000, k = 16): shared table vs recomputation")
    x, y = rng.integers(0, 16, 1000), rng.integers(0, 16, 1000)
    permutation_statistics(x, y, k=16, statistic_name="rb", n_permutations=199, rng=rng)   # fill the table once
    t_table, _ = timed(permutation_statistics, x, y, k=16, statistic_name="rb", n_permutations=199, rng=rng, repeat=5)
    pooled = np.r_[x, y]

    def recompute():
        for _ in range(200):
            perm = rng.permutation(pooled.size)
            rb_statistic(pooled[perm[:1000]], pooled[perm[1000:]], k=16)

    t_naive, _ = timed(recompute)
    print(f"table: {t_table * 1e3:.2f} ms; rb_statistic per relabelling: {t_naive * 1e3:.1f} ms  ->  ratio "
          f"{t_naive / t_table:.0f}x")

    if SKIP_FIGURE2:
        return
    reps = 250 if QUICK else 5000
    print(f"\n== Figure 2 reproduction: {reps} repetitions x 11 values of r x 8 tests, n_jobs=2")
    start = time.perf_counter()
    fig = figure2(n_reps=reps, n_jobs=2, progress=False)
    elapsed = time.perf_counter() - start
    total = reps * len(fig.r_values)
    print(f"{elapsed:.1f} s for {total} repetitions ({1e3 * 2 * elapsed / total:.2f} core-ms per repetition); "
          f"budget 300 s for 5000 repetitions -> {'OK' if elapsed * 5000 / reps < 300 else 'OVER'} "
          f"({elapsed * 5000 / reps:.0f} s at 5000)")
    print("rejection rates at r = 0 (null):", dict(zip(fig.labels, fig.power.rejection_rate[0].round(4).tolist())))


if __name__ == "__main__":
    main()
