"""Speed of the E_γ closed form (ldpbook.egamma) against the general solvers it replaces, run side by side.

Baselines, all computing the same optimum max_Q E_γ(Qᵀp‖Qᵀq):
  * `ldpbook.spr.divergence_optimal(..., 'egamma')` — the SPR chapter's exact solver (any f-divergence);
  * `ldpbook.spr.kov_lp(..., 'egamma')` — the exponential Kairouz–Oh–Viswanath staircase LP (small k only);
  * `ldpbook.egamma.egamma_lp` — an LP over binary channels (k + 2 variables) (this chapter's independent check).
Contender: `ldpbook.egamma.egamma_optimal` (O(k)) and the vectorised `egamma_closed_form` for a batch of instances.

Usage:
    python benchmarks/bench_egamma.py           # k up to 2000 for the DP, 10^6 for the closed form (about a minute)
    python benchmarks/bench_egamma.py --quick   # smaller sizes (a few seconds)
Times are CPU seconds per call (time.process_time, best of a few repeats), less sensitive to other jobs on a
shared machine; every baseline's value is checked against the closed form (relative difference printed).
"""
import argparse

import numpy as np

from ldpbook.egamma import egamma_closed_form, egamma_lp, egamma_optimal
from ldpbook.foundations import divergence
from ldpbook.spr import kov_lp, divergence_optimal
from timing import cpu_per_call


def instance(k, seed):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))


def main(quick=False):
    eps, gamma = 3.0, 1.5          # a non-trivial optimum: (e^ε − 1) E_γ(p‖q) > γ − 1 on these instances
    min_time = 0.05 if quick else 0.2
    print(f"ε = {eps}, γ = {gamma}; CPU seconds per call; ratio = baseline / closed form\n")
    print(f"{'k':>7} {'closed form':>12} {'baseline':>22} {'time':>11} {'ratio':>9} {'rel. diff':>10}")
    sizes = {"kov_lp": (6, 10) if quick else (6, 10, 14),
             "egamma_lp": (8, 32) if quick else (8, 32, 128),
             "divergence_optimal": (50, 200) if quick else (50, 200, 1000, 2000)}
    baselines = {"kov_lp": lambda p, q: kov_lp(p, q, eps, divergence="egamma", gamma=gamma).value,
                 "egamma_lp": lambda p, q: egamma_lp(p, q, eps, gamma=gamma),
                 "divergence_optimal": lambda p, q: divergence_optimal(p, q, eps, divergence="egamma",
                                                                     gamma=gamma).value}
    for name, ks in sizes.items():
        for k in ks:
            p, q = instance(k, k)
            t_closed, mech = cpu_per_call(lambda: egamma_optimal(p, q, eps, gamma=gamma), min_time)
            t_base, value = cpu_per_call(lambda: baselines[name](p, q), min_time, repeats=1 if k > 500 else 3)
            diff = abs(value - mech.value) / max(abs(mech.value), 1e-12)
            print(f"{k:>7} {t_closed:>12.2e} {name:>22} {t_base:>11.2e} {t_base / t_closed:>9.0f} {diff:>10.1e}")
    print("\nBatch: the closed form for T pairs at once (egamma_closed_form on precomputed E_γ(p‖q)) vs a loop of "
          "egamma_optimal")
    for T in ((100, 1000) if quick else (100, 10_000)):
        rng = np.random.default_rng(T)
        P0, P1 = rng.dirichlet(np.ones(20), size=T), rng.dirichlet(np.ones(20), size=T)
        t_loop, loop = cpu_per_call(lambda: [egamma_optimal(a, b, eps, gamma=gamma).value for a, b in zip(P0, P1)],
                                    min_time, repeats=1)
        t_vec, vec = cpu_per_call(lambda: egamma_closed_form(
            np.maximum(P0 - gamma * P1, 0).sum(axis=1), eps, gamma=gamma), min_time)
        assert np.allclose(loop, vec, rtol=1e-12, atol=1e-15)
        print(f"  T = {T:>6}: loop {t_loop:.2e} s, vectorised {t_vec:.2e} s, ratio {t_loop / t_vec:.0f}")
    k = 10_000 if quick else 1_000_000
    p, q = instance(k, 0)
    t_big, mech = cpu_per_call(lambda: egamma_optimal(p, q, eps, gamma=gamma), min_time, repeats=1)
    e = divergence(p, q, kind="egamma", gamma=gamma)
    print(f"\nOne instance with k = {k}: egamma_optimal {t_big:.2e} s (value {mech.value:.6f}, E_γ(p‖q) = {e:.6f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    main(parser.parse_args().quick)
