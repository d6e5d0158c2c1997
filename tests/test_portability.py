"""Results that leave the process (issue 34, item 1; issue 39, processes): every public result class of the package
pickles, deep-copies, goes through joblib and round-trips through JSON, field by field and bit for bit; a mechanism
saved as JSON holds its channel's exact construction and the ε it guarantees, loading re-checks both and refuses a
changed file; mechanisms cross process boundaries (a ProcessPoolExecutor returning one, a spawn pool receiving one)
and sample the same channel afterwards.

The classes are discovered from the `__all__` of every module of the package, so a new result class is covered as
soon as it is exported: the test that every class has an example fails until `EXAMPLES` holds one."""
import concurrent.futures
import copy
import dataclasses
import functools
import importlib
import io
import json
import math
import multiprocessing
import operator
import pickle
import pkgutil
from types import MappingProxyType

import joblib
import numpy as np
import pytest

import ldpbook
from ldpbook import foundations
from ldpbook.foundations import LinearFree, from_json, is_ldp, load_mechanism, privatize, to_json

P, Q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
X = np.array([0, 1, 2, 1, 0, 2, 1, 1, 3, 3, 0, 2])
Y = np.array([2, 2, 1, 0, 2, 3, 1, 0, 3, 3, 1, 2])
U = np.linspace(0.05, 0.95, 12)


def _phi(t):
    "A module-level φ (χ²'s), so that a LinearFree made of it pickles."
    return t * t


def _power_test(x, rng):
    return bool(x > 0.5)


def _power_sample(param, rng):
    return (rng.random() + param,)


def _examples():
    "name -> a function that makes a small instance of the public result class `name` the way a user gets one."
    from ldpbook import (adaptive, approximate, assignments, chernoff, cli, closeness, egamma, estimated, grading,
                         sparse, spr)
    srr = lambda: sparse.sparse_randomized_response(4, 1.0)
    return {
        "LinearFree": lambda: LinearFree(_phi, name="chi2"),
        "SPRMechanism": lambda: spr.divergence_optimal(P, Q, 1.0, divergence="renyi", renyi_order=2.0),
        "KOVSolution": lambda: spr.kov_lp(P, Q, 1.0),
        "JointRangeCandidates": lambda: spr.joint_range(P, Q, 1.0),
        "Figure5Panel": lambda: spr.figure5_data(eps=(1.0,), n=200)[0],
        "Figure1Data": lambda: spr.figure1_data(3, T=2, eps=[0.5, 1.0], n_boot=10),
        "EgammaMechanism": lambda: egamma.egamma_optimal(P, Q, 1.0, gamma=1.5),
        "PrivatizedROC": lambda: egamma.privatized_roc(P, Q, 1.0),
        "LrDistanceBound": lambda: egamma.lr_distance_optimal(P, Q, 1.0),
        "SupportPmf": lambda: srr().pmf(1),
        "DefectDecomposition": lambda: srr().defect(0, 1, 1.0),
        "KernelChannel": lambda: srr().channel([0, 1, 2]),
        "SparseKernelMechanism": srr,
        "RangeDefect": lambda: sparse.range_defect(srr(), 1.0, 2),
        "MinimaxSeparation": lambda: closeness.minimax_separation([100.0, 1000.0], [1.0, 1.0], 1.0, 2),
        "SampleComplexity": lambda: closeness.sample_complexity([0.1, 0.2], [1.0, 1.0], 1.0, 2),
        "PhaseExponents": lambda: closeness.phase_exponents([0.1, 0.5, 1.0], 1.0, 2),
        "PermutationStatistics": lambda: closeness.permutation_statistics(X, Y, k=4, n_permutations=19, rng=1),
        "DPPermutationTestResult": lambda: closeness.dp_permutation_test(X, Y, 1.0, k=4, n_permutations=19, rng=1),
        "PowerCurve": lambda: closeness.power_curve(_power_test, _power_sample, [0.0, 0.3], n_reps=4, rng=1),
        "Figure2": lambda: closeness.figure2(n_reps=1, r_values=(0.0,), eps_values=(1.0,), n=60, n_permutations=19),
        "DyadicPartitions": lambda: adaptive.dyadic_partitions(U, 2),
        "AdaptiveTestResult": lambda: adaptive.adaptive_test(U, U[::-1] ** 2, 1.0, n_centering=19, n_permutations=19,
                                                             rng=1),
        "Figure3": lambda: adaptive.figure3_power(n_reps=1, n=60, eps_values=(1.0,), scenarios=((1, 0.0),)),
        "ChernoffInformation": lambda: chernoff.chernoff_information(P, Q),
        "ChernoffMechanism": lambda: chernoff.chernoff_optimal(P, Q, 1.0),
        "ChernoffFigureData": lambda: chernoff.chernoff_figure_data(3, T=1, eps=[1.0]),
        "BayesErrorEstimate": lambda: chernoff.bayes_error(P, Q, 10, reps=50, rng=1),
        "PluginDesign": lambda: estimated.plugin_optimal(X, Y, 1.0, k=4),
        "SampleSize": lambda: estimated.sample_size_details(P, Q, 1.0),
        "HealthVisits": lambda: estimated.load_health_visits(),
        "CertificateSimulation": lambda: estimated.certificate_simulation(P, Q, 1.0, sizes=(50,), reps=2),
        "SampleSizeComparison": lambda: estimated.sample_size_comparison(P, Q, eps=(1.0,)),
        "CertifiedDesign": lambda: estimated.certified_design(np.tile(X, 4), np.tile(Y, 4), 1.0, k=4, rng=1),
        "SurveyTestResult": lambda: estimated.survey_test([0, 1, 3, 2, 1], P, Q,
                                                          channel=foundations.randomized_response(4, 1.0), rng=1),
        "MaximinDesign": lambda: estimated.maximin_optimal([[0.0, 0.6], [0.4, 1.0]], [[0.6, 0.0], [1.0, 0.4]], 1.0,
                                                           divergence="kl"),
        "ApproxMechanism": lambda: approximate.divergence_optimal(P, Q, 1.0, delta=0.01, divergence="kl", ell=2),
        "RenyiBounds": lambda: approximate.renyi_ldp_bounds(P, Q, 1.0, renyi_order=2.0, ell=2),
        "RenyiLdpMechanism": lambda: approximate.renyi_ldp_optimal(P, Q, 1.0, renyi_order=2.0),
        "GradedTest": lambda: assignments.GradedTest("divergence", "test_kl", 2, False, "def test_kl(): ..."),
        "CheckRow": lambda: assignments.CheckRow("divergence", 2, 3, 1.5, 2.0, "2/3 passed", "one failed"),
        "Call": lambda: grading.Call("divergence([0.5, 0.5], [0.2, 0.8])", "0.22"),
        "TestOutcome": lambda: grading.TestOutcome("divergence", "test_kl", 2, False, True, "", "doc",
                                                   (grading.Call("f(1)", "2"),), "", "sandbox"),
        "Reproduction": lambda: cli.Reproduction("x", "a figure", _phi),
    }


# Classes that hold functions (φ of a LinearFree, the kernel of a sparse mechanism, the computation of a reproduction):
# they pickle when the functions do (the book's own kernels are module-level functions bound by functools.partial),
# and JSON refuses them, naming the field: code is not data.
HOLDS_A_FUNCTION = {"LinearFree": "phi", "SparseKernelMechanism": "kernel", "Reproduction": "compute"}
# Public dataclasses that do not derive from `Portable`: the grading and command-line records, and LinearFree (a
# user's φ). They pickle and round-trip through `foundations.to_json`/`from_json` all the same; no class may join
# this set: every result of a chapter derives from `Portable`.
NOT_YET_PORTABLE = {"GradedTest", "CheckRow", "Call", "TestOutcome", "Reproduction", "LinearFree"}


def public_classes():
    "Every dataclass in the `__all__` of a module of the package: the public result classes."
    found = {}
    for info in pkgutil.iter_modules(ldpbook.__path__):
        module = importlib.import_module(f"ldpbook.{info.name}")
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if isinstance(obj, type) and dataclasses.is_dataclass(obj):
                found.setdefault(obj.__name__, obj)
    return found


CLASSES = public_classes()
EXAMPLES = _examples()
_made = {}


def example(name):
    "One instance per class for the whole file (some take a second to make)."
    if name not in _made:
        obj = EXAMPLES[name]()
        assert type(obj) is CLASSES[name]
        _made[name] = obj
    return _made[name]


def assert_same(a, b, where="result", flags=True):
    """a and b equal in type and value, field by field; arrays in dtype, shape and bits, and in writeability (`flags`)
    inside the results that derive from `Portable`."""
    assert type(a) is type(b), (where, type(a), type(b))
    if dataclasses.is_dataclass(a):
        flags = isinstance(a, foundations.Portable)
        for f in dataclasses.fields(a):
            assert_same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}", flags)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
        if a.dtype.kind == "f":
            assert np.array_equal(np.signbit(a), np.signbit(b)), where
        assert a.flags.writeable == b.flags.writeable or not flags, (where, "writeable")
    elif isinstance(a, float):
        assert a == b or (math.isnan(a) and math.isnan(b)), where
        assert math.copysign(1, a) == math.copysign(1, b), where
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]", flags)
    elif isinstance(a, functools.partial):                      # a kernel of the book: its function and parameters
        assert a.func is b.func, where
        assert_same(a.args, b.args, f"{where}.args", flags)
        assert_same(a.keywords, b.keywords, f"{where}.keywords", flags)
    elif isinstance(a, (dict, MappingProxyType)):
        assert list(a) == list(b), where
        for key in a:
            assert_same(a[key], b[key], f"{where}.{key}", flags)
    else:
        assert a == b, where


def test_every_result_class_of_the_book_derives_from_portable():
    assert {n for n, c in CLASSES.items() if not issubclass(c, foundations.Portable)} <= NOT_YET_PORTABLE


def test_every_public_result_class_has_an_example():
    assert len(CLASSES) >= 35
    assert set(CLASSES) == set(EXAMPLES), ("classes without an example:", set(CLASSES) - set(EXAMPLES),
                                           "examples of no public class:", set(EXAMPLES) - set(CLASSES))


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_pickle_deepcopy_and_joblib_keep_every_field(name, tmp_path):
    obj = example(name)
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert_same(obj, pickle.loads(pickle.dumps(obj, protocol=protocol)))
    assert_same(obj, copy.deepcopy(obj))
    if name == "SparseKernelMechanism":                       # its functions, after the trip: the same channel
        back = pickle.loads(pickle.dumps(obj))
        assert np.array_equal(back.channel([0, 1, 2]).matrix, obj.channel([0, 1, 2]).matrix)
    joblib.dump(obj, tmp_path / "result.joblib")
    assert_same(obj, joblib.load(tmp_path / "result.joblib"))
    buffer = io.BytesIO()
    joblib.dump(obj, buffer, compress=3)
    buffer.seek(0)
    assert_same(obj, joblib.load(buffer))


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_json_round_trip_is_exact(name):
    obj = example(name)
    if name in HOLDS_A_FUNCTION:
        with pytest.raises(TypeError, match=f"result.{HOLDS_A_FUNCTION[name]} holds a "):
            to_json(obj)
        return
    text = to_json(obj)
    document = json.loads(text)
    assert document["schema"] == foundations.SCHEMA_VERSION and document["format"] == "ldpbook result"
    assert_same(obj, from_json(text))
    assert_same(obj, from_json(text.encode()))
    if isinstance(obj, foundations.Portable):                  # the methods of the class give the same
        assert obj.to_json() == text
        assert_same(obj, type(obj).from_json(text))
        other = next(c for n, c in CLASSES.items() if n != name and issubclass(c, foundations.Portable))
        with pytest.raises(TypeError, match="text must be a"):
            other.from_json(text)


MECHANISMS = sorted(n for n in CLASSES if n not in HOLDS_A_FUNCTION and "channel" in
                    {f.name for f in dataclasses.fields(CLASSES[n])})


def test_the_mechanisms_are_the_classes_with_a_channel():
    assert {"SPRMechanism", "EgammaMechanism", "ChernoffMechanism", "LrDistanceBound", "KOVSolution"} <= set(MECHANISMS)


def _independent_channel(mech):
    "The channel rebuilt from the mechanism's own fields by the public constructor (partition mechanisms)."
    from ldpbook.spr import spr_channel
    return spr_channel(mech.partition, mech.channel.shape[0], mech.eps)


@pytest.mark.parametrize("name", MECHANISMS)
def test_a_saved_mechanism_states_its_guarantee_and_samples_the_same_law(name):
    mech = example(name)
    saved = json.loads(to_json(mech))["result"]
    eps = getattr(mech, "eps", None)
    guaranteed = from_json(json.dumps({"format": "ldpbook result", "schema": 1,
                                       "result": {"tuple": [saved["guarantee"]["eps"]]}}))[0]
    assert guaranteed == (foundations.ldp_epsilon(mech.channel) if eps is None else eps)
    approximate = "delta" in saved["guarantee"]             # an (ε, δ) mechanism (nbs/08_approximate.ipynb)
    assert approximate == (name == "ApproxMechanism")
    renyi = "renyi_order" in saved["guarantee"]              # a Rényi-LDP mechanism (nbs/08_approximate.ipynb)
    assert renyi == (name == "RenyiLdpMechanism")
    for loaded in (load_mechanism(to_json(mech)), pickle.loads(pickle.dumps(mech))):
        if approximate:
            from ldpbook.approximate import is_approx_ldp
            assert loaded.delta == mech.delta and is_approx_ldp(loaded.channel, guaranteed, mech.delta)
            assert not is_ldp(loaded.channel, guaranteed, rtol=0)    # δ is what lets it release more
        elif renyi:
            from ldpbook.approximate import is_renyi_ldp
            assert is_renyi_ldp(loaded.channel, guaranteed, renyi_order=mech.renyi_order)
        else:
            assert is_ldp(loaded.channel, guaranteed, rtol=0)
        assert np.array_equal(loaded.channel, mech.channel)
        if approximate or renyi:                              # no construction: the stored channel is the law
            x = np.arange(mech.channel.shape[0]).repeat(50)
            assert np.array_equal(loaded.sample(x, rng=11), privatize(x, mech.channel, rng=11))
        elif hasattr(mech, "partition") and hasattr(mech, "sample"):
            truth = _independent_channel(mech)                    # the law every release must follow
            assert "construction" in saved and np.array_equal(loaded.channel, truth)
            x = np.arange(mech.channel.shape[0]).repeat(50)
            assert np.array_equal(loaded.sample(x, rng=11), privatize(x, truth, rng=11))


def _saved_spr():
    from ldpbook.spr import divergence_optimal
    return json.loads(to_json(divergence_optimal(P, Q, 1.0)))


def _eps_in_guarantee(d):
    d["result"]["guarantee"]["eps"] = 2.0


def _eps_in_fields(d):
    d["result"]["fields"]["eps"] = 2.0


def _eps_everywhere(d):                 # a weaker claim written consistently: the channel is not that of ε = 2
    d["result"]["fields"]["eps"] = d["result"]["guarantee"]["eps"] = d["result"]["construction"]["eps"] = 2.0


def _smaller_eps_everywhere(d):         # a stronger claim than the channel meets
    d["result"]["fields"]["eps"] = d["result"]["guarantee"]["eps"] = d["result"]["construction"]["eps"] = 0.5


def _row(d):
    data = d["result"]["fields"]["channel"]["data"]
    data[0], data[1] = data[1], data[0]


def _partition(d):
    d["result"]["construction"]["partition"] = d["result"]["construction"]["partition"][::-1]


def _construction_dropped(d):
    del d["result"]["construction"]


def _guarantee_dropped(d):
    del d["result"]["guarantee"]


TAMPERED = {"eps in the guarantee": (_eps_in_guarantee, "differs from the eps it guarantees"),
            "eps in the fields": (_eps_in_fields, "differs from the eps it guarantees"),
            "eps everywhere": (_eps_everywhere, "differs from its construction"),
            "smaller eps everywhere": (_smaller_eps_everywhere, "not ε-LDP at the ε it guarantees"),
            "a row": (_row, "differs from its construction|not ε-LDP"),
            "the partition": (_partition, "not that of the mechanism"),
            "construction dropped": (_construction_dropped, "construction of the channel is missing"),
            "guarantee dropped": (_guarantee_dropped, "without the ε it guarantees")}


@pytest.mark.parametrize("change", sorted(TAMPERED))
def test_a_changed_mechanism_file_is_refused(change):
    edit, message = TAMPERED[change]
    saved = _saved_spr()
    load_mechanism(json.dumps(saved))                              # untouched: loads
    edit(saved)
    with pytest.raises(ValueError, match=message):
        load_mechanism(json.dumps(saved))


def test_a_changed_channel_of_a_mechanism_without_construction_is_refused():
    "A KOV solution has no construction: its channel is checked exactly against the ε it guarantees."
    saved = json.loads(to_json(example("KOVSolution")))
    channel = saved["result"]["fields"]["channel"]
    k, m = channel["shape"]
    channel["data"] = [1.0 if j == 0 else 0.0 for _ in range(k - 1) for j in range(m)] + [0.0] * (m - 1) + [1.0]
    with pytest.raises(ValueError, match="not ε-LDP at the ε it guarantees"):
        load_mechanism(json.dumps(saved))


@pytest.mark.parametrize("text, message", [
    ("not json", "text is not JSON"),
    ('{"format": "ldpbook result", "schema": 1, "result": NaN}', "NaN is not JSON"),
    ('{"format": "ldpbook result", "schema": 2, "result": 1}', "schema version 2 is not one this ldpbook reads"),
    ('{"format": "ldpbook result", "schema": true, "result": 1}', "schema version"),
    ('{"format": "other", "schema": 1, "result": 1}', "not an ldpbook result"),
    ('[1, 2]', "not an ldpbook result"),
    ('{"format": "ldpbook result", "schema": 1, "result": {"result": "os.system", "fields": {}}}', "no ldpbook result"),
    ('{"format": "ldpbook result", "schema": 1, "result": {"result": "ldpbook.spr._Batch", "fields": {}}}',
     "no ldpbook result"),
    ('{"format": "ldpbook result", "schema": 1, "result": {"result": "ldpbook.nothing.X", "fields": {}}}',
     "does not have"),
    ('{"format": "ldpbook result", "schema": 1, "result": {"result": "ldpbook.chernoff.ChernoffInformation", '
     '"fields": {"value": 1.0}}}', "does not hold the fields of ChernoffInformation"),
    ('{"format": "ldpbook result", "schema": 1, "result": {"eval": "1"}}', "not a value that to_json writes"),
    ('{"format": "ldpbook result", "schema": 1, "result": {"ndarray": "object", "shape": [1], "data": [1], '
     '"writeable": true}}', "not a value that to_json writes"),
    ('{"format": "ldpbook result", "schema": 1, "result": {"ndarray": "float64", "shape": [3], "data": [1], '
     '"writeable": true}}', "not a valid array"),
    ('{"format": "ldpbook result", "schema": 1, "result": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested"),
])
def test_a_file_that_to_json_did_not_write_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        from_json(text)


def test_what_is_not_a_result_is_refused_with_a_type_error():
    with pytest.raises(TypeError, match="result must be a result object of ldpbook"):
        to_json({"value": 1.0})
    with pytest.raises(TypeError, match="text must be JSON text"):
        from_json(3.5)
    with pytest.raises(TypeError, match="not a mechanism"):
        load_mechanism(to_json(example("ChernoffInformation")))
    from ldpbook.spr import divergence_optimal
    custom = divergence_optimal(P, Q, 1.0, divergence=lambda t: (t - 1) ** 2)
    with pytest.raises(TypeError, match="result.divergence holds a function"):
        custom.to_json()
    assert np.array_equal(pickle.loads(pickle.dumps(divergence_optimal(P, Q, 1.0, divergence=LinearFree(_phi))))
                          .channel, custom.channel)


# ---------------------------------------------------------------- process boundaries (issue 39)

def test_a_process_pool_returns_a_mechanism_that_samples_the_same_channel():
    from ldpbook.spr import divergence_optimal, spr_channel
    with concurrent.futures.ProcessPoolExecutor(max_workers=1) as pool:
        mech = pool.submit(divergence_optimal, P, Q, 1.0, divergence="renyi", renyi_order=2.0).result(timeout=120)
    here = divergence_optimal(P, Q, 1.0, divergence="renyi", renyi_order=2.0)
    assert mech.partition == here.partition and mech.params == here.params and mech.value == here.value
    truth = spr_channel(here.partition, P.size, 1.0)
    assert np.array_equal(mech.channel, truth) and not mech.channel.flags.writeable
    x = np.repeat(np.arange(P.size), 40)
    assert np.array_equal(mech.sample(x, rng=5), privatize(x, truth, rng=5))


def test_a_spawn_pool_receives_a_mechanism_and_samples_the_same_channel():
    from ldpbook.spr import divergence_optimal, spr_channel
    mech = divergence_optimal(P, Q, 1.0, divergence="egamma", gamma=1.5)
    x = np.repeat(np.arange(P.size), 40)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        back = pool.apply(copy.copy, (mech,))                          # there and back again
        drawn = pool.apply(operator.methodcaller("sample", x, rng=9), (mech,))
        channel = pool.apply(operator.attrgetter("channel"), (mech,))
    truth = spr_channel(mech.partition, P.size, 1.0)
    assert np.array_equal(channel, truth) and np.array_equal(back.channel, truth)
    assert back.params == mech.params and isinstance(back.params, MappingProxyType)
    assert np.array_equal(drawn, privatize(x, truth, rng=9))


def test_a_mechanism_whose_channel_is_not_a_channel_is_refused():
    saved = _saved_spr()
    saved["result"]["fields"]["channel"] = "rows"
    with pytest.raises(TypeError, match="result.channel must be an array of real numbers"):
        from_json(json.dumps(saved))
    saved["result"]["fields"]["channel"] = {"ndarray": "float64", "shape": [2, 2], "data": [0.5, 0.5, 0.9, 0.9],
                                            "writeable": False}
    with pytest.raises(ValueError, match="result.channel: every row must sum to 1"):
        from_json(json.dumps(saved))


def test_an_approximate_mechanism_that_claims_a_smaller_delta_is_refused():
    "(ε, δ) mechanisms are saved with their δ and loaded only if the channel meets it (is_approx_ldp, exact)."
    from ldpbook.approximate import divergence_optimal as approx_optimal
    mech = approx_optimal(P, Q, 1.0, delta=0.01, divergence="kl", ell=2)
    saved = json.loads(to_json(mech))
    assert load_mechanism(json.dumps(saved)).delta == 0.01
    with pytest.raises(ValueError, match="not private at the ε and delta it states"):
        to_json(dataclasses.replace(mech, delta=0.001))            # the channel needs δ = 0.01
    smaller = foundations._encode(0.001, "delta")
    one_side = copy.deepcopy(saved)
    one_side["result"]["guarantee"]["delta"] = smaller             # the file's guarantee is not the fields' δ
    with pytest.raises(ValueError, match="delta differs from the delta it guarantees"):
        load_mechanism(json.dumps(one_side))
    both = copy.deepcopy(one_side)
    both["result"]["fields"]["delta"] = smaller                    # both changed: the exact check refuses it
    with pytest.raises(ValueError, match="not private at the ε and delta it guarantees"):
        load_mechanism(json.dumps(both))
