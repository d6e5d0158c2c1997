"""A release leaves nothing behind: no module-level cache of the library holds anything computed from the data.

Every module of the package is scanned for functools caches and module-level containers; the releases are run on
two data sets of the same sizes (caches cleared in between), and everything those caches and containers hold must
be the same after both: a cache may depend on public sizes, never on the data."""
import functools
import gc
import importlib
import pkgutil

import numpy as np

import ldpbook
from ldpbook import adaptive, closeness

MODULES = [importlib.import_module(f"ldpbook.{m.name}") for m in pkgutil.iter_modules(ldpbook.__path__)
           if m.name not in ("cli", "assignments", "_modidx")]


def caches():
    "Every functools cache reachable as a module attribute (functions and methods of classes)."
    found = {}
    for module in MODULES:
        for name, obj in vars(module).items():
            candidates = [(name, obj)] + ([(f"{name}.{a}", b) for a, b in vars(obj).items()]
                                          if isinstance(obj, type) else [])
            for label, c in candidates:
                c = getattr(c, "__func__", c)
                if isinstance(c, functools._lru_cache_wrapper):
                    found[f"{module.__name__}.{label}"] = c
    return found


def state(obj):
    "A comparable picture of a value: arrays by shape, dtype and bytes; objects by their attributes."
    if isinstance(obj, np.ndarray):
        return ("array", obj.shape, obj.dtype.str, obj.tobytes())
    if isinstance(obj, dict):
        return ("dict", tuple(sorted((repr(k), state(v)) for k, v in obj.items())))
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        return (type(obj).__name__, tuple(state(v) for v in items))
    if hasattr(obj, "__dict__") and not callable(obj) and not isinstance(obj, type):
        return (type(obj).__name__, state(vars(obj)))
    return obj


def cache_state(wrapper):
    "Keys and values held by an lru_cache: keys from its dictionary, values by calling it again (a cache hit)."
    store = [r for r in gc.get_referents(wrapper) if type(r) is dict and "__wrapped__" not in r]   # not attributes
    keys = [k for d in store for k in d]
    out = []
    hits = wrapper.cache_info().hits
    for key in keys:
        args = tuple(key) if isinstance(key, (tuple, list)) else (key,)   # positional calls only in this library
        out.append((repr(args), state(wrapper(*args))))
    assert wrapper.cache_info().hits == hits + len(keys), "a value was recomputed: the keys were not read right"
    return sorted(out, key=lambda item: item[0])


def module_state():
    return {name: state(value) for module in MODULES for name, value in vars(module).items()
            if isinstance(value, (dict, list, set, np.ndarray)) and not name.startswith("__")}


def releases(seed):
    "The data-dependent releases of ldpbook.closeness and ldpbook.adaptive on one data set (sizes fixed, counts depend on the seed)."
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 6, 120), rng.integers(0, 6 + seed % 3, 90)
    for name in closeness.STATISTICS:
        closeness.dp_permutation_test(x, y, 1.0, k=9, statistic_name=name, n_permutations=39, rng=1)
    closeness.rb_statistic(x, y, k=9)
    closeness.rb_statistic(rng.integers(0, 3, 5000), rng.integers(0, 40, 4000))   # sizes without a table
    closeness.dp_permutation_test(rng.integers(0, 3, 3000), rng.integers(0, 5, 2500), 1.0, n_permutations=19, rng=1)
    adaptive.adaptive_test(rng.random(60), rng.random(50) ** (1 + seed % 2), 1.0, n_centering=19, n_permutations=19,
                           rng=1)


def snapshot(seed):
    for wrapper in caches().values():
        wrapper.cache_clear()
    releases(seed)
    return {name: cache_state(wrapper) for name, wrapper in caches().items()}, module_state()


def test_there_are_caches_to_inspect():
    assert "ldpbook.closeness._rb_cell_table" in caches()


def test_no_cache_keeps_data_after_a_release():
    first_caches, first_globals = snapshot(0)
    second_caches, second_globals = snapshot(1)
    assert any(first_caches.values()), "the releases filled no cache: the test inspects nothing"
    for name in first_caches:
        assert first_caches[name] == second_caches[name], f"{name} holds values that depend on the data"
    assert first_globals == second_globals, "a module-level container changed with the data"
