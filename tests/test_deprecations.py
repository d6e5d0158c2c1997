"""Every old call form that the 0.2.0 notes (nbs/api.md, "Deprecations") promise keeps working for one version:
options passed by position warn with a DeprecationWarning and give the result of the keyword form."""
import dataclasses
import inspect
import warnings

import numpy as np
import pytest

from ldpbook import chernoff, closeness, egamma, foundations, sparse, spr

P, Q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
K = foundations.randomized_response(4, 1.0)


def same(a, b):
    "Equal results: arrays, floats, dataclasses (field by field) and lists of them."
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(same(getattr(a, f.name), getattr(b, f.name))
                                          for f in dataclasses.fields(a))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if callable(a) and callable(b):                    # a kernel's support S(x) and kernel K(x, y): same values
        n_args = sum(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                     for p in inspect.signature(a).parameters.values())     # functions and partials
        calls = [(x,) if n_args == 1 else (x, np.arange(3)) for x in range(3)]
        return all(np.array_equal(np.asarray(a(*c)), np.asarray(b(*c))) for c in calls)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    return a == b or (a != a and b != b)


def rect(r):
    return sparse.sparse_randomized_response(r, 1.0)


# (name, old positional call, the same call in the 0.2.0 form)
OLD_FORMS = [
    ("is_ldp", lambda: foundations.is_ldp(K, 1.0, 1e-6), lambda: foundations.is_ldp(K, 1.0, rtol=1e-6)),
    ("is_approx_ldp", lambda: foundations.is_approx_ldp(K, 0.5, 0.2, 1e-9),
     lambda: foundations.is_approx_ldp(K, 0.5, 0.2, atol=1e-9)),
    ("chernoff_optimal", lambda: chernoff.chernoff_optimal(P, Q, 1.0, 2, 1e-8),
     lambda: chernoff.chernoff_optimal(P, Q, 1.0, ell=2, tol=1e-8)),
    ("bayes_error", lambda: chernoff.bayes_error(P, Q, 5, 300, 3), lambda: chernoff.bayes_error(P, Q, 5, reps=300, rng=3)),
    ("privatized_roc", lambda: egamma.privatized_roc(P, Q, 1.0, [0.5, 1.0, 2.0]),
     lambda: egamma.privatized_roc(P, Q, 1.0, gammas=[0.5, 1.0, 2.0])),
    ("sweep_radius", lambda: sparse.sweep_radius(rect, [1, 2], 1.0, 3, 1),
     lambda: sparse.sweep_radius(rect, [1, 2], 1.0, 3, center=1)),
    ("sparse_exponential", lambda: sparse.sparse_exponential(-np.abs(np.subtract.outer(range(3), range(3))), 1.0, 1,
                                                             [0, 1, 2]),
     lambda: sparse.sparse_exponential(-np.abs(np.subtract.outer(range(3), range(3))), 1.0, 1, inputs=[0, 1, 2])),
    ("sparse_rr_r1", lambda: sparse.sparse_rr_r1(2, 1.0, 0.3), lambda: sparse.sparse_rr_r1(2, 1.0, p=0.3)),
    ("figure1_data", lambda: spr.figure1_data(3, 2, [0.5, 1.0], False, 20, 4, 5),
     lambda: spr.figure1_data(3, T=2, eps=[0.5, 1.0], full=False, n_boot=20, seed=4, boot_seed=5)),
    ("figure5_data", lambda: spr.figure5_data(P, Q, (1.0,), 300, 9),
     lambda: spr.figure5_data(P, Q, (1.0,), n=300, seed=9)),
    ("figure2", lambda: closeness.figure2(2, (0.0, 0.3), (1.0,), 40, 4, 19, 0.05, 11),
     lambda: closeness.figure2(n_reps=2, r_values=(0.0, 0.3), eps_values=(1.0,), n=40, kappa=4, n_permutations=19,
                               alpha=0.05, rng=11)),
    ("chernoff_figure_data", lambda: chernoff.chernoff_figure_data(3, 1, [1.0], False, 2),
     lambda: chernoff.chernoff_figure_data(3, T=1, eps=[1.0], full=False, seed=2)),
]


@pytest.mark.parametrize("name, old, new", OLD_FORMS, ids=[f[0] for f in OLD_FORMS])
def test_an_old_positional_form_warns_and_agrees(name, old, new):
    with pytest.warns(DeprecationWarning, match=f"ldpbook 0.2.0: passing .* to {name} by position is deprecated"):
        before = old()
    with warnings.catch_warnings():
        warnings.simplefilter("error")                              # the new form does not warn
        after = new()
    assert same(before, after), name


def test_too_many_positional_arguments_are_still_a_type_error():
    with pytest.raises(TypeError, match="positional"):
        foundations.is_ldp(K, 1.0, 1e-6, 3)
    with pytest.raises(TypeError, match="multiple values"):
        foundations.is_ldp(K, 1.0, 1e-6, rtol=1e-6)


# ---- 0.3.0: the Rényi order is `renyi_order` in every design call; `alpha` stays the test level ----

def _old_renyi_calls():
    "(name, call with alpha=, the same call with renyi_order=) for every public entry the Rényi order passes through."
    from ldpbook import estimated
    u, v = P, Q
    calls = [
        ("divergence", lambda **o: foundations.divergence(u, v, kind="renyi", **o)),
        ("perspective", lambda **o: foundations.perspective(u, v, kind="renyi", **o)),
        ("divergence_terms", lambda **o: foundations.divergence_terms(u, v, u - v, kind="renyi", **o)),
        ("divergence_from_sum", lambda **o: foundations.divergence_from_sum(0.25, kind="renyi", **o)),
        ("check_divergence", lambda **o: foundations.check_divergence("renyi", dict(o))),
        ("divergence_optimal", lambda **o: spr.divergence_optimal(u, v, 1.0, divergence="renyi", ell=2, **o)),
        ("divergence_optimal_values", lambda **o: spr.divergence_optimal_values([u], [v], [1.0], divergence="renyi",
                                                                                **o)),
        ("kov_lp", lambda **o: spr.kov_lp(u, v, 1.0, divergence="renyi", **o)),
        ("spr_mechanism", lambda **o: spr.spr_mechanism(u, v, 1.0, ((0, 1), (2, 3)), divergence="renyi", **o)),
        ("divergence_constants", lambda **o: estimated.divergence_constants(1.0, divergence="renyi", **o)),
    ]
    return calls


@pytest.mark.parametrize("order", [0.5, 3.0])
@pytest.mark.parametrize("name, call", _old_renyi_calls(), ids=[c[0] for c in _old_renyi_calls()])
def test_alpha_as_the_renyi_order_warns_and_agrees(name, call, order):
    with warnings.catch_warnings():
        warnings.simplefilter("error")                              # the new form does not warn
        after = call(renyi_order=order)
    with pytest.warns(DeprecationWarning, match=r"ldpbook 0\.3\.0: alpha= for the Rényi order is deprecated; "
                                                r"write renyi_order=") as record:
        before = call(alpha=order)
    assert same(before, after), name
    assert len(record) == 1 and record[0].filename == __file__      # once, and at the caller's line
    with pytest.raises(TypeError, match="renyi_order= and its old name alpha="):
        call(alpha=order, renyi_order=order)


def test_renyi_from_parts_keyword_renamed():
    after = foundations.renyi_from_parts(0.25, np.log(1.25), renyi_order=2.0)
    with pytest.warns(DeprecationWarning, match=r"ldpbook 0\.3\.0: renyi_from_parts\(alpha=\.\.\.\) is deprecated; "
                                                r"write renyi_order=\.\.\.") as record:
        before = foundations.renyi_from_parts(0.25, np.log(1.25), alpha=2.0)
    assert before == after == pytest.approx(np.log(1.25)) and record[0].filename == __file__
    with pytest.raises(TypeError, match="got both renyi_order= and its old name alpha="):
        foundations.renyi_from_parts(0.25, 0.0, alpha=2.0, renyi_order=2.0)


def test_alpha_is_still_refused_where_it_never_was_the_renyi_order():
    "Only the Rényi divergence had `alpha`: for KL it is an unexpected keyword, as before."
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpha'"):
        foundations.divergence(P, Q, kind="kl", alpha=2.0)


def test_the_test_level_keeps_its_name():
    "The level of a test stays `alpha` (the issue allows `level` or `alpha`): no warning."
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        closeness.dp_permutation_test([0, 1, 0, 1], [1, 0, 1, 1], 1.0, k=2, alpha=0.2, n_permutations=9, rng=1)


def test_a_misspelled_renyi_order_names_the_keyword_and_its_correction():
    for call in (lambda: foundations.divergence(P, Q, kind="renyi", renyi_ordr=2.0),
                 lambda: spr.divergence_optimal(P, Q, 1.0, divergence="renyi", renyiorder=2.0)):
        with pytest.raises(TypeError, match=r"unexpected keyword argument '(renyi_ordr|renyiorder)' "
                                            r"\(did you mean 'renyi_order'\?\)"):
            call()
