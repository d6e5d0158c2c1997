"""The lecturer's ten honest solutions of the SPR assignment (`divergence_optimal`, `spr_channel` from
nbs/01_spr.ipynb), and a few wrong ones, as function bodies that replace the release's `raise NotImplementedError()`.

Each honest solution is correct and uses something a static reading of the code once held against it: a worker
thread, a thread pool, `re.compile`, `functools` and `itertools`, numpy's whole API, `eval` of code built at run
time, brute force through the functions the release gives (`spr_mechanism`, `sort_by_likelihood_ratio`,
`randomized_response`), a different algorithm (every set partition, not only the contiguous ones; cut positions
as bit masks), files in /tmp. Used by tests/test_grading_honest.py (full marks, and `check` agrees with the course)
and by tests/grading_batch.py (the 100-submission batch).
"""
import textwrap

# The chapter's theorem: some optimal mechanism is randomized response on a contiguous partition of the symbols
# sorted by likelihood ratio (ties merged; symbols with p = q = 0 join the first block).
_VALIDATE = '''
p, q = check_pair(p, q)
eps = check_eps(eps, allow_inf=True)
limit = _check_ell(ell, p.size)
groups, null = sort_by_likelihood_ratio(p, q)
'''
_BLOCKS = '''
def blocks_of(cuts):
    "The partition of the symbols whose block boundaries, between the groups, are `cuts`."
    edges = [0, *cuts, len(groups)]
    blocks = [[x for g in groups[a:b] for x in g] for a, b in zip(edges[:-1], edges[1:])]
    blocks[0] = blocks[0] + list(null)
    return blocks
'''


def _body(*parts) -> str:
    return "\n".join(textwrap.dedent(part).strip() for part in parts)


DIVERGENCE_OPTIMAL = {
    "worker_thread": _body(_VALIDATE, _BLOCKS, '''
import itertools
import threading
found = {}

def search():
    best = None
    for s in range(1, min(limit, len(groups)) + 1):
        for cuts in itertools.combinations(range(1, len(groups)), s - 1):
            mech = spr_mechanism(p, q, eps, blocks_of(cuts), divergence=divergence, **params)
            if best is None or mech.value > best.value:
                best = mech
    found["best"] = best

worker = threading.Thread(target=search)
worker.start()
worker.join()
return found["best"]
'''),
    "thread_pool": _body(_VALIDATE, _BLOCKS, '''
import itertools
from concurrent.futures import ThreadPoolExecutor
candidates = [blocks_of(cuts) for s in range(1, min(limit, len(groups)) + 1)
              for cuts in itertools.combinations(range(1, len(groups)), s - 1)]
with ThreadPoolExecutor(max_workers=4) as pool:
    mechanisms = list(pool.map(lambda b: spr_mechanism(p, q, eps, b, divergence=divergence, **params), candidates))
return max(mechanisms, key=lambda mech: mech.value)
'''),
    "re_compile": _body('''
import re
NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
if isinstance(divergence, str) and not NAME.match(divergence):
    raise ValueError("divergence must be the name of a divergence")
''', _VALIDATE, _BLOCKS, '''
best = None
for mask in range(2 ** (len(groups) - 1)):
    cuts = [i for i in range(1, len(groups)) if mask >> (i - 1) & 1]
    if len(cuts) < limit:
        mech = spr_mechanism(p, q, eps, blocks_of(cuts), divergence=divergence, **params)
        if best is None or mech.value > best.value:
            best = mech
return best
'''),
    "functools_itertools": _body(_VALIDATE, _BLOCKS, '''
import functools
import itertools

@functools.lru_cache(maxsize=None)
def value(cuts):
    return spr_mechanism(p, q, eps, blocks_of(cuts), divergence=divergence, **params)

everything = itertools.chain.from_iterable(itertools.combinations(range(1, len(groups)), s - 1)
                                           for s in range(1, min(limit, len(groups)) + 1))
return value(functools.reduce(lambda a, b: b if value(b).value > value(a).value else a, everything))
'''),
    "set_partitions": _body(_VALIDATE, '''
support = [x for g in groups for x in g]

def partitions(items):
    "Every partition of `items` into non-empty blocks."
    if not items:
        yield []
        return
    for smaller in partitions(items[1:]):
        for j in range(len(smaller)):
            yield smaller[:j] + [[items[0]] + smaller[j]] + smaller[j + 1:]
        yield [[items[0]]] + smaller

best = None
for blocks in partitions(support):
    if len(blocks) <= limit:
        blocks = sorted(blocks, key=min)
        blocks[0] = blocks[0] + list(null)
        mech = spr_mechanism(p, q, eps, blocks, divergence=divergence, **params)
        if best is None or mech.value > best.value * (1 + 1e-12):
            best = mech
return best
'''),
    "numpy_api": _body('''
from dataclasses import dataclass
from ldpbook.foundations import divergence as divergence_of
''', _VALIDATE, '''
import itertools

@dataclass(frozen=True)
class Mechanism:
    value: float
    partition: tuple
    channel: np.ndarray

order = np.concatenate([np.asarray(g, dtype=np.int64) for g in groups])
starts = np.cumsum([0] + [len(g) for g in groups])           # where each group starts in `order`
best = None
for s in range(1, min(limit, len(groups)) + 1):
    for cuts in itertools.combinations(range(1, len(groups)), s - 1):
        label = np.zeros(p.size, dtype=np.int64)                # null symbols: block 0
        label[order] = np.searchsorted(starts[list(cuts)], np.arange(order.size), side="right")
        channel = randomized_response(s, eps)[label]
        value = float(divergence_of(np.einsum("xj,x->j", channel, p), np.einsum("xj,x->j", channel, q),
                                    kind=divergence, **params))
        if best is None or value > best.value:
            partition = tuple(tuple(np.flatnonzero(label == j).tolist()) for j in range(s))
            best = Mechanism(value, partition, channel)
return best
'''),
    "eval_built_code": _body(_VALIDATE, _BLOCKS, '''
import itertools
score = eval("lambda cuts: spr_mechanism(p, q, eps, blocks_of(cuts), divergence=divergence, **params)",
             {"spr_mechanism": spr_mechanism, "blocks_of": blocks_of, "p": p, "q": q, "eps": eps,
              "divergence": divergence, "params": params})
namespace = {"candidates": [score(c) for s in range(1, min(limit, len(groups)) + 1)
                            for c in itertools.combinations(range(1, len(groups)), s - 1)]}
exec(compile("best = max(candidates, key=lambda m: m.value)", "<built>", "exec"), namespace)
return namespace["best"]
'''),
    "recursion_fractions": _body('''
from fractions import Fraction
''', _VALIDATE, _BLOCKS, '''
def compositions(start, left):
    "Cut positions after `start` with at most `left` more blocks."
    yield ()
    if left > 1:
        for cut in range(start + 1, len(groups)):
            for rest in compositions(cut, left - 1):
                yield (cut, *rest)

best, best_value = None, None
for cuts in compositions(0, limit):
    mech = spr_mechanism(p, q, eps, blocks_of(cuts), divergence=divergence, **params)
    if best is None or Fraction(mech.value) > best_value:
        best, best_value = mech, Fraction(mech.value)
return best
'''),
    "bitmask_numpy_sort": _body('''
import numpy as np
''', _VALIDATE, _BLOCKS, '''
masks = np.arange(2 ** (len(groups) - 1))
counts = np.array([bin(m).count("1") for m in masks]) + 1
best = None
for mask in masks[np.argsort(counts, kind="stable")]:
    if bin(int(mask)).count("1") + 1 <= limit:
        cuts = [i for i in range(1, len(groups)) if int(mask) >> (i - 1) & 1]
        mech = spr_mechanism(p, q, eps, blocks_of(cuts), divergence=divergence, **params)
        if best is None or mech.value > best.value:
            best = mech
return best
'''),
    "tmp_files": _body('''
import json, os, tempfile, warnings
''', _VALIDATE, _BLOCKS, '''
import itertools
with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
    warnings.simplefilter("ignore")
    log = os.path.join(folder, "values.json")
    values = {}
    for s in range(1, min(limit, len(groups)) + 1):
        for cuts in itertools.combinations(range(1, len(groups)), s - 1):
            values[json.dumps(cuts)] = spr_mechanism(p, q, eps, blocks_of(cuts), divergence=divergence,
                                                     **params).value
    with open(log, "w") as handle:
        json.dump(values, handle)
    with open(log) as handle:
        values = json.load(handle)
best = max(values, key=lambda key: values[key])
return spr_mechanism(p, q, eps, blocks_of(json.loads(best)), divergence=divergence, **params)
'''),
}

SPR_CHANNEL = {
    "given": '''
blocks = _check_partition(partition, k)
eps = check_eps(eps, allow_inf=True)
label = np.empty(k, dtype=int)
for j, block in enumerate(blocks):
    label[list(block)] = j
return randomized_response(len(blocks), eps)[label]
''',
    "formula": '''
import math
import numpy as np
blocks = [list(block) for block in partition]
if sorted(x for block in blocks for x in block) != list(range(k)) or any(not block for block in blocks):
    raise ValueError("partition must split 0, ..., k - 1 into disjoint non-empty blocks")
if not eps >= 0:
    raise ValueError("eps must be >= 0")
s, w = len(blocks), math.exp(-eps)
channel = np.full((k, s), w / (1 + (s - 1) * w))
for j, block in enumerate(blocks):
    channel[block, j] = 1 / (1 + (s - 1) * w)
return channel
''',
    "threads": '''
import threading
blocks = _check_partition(partition, k)
eps = check_eps(eps, allow_inf=True)
rr = randomized_response(len(blocks), eps)
channel = np.empty((k, len(blocks)))

def fill(j, block):
    for x in block:
        channel[x] = rr[j]

workers = [threading.Thread(target=fill, args=(j, block)) for j, block in enumerate(blocks)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
return channel
''',
}

HONEST = {name: {"divergence_optimal": body, "spr_channel": list(SPR_CHANNEL.values())[i % len(SPR_CHANNEL)]}
          for i, (name, body) in enumerate(DIVERGENCE_OPTIMAL.items())}

# Wrong ones, for the agreement of `check` with the course on failing functions too.
WRONG = {
    "binary_heuristic": {"divergence_optimal": _body(_VALIDATE, _BLOCKS, '''
import itertools
candidates = [blocks_of(cuts) for s in (1, 2) for cuts in itertools.combinations(range(1, len(groups)), s - 1)]
return max((spr_mechanism(p, q, eps, b, divergence=divergence, **params) for b in candidates),
           key=lambda mech: mech.value)
'''), "spr_channel": SPR_CHANNEL["given"]},
    "nan_at_infinity": {"divergence_optimal": DIVERGENCE_OPTIMAL["thread_pool"], "spr_channel": '''
import numpy as np
blocks = _check_partition(partition, k)
s = len(blocks)
channel = np.full((k, s), 1 / (np.exp(eps) + s - 1))
for j, block in enumerate(blocks):
    channel[list(block), j] = np.exp(eps) / (np.exp(eps) + s - 1)
return channel
'''},
    "no_validation": {"divergence_optimal": DIVERGENCE_OPTIMAL["re_compile"], "spr_channel": '''
import numpy as np
s, w = len(partition), np.exp(-eps)
channel = np.full((k, s), w / (1 + (s - 1) * w))
for j, block in enumerate(partition):
    channel[list(block), j] = 1 / (1 + (s - 1) * w)
return channel
'''},
}


def with_bodies(release, bodies: dict):
    """A student's copy of the release notebook (an nbformat notebook) with `bodies` ({function: body}) written in
    place of the stubs `raise NotImplementedError()` of those functions' solution cells."""
    import copy
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        if not cell.metadata.get("nbgrader", {}).get("solution"):
            continue
        for function, body in bodies.items():
            if f"def {function}(" in cell.source:
                head, _, tail = cell.source.partition(f"def {function}(")
                before, _, after = tail.partition("raise NotImplementedError()")
                indented = textwrap.indent(textwrap.dedent(body).strip(), "    ").lstrip()
                cell.source = head + f"def {function}(" + before + indented + after
    return nb
