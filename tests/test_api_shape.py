"""One API shape across the chapters (the conventions stated in the API reference appendix, nbs/api.md):
names, argument order, keyword-only options, type hints, result fields, `__all__` without figure helpers, and the
old names and call forms that keep working for one version with a DeprecationWarning."""
import importlib
import inspect
import json
import pathlib
import re

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODULES = ["foundations", "spr", "egamma", "sparse", "closeness", "adaptive", "chernoff", "estimated", "approximate"]
# Validators take (value, name): the argument's name is part of what they check. The sparse-kernel chapter's constructors
# keep the parameters that define the kernel positional.
POSITIONAL_EXCEPTIONS = {"foundations": {"check_eps", "check_nonnegative", "check_distribution", "check_pair",
                                         "check_channel", "check_int", "check_divergence"},
                         "sparse": {"sparse_exponential", "sparse_staircase", "sparse_randomized_response",
                                    "truncated_additive", "truncated_skellam", "poisson_binomial"}}
FIGURE_NAME = re.compile(r"figure|plot_|table_one|^FIGURE", re.I)


def public_functions():
    for name in MODULES:
        module = importlib.import_module(f"ldpbook.{name}")
        for attr in module.__all__:
            obj = getattr(module, attr)
            if inspect.isfunction(obj):
                yield name, attr, obj


FUNCTIONS = list(public_functions())


def public_methods():
    "The public methods (and classmethods) that the classes of `__all__` define themselves."
    for name in MODULES:
        module = importlib.import_module(f"ldpbook.{name}")
        for attr in module.__all__:
            cls = getattr(module, attr)
            if not inspect.isclass(cls) or cls.__module__ != module.__name__:
                continue
            for method_name, value in vars(cls).items():
                if method_name.startswith("_"):
                    continue
                func = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
                if inspect.isfunction(func):
                    yield name, f"{attr}.{method_name}", func


METHODS = list(public_methods())


def test_there_is_an_api_to_check():
    assert len(FUNCTIONS) > 80


@pytest.mark.parametrize("module, name, func", FUNCTIONS + METHODS, ids=[f"{m}.{n}" for m, n, _ in FUNCTIONS + METHODS])
def test_every_public_function_has_type_hints(module, name, func):
    signature = inspect.signature(func)
    missing = [p.name for p in signature.parameters.values()
               if p.annotation is inspect.Parameter.empty and p.name not in ("self", "cls")]
    assert not missing, f"ldpbook.{module}.{name}: parameters without a type hint: {missing}"
    assert signature.return_annotation is not inspect.Signature.empty, f"ldpbook.{module}.{name}: no return type"


@pytest.mark.parametrize("module, name, func", FUNCTIONS + METHODS, ids=[f"{m}.{n}" for m, n, _ in FUNCTIONS + METHODS])
def test_options_are_keyword_only(module, name, func):
    "After the first parameter with a default, every parameter is keyword-only (options never go by position)."
    if name in POSITIONAL_EXCEPTIONS.get(module, ()):
        return
    seen_default = None
    for p in inspect.signature(func).parameters.values():
        if p.kind is p.POSITIONAL_OR_KEYWORD:
            assert seen_default is None, \
                f"ldpbook.{module}.{name}: {p.name!r} follows the option {seen_default!r} and can be passed by position"
            if p.default is not p.empty:
                seen_default = p.name


@pytest.mark.parametrize("module", MODULES)
def test_all_holds_the_api_only(module):
    names = importlib.import_module(f"ldpbook.{module}").__all__
    assert not [n for n in names if FIGURE_NAME.search(n)], f"figure helpers in ldpbook.{module}.__all__"


def test_figure_helpers_live_in_their_own_namespace():
    figures = importlib.import_module("ldpbook.figures")
    for name in ("figure1_data", "plot_figure1", "figure5_data", "table_one", "figure2", "write_figure2_data",
                 "figure3_power", "write_figure3_data", "read_figure3_data", "chernoff_figure_data"):
        assert name in figures.__all__ and callable(getattr(figures, name))


def test_results_name_the_same_things_alike():
    from ldpbook.adaptive import AdaptiveTestResult
    from ldpbook.chernoff import ChernoffMechanism
    from ldpbook.closeness import DPPermutationTestResult
    from ldpbook.egamma import EgammaMechanism, LrDistanceBound
    from ldpbook.spr import SPRMechanism
    for cls in (SPRMechanism, EgammaMechanism, ChernoffMechanism, LrDistanceBound):
        fields = set(cls.__dataclass_fields__) | set(dir(cls))
        assert {"value", "channel", "partition", "eps", "num_outputs", "sample"} <= fields, cls.__name__
    for cls in (DPPermutationTestResult, AdaptiveTestResult):
        assert {"reject", "pvalue", "statistic", "null_distribution", "eps", "alpha"} <= set(cls.__dataclass_fields__)


P, Q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])


def test_old_names_warn_and_agree_with_the_new_ones():
    from ldpbook import spr
    with pytest.warns(DeprecationWarning, match="ldpbook.*optimal_mechanism.*divergence_optimal"):
        old = spr.optimal_mechanism(P, Q, 1.0, divergence="tv")
    new = spr.divergence_optimal(P, Q, 1.0, divergence="tv")
    assert old.value == new.value and old.partition == new.partition
    with pytest.warns(DeprecationWarning, match="ldpbook"):
        old = spr.optimal_mechanism(P, Q, 1.0, "tv")                 # the old positional divergence, too
    assert old.value == new.value
    with pytest.warns(DeprecationWarning, match="ldpbook.*optimal_values.*divergence_optimal_values"):
        old = spr.optimal_values(P[None], Q[None], 1.0, divergence="kl")
    assert np.array_equal(old, spr.divergence_optimal_values(P[None], Q[None], 1.0, divergence="kl"))


def test_the_confusing_positional_divergence_is_a_clear_type_error():
    from ldpbook.spr import divergence_optimal
    with pytest.raises(TypeError, match="positional"):
        divergence_optimal(P, Q, 1, 2)


def test_old_argument_orders_are_recognised():
    from ldpbook.egamma import egamma_closed_form, lr_distance
    from ldpbook.foundations import privatize, randomized_response
    K = randomized_response(4, 1.0)
    x = np.array([0, 1, 2, 3, 3])
    with pytest.warns(DeprecationWarning, match="ldpbook"):
        old = privatize(K, x, rng=5)
    assert np.array_equal(old, privatize(x, K, rng=5))
    with pytest.warns(DeprecationWarning, match="ldpbook"):
        old = lr_distance(K, P, Q, 2.0)
    assert old == lr_distance(P, Q, K, r=2.0)
    with pytest.warns(DeprecationWarning, match="ldpbook"):
        old = egamma_closed_form(1.0, 2.0, 0.3)                      # (eps, gamma, e_gamma)
    assert old == egamma_closed_form(0.3, 1.0, gamma=2.0)


OLD_CALLS = re.compile(r"\b(optimal_mechanism|optimal_values|dp_pvalue|lr_distance_bound)\(")


DOCSTRING_OR_COMMENT = re.compile(r'"""(?:.|\n)*?"""|#[^\n]*')


def _code_of(path):
    """The code a file runs, without docstrings and comments: for a notebook, its code cells except those that
    demonstrate an old form under catch_warnings."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells
                         if c["cell_type"] == "code" and "catch_warnings" not in "".join(c["source"]))
    else:
        code = path.read_text(encoding="utf-8")
    return DOCSTRING_OR_COMMENT.sub("", code)


def test_the_book_the_readme_and_the_tools_use_the_new_names():
    "Only this file and the chapters' own deprecation tests call the old names."
    sources = [*sorted((ROOT / "nbs").glob("*.ipynb")), ROOT / "README.md", *sorted((ROOT / "tools").glob("*.py")),
               *sorted((ROOT / "benchmarks").glob("*.py")), *sorted((ROOT / "tests" / "grading").glob("*.py"))]
    offenders = [f"{path.relative_to(ROOT)}: {m.group(0)}" for path in sources
                 for m in OLD_CALLS.finditer(_code_of(path))]
    assert not offenders, offenders
