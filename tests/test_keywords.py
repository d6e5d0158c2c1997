"""A misspelled keyword names itself and the parameter meant (issue: `confidance` reported without its correction).

Every public function and public method of the book's modules whose parameters are all named is called with one of
its keywords misspelled; the TypeError must name the misspelling and suggest the parameter. Functions taking
`**params` check the names themselves (foundations' `check_divergence`); they are tested with a misspelled
divergence option.
"""
import importlib
import inspect
import pickle

import numpy as np
import pytest

MODULES = ["foundations", "spr", "egamma", "sparse", "closeness", "adaptive", "chernoff", "estimated",
           "approximate", "opendp"]                 # ldpbook.figures only gathers what these define


def _misspell(name: str) -> str:
    "A typist's slip: two neighbouring letters swapped in the middle (never the name itself)."
    i = len(name) // 2
    slipped = name[:i - 1] + name[i] + name[i - 1] + name[i + 1:]
    return slipped if slipped != name else name + name[-1]


def _callables():
    found = []
    for short in MODULES:
        module = importlib.import_module(f"ldpbook.{short}")
        for attr in module.__all__:
            obj = getattr(module, attr)
            if getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj):
                found.append((f"{short}.{attr}", obj))
            elif inspect.isclass(obj):
                for name, member in vars(obj).items():
                    if name.startswith("_"):
                        continue
                    if isinstance(member, (classmethod, staticmethod)):
                        found.append((f"{short}.{attr}.{name}", getattr(obj, name)))
                    elif inspect.isfunction(member):
                        found.append((f"{short}.{attr}.{name}", member))
    return found


def _keyword_cases():
    cases = []
    for label, func in _callables():
        params = inspect.signature(func).parameters.values()
        if any(p.kind is p.VAR_KEYWORD for p in params):
            continue
        named = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        for name in named:
            if len(name) >= 4 and name != "self":       # a slip in a 1-3 letter name is another word
                cases.append(pytest.param(func, name, named, id=f"{label}:{name}"))
    return cases


CASES = _keyword_cases()


def test_the_cases_cover_the_public_api():
    modules = {c.id.split(".")[0] for c in CASES}
    assert len(CASES) >= 150 and len(modules) == len(MODULES), (len(CASES), sorted(set(MODULES) - modules))


@pytest.mark.parametrize("func, name, named", CASES)
def test_a_misspelled_keyword_is_named_with_its_correction(func, name, named):
    slip = _misspell(name)
    assert slip not in named
    with pytest.raises(TypeError) as caught:
        func(**{slip: 0})                   # checked before the call: no other argument is needed
    message = str(caught.value)
    assert f"unexpected keyword argument {slip!r}" in message
    assert f"did you mean {name!r}?" in message, message


def test_the_check_changes_nothing_else():
    from ldpbook.spr import divergence_optimal, spr_channel
    from ldpbook.estimated import certified_design
    wrapped = spr_channel.__wrapped__
    assert inspect.signature(spr_channel) == inspect.signature(wrapped)
    assert spr_channel.__doc__ == wrapped.__doc__
    assert pickle.loads(pickle.dumps(spr_channel)) is spr_channel
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    mech = divergence_optimal(p, q, 1.0)
    assert np.array_equal(spr_channel(mech.partition, 3, 1.0), wrapped(mech.partition, 3, 1.0))
    assert np.array_equal(spr_channel(partition=mech.partition, k=3, eps=1.0), mech.channel)
    with pytest.raises(TypeError, match=r"did you mean 'rng'\?"):
        mech.sample([0, 1], rgn=1)
    with pytest.raises(TypeError, match=r"'confidance' \(did you mean 'confidence'\?\)"):
        certified_design(np.zeros(40, int), np.ones(40, int), 1.0, k=3, confidance=0.9)


def test_an_old_keyword_still_reaches_its_deprecation_warning():
    old = [(label, f) for label, f in _callables() if getattr(f, "_old_keywords", None)]
    assert old                                  # renamed_keywords marks what it still accepts
    for label, func in old:
        for name in func._old_keywords:
            with pytest.warns(DeprecationWarning, match=name):
                try:
                    func(**{name: 2.0})         # the other arguments are missing: any error after the warning
                except (TypeError, ValueError) as error:
                    assert "unexpected keyword" not in str(error), (label, name, error)
