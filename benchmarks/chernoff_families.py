"""How many dynamic programs `chernoff_optimal` needs on nearly disjoint supports, with H(λ) from the program.

Two families, each instance solved with `_FEW_GROUPS = 0` (so H(λ) comes from ldpbook.spr's dynamic program even
when a few tie groups would let the search take it from all contiguous partitions at once):
  - random: p and q on disjoint halves of 3-11 symbols, plus a shared part of 1-11 symbols of mass 1e-6, 1e-3 or
    0.1, at ε = 10, 20, 30, 50, 100, 300, 700 (seeds 0, 5, 7);
  - the test family `tests/test_chernoff.py::near_disjoint_family` (mirrored shared parts too) at ε = 20 … 700.
And a third, reported on its own line: a near-identical bulk (ten symbols, d_TV ≈ 1e-9) plus an exclusive mass on
each side, from 1e-25 to 1e-4, at ε = 20 … 100 (`tests/test_chernoff.py::referee_family` is its corner). And a
fourth, with output budgets: `tests/test_chernoff.py::budgeted_family` (a Dirichlet bulk of 20 symbols, exclusive
masses 0.3 or 0.6 and 1e-8 or 1e-12, ℓ = 2, 3, 4, ε = 300, 470, 700) over seeds 0-5, and its hill-climbed corner
`CLIMBED`.
Prints the number of instances, their tie groups, the largest and median number of programs, how many exceed 300,
and whether every certificate closed to 1e-8. Usage: python benchmarks/chernoff_families.py   (three minutes)
"""
import sys
from pathlib import Path

import numpy as np

import ldpbook.chernoff as chernoff
from ldpbook.spr import sort_by_likelihood_ratio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_chernoff import CLIMBED, budgeted_family, near_disjoint_family  # noqa: E402


def random_family(seed, k_min, k_max, trials=6):
    "Nearly disjoint pairs with a random shared part."
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        k = int(rng.integers(k_min, k_max))
        half = k // 2
        p = np.r_[rng.dirichlet(np.ones(half)), np.zeros(k - half)]
        q = np.r_[np.zeros(half), rng.dirichlet(np.ones(k - half))]
        for mass in (1e-6, 1e-3, 0.1):
            m = int(rng.integers(1, 12))
            s_p, s_q = rng.dirichlet(np.ones(m)) * mass * rng.random(), rng.dirichlet(np.ones(m)) * mass
            for eps in (10, 20, 30, 50, 100, 300, 700):
                yield np.r_[p * (1 - s_p.sum()), s_p], np.r_[q * (1 - s_q.sum()), s_q], float(eps)


def instances():
    for seed, k_min, k_max in ((0, 3, 8), (5, 3, 8), (7, 6, 12)):
        yield from random_family(seed, k_min, k_max)
    for seed in range(3, 9):
        for p, q in near_disjoint_family(seed, 6):
            for eps in (20.0, 25.0, 30.0, 35.0, 50.0, 100.0, 300.0, 700.0):
                yield p, q, eps


def bulk_family():
    "A near-identical bulk plus exclusive masses: where the exponent is tiny and the log-ratio range is not."
    bulk = np.full(10, 0.1) + 1.5e-10 * np.random.default_rng(0).uniform(0.5, 1.5, 10) * np.tile([1, -1], 5)
    for eps in (20.0, 30.0, 40.0, 45.0, 50.0, 55.0, 60.0, 70.0, 100.0):
        for mass in (1e-25, 1e-22, 1e-20, 1e-16, 1e-14, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4):
            p, q = bulk.copy(), 0.2 - bulk
            p[8], q[8], p[9], q[9] = mass, 0.0, 0.0, mass
            yield p / p.sum(), q / q.sum(), eps


def main():
    chernoff._FEW_GROUPS = 0
    for name, family in (("nearly disjoint", instances), ("bulk + exclusive masses", bulk_family)):
        report(name, ((p, q, eps, None) for p, q, eps in family()))
    climbed = (np.array(CLIMBED[0]), np.array(CLIMBED[1])) + CLIMBED[2:]
    report("budgets 2-4 (with the hill-climbed instance)", [climbed, *budgeted_family(range(6))])


def report(name, family):
    calls, groups, closed = [], [], True
    for p, q, eps, ell in family:
        got = chernoff.chernoff_optimal(p, q, eps, ell=ell)
        calls.append(got.dp_calls)
        groups.append(len(sort_by_likelihood_ratio(p, q)[0]))
        closed &= got.gap <= 1e-8 * got.value
    calls = np.array(calls)
    print(f"{name}: {calls.size} instances, {min(groups)}-{max(groups)} tie groups: dynamic programs max {calls.max()}, "
          f"median {np.median(calls):g}, above 300: {(calls > 300).sum()}; every certificate closed to 1e-8: {closed}")


if __name__ == "__main__":
    main()
