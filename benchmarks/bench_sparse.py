"""Speed of the sparse-kernel accounting against baselines run in the same process.

1. One ordered defect of the truncated Skellam mechanism: the closed form (Proposition 8), the generic Theorem-1
   sum (`SparseKernelMechanism.defect`), and `foundations.privacy_defect` on the materialised 2-row channel.
2. The range-H defect (35) of a translation-invariant mechanism: `range_defect` (4H ordered pairs) against
   `privacy_defect` on the channel materialised over the inputs −H..H (all (2H+1)² pairs, then the range mask).
3. Sampling: `SparseKernelMechanism.sample` against a per-draw `rng.choice` loop.
Prints seconds per call and the ratios. Run: .venv/bin/python benchmarks/bench_sparse.py
"""
import numpy as np
from timing import best_seconds

from ldpbook.foundations import privacy_defect
from ldpbook.sparse import range_defect, truncated_skellam, truncated_skellam_defect



def materialised_defect(mech, h, eps):
    return privacy_defect(mech.channel([0, h]).matrix, eps)[0, 1]


def materialised_range(mech, eps, H):
    xs = np.arange(-H, H + 1)
    D = privacy_defect(mech.channel(xs).matrix, eps)
    gaps = np.abs(np.subtract.outer(xs, xs))
    return D[(gaps >= 1) & (gaps <= H)].max()


def main():
    print("1. one ordered defect, truncated Skellam (μ = 20, h = 7, ε = 1)")
    for r in (10, 100, 1000):
        mech = truncated_skellam(20.0, r)
        closed = best_seconds(truncated_skellam_defect, 20.0, r, 1.0, 7)
        generic = best_seconds(mech.defect, 0, 7, 1.0)
        dense = best_seconds(materialised_defect, mech, 7, 1.0)
        print(f"   r = {r:4d}: closed form {closed * 1e3:7.3f} ms   Theorem 1 {generic * 1e3:7.3f} ms"
              f"   privacy_defect {dense * 1e3:7.3f} ms   (privacy_defect / Theorem 1 = {dense / generic:5.2f})")

    print("2. range-H defect, truncated Skellam (μ = 20, r = 60, ε = 1)")
    mech = truncated_skellam(20.0, 60)
    for H in (3, 10, 30):
        ours = best_seconds(range_defect, mech, 1.0, H, repeat=3)
        dense = best_seconds(materialised_range, mech, 1.0, H, repeat=3)
        assert abs(range_defect(mech, 1.0, H).total - materialised_range(mech, 1.0, H)) < 1e-12
        print(f"   H = {H:2d}: range_defect {ours * 1e3:8.2f} ms   materialised (2H+1)² pairs {dense * 1e3:8.2f} ms"
              f"   ratio {dense / ours:5.2f}")

    print("3. sampling 20 000 outputs of M(·|0), truncated Skellam (μ = 20, r = 60)")
    rng = np.random.default_rng(0)
    ours = best_seconds(lambda: mech.sample(0, rng=rng, size=20_000), repeat=3)
    law = mech.pmf(0)
    loop = best_seconds(lambda: [rng.choice(law.outputs, p=law.probabilities) for _ in range(20_000)], repeat=1)
    print(f"   sample {ours * 1e3:7.2f} ms   per-draw rng.choice loop {loop * 1e3:8.2f} ms   ratio {loop / ours:7.1f}")


if __name__ == "__main__":
    main()
