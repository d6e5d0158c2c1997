"""Plausible wrong solutions of the SPR chapter's assigned functions, for the mutation suite
(tests/test_grading_mutants.py): each must lose at least a third of its function's points in graded_spr.py, and the
chapter's own function must keep all of them.

`REFERENCE` is the chapter's function; each mutant is a submission's code with one mistake that students make, as
a student would write it: a heuristic or a formula of their own, or the chapter's function with one step done
wrong. Mutants may import the chapter (the suite grades them with nothing blocked: it measures the tests, not the
sandbox).
"""
TESTS = "graded_spr.py"
REFERENCE = {"divergence_optimal": "from ldpbook.spr import divergence_optimal\n",
             "spr_channel": "from ldpbook.spr import spr_channel\n"}

_RECORD = '''
import numpy as np
from dataclasses import dataclass
from ldpbook.spr import divergence_optimal as _chapter

@dataclass(frozen=True)
class Mechanism:
    value: float
    partition: tuple
    channel: np.ndarray
'''

MUTANTS = {
    ("divergence_optimal", "binary heuristic (always two outputs)"): _RECORD + '''
def divergence_optimal(p, q, eps, *, divergence="kl", ell=None, **params):
    return _chapter(p, q, eps, divergence=divergence, ell=2 if ell is None else min(ell, 2), **params)
''',
    ("divergence_optimal", "off-by-one blocks (at most k - 1, or ell - 1)"): _RECORD + '''
def divergence_optimal(p, q, eps, *, divergence="kl", ell=None, **params):
    k = np.asarray(p).size
    return _chapter(p, q, eps, divergence=divergence, ell=max((k if ell is None else ell) - 1, 1), **params)
''',
    ("divergence_optimal", "unsorted likelihood ratios (contiguous in index order)"): '''
import itertools
import numpy as np
from ldpbook.spr import spr_mechanism

def divergence_optimal(p, q, eps, *, divergence="kl", ell=None, **params):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    best = None
    for cuts in itertools.product((False, True), repeat=p.size - 1):
        blocks = [[0]]
        for x, cut in zip(range(1, p.size), cuts):
            if cut:
                blocks.append([])
            blocks[-1].append(x)
        if ell is None or len(blocks) <= ell:
            mech = spr_mechanism(p, q, eps, blocks, divergence=divergence, **params)
            if best is None or mech.value > best.value:
                best = mech
    return best
''',
    ("divergence_optimal", "wrong normalisation (columns sum to one)"): _RECORD + '''
def divergence_optimal(p, q, eps, **options):
    mech = _chapter(p, q, eps, **options)
    return Mechanism(mech.value, mech.partition, mech.channel / mech.channel.sum(axis=0))
''',
    ("divergence_optimal", "no validation (bad input cleaned up, not refused)"): _RECORD + '''
def divergence_optimal(p, q, eps, **options):
    p, q = np.nan_to_num(np.abs(np.asarray(p, dtype=float))), np.nan_to_num(np.abs(np.asarray(q, dtype=float)))
    n = min(p.size, q.size)
    p, q = p[:n] / max(p[:n].sum(), 1e-300), q[:n] / max(q[:n].sum(), 1e-300)
    if q.sum() == 0:
        q = np.full(n, 1 / n)
    return _chapter(p, q, abs(eps), **options)
''',
    ("divergence_optimal", "NaN at the edges (e^eps / (e^eps + s - 1) at eps = inf)"): _RECORD + '''
from ldpbook.foundations import divergence as _divergence

def divergence_optimal(p, q, eps, *, divergence="kl", **options):
    mech = _chapter(p, q, eps, divergence=divergence, **options)
    s, w = len(mech.partition), np.exp(eps)
    channel = np.where(mech.channel == mech.channel.max(axis=1, keepdims=True), w, 1.0) / (w + s - 1)
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    with np.errstate(all="ignore"):
        value = _divergence(channel.T @ p, channel.T @ q, kind=divergence, **options) if s > 1 else 0.0
    return Mechanism(float(value), mech.partition, channel)
''',
    ("divergence_optimal", "hard-coded visible example (right only where the visible tests look)"): _RECORD + '''
from ldpbook.spr import spr_mechanism
VISIBLE = [([0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]), ([0.05, 0.3, 0.15, 0.35, 0.15], [0.3, 0.1, 0.25, 0.05, 0.3]),
           ([0.5, 0.0, 0.3, 0.0, 0.2], [0.1, 0.0, 0.3, 0.0, 0.6])]

def divergence_optimal(p, q, eps, *, divergence="kl", ell=None, **params):
    seen = (np.round(p, 6).tolist(), np.round(q, 6).tolist()) in VISIBLE
    if seen and eps in (0.5, 2.0, 3.0) and divergence == "kl" and ell is None and not params:
        return _chapter(p, q, eps)
    return spr_mechanism(p, q, eps, [list(range(len(p)))], divergence=divergence, **params)
''',
    ("spr_channel", "off-by-one blocks (e^eps + s instead of e^eps + s - 1)"): '''
import numpy as np

def spr_channel(partition, k, eps):
    s = len(partition)
    channel = np.full((k, s), 1 / (np.exp(eps) + s))
    for j, block in enumerate(partition):
        channel[list(block), j] = np.exp(eps) / (np.exp(eps) + s)
    return channel
''',
    ("spr_channel", "wrong normalisation (columns sum to one)"): '''
from ldpbook.spr import spr_channel as _chapter

def spr_channel(partition, k, eps):
    channel = _chapter(partition, k, eps)
    return channel / channel.sum(axis=0)
''',
    ("spr_channel", "no validation (any list of blocks is used as given)"): '''
import numpy as np

def spr_channel(partition, k, eps):
    s, w = len(partition), np.exp(-eps)
    channel = np.full((k, s), w / (1 + (s - 1) * w))
    for j, block in enumerate(partition):
        channel[list(block), j] = 1 / (1 + (s - 1) * w)
    return channel
''',
    ("spr_channel", "NaN at the edges (e^eps / (e^eps + s - 1) at eps = inf)"): '''
import numpy as np
from ldpbook.spr import spr_channel as _chapter

def spr_channel(partition, k, eps):
    _chapter(partition, k, eps)                       # the chapter's checks of the partition
    s = len(partition)
    channel = np.full((k, s), 1 / (np.exp(eps) + s - 1))
    for j, block in enumerate(partition):
        channel[list(block), j] = np.exp(eps) / (np.exp(eps) + s - 1)
    return channel
''',
    ("spr_channel", "hard-coded visible example"): '''
import numpy as np

def spr_channel(partition, k, eps):
    if k == 5 and len(partition) == 3:
        return np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5], [0.5, 0.25, 0.25],
                         [0.25, 0.25, 0.5]])
    s = len(partition)
    if eps <= 0 or s == 1:
        return np.full((k, s), 1 / s)
    if sorted(x for block in partition for x in block) != list(range(k)):
        raise ValueError("partition must cover 0, ..., k - 1 once")
    channel = np.full((k, s), 1 / (np.exp(eps) + s - 1))
    for j, block in enumerate(partition):
        channel[list(block), j] = np.exp(eps) / (np.exp(eps) + s - 1)
    return channel
''',
}
