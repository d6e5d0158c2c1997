"""Speed of `adaptive_test` (ldpbook.adaptive) and of its multiscale statistics against a naive sparse baseline.

1. `adaptive_test` at N = 10^3, 10^4, 10^5 points per sample, d = 1 and 2, with fixed Monte-Carlo sizes
   (B_cen = B = 49 by default): seconds and seconds per 10^3 points, normalised to N = 10^3 (near-linear
   growth means the last column stays near 1; an O(N log N) method grows like log N).
2. Baseline, side by side on the same data and labellings: for every level, integer cell coordinates + np.unique
   (axis=0) on all points and one `closeness.rb_statistic` call per labelling — the obvious sparse method.
   Prints the ratio baseline / ours and checks that both give the same statistics.
3. The uncentred maximum (`centering="none"`: no centering stage) against Algorithm 3's centred maximum, B = 199
   (and B_cen = 199), N = 10^3 per sample, d = 1: the median of 5 alternating runs of each; and the scaled maximum
   (`centering="scaled"`) and the range maximum (`centering="range"`, the default), with the one-time cost of their
   weights.

Run: .venv/bin/python benchmarks/bench_adaptive.py [--mc 49] [--sizes 1000 10000 100000]
"""
import argparse
import time

import numpy as np

from ldpbook import closeness
from ldpbook.adaptive import _scale_weights, adaptive_test, dyadic_max_level, dyadic_partitions, multiscale_statistics


def naive_statistics(z, is_x, max_level):
    """Baseline: dense integer coordinates per level, np.unique rows, one rb_statistic per labelling."""
    out = np.zeros((max_level + 1, is_x.shape[0]))
    for j in range(max_level + 1):
        coords = np.minimum(np.floor(z * 2.0 ** j), 2.0 ** j - 1)          # exact for j <= 52 in float64
        _, labels = np.unique(coords, axis=0, return_inverse=True)
        labels = labels.reshape(-1)
        if np.bincount(labels).max() < 2:
            break
        for b, row in enumerate(is_x):
            out[j, b] = closeness.rb_statistic(labels[row], labels[~row])
    return out


def seconds(func, *args, **kwargs):
    start = time.perf_counter()
    out = func(*args, **kwargs)
    return time.perf_counter() - start, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mc", type=int, default=49, help="B_cen = B (Monte-Carlo sizes, fixed across N)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    args = parser.parse_args()
    print(f"adaptive_test, eps = 1, B_cen = B = {args.mc}")
    print(f"{'d':>2} {'N':>8} {'levels':>7} {'shared':>7} {'seconds':>9} {'s per 1e3 pts':>14} {'normalised':>11}")
    for d in (1, 2):
        base = None
        for n in args.sizes:
            rng = np.random.default_rng(n + d)
            x, y = rng.random((n, d)), rng.random((n, d))
            parts = dyadic_partitions(np.vstack([x, y]), dyadic_max_level(n))
            t, _ = seconds(adaptive_test, x, y, 1.0, n_centering=args.mc, n_permutations=args.mc, rng=1)
            per = t / (n / 1000)
            base = per if base is None else base
            print(f"{d:>2} {n:>8} {dyadic_max_level(n) + 1:>7} {parts.n_shared_levels:>7} {t:>9.2f} {per:>14.4f} "
                  f"{per / base:>11.2f}")
    print("\nmultiscale statistics of 20 labellings: ours vs naive per-level np.unique + rb_statistic")
    for d in (1, 2):
        for n in (500, 2000):
            rng = np.random.default_rng(d)
            z = rng.random((2 * n, d))
            is_x = np.array([rng.permutation(2 * n) < n for _ in range(20)])
            top = dyadic_max_level(n)
            t_ours, ours = seconds(lambda: multiscale_statistics(dyadic_partitions(z, top), is_x, n, n))
            t_naive, naive = seconds(naive_statistics, z, is_x, min(top, 52))
            assert np.allclose(ours[:naive.shape[0]], naive, atol=1e-8)
            print(f"d = {d}, N = {n}: ours {t_ours:.3f} s, naive {t_naive:.3f} s, ratio naive/ours {t_naive / t_ours:.1f}")
    rng = np.random.default_rng(3)
    x, y = rng.random(1000), rng.random(1000)
    _scale_weights.cache_clear()                      # part 1 may have computed them already
    first, _ = seconds(_scale_weights, 1000, 1000, 1, dyadic_max_level(1000))
    runs = {"permutation": [], "none": [], "scaled": [], "range": []}
    for _ in range(5):
        for centering in runs:
            runs[centering].append(seconds(adaptive_test, x, y, 1.0, rng=1, centering=centering)[0])
    centred, uncentred, scaled, ranged = (float(np.median(runs[c])) for c in ("permutation", "none", "scaled", "range"))
    print(f"\nN = 1000, B = B_cen = 199: centred maximum {centred:.3f} s, uncentred maximum {uncentred:.3f} s, "
          f"ratio {centred / uncentred:.2f}; scaled maximum {scaled:.3f} s, range maximum (the default) {ranged:.3f} s "
          f"(their weights, computed once for the sample sizes and kept: {first:.3f} s)")


if __name__ == "__main__":
    main()
