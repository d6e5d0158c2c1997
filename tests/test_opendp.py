"""ldpbook.opendp against the real OpenDP (the 0.16 series): the privacy map's values and the privacy of the law the
measurement releases, composition (OpenDP's own combinators), the released law read exactly through the measurement,
fresh entropy by default, bad input, and that no other module of the package imports OpenDP.

The law is read, not sampled: the measurement's draw is a function of one uniform U, and a generator whose U the test
chooses (`At`) shows, through OpenDP's call, which output each U gives. Output y must come out exactly when U lies
in [C_{y-1}, C_y), C the row's cumulative sums over its sum, computed here with fractions (independently of the
integer sums the sampler uses). Points 2^-200 and 2^-60 from every boundary (U's cell of 2^-53 then straddles it and
the draw needs more bits), inside every interval (outputs of mass far below 2^-53 included) and at random fix the
output for every U up to sets of measure zero in the intervals' interiors, which is the law."""
import bisect
import itertools
import math
import subprocess
import sys
import textwrap
from fractions import Fraction
from types import SimpleNamespace

import mpmath
import numpy as np
import opendp.mod
import opendp.prelude as dp
import pytest
from scipy import stats

from ldpbook.chernoff import chernoff_optimal
from ldpbook.egamma import egamma_optimal, lr_distance_optimal
from ldpbook.estimated import plugin_optimal
from ldpbook.foundations import randomized_response
from ldpbook.opendp import category_domain, mechanism_measurement, survey_domain, survey_questions
from ldpbook.spr import divergence_optimal, spr_channel

MPMATH_DPS = 60
P, Q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
PILOT0, PILOT1 = [0, 1, 1, 2, 2, 2, 0, 1, 1, 0], [2, 2, 1, 0, 2, 2, 2, 1, 2, 2]


@pytest.fixture(autouse=True)
def features():
    "OpenDP's features are one global set: each test runs with the two it needs and leaves the set as it was."
    before = set(opendp.mod.GLOBAL_FEATURES)
    dp.enable_features("contrib", "honest-but-curious")
    yield
    opendp.mod.GLOBAL_FEATURES.clear()
    opendp.mod.GLOBAL_FEATURES.update(before)


def mechanisms():
    "(label, mechanism, its channel, eps): every kind of result the module accepts, at ordinary and extreme eps."
    spr = divergence_optimal(P, Q, 1.0)
    design = plugin_optimal(PILOT0, PILOT1, 1.0, k=3)
    cases = [("spr", spr), ("spr eps=40", divergence_optimal(P, Q, 40.0)),
             ("spr eps=1e-12", divergence_optimal(P, Q, 1e-12)), ("spr tv", divergence_optimal(P, Q, 2.0, divergence="tv")),
             ("egamma", egamma_optimal(P, Q, 0.5, gamma=1.5)), ("chernoff", chernoff_optimal(P, Q, 1.0)),
             ("lr distance", lr_distance_optimal(P, Q, 3.0)), ("design", design),
             ("rr k=5", SimpleNamespace(channel=randomized_response(5, 2.0), eps=2.0)),
             ("spr k=6", SimpleNamespace(channel=spr_channel([[0, 3], [1], [2, 4, 5]], 6, 30.0), eps=30.0))]
    out = []
    for label, m in cases:
        inner = m.mechanism if hasattr(m, "mechanism") else m
        out.append(pytest.param(m, inner.channel, inner.eps, id=label))
    return out


class At(np.random.Generator):
    """A generator whose uniform U is each of the given points (fractions in [0, 1)) in turn: `random()` gives U's
    first 53 bits, `integers()` the next 64 bits each time. `extended` counts the draws that asked for more bits."""
    def __init__(self, points):
        super().__init__(np.random.PCG64(0))
        self.points, self.extended = iter(points), 0

    def random(self, size=None, dtype=np.float64, out=None):
        assert size is None, "one uniform per record"
        self.U, self.bits = next(self.points), 53
        return math.floor(self.U * 2**53) / 2**53

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        assert (low, high, size, dtype) == (0, 2**64, None, np.uint64)
        self.extended += self.bits == 53
        self.bits += 64
        return np.uint64(math.floor(self.U * 2**self.bits) % 2**64)


def edges(row):
    "[0, C_0, ..., C_{s-1} = 1]: output y iff U in [edges[y], edges[y+1]), with fractions."
    exact = [Fraction(v) for v in row.tolist()]
    total = sum(exact)
    return [Fraction(0)] + [c / total for c in itertools.accumulate(exact)]


def exact_output(row_edges, U):
    return bisect.bisect_right(row_edges, U) - 1


def points_for(row_edges, rng, n_random=20):
    "Points next to every boundary (2^-200 and 2^-60 away), inside every interval, and at random (300 bits)."
    inner = [e for e in row_edges[1:-1] if 0 < e < 1]
    pts = [e + d for e in inner for d in (-Fraction(1, 2**200), Fraction(1, 2**200), -Fraction(1, 2**60),
                                          Fraction(1, 2**60))]
    pts += [(a + b) / 2 for a, b in zip(row_edges, row_edges[1:]) if a < b]
    pts += [Fraction(int.from_bytes(rng.bytes(38), "big") >> 4, 2**300) for _ in range(n_random)]
    return [u for u in pts if 0 <= u < 1]


def released_level(channel):
    "max over outputs and pairs of records of log P(y|x)/P(y|x'), for the normalised rows, at 60 digits (mpmath)."
    rows = [[Fraction(v) / sum(map(Fraction, r)) for v in r] for r in channel.tolist()]
    level = mpmath.mpf(0)
    for y in range(channel.shape[1]):
        column = [r[y] for r in rows]
        hi, lo = max(column), min(column)
        if hi > 0:
            assert lo > 0, "an output possible under one record and impossible under another"
            ratio = hi / lo
            level = max(level, mpmath.log(mpmath.mpf(ratio.numerator) / ratio.denominator))
    return level


# ---------------------------------------------------------------------------------------------------------------
# The measurement and its privacy map


@pytest.mark.parametrize("mech, channel, eps", mechanisms())
def test_the_measurement_is_on_one_record_of_k_categories_under_max_divergence(mech, channel, eps):
    meas = mechanism_measurement(mech)
    k = channel.shape[0]
    assert meas.input_domain == dp.atom_domain(bounds=(0, k - 1), T="i32") == category_domain(k)
    assert meas.input_metric == dp.discrete_distance()
    assert meas.output_measure == dp.max_divergence()
    assert meas.input_domain.member(k - 1) and not meas.input_domain.member(k)


@pytest.mark.parametrize("mech, channel, eps", mechanisms())
def test_privacy_map_values(mech, channel, eps):
    meas = mechanism_measurement(mech)
    assert meas.map(0) == 0.0
    assert meas.map(1) == eps                                  # the level, at the records' only distance but 0
    assert meas.map(2) == meas.map(2**32 - 1) == eps           # the discrete distance is never more than 1
    assert meas.check(1, eps) and not meas.check(1, eps * (1 - 1e-9))


@pytest.mark.parametrize("mech, channel, eps", mechanisms())
def test_the_released_law_is_private_at_the_map_and_the_map_is_tight(mech, channel, eps):
    "The law of what is released (the rows normalised, in fractions), not the matrix: its level ≤ map(1), and close."
    level = released_level(channel)
    bound = mpmath.mpf(mechanism_measurement(mech).map(1))
    assert level <= bound
    # tight up to the channel's rounding: its entries are floats, each ratio known to about 2^-52
    assert level >= bound * (1 - 1e-9) - 2.0**-50, "the map is looser than the released law needs"


def test_the_map_agrees_with_opendps_randomized_response():
    for k, eps in ((2, 0.25), (3, 1.0), (7, 2.5), (40, 6.0)):
        ours = mechanism_measurement(SimpleNamespace(channel=randomized_response(k, eps), eps=eps))
        keep = math.exp(eps) / (math.exp(eps) + k - 1)
        theirs = dp.m.make_randomized_response(categories=list(range(k)), prob=keep)
        for d_in in (0, 1, 3):
            assert ours.map(d_in) == pytest.approx(theirs.map(d_in), rel=1e-12, abs=0)


# ---------------------------------------------------------------------------------------------------------------
# The released law, read exactly through the measurement


@pytest.mark.parametrize("mech, channel, eps", mechanisms())
def test_the_measurement_draws_the_channels_law_exactly(mech, channel, eps):
    rng = np.random.default_rng(5)
    extended = drawn_total = 0
    for x, row in enumerate(channel):
        row_edges = edges(row)
        points = points_for(row_edges, rng)
        gen = At(points)
        meas = mechanism_measurement(mech, rng=gen)
        drawn = [meas(x) for _ in points]
        assert drawn == [exact_output(row_edges, U) for U in points], f"record {x}"
        assert set(drawn) == {y for y in range(row.size) if row[y] > 0}     # every possible output, however small
        extended, drawn_total = extended + gen.extended, drawn_total + len(points)
    assert extended >= 2 * channel.shape[0], "no draw needed more than 53 bits: the straddling cells were missed"


def test_draws_of_outputs_far_below_the_float_grid():
    "At eps = 40 the small outputs have mass about 4e-18 < 2^-53: a float cdf on rng.random() never draws them."
    mech = divergence_optimal(P, Q, 40.0)
    small = channel_min = float(mech.channel.min())
    assert small < 2.0**-53
    for x, row in enumerate(mech.channel):
        row_edges = edges(row)
        rare = [y for y in range(row.size) if row[y] == channel_min]
        points = [(row_edges[y] + row_edges[y + 1]) / 2 for y in rare]
        meas = mechanism_measurement(mech, rng=At(points))
        assert [meas(x) for _ in points] == rare


def test_fresh_entropy_by_default():
    """Without rng every call draws fresh entropy: a binomial count within its 1e-10 tails (a false failure has
    probability below 2e-10), and two measurements whose 64 draws agree (probability about 1e-14)."""
    eps, n = 1.0, 2000
    meas = mechanism_measurement(SimpleNamespace(channel=randomized_response(2, eps), eps=eps))
    keep = math.exp(eps) / (1 + math.exp(eps))
    kept = sum(meas(0) == 0 for _ in range(n))
    lo, hi = stats.binom.ppf(1e-10, n, keep), stats.binom.isf(1e-10, n, keep)
    assert lo <= kept <= hi
    other = mechanism_measurement(SimpleNamespace(channel=randomized_response(2, eps), eps=eps))
    assert [meas(1) for _ in range(64)] != [other(1) for _ in range(64)]


def test_a_fixed_seed_is_reproducible_for_research_runs():
    mech = divergence_optimal(P, Q, 1.0)
    a, b = mechanism_measurement(mech, rng=3), mechanism_measurement(mech, rng=3)
    assert [a(x % 4) for x in range(50)] == [b(x % 4) for x in range(50)]


# ---------------------------------------------------------------------------------------------------------------
# Composition with OpenDP's combinators


def test_two_composed_give_two_eps():
    mech = divergence_optimal(P, Q, 0.7)
    meas = mechanism_measurement(mech)
    both = dp.c.make_composition([meas, meas])
    assert both.map(1) == 2 * 0.7 and both.map(0) == 0.0
    assert both.check(1, 1.4) and not both.check(1, 1.4 * (1 - 1e-9))
    other = mechanism_measurement(egamma_optimal(P, Q, 0.5, gamma=2.0))
    assert dp.c.make_composition([meas, other, meas]).map(1) == pytest.approx(1.9, rel=1e-15)


def test_composition_draws_each_measurement_once_in_order():
    "Both measurements share one generator; the composed release is the exact inversion of U1, then of U2."
    mech = divergence_optimal(P, Q, 40.0)
    rng = np.random.default_rng(11)
    for x, row in enumerate(mech.channel):
        row_edges = edges(row)
        points = points_for(row_edges, rng, n_random=4)
        gen = At(points + points[::-1])
        meas = mechanism_measurement(mech, rng=gen)
        both = dp.c.make_composition([meas, meas])
        drawn = [tuple(both(x)) for _ in points]
        pairs = list(zip(points, points[::-1]))
        order = points + points[::-1]
        expected = [(exact_output(row_edges, order[2 * i]), exact_output(row_edges, order[2 * i + 1]))
                    for i in range(len(pairs))]
        assert drawn == expected


def three_questions():
    smoker = divergence_optimal([0.7, 0.3], [0.5, 0.5], 0.5)
    visits = egamma_optimal(P, Q, 1.0, gamma=1.5)
    age = plugin_optimal(PILOT0, PILOT1, 1.25, k=3)
    return [smoker, visits, age], [smoker.channel, visits.channel, age.mechanism.channel], [0.5, 1.0, 1.25]


def test_a_sequential_composition_of_several_survey_questions():
    mechs, channels, eps = three_questions()
    questions = survey_questions(mechs)
    domain = survey_domain([2, 4, 3])
    assert all(question.input_domain == domain for question in questions)
    assert [question.map(1) for question in questions] == eps
    assert [question.map(0) for question in questions] == [0.0] * 3
    with pytest.warns(DeprecationWarning, match="make_adaptive_composition"):
        compositor = dp.c.make_sequential_composition(domain, dp.discrete_distance(), dp.max_divergence(), d_in=1,
                                                      d_mids=eps)
    assert compositor.map(1) == sum(eps)
    session = compositor((1, 3, 0))
    answers = [session(question) for question in questions]
    assert [a in range(c.shape[1]) for a, c in zip(answers, channels)] == [True] * 3
    with pytest.raises(dp.OpenDPException, match="out of queries"):
        session(questions[0])


def test_the_adaptive_compositor_refuses_a_question_over_its_budget():
    mechs, _, eps = three_questions()
    questions = survey_questions(mechs)
    compositor = dp.c.make_adaptive_composition(questions[0].input_domain, dp.discrete_distance(),
                                                dp.max_divergence(), d_in=1, d_mids=[0.5, 0.9])
    session = compositor((0, 0, 0))
    session(questions[0])                                      # eps 0.5 within 0.5
    with pytest.raises(dp.OpenDPException):
        session(questions[1])                                  # eps 1.0 over 0.9
    assert dp.c.make_composition(list(questions)).map(1) == sum(eps)


def test_each_question_releases_its_mechanism_on_its_answer():
    "Question j, read through OpenDP with chosen uniforms, is the exact inversion of row record[j] of channel j."
    mechs, channels, _ = three_questions()
    rng = np.random.default_rng(2)
    for record in [(0, 0, 0), (1, 3, 2), (0, 2, 1), (1, 1, 0)]:
        plan = []
        for j, channel in enumerate(channels):
            row_edges = edges(channel[record[j]])
            plan += [(j, U, exact_output(row_edges, U)) for U in points_for(row_edges, rng, n_random=3)]
        questions = survey_questions(mechs, rng=At([U for _, U, _ in plan]))
        assert [questions[j](record) for j, _, _ in plan] == [y for _, _, y in plan]


def test_questions_of_another_survey_do_not_compose():
    mechs, _, eps = three_questions()
    questions = survey_questions(mechs)
    stranger = survey_questions(mechs[:2])[0]
    session = dp.c.make_adaptive_composition(questions[0].input_domain, dp.discrete_distance(), dp.max_divergence(),
                                             d_in=1, d_mids=eps)((0, 0, 0))
    with pytest.raises(dp.OpenDPException):
        session(stranger)


# ---------------------------------------------------------------------------------------------------------------
# Bad input


def message(err) -> str:
    return getattr(err, "message", None) or str(err)


@pytest.mark.parametrize("record", [3, -1, 7919, 2**31 - 1, -2**31])
def test_a_record_outside_the_categories_is_refused_by_rule_not_value(record):
    meas = mechanism_measurement(plugin_optimal(PILOT0, PILOT1, 1.0, k=3))
    with pytest.raises(dp.OpenDPException) as err:
        meas(record)
    last = message(err.value).strip().splitlines()[-1]                 # OpenDP adds the traceback (no values)
    assert last == "ValueError: record must be one of the k = 3 categories 0, ..., 2"


@pytest.mark.parametrize("record", [2.0, True, "1", [1], np.int64(1), 2**40, None])
def test_a_record_that_is_not_a_32_bit_integer_is_refused(record):
    meas = mechanism_measurement(divergence_optimal(P, Q, 1.0))
    with pytest.raises((TypeError, ValueError, dp.UnknownTypeException)):     # OpenDP's conversion to i32
        meas(record)


@pytest.mark.parametrize("d_in, error", [(-1, ValueError), (2**32, ValueError), (0.5, TypeError), ("1", TypeError),
                                         (True, TypeError), (float("nan"), TypeError)])
def test_a_wrong_d_in_is_refused(d_in, error):
    meas = mechanism_measurement(divergence_optimal(P, Q, 1.0))
    with pytest.raises(error):
        meas.map(d_in)
    question = survey_questions([divergence_optimal(P, Q, 1.0)])[0]
    with pytest.raises(error):
        question.map(d_in)


@pytest.mark.parametrize("record, rule", [((1,), "record must hold one answer for each of the 3 questions"),
                                          ((1, 2, 0, 0), "record must hold one answer for each of the 3 questions"),
                                          ((1, 7919, 0), "record[1] must be one of the k = 4 categories 0, ..., 3"),
                                          ((0, 0, -7919), "record[2] must be one of the k = 3 categories 0, ..., 2"),
                                          ((True, 0, 0), "record[0] must be an integer, got bool"),
                                          ((1.0, 0, 0), "record[0] must be an integer, got float"),
                                          ("abc", "record must be a tuple or list of answers, got str"),
                                          ({0: 1}, "record must be a tuple or list of answers, got dict")])
def test_a_bad_survey_record_is_refused_by_rule_not_value(record, rule):
    mechs, _, _ = three_questions()
    question = survey_questions(mechs)[len(rule) % 3]           # each question checks the whole record
    with pytest.raises(dp.OpenDPException) as err:               # (a refused call costs OpenDP about 0.2 s)
        question(record)
    assert message(err.value).strip().splitlines()[-1].endswith(rule) and "7919" not in message(err.value)
    assert not survey_domain([2, 4, 3]).member(record)
    assert survey_domain([2, 4, 3]).member((1, 3, 2))


def leaky():
    mech = divergence_optimal(P, Q, 1.0)
    return SimpleNamespace(channel=mech.channel, eps=0.999)                     # claims less than its level


@pytest.mark.parametrize("mech, error, rule", [
    (np.eye(2), TypeError, "mechanism must have a channel and eps"),
    (None, TypeError, "mechanism must have a channel and eps"),
    (SimpleNamespace(channel=randomized_response(3, 1.0)), TypeError, "mechanism must have a channel and eps"),
    (leaky(), ValueError, "mechanism.channel is not mechanism.eps-LDP exactly"),
    (divergence_optimal(P, Q, np.inf), ValueError, "mechanism.eps must be finite"),
    (SimpleNamespace(channel=randomized_response(3, 1.0), eps=float("nan")), ValueError, "mechanism.eps"),
    (SimpleNamespace(channel=randomized_response(3, 1.0), eps="1"), TypeError, "mechanism.eps"),
    (SimpleNamespace(channel=[[0.5, 0.4], [0.4, 0.5]], eps=1.0), ValueError, "mechanism.channel"),
    (SimpleNamespace(channel=[[0.5, 0.5], [0.5 + 2e-12, 0.5 - 1e-12]], eps=1.0), ValueError, "equal sums"),
    (SimpleNamespace(channel=[[1.0, 0.0], [0.5, 0.5]], eps=5.0), ValueError, "eps-LDP exactly"),
])
def test_a_bad_mechanism_is_refused(mech, error, rule):
    with pytest.raises(error, match=rule.replace(".", r"\.")):
        mechanism_measurement(mech)


def test_bad_survey_arguments_are_refused():
    with pytest.raises(ValueError, match="mechanisms must hold at least one mechanism"):
        survey_questions([])
    with pytest.raises(TypeError, match="mechanisms must be an iterable"):
        survey_questions(divergence_optimal(P, Q, 1.0))
    with pytest.raises(ValueError, match=r"mechanisms\[1\]\.channel is not mechanisms\[1\]\.eps-LDP"):
        survey_questions([divergence_optimal(P, Q, 1.0), leaky()])
    with pytest.raises(ValueError, match="ks must be at least 1"):
        survey_domain([2, 0])
    with pytest.raises(ValueError, match="k must be at least 1"):
        category_domain(0)


@pytest.mark.parametrize("rng, error", [("abc", TypeError), (-1, ValueError), (1.5, TypeError)])
def test_a_bad_rng_is_refused(rng, error):
    with pytest.raises(error, match="rng"):
        mechanism_measurement(divergence_optimal(P, Q, 1.0), rng=rng)


def test_the_features_are_asserted_not_switched_on():
    "Enabling honest-but-curious is the user's declaration; the module asks for it and never enables it itself."
    dp.disable_features("honest-but-curious")
    with pytest.raises(dp.OpenDPException, match="honest-but-curious"):
        mechanism_measurement(divergence_optimal(P, Q, 1.0))
    assert "honest-but-curious" not in opendp.mod.GLOBAL_FEATURES


# ---------------------------------------------------------------------------------------------------------------
# The package without OpenDP


def test_no_other_module_imports_opendp_and_the_module_says_how_to_install_it():
    "In a fresh interpreter: ldpbook and every other module leave OpenDP unimported; without OpenDP they still work."
    script = textwrap.dedent("""
        import importlib, pkgutil, sys
        import ldpbook
        for m in pkgutil.iter_modules(ldpbook.__path__):
            if m.name != "opendp":
                importlib.import_module("ldpbook." + m.name)
        print(sorted(n for n in sys.modules if n.split(".")[0] == "opendp"))
        sys.modules["opendp"] = None                     # OpenDP absent, as in a plain `pip install ldpbook`
        from ldpbook.spr import divergence_optimal
        print(divergence_optimal([0.5, 0.5], [0.2, 0.8], 1.0).sample([0, 1]).shape)
        try:
            import ldpbook.opendp
        except ImportError as err:
            print(err)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[]", "(2,)", "ldpbook.opendp needs OpenDP 0.16: pip install 'ldpbook[opendp]'"]


# ---------------------------------------------------------------------------------------------------------------
# The survey page (nbs/survey.md) runs as written, and its certified n gives its test the stated power on the truth


def test_the_survey_page_runs_and_its_certified_n_is_enough_on_the_true_laws():
    import pathlib
    import re

    page = (pathlib.Path(__file__).resolve().parents[1] / "nbs" / "survey.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    assert len(blocks) == 7
    namespace = {}
    exec(compile("\n".join(blocks), "nbs/survey.md", "exec"), namespace)
    n, channel, design = namespace["n"], namespace["channel"], namespace["design"]
    assert isinstance(n, int) and n > 0 and namespace["outputs"].size == n
    assert namespace["sent"] in range(channel.shape[1])
    assert np.array_equal(channel, design.mechanism.channel)            # the loaded channel is the designed one
    assert namespace["result"].n == n and namespace["groups"].n == 2 * n
    # The truth: the data set's full-data frequencies. The merged outputs' mass under each, through the channel.
    x0, x1 = namespace["x0"], namespace["x1"]
    p, q = (np.bincount(x, minlength=7) / x.size for x in (x0, x1))
    merged = np.asarray(design.merged, dtype=bool)
    a, b = float(p @ channel[:, merged].sum(axis=1)), float(q @ channel[:, merged].sum(axis=1))
    assert b > a
    # The randomized level-0.05 test of Bin(n, a) against Bin(n, b) on the count, from binomial laws: level exactly
    # 0.05 under the true P0 and power at least 0.8 under the true P1 at the certified n.
    counts = np.arange(n + 1)
    above, at = stats.binom.sf(counts, n, a), stats.binom.pmf(counts, n, a)
    with np.errstate(over="ignore"):                      # far from the boundary the share is 0 or 1
        share = np.clip((0.05 - above) / np.where(at > 0, at, 1.0), 0.0, 1.0)   # P(reject | count)
    assert float(np.sum(at * share)) == pytest.approx(0.05, abs=1e-12)
    assert float(np.sum(stats.binom.pmf(counts, n, b) * share)) >= 0.8
