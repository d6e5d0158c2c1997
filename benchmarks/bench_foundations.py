"""Speed of `privatize` against three baselines run in the same process.

Baselines: (1) the obvious per-sample loop `rng.choice(m, p=Q[x_i])`; (2) an inverse-CDF draw that compares each
uniform with its whole CDF row (O(n·m) memory); (3) the same binary search as `privatize` on the floating-point CDF,
without the exactness checks (what privatize did before it drew exactly: the cost of exactness). Prints seconds
per million samples and the ratios.
Run: .venv/bin/python benchmarks/bench_foundations.py
"""
import numpy as np
from timing import best_seconds

from ldpbook.foundations import privatize, randomized_response


def per_sample_loop(Q, x, rng):
    return np.array([rng.choice(Q.shape[1], p=Q[s]) for s in x])


def dense_inverse_cdf(Q, x, rng):
    cdf = np.cumsum(Q, axis=1)
    return (cdf[x] <= rng.random(x.size)[:, None]).sum(axis=1).clip(max=Q.shape[1] - 1)



def float_inversion(Q, x, rng):
    "Binary search for the smallest j with cdf[x, j] > u on the float CDF: fast, but not exact (see privatize)."
    m = Q.shape[1]
    cdf = np.cumsum(Q, axis=1)
    last_positive = m - 1 - np.argmax(Q[:, ::-1] > 0, axis=1)
    cdf[np.arange(m)[None, :] >= last_positive[:, None]] = np.inf
    u = rng.random(x.size)
    lo, hi = np.zeros(x.size, dtype=np.intp), np.full(x.size, m - 1, dtype=np.intp)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        right = cdf[x, mid] > u
        hi, lo = np.where(right, mid, hi), np.where(right, lo, mid + 1)
    return lo


def main():
    for k in (4, 64, 1024):
        Q = randomized_response(k, 1.0)
        rng = np.random.default_rng(0)
        n = 1_000_000
        x = rng.integers(0, k, size=n)
        ours = best_seconds(lambda: privatize(x, Q, rng=1))
        loop = best_seconds(per_sample_loop, Q, x[:20_000], rng, repeat=1) * (n / 20_000)
        dense = best_seconds(dense_inverse_cdf, Q, x[: n if k <= 64 else 50_000], rng) * (1 if k <= 64 else n / 50_000)
        plain = best_seconds(float_inversion, Q, x, np.random.default_rng(1))
        print(f"k = m = {k:5d}: privatize {ours:7.3f} s per 10^6 samples | per-sample loop {loop:8.2f} s "
              f"({loop / ours:7.0f}x slower) | dense inverse CDF {dense:7.3f} s ({dense / ours:5.1f}x) | "
              f"float inversion, not exact, {plain:6.3f} s ({plain / ours:4.2f}x)")


if __name__ == "__main__":
    main()
