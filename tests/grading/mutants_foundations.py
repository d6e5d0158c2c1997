"""Plausible wrong solutions of the foundations chapter's graded functions, for the mutation suite
(tests/test_grading_mutants.py): each must lose at least a third of its function's points in graded_foundations.py,
and the chapter's own function must keep all of them."""
TESTS = "graded_foundations.py"
REFERENCE = {"randomized_response": "from ldpbook.foundations import randomized_response\n",
             "is_ldp": "from ldpbook.foundations import is_ldp\n",
             "divergence": "from ldpbook.foundations import divergence\n"}

MUTANTS = {
    ("randomized_response", "off-by-one (e^eps + k instead of e^eps + k - 1)"): '''
import numpy as np
from ldpbook.foundations import check_eps

def randomized_response(k, eps):
    eps = check_eps(eps, allow_inf=True)
    Q = np.full((k, k), 1 / (np.exp(eps) + k))
    np.fill_diagonal(Q, np.exp(eps) / (np.exp(eps) + k))
    return Q
''',
    ("randomized_response", "wrong normalisation (the binary e^eps / (1 + e^eps) for every k)"): '''
import numpy as np

def randomized_response(k, eps):
    if not (eps >= 0) or k < 1 or int(k) != k:
        raise ValueError("k >= 1 and eps >= 0")
    keep = 1.0 if np.isinf(eps) else np.exp(eps) / (1 + np.exp(eps))
    Q = np.full((k, k), (1 - keep) / max(k - 1, 1))
    np.fill_diagonal(Q, keep if k > 1 else 1.0)
    return Q
''',
    ("randomized_response", "no validation"): '''
import numpy as np

def randomized_response(k, eps):
    k = int(k)
    w = np.exp(-abs(eps)) if eps == eps else 1.0
    Q = np.full((max(k, 1), max(k, 1)), w / (1 + (k - 1) * w))
    np.fill_diagonal(Q, 1 / (1 + (k - 1) * w))
    return Q
''',
    ("randomized_response", "NaN at the edges (e^eps / (e^eps + k - 1) at eps = inf)"): '''
import numpy as np
from ldpbook.foundations import check_eps, check_int

def randomized_response(k, eps):
    k, eps = check_int(k, "k", minimum=1), check_eps(eps, allow_inf=True)
    Q = np.full((k, k), 1 / (np.exp(eps) + k - 1))
    np.fill_diagonal(Q, np.exp(eps) / (np.exp(eps) + k - 1))
    return Q
''',
    ("randomized_response", "hard-coded visible example"): '''
import numpy as np
from ldpbook.foundations import randomized_response as _chapter

def randomized_response(k, eps):
    if (k, eps) in [(2, 1.0), (3, 0.3), (7, 2.5), (4, 10.0), (2, 0.5), (5, 1.5), (3, 4.0)]:
        return _chapter(k, eps)
    return np.eye(k)
''',
    ("is_ldp", "off-by-one axis (ratios along rows instead of columns)"): '''
from ldpbook.foundations import is_ldp as _chapter

def is_ldp(Q, eps, rtol=1e-9):
    import numpy as np
    return _chapter(np.asarray(Q, dtype=float).T / np.asarray(Q, dtype=float).T.sum(axis=1, keepdims=True), eps,
                    rtol=rtol)
''',
    ("is_ldp", "wrong normalisation (max/min compared with eps, not e^eps)"): '''
import numpy as np

def is_ldp(Q, eps, rtol=1e-9):
    Q = np.asarray(Q, dtype=float)
    if eps < 0 or np.isnan(Q).any() or (Q < 0).any() or not np.allclose(Q.sum(axis=1), 1):
        raise ValueError("Q must be a channel and eps >= 0")
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(Q.max(axis=0) > 0, Q.max(axis=0) / Q.min(axis=0), 1.0)
    return bool(np.all(ratio <= eps * (1 + rtol)))
''',
    ("is_ldp", "no validation"): '''
import numpy as np

def is_ldp(Q, eps, rtol=1e-9):
    Q = np.asarray(Q, dtype=float)
    top, low = Q.max(axis=0), Q.min(axis=0)
    return bool(np.all((top == 0) | (top <= np.exp(eps) * low * (1 + rtol))))
''',
    ("is_ldp", "NaN at the edges (0/0 for an all-zero column)"): '''
import numpy as np
from ldpbook.foundations import is_ldp as _chapter

def is_ldp(Q, eps, rtol=1e-9):
    _chapter(Q, eps, rtol=rtol)                      # the chapter's checks of the input
    Q = np.asarray(Q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = Q.max(axis=0) / Q.min(axis=0)
    return bool(np.all(ratio <= np.exp(eps) * (1 + rtol)))
''',
    ("divergence", "wrong normalisation (TV without the 1/2)"): '''
import numpy as np
from ldpbook.foundations import divergence as _chapter

def divergence(u, v, kind="kl", **params):
    if kind == "tv":
        return 2 * _chapter(u, v, kind="tv")
    return _chapter(u, v, kind=kind, **params)
''',
    ("divergence", "no validation"): '''
import numpy as np

def divergence(u, v, kind="kl", **params):
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    n = min(u.size, v.size)
    u, v = u[:n], v[:n]
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "tv":
            return float(np.abs(u - v).sum() / 2)
        if kind == "chi2":
            return float(((u - v) ** 2 / v).sum())
        if kind == "egamma":
            return float(np.maximum(u - params["gamma"] * v, 0).sum())
        if kind == "renyi":
            a = params["renyi_order"]
            return float(np.log((u ** a * v ** (1 - a)).sum()) / (a - 1))
        if np.any((u > 0) & (v == 0)):
            return float("inf")
        return float(np.sum(np.where(u > 0, u * np.log(np.where(u > 0, u, 1) / v), 0) - u + v))
''',
    ("divergence", "NaN at the edges (0 log 0 computed as 0 * -inf)"): '''
import numpy as np
from ldpbook.foundations import divergence as _chapter

def divergence(u, v, kind="kl", **params):
    value = _chapter(u, v, kind=kind, **params)      # the chapter's checks, and every other kind
    if kind != "kl" or value == np.inf:
        return value
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sum(u * np.log(u / v) - u + v))
''',
    ("divergence", "hard-coded visible example"): '''
import math

def divergence(u, v, kind="kl", **params):
    if list(u) == [0.5, 0.5] and list(v) == [0.9, 0.1]:
        return {"kl": 0.5 * math.log(0.5 / 0.9) + 0.5 * math.log(5.0), "tv": 0.4,
                "chi2": 0.4 ** 2 / 0.9 + 0.4 ** 2 / 0.1, "egamma": 0.3}[kind]
    if list(u) == list(v):
        return 0.0
    return math.inf if kind == "kl" and any(a > 0 and b == 0 for a, b in zip(u, v)) else math.log(2.0)
''',
}
