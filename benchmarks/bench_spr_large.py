"""One large SPR instance: the certified divide-and-conquer engine against the O(k²) passes, in one process.

`divergence_optimal` hands one unbudgeted instance with at least `ldpbook.spr._FAST_GROUPS` likelihood-ratio
groups to `_certified_solve` (nbs/01_spr.ipynb, "A million symbols: divide and conquer, certified"); below that,
and with this benchmark's switch, it runs the Dinkelbach passes of O(k²) scores each. Both run here on the same
Dirichlet(1) pair at k = 10^5 (the values must agree to 1e-12), then the certified engine alone at k = 10^6,
with the peak of the memory NumPy allocated (tracemalloc).

Usage:
    python benchmarks/bench_spr_large.py            # k = 1e5 both engines at eps = 1 and 5, k = 1e6 at eps = 1 and 5
    python benchmarks/bench_spr_large.py --quick    # k = 1e5 at eps = 1 only, k = 1e6 skipped
    git show REV:ldpbook/spr.py > /tmp/spr_rev.py
    python benchmarks/bench_spr_large.py --against /tmp/spr_rev.py   # k = 1e6 alternating with that engine
    python benchmarks/bench_spr_large.py --budgets  # output budgets: how often a price per block certifies
Times are CPU seconds of this process (time.process_time); wall seconds are printed beside them.
"""
import argparse
import importlib.util
import sys
import time
import tracemalloc

import numpy as np

from ldpbook import spr
from ldpbook.spr import divergence_optimal


def timed(fn, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.process_time() - cpu, time.perf_counter() - wall


def quadratic(p, q, eps):
    "divergence_optimal with the certified engine switched off: the O(k²) Dinkelbach passes."
    saved, spr._FAST_GROUPS = spr._FAST_GROUPS, 10 ** 12
    try:
        return divergence_optimal(p, q, eps)
    finally:
        spr._FAST_GROUPS = saved


def pair(k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))


def versus_quadratic(eps, k=100_000):
    "CPU seconds of the certified engine and of the O(k²) passes on one instance, and their values."
    p, q = pair(k)
    fast, t_fast, w_fast = timed(divergence_optimal, p, q, eps)
    slow, t_slow, w_slow = timed(quadratic, p, q, eps)
    rel = abs(fast.value - slow.value) / abs(slow.value)
    assert rel <= 1e-12, f"the engines differ by {rel:.1e} at k = {k}, eps = {eps}"
    return t_fast, t_slow, w_fast, w_slow, rel


def million(eps, k=1_000_000, engine=spr):
    """CPU seconds, wall seconds and peak NumPy memory (MB) of the certified engine at k = 10^6, and its stats
    (`engine`: the module, this one by default)."""
    p, q = pair(k, 1)
    batch = engine._single_batch(p, q, eps, "kl", {})
    stats = {}
    tracemalloc.start()
    _, cpu, wall = timed(engine._certified_solve, batch, stats)
    peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
    tracemalloc.stop()
    return cpu, wall, peak, stats


def older(path):
    "An older ldpbook/spr.py loaded beside the package as ldpbook._spr_older (its relative imports resolve)."
    spec = importlib.util.spec_from_file_location("ldpbook._spr_older", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def alternate(path, rounds=2):
    "k = 10^6 at eps = 1 and 5, the older engine and this one one after the other, `rounds` times."
    old = older(path)
    for eps in (1.0, 5.0):
        for _ in range(rounds):
            for name, engine in (("older", old), ("this", spr)):
                cpu, wall, peak, stats = million(eps, engine=engine)
                print(f"k = 1e6, eps = {eps:g}, {name:5s} engine: {cpu:6.2f} s CPU ({wall:6.2f} s wall), "
                      f"{stats['opened']} rectangles opened", flush=True)


def budgets_versus_layered(k=10_000, eps=6.0, seed=100):
    """CPU seconds of every budget 2 <= ell below the unconstrained optimum's blocks, by a price per block
    (`spr._budgeted`, which must certify) and by the O(ell k^2) program `spr._layered`, on one Dirichlet(1) pair;
    the ratios must agree to 1e-12. Returns both times and the number of budgets."""
    p, q = pair(k, seed)
    batch = spr._single_batch(p, q, eps, "kl", {})
    free = spr._solve(batch)[1]
    t_price = t_layered = 0.0
    ells = range(2, int(free.sum()) - 1)
    for ell in ells:
        stats = {}
        cuts, seconds, _ = timed(spr._budgeted, batch, ell, free, stats)
        assert not stats["layered"], f"no price certified ell = {ell} at k = {k}"
        ref, layered, _ = timed(spr._layered, batch, ell)
        got, want = (spr._partition_ratios(batch, c)[0] for c in (cuts, ref))
        assert abs(got - want) <= 1e-12 * abs(want), f"the price and the layered program differ at ell = {ell}"
        t_price, t_layered = t_price + seconds, t_layered + layered
    return t_price, t_layered, len(ells)


def budgets(ks=(1_000, 10_000, 100_000), pairs=4, eps_values=(3.0, 6.0), layered_up_to=10_000):
    """Output budgets by a price per block (`spr._budgeted`): for random Dirichlet(1) pairs at each k and every
    budget 2 <= ell below the unconstrained optimum's number of blocks, whether the price search certified (no
    duality gap) or the O(ell k^2) program `_layered` answered, and the CPU seconds of both up to k = 10^4
    (there the values must agree to 1e-12). The certified engine's threshold is lowered to the smallest k."""
    saved, spr._FAST_GROUPS = spr._FAST_GROUPS, min(ks)
    try:
        for k in ks:
            _budgets_at(k, pairs, eps_values, layered_up_to)
    finally:
        spr._FAST_GROUPS = saved


def _budgets_at(k, pairs, eps_values, layered_up_to):
    "One line of `budgets`: the budgets of `pairs` random pairs at k."
    counts, t_price, t_layered, rel = [0, 0], 0.0, 0.0, 0.0
    for seed in range(pairs):
        p, q = pair(k, 100 + seed)
        for eps in eps_values:
            batch = spr._single_batch(p, q, eps, "kl", {})
            free = spr._solve(batch)[1]
            for ell in range(2, int(free.sum()) - 1):
                stats = {}
                cuts, seconds, _ = timed(spr._budgeted, batch, ell, free, stats)
                counts[stats["layered"]] += 1
                t_price += seconds
                if k <= layered_up_to:
                    ref, seconds, _ = timed(spr._layered, batch, ell)
                    t_layered += seconds
                    got, want = (spr._partition_ratios(batch, c)[0] for c in (cuts, ref))
                    rel = max(rel, abs(got - want) / abs(want))
    n = sum(counts)
    line = (f"k = {k:>7,}: {n} budgets ({pairs} pairs, eps = {', '.join(map(str, eps_values))}), certified by "
            f"the price {counts[0]}, by the layered program {counts[1]}; {t_price / n:.3f} s CPU per budget")
    if k <= layered_up_to:
        line += f" against {t_layered / n:.3f} s for the layered program, relative difference {rel:.0e}"
    print(line, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--against", metavar="SPR_PY", help="an older ldpbook/spr.py: alternate k = 1e6 with it")
    parser.add_argument("--budgets", action="store_true", help="output budgets by a price per block")
    args = parser.parse_args()
    if args.budgets:
        return budgets()
    if args.against:
        return alternate(args.against)
    for eps in (1.0,) if args.quick else (1.0, 5.0):
        t_fast, t_slow, w_fast, w_slow, rel = versus_quadratic(eps)
        print(f"k = 1e5, eps = {eps:g}: certified {t_fast:6.2f} s CPU ({w_fast:6.2f} s wall), O(k²) passes "
              f"{t_slow:6.2f} s CPU ({w_slow:6.2f} s wall): {t_slow / t_fast:5.1f}x, relative difference {rel:.0e}")
    if not args.quick:
        for eps in (1.0, 5.0):
            cpu, wall, peak, stats = million(eps)
            print(f"k = 1e6, eps = {eps:g}: certified {cpu:6.2f} s CPU ({wall:6.2f} s wall), peak {peak:5.0f} MB; "
                  f"{stats['passes']} passes, {stats['opened']} rectangles opened, {stats['open_cells']} open cells")


if __name__ == "__main__":
    main()
