"""Exact behavioural privacy checks of noisy threshold decisions, used by tests/test_privacy_audit.py.

The DP permutation test adds Laplace noise xi_0 to the observed statistic and xi_1..xi_B to the permuted ones. With
the data, the relabellings and xi_1..xi_B fixed, its reject event is a threshold event {xi_0 > t(D)} in the observed
statistic's noise, and |t(D) - t(D')| <= 2 Delta for neighbouring data sets D, D', so that Laplace(2 Delta / eps)
noise keeps P(reject) and P(accept) within a factor e^eps.

The checks measure this on what a function does, not on a field it reports. A `ControlledNoise` generator hands the
function its Laplace draws as `loc + scale * z` for standard values z chosen by the check (every other draw comes
from its seeded bit generator as usual). For fixed values of the other draws, bisection over the observed
statistic's z on the function's own decisions finds the threshold c with reject <=> z > c, so that
P(reject | the other draws) = P(Z > c) for a standard Laplace Z: exact, with no Monte Carlo error. A halved noise
scale moves c twice as far between neighbours, and the check sees the factor e^(2 eps).
"""
import math

import numpy as np


class ControlledNoise(np.random.Generator):
    "A numpy Generator whose `laplace` returns loc + scale * z for the next standard values z set by the check."

    def laplace(self, loc=0.0, scale=1.0, size=None):
        n = 1 if size is None else int(np.prod(size))
        if not self.in_pieces and n != self.z.size:
            raise AssertionError(f"the function drew {n} Laplace values, the test prepared {self.z.size}")
        if self.used + n > self.z.size:
            raise AssertionError(f"the function drew more than the {self.z.size} Laplace values the test prepared")
        z = self.z[self.used:self.used + n]
        self.used += n
        out = loc + scale * (z[0] if size is None else z.reshape(size))
        return float(out) if np.ndim(out) == 0 else out


def controlled(z, seed=0, *, in_pieces=False) -> ControlledNoise:
    """A `ControlledNoise` serving the standard values `z` (all in one `laplace` call, or in any number of calls with
    `in_pieces`; then `used` says how many were drawn)."""
    gen = ControlledNoise(np.random.PCG64(seed))
    gen.z, gen.used, gen.in_pieces = np.asarray(z, dtype=float), 0, in_pieces
    return gen


def threshold(decide, z_rest=None, lo=-45.0, hi=45.0, steps=60) -> float:
    """c such that decide(z_0) is True exactly for z_0 > c (decide must be monotone); +-inf if it never flips.

    `z_rest` (the other draws, already inside `decide`) is not used."""
    if decide(lo):
        return -math.inf
    if not decide(hi):
        return math.inf
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if decide(mid) else (mid, hi)
    return 0.5 * (lo + hi)


def laplace_tail(c: float) -> float:
    "P(Z > c) for a standard Laplace Z."
    return 0.5 * math.exp(-c) if c >= 0 else 1.0 - 0.5 * math.exp(c)


def log_ratio(c: float, c_prime: float) -> float:
    "Largest |log| ratio of the reject and of the accept probabilities, given the two thresholds."
    worst = 0.0
    for p, q in ((laplace_tail(c), laplace_tail(c_prime)), (1 - laplace_tail(c), 1 - laplace_tail(c_prime))):
        if p == 0.0 and q == 0.0:
            continue
        if p == 0.0 or q == 0.0:
            return math.inf
        worst = max(worst, abs(math.log(p / q)))
    return worst
