"""Speed of the (ε, δ) two-output optimum (ldpbook.approximate) against linear programming, run side by side.

Baseline: the largest total variation over (ε, δ)-LDP channels with two outputs, by one HiGHS linear program over
x ↦ (1 − t_x, t_x) with the 2k(k − 1) pairwise hockey-stick constraints written out (no reduction to the extremes
of t); by the chapter's corollary (nbs/08_approximate.ipynb) this is also the optimum with any number of outputs.
Contender: `ldpbook.approximate.divergence_optimal(..., divergence="tv")`, O(k log k) (one likelihood-ratio sort
and three passes over the threshold sets). The contender's time is also printed alone at k = 10^3 … 10^5 and for
KL with ℓ = 2, where the LP does not apply (a convex objective), and for the certified two-output optimum under
(2, ε)-Rényi local privacy (`renyi_ldp_optimal`, a branch and bound to 1e-12 relative). Last, the three-output
optimum (`divergence_optimal(..., ell=3)`, the certified image hull) at k = 3 … 6, beside the exact vertex
enumeration (cddlib) that it replaces, which stops at k = 4. Last, KL without a budget: the exact 50-digit staircase
program (`_staircase_lp`, every column written out) against the certified column generation (`_generated_optimal`)
on the same pair at k = 5 … 7, and the column generation alone at k = 8 … 10 (the exact program's 1,047,249 columns
at k = 8 do not fit) and at k = 12 (beyond `MAX_GENERATED_K`: the engine called directly, refused or answered).
Last, three outputs beyond six letters: the branch and bound over the runs (`divergence_optimal(..., ell=3)`,
structure "four-runs", approx-thm-runs) against the full enumeration of the same candidates (every walk at the
vertices of Θ(ε, δ) and every ordered threshold triple of the sorted letters, vectorised here) at k = 30, 60, 100,
the values compared; and the branch and bound alone at k = 10^3, 10^4, 10^5 for KL and χ².

Usage:
    python benchmarks/bench_approximate.py           # the LP up to k = 200, ℓ = 3 up to k = 10^5 (minutes)
    python benchmarks/bench_approximate.py --quick   # the LP up to k = 50, ℓ = 3 at k = 30 and 1000 (a minute)
Times are CPU seconds per call (time.process_time, best of a few repeats); the LP's value is checked against the
contender's (relative difference printed).
"""
import argparse

import numpy as np
from scipy.optimize import linprog

from ldpbook.approximate import (_generated_optimal, _lr_groups, _staircase_lp, _theta_vertices, _walks,
                                 divergence_optimal, renyi_ldp_optimal)
from ldpbook.foundations import divergence_from_sum, divergence_terms
from timing import cpu_per_call


def tv_lp(p, q, eps, delta):
    "max Σ (p − q)·t over t ∈ [0, 1]^k with t_x − e^ε t_x' ≤ δ and (1 − t_x) − e^ε (1 − t_x') ≤ δ for all x ≠ x'."
    k, a = p.size, np.exp(eps)
    xs, ys = np.nonzero(~np.eye(k, dtype=bool))
    n = xs.size
    A = np.zeros((2 * n, k))
    A[np.arange(n), xs], A[np.arange(n), ys] = 1.0, -a
    A[n + np.arange(n), xs], A[n + np.arange(n), ys] = -1.0, a
    b = np.concatenate((np.full(n, delta), np.full(n, delta + a - 1)))
    res = linprog(-(p - q), A_ub=A / (1 + a), b_ub=b / (1 + a), bounds=(0, 1), method="highs")
    return -res.fun


def main(quick=False):
    eps, delta = 1.0, 1e-3
    min_time = 0.05 if quick else 0.2
    print(f"ε = {eps}, δ = {delta}; CPU seconds per call; ratio = LP / closed form\n")
    print(f"{'k':>7} {'closed form':>12} {'LP':>10} {'ratio':>9} {'rel. diff':>10}")
    for k in ((25, 50) if quick else (25, 50, 100, 200)):
        rng = np.random.default_rng(k)
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        t_ours, mech = cpu_per_call(lambda: divergence_optimal(p, q, eps, delta=delta, divergence="tv"), min_time)
        t_lp, value = cpu_per_call(lambda: tv_lp(p, q, eps, delta), min_time, repeats=1 if k > 100 else 3)
        print(f"{k:>7} {t_ours:>12.2e} {t_lp:>10.2e} {t_lp / t_ours:>9.0f} {abs(value - mech.value) / mech.value:>10.1e}")
    print(f"\n{'k':>7} {'TV':>12} {'KL, ℓ = 2':>12} {'Rényi-LDP':>12}")
    for k in (1_000, 10_000, 100_000):
        rng = np.random.default_rng(k)
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        t_tv, _ = cpu_per_call(lambda: divergence_optimal(p, q, eps, delta=delta, divergence="tv"), min_time, 2)
        t_kl, _ = cpu_per_call(lambda: divergence_optimal(p, q, eps, delta=delta, ell=2), min_time, 2)
        t_renyi = cpu_per_call(lambda: renyi_ldp_optimal(p, q, eps, renyi_order=2.0), 0.0, 1)[0] \
            if k <= 10_000 else float("nan")
        print(f"{k:>7} {t_tv:>12.2e} {t_kl:>12.2e} {t_renyi:>12.2e}")

    print(f"\n{'k':>7} {'ℓ = 3 (image hull)':>19} {'vertex list (cddlib)':>21}")
    for k in ((3, 4) if quick else (3, 4, 5, 6)):
        rng = np.random.default_rng(k)
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        t_hull, _ = cpu_per_call(lambda: divergence_optimal(p, q, eps, delta=0.01, ell=3), 0.0, 1)
        t_list = cpu_per_call(lambda: vertex_list(k), 0.0, 1)[0] if k <= 4 else float("nan")
        print(f"{k:>7} {t_hull:>19.2e} {t_list:>21.2e}")

    print(f"\n{'k':>7} {'exact program':>14} {'column generation':>18} {'rel. diff':>10}   (KL, no budget, δ = 1e-3)")
    for k in ((5, 6) if quick else (5, 6, 7, 8, 9, 10, 12)):
        rng = np.random.default_rng(k)
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        t_cg, Q = cpu_per_call(lambda: generated_or_none(p, q), 0.0, 1)
        if k <= 7:
            t_lp, (total, _, _) = cpu_per_call(lambda: _staircase_lp(p, q, eps, delta, "kl", {}), 0.0, 1)
        else:
            t_lp, total = float("nan"), float("nan")
        diff = abs(kl_sum(Q, p, q) - total) / total if Q is not None else float("nan")
        print(f"{k:>7} {t_lp:>14.2e} {t_cg:>18.2e} {diff:>10.1e}" + ("" if Q is not None else "  (refused)"))

    print(f"\n{'k':>7} {'branch and bound':>17} {'every triple':>13} {'ratio':>7} {'rel. diff':>10}"
          f"   (ℓ = 3, KL, ε = {eps}, δ = 0.01)")
    _theta_vertices(eps, 0.01)                                   # cached for both: the candidates are shared
    for k in ((30,) if quick else (30, 60, 100)):
        rng = np.random.default_rng(k)
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        t_bb, mech = cpu_per_call(lambda: divergence_optimal(p, q, eps, delta=0.01, ell=3), min_time)
        t_all, total = cpu_per_call(lambda: every_triple(p, q, eps, 0.01, "kl"), 0.0, 1)
        value = divergence_from_sum(total, kind="kl")
        print(f"{k:>7} {t_bb:>17.2e} {t_all:>13.2e} {t_all / t_bb:>7.0f} {abs(value - mech.value) / value:>10.1e}")
    print(f"\n{'k':>7} {'KL, ℓ = 3':>12} {'χ², ℓ = 3':>12}   (branch and bound, ε = {eps}, δ = 0.01)")
    for k in ((1_000,) if quick else (1_000, 10_000, 100_000)):
        rng = np.random.default_rng(k)
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        times = [cpu_per_call(lambda: three_or_none(p, q, eps, 0.01, kind), 0.0, 1) for kind in ("kl", "chi2")]
        print(f"{k:>7}" + "".join(f" {t:>12.2e}" if mech is not None else f" {t:>9.1f} s refused" for t, mech in times))


def three_or_none(p, q, eps, delta, kind):
    "The three-output mechanism, or None where the branch and bound refuses (its node budget spent)."
    try:
        return divergence_optimal(p, q, eps, delta=delta, divergence=kind, ell=3)
    except NotImplementedError:
        return None


def every_triple(p, q, eps, delta, kind, chunk=8):
    """The three-output optimum (a perspective sum) by the full enumeration of approx-prop-candidates: every walk
    at the vertices of Θ(ε, δ) and every ordered threshold triple i_1 ≤ i_2 ≤ i_3 of the groups sorted by q/p, the
    run masses as differences of prefix sums; walks in chunks (memory: chunk × C(G + 3, 3) × 3 floats)."""
    import itertools
    groups = _lr_groups(p, q)[0][::-1]
    A, B = (np.concatenate(([0.0], np.cumsum([x[g].sum() for g in groups]))) for x in (p, q))
    G, W = len(groups), _walks(_theta_vertices(eps, delta))
    I = np.array(list(itertools.combinations_with_replacement(range(G + 1), 3)))
    cuts = np.column_stack((np.zeros(len(I), int), I, np.full(len(I), G)))
    Pa, Pb = np.diff(A[cuts], axis=1), np.diff(B[cuts], axis=1)
    best = 0.0
    for s in range(0, len(W), chunk):
        u, v = np.einsum("tj,wjy->wty", Pa, W[s:s + chunk]), np.einsum("tj,wjy->wty", Pb, W[s:s + chunk])
        with np.errstate(divide="ignore", invalid="ignore"):
            best = max(best, float(divergence_terms(u, v, u - v, kind=kind, check=False).sum(axis=2).max()))
    return best


def generated_or_none(p, q, eps=1.0, delta=1e-3):
    "The column generation's channel, or None where it refuses."
    try:
        return _generated_optimal(p, q, eps, delta, "kl", {})
    except NotImplementedError:
        return None


def kl_sum(Q, p, q):
    "The linear-free KL sum of the channel Q (the staircase program's objective)."
    return float(divergence_terms(Q.T @ p, Q.T @ q, Q.T @ (p - q), kind="kl").sum())


def vertex_list(k, ell=3):
    """Every vertex of the k × ℓ (ε, δ)-LDP channels at e^ε = 3, δ = 1/100 by cddlib's double description in
    exact rationals (pycddlib; the chapter's check, not part of the package): the alternative to the image hull."""
    import itertools
    from fractions import Fraction

    import cdd.gmp as cdd
    n, a, d, rows = k * ell, Fraction(3), Fraction(1, 100), []
    rows += [[0] + [int(j == i) for j in range(n)] for i in range(n)]
    for size in range(1, ell):
        pairs = itertools.permutations(range(k), 2)
        for S, (x, z) in itertools.product(itertools.combinations(range(ell), size), pairs):
            row = [d] + [0] * n
            for y in S:
                row[1 + x * ell + y], row[1 + z * ell + y] = -1, a
            rows.append(row)
    eq = [[1] + [-int(j // ell == x) for j in range(n)] for x in range(k)]
    H = cdd.matrix_from_array(rows + eq, lin_set=range(len(rows), len(rows) + k), rep_type=cdd.RepType.INEQUALITY)
    return len(cdd.copy_generators(cdd.polyhedron_from_matrix(H)).array)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    main(parser.parse_args().quick)
