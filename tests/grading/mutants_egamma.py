"""Plausible wrong solutions of the E_γ chapter's graded functions, for the mutation suite
(tests/test_grading_mutants.py): each must lose at least a third of its function's points in graded_egamma.py, and
the chapter's own function must keep all of them."""
TESTS = "graded_egamma.py"
REFERENCE = {"egamma_closed_form": "from ldpbook.egamma import egamma_closed_form\n",
             "egamma_optimal": "from ldpbook.egamma import egamma_optimal\n"}

_CLOSED = '''
import numpy as np
from ldpbook.egamma import egamma_closed_form as _chapter

def egamma_closed_form(e_gamma, eps, *, gamma):
    _chapter(e_gamma, eps, gamma=gamma)               # the chapter's checks of the input
    e_gamma, eps, gamma = np.asarray(e_gamma, float), np.asarray(eps, float), np.asarray(gamma, float)
    floor = np.maximum(1 - gamma, 0)
    with np.errstate(all="ignore"):
        return floor + np.maximum(SHRINK * (e_gamma - floor) - np.abs(1 - gamma) * OFFSET, 0)
'''
_RECORD = '''
import numpy as np
from dataclasses import dataclass
from ldpbook.egamma import egamma_optimal as _chapter

@dataclass(frozen=True)
class Mechanism:
    value: float
    channel: np.ndarray
    threshold_set: tuple
    nonprivate_value: float
'''

MUTANTS = {
    ("egamma_closed_form", "off-by-one (1/(e^eps - 1) instead of 1/(e^eps + 1))"):
        _CLOSED.replace("SHRINK", "np.tanh(eps / 2)").replace("OFFSET", "1 / (np.exp(eps) - 1)"),
    ("egamma_closed_form", "wrong normalisation (tanh(eps) instead of tanh(eps/2))"):
        _CLOSED.replace("SHRINK", "np.tanh(eps)").replace("OFFSET", "1 / (np.exp(eps) + 1)"),
    ("egamma_closed_form", "no validation"): '''
import numpy as np

def egamma_closed_form(e_gamma, eps, *, gamma):
    e_gamma, eps, gamma = np.asarray(e_gamma, float), np.asarray(eps, float), np.asarray(gamma, float)
    floor = np.maximum(1 - gamma, 0)
    return floor + np.maximum(np.tanh(eps / 2) * (e_gamma - floor) - np.abs(1 - gamma) / (np.exp(eps) + 1), 0)
''',
    ("egamma_closed_form", "NaN at the edges ((e^eps - 1)/(e^eps + 1) at eps = inf)"):
        _CLOSED.replace("SHRINK", "(np.exp(eps) - 1) / (np.exp(eps) + 1)").replace("OFFSET", "1 / (np.exp(eps) + 1)"),
    ("egamma_closed_form", "hard-coded visible example"): '''
import math
import numpy as np

def egamma_closed_form(e_gamma, eps, *, gamma):
    known = {(0.6, 1.0): 0.3, (0.9, 2.0): 0.2, (0.4, 2.0): 0.0, (1.0, 0.5): 0.625, (0.5, 0.5): 0.5}
    if np.ndim(eps) == 0 and np.ndim(gamma) == 0 and math.isclose(eps, math.log(3.0)):
        return known.get((e_gamma, gamma), 0.0)
    return np.broadcast_to(np.asarray(e_gamma, float) * np.tanh(np.asarray(eps, float) / 2) + 0 * np.asarray(gamma),
                           np.broadcast_shapes(np.shape(eps), np.shape(gamma))).copy()
''',
    ("egamma_optimal", "wrong normalisation (columns sum to one)"): _RECORD + '''
def egamma_optimal(p, q, eps, *, gamma):
    mech = _chapter(p, q, eps, gamma=gamma)
    channel = np.asarray(mech.channel, float)
    return Mechanism(mech.value, channel / channel.sum(axis=0), tuple(mech.threshold_set), mech.nonprivate_value)
''',
    ("egamma_optimal", "no validation"): _RECORD + '''
def egamma_optimal(p, q, eps, *, gamma):
    p, q = np.asarray(p, float), np.asarray(q, float)
    n = min(p.size, q.size)
    p, q = p[:n], q[:n]
    mech = _chapter(p, q, abs(eps), gamma=abs(gamma))
    return Mechanism(mech.value, np.asarray(mech.channel), tuple(mech.threshold_set), mech.nonprivate_value)
''',
    ("egamma_optimal", "NaN at the edges (e^eps / (e^eps + 1) at eps = inf)"): _RECORD + '''
from ldpbook.foundations import divergence

def egamma_optimal(p, q, eps, *, gamma):
    mech = _chapter(p, q, eps, gamma=gamma)
    p, q = np.asarray(p, float), np.asarray(q, float)
    inside = p >= gamma * q
    truth = np.exp(eps) / (np.exp(eps) + 1)
    channel = np.where(inside[:, None], [1 - truth, truth], [truth, 1 - truth])
    with np.errstate(all="ignore"):
        value = divergence(channel.T @ p, channel.T @ q, kind="egamma", gamma=gamma) if np.isfinite(truth) \\
            else float("nan")
    return Mechanism(float(value), channel, tuple(mech.threshold_set), mech.nonprivate_value)
''',
    ("egamma_optimal", "off-by-one threshold (p > gamma q, the set's complement released)"): _RECORD + '''
def egamma_optimal(p, q, eps, *, gamma):
    mech = _chapter(p, q, eps, gamma=gamma)
    p, q = np.asarray(p, float), np.asarray(q, float)
    strict = tuple(int(x) for x in np.flatnonzero(p > gamma * q))
    return Mechanism(mech.value, np.asarray(mech.channel)[:, ::-1], strict, mech.nonprivate_value)
''',
}
