"""pandas Series and DataFrame columns through the one validation layer (`foundations._column`), and public bounds for
continuous data in `closeness.bin_samples`: what a practitioner with a data frame meets."""
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from ldpbook.closeness import bin_samples, dp_permutation_test
from ldpbook.foundations import check_int_array, check_real_array, privatize, randomized_response
from ldpbook.spr import divergence_optimal

SECRET = 7182818          # a value that must never appear in a message
R = randomized_response(3, 1.0)


def test_pandas_is_not_imported_by_the_package():
    "In a fresh interpreter, importing every chapter's module and privatizing an array leaves pandas unloaded."
    code = ("import sys, numpy as np\n"
            "import ldpbook, ldpbook.foundations as f, ldpbook.spr, ldpbook.egamma, ldpbook.sparse, "
            "ldpbook.closeness as c, ldpbook.adaptive, ldpbook.chernoff, ldpbook.estimated, ldpbook.approximate\n"
            "f.privatize(np.array([0, 1]), f.randomized_response(2, 1.0), rng=0)\n"
            "c.bin_samples([0.5], 2, bounds=(0, 1))\n"
            "assert 'pandas' not in sys.modules, 'pandas was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_series_keeps_its_index_and_its_draws():
    "privatize and mech.sample of a Series: a Series on the same index and name, with the draws of the array."
    x = pd.Series([2, 0, 1, 1, 2], index=[10, 3, 7, 1, 99], name="answer")
    y = privatize(x, R, rng=5)
    assert isinstance(y, pd.Series) and list(y.index) == [10, 3, 7, 1, 99] and y.name == "answer"
    assert y.to_numpy().tolist() == privatize(x.to_numpy(), R, rng=5).tolist()
    mech = divergence_optimal([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], 1.0)
    z = mech.sample(x, rng=6)
    assert isinstance(z, pd.Series) and z.index.equals(x.index)
    assert z.to_numpy().tolist() == mech.sample(x.to_numpy(), rng=6).tolist()
    # what a FunctionTransformer(func=mech.sample) does with a frame's column: returns func(X) as it is
    frame = pd.DataFrame({"answer": x, "other": np.arange(5.0)})
    assert mech.sample(frame, column="answer", rng=6).index.equals(frame.index)


def test_the_released_law_is_the_channel_for_a_series():
    "A Series of whole-number floats privatized: each input's outputs follow its row of Q (chi-square, 3 inputs)."
    from scipy.stats import chisquare
    x = pd.Series(np.repeat([0.0, 1.0, 2.0], 20_000))
    y = privatize(x, R, rng=11).to_numpy()
    for s in range(3):
        counts = np.bincount(y[x.to_numpy() == s], minlength=3)
        assert chisquare(counts, 20_000 * R[s]).pvalue > 1e-4


def test_whole_number_floats_from_pandas_are_integers_and_fractions_are_refused():
    assert check_int_array(pd.Series([0.0, 2.0, -3.0]), "x").tolist() == [0, 2, -3]
    assert check_int_array(pd.Series([0, 2], dtype="Int64"), "x").dtype == np.int64
    for bad in ([0.0, 1.5], [0.0, np.inf], [0.0, 2.0 ** 63], [0.0, -(2.0 ** 64)]):
        with pytest.raises(TypeError, match="x must hold integers: 1 of its float entries are not whole") as e:
            check_int_array(pd.Series(bad), "x")
        assert "1.5" not in str(e.value)
    with pytest.raises(TypeError, match="x must be an array of 64-bit integers"):
        privatize(pd.Series([True, False]), R)
    with pytest.raises(TypeError, match="x must be an array of 64-bit integers"):
        privatize(pd.Series(["0", "1"]), R)
    with pytest.raises(TypeError, match="x must be an array of 64-bit integers"):   # numpy floats keep their rule
        privatize(np.array([0.0, 1.0]), R)


@pytest.mark.parametrize("column", [pd.Series([SECRET, pd.NA, 1, SECRET, pd.NA, pd.NA], dtype="Int64"),
                                    pd.Series([SECRET, np.nan, 1.0, SECRET, None, np.nan]),
                                    pd.Series([SECRET, None, 1, SECRET, None, None], dtype=object)])
def test_missing_values_are_refused_with_how_many_and_where(column):
    with pytest.raises(ValueError, match=r"x has 3 missing value\(s\) \(NA\) in row\(s\) at position\(s\) 1, 4, 5")\
            as e:
        privatize(column, randomized_response(2, 1.0))
    assert str(SECRET) not in str(e.value)
    many = pd.Series([None] * 7 + [1.0])
    with pytest.raises(ValueError, match=r"7 missing value\(s\) .* 0, 1, 2, 3, 4, \.\.\.:"):
        check_real_array(many, "x")


def test_a_data_frame_needs_a_column():
    frame = pd.DataFrame({"answer": [0, 1, 2], "age": [30.5, 41.0, 52.0]})
    with pytest.raises(ValueError, match=r"x is a DataFrame with 2 column\(s\): choose the data with column="):
        privatize(frame, R)
    with pytest.raises(ValueError, match="x is a DataFrame .* column="):       # a function without column=
        dp_permutation_test(frame, [0, 1, 2], 1.0, k=3)
    with pytest.raises(ValueError, match="column must name distinct columns of x; 'nope' is not one"):
        privatize(frame, R, column="nope")
    with pytest.raises(ValueError, match="column must name distinct columns of x"):
        privatize(frame, R, column=["answer", "answer"])
    with pytest.raises(TypeError, match="column selects a column of a pandas DataFrame; x is a ndarray"):
        privatize(np.array([0, 1]), R, column="answer")
    with pytest.raises(TypeError, match="column selects a column of a pandas DataFrame; x is a Series"):
        privatize(frame["answer"], R, column="answer")
    with pytest.raises(TypeError, match="x must hold integers"):                # a real column is no symbol
        privatize(frame, R, column="age")
    y = privatize(frame, R, column=["answer"], rng=1)
    assert isinstance(y, pd.DataFrame) and list(y.columns) == ["answer"] and y.index.equals(frame.index)


def test_the_permutation_test_reads_series_as_arrays():
    "A seeded research run on Series gives the same result as on the arrays."
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 6, 60), rng.integers(0, 6, 50)
    on_arrays = dp_permutation_test(x, y, 1.0, k=6, rng=4, return_nonprivate=True)
    on_series = dp_permutation_test(pd.Series(x, index=np.arange(60) * 3), pd.Series(y.astype(float)), 1.0, k=6,
                                    rng=4, return_nonprivate=True)
    assert on_series.statistic == on_arrays.statistic and on_series.reject == on_arrays.reject
    assert on_series.pvalue == on_arrays.pvalue


# ---- public bounds for continuous data ----

def _label_exact(point, kappa, lo, hi) -> int:
    "Row-major label of one point from exact rationals: min(floor(kappa (x - lo) / (hi - lo)), kappa - 1) per axis."
    label = 0
    for x, a, b in zip(point, lo, hi):
        j = min(int(Fraction(kappa) * (Fraction(x) - Fraction(a)) // (Fraction(b) - Fraction(a))), kappa - 1)
        label = label * kappa + j
    return label


def test_bounds_bin_the_public_box_as_exact_rationals_do():
    "Points of [lo, hi]^d away from a cell boundary (relative 1e-9) get the label of the exact rescaled value."
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(200):
        d, kappa = int(rng.integers(1, 4)), int(rng.integers(1, 40))
        lo = rng.normal(0, 100, d)
        hi = lo + rng.exponential(50, d) + 1e-3
        x = lo + (hi - lo) * rng.random((5, d))
        labels = bin_samples(x, kappa, bounds=(lo, hi))
        for point, label in zip(x, labels):
            scaled = [(Fraction(p) - Fraction(a)) / (Fraction(b) - Fraction(a)) * kappa for p, a, b in zip(point, lo, hi)]
            if all(abs(s - round(s)) > 1e-9 * kappa for s in scaled):
                assert label == _label_exact(point, kappa, lo, hi)
                checked += 1
    assert checked > 900
    assert bin_samples([18.0, 65.0], 4, bounds=(18, 65)).tolist() == [0, 3]      # both faces belong to the box


def test_clipping_moves_each_point_onto_the_box():
    x = np.array([[-1e300, 0.5], [np.inf, -np.inf], [2.0, 1.5], [0.25, 0.75]])
    labels = bin_samples(x, 4, bounds=(0, 1), clip=True)
    assert labels.tolist() == [0 * 4 + 2, 3 * 4 + 0, 3 * 4 + 3, 1 * 4 + 3]
    assert bin_samples(x, 4, clip=True).tolist() == labels.tolist()              # no bounds: the unit cube


def test_clipped_labels_change_with_one_record_only():
    """The privacy of binning with public bounds: replacing one record (by anything, outside the box too) changes
    at most that record's label. Rescaling by the data's own min and max, which the error message warns against,
    moves every label."""
    rng = np.random.default_rng(1)
    for _ in range(100):
        x = rng.normal(40, 15, 200)
        changed = x.copy()
        changed[int(rng.integers(200))] = rng.choice([-1e6, 1e6, rng.normal(40, 15)])
        a = bin_samples(x, 8, bounds=(18, 65), clip=True)
        b = bin_samples(changed, 8, bounds=(18, 65), clip=True)
        assert np.count_nonzero(a != b) <= 1
    x = rng.normal(40, 15, 200)
    changed = x.copy()
    changed[0] = 1e6
    by_own_range = [bin_samples((v - v.min()) / (v.max() - v.min()), 8) for v in (x, changed)]
    assert np.count_nonzero(by_own_range[0] != by_own_range[1]) > 100


def test_points_outside_are_refused_without_clip():
    x = [0.5, SECRET + 0.25, -3.0]
    with pytest.raises(ValueError, match=r"x must lie in \[0, 1\]\^d: 2 of 3 points are outside") as e:
        bin_samples(x, 4)
    message = str(e.value)
    assert str(SECRET) not in message and "-3" not in message
    assert "bounds=(lo, hi)" in message and "clip=True" in message and "never its own min and max" in message
    assert "rescale" not in message
    with pytest.raises(ValueError, match=r"x must lie in the box bounds=\(lo, hi\): 1 of 2 points are outside"):
        bin_samples([20.0, 70.0], 4, bounds=(18, 65))
    with pytest.raises(ValueError, match=r"x must hold numbers \(found NaN or inf\)"):
        bin_samples([[0.5, 0.5], [0.5, np.nan]], 4, clip=True)      # NaN is no point, clipped or not


@pytest.mark.parametrize("bounds, error, message", [
    ((1.0, 1.0), ValueError, "bounds must have lo < hi"),
    ((2.0, 1.0), ValueError, "bounds must have lo < hi"),
    ((-1e308, 1e308), ValueError, "finite width"),
    ((0.0, np.nan), ValueError, r"bounds\[1\] must hold finite numbers"),
    ((0.0, np.inf), ValueError, r"bounds\[1\] must hold finite numbers"),
    ((0.0, [1.0, 2.0, 3.0]), ValueError, "bounds must be numbers or arrays of d = 2 numbers"),
    ((0.0, "1"), TypeError, r"bounds\[1\] must be an array of real numbers"),
    ((0.0,), TypeError, r"bounds must be a pair \(lo, hi\)"),
    (1.0, TypeError, r"bounds must be a pair \(lo, hi\)"),
])
def test_bad_bounds_are_named(bounds, error, message):
    with pytest.raises(error, match=message):
        bin_samples([[0.5, 0.5]], 4, bounds=bounds)


def test_clip_must_be_a_boolean():
    with pytest.raises(TypeError, match="clip must be True or False, got int"):
        bin_samples([0.5], 4, clip=1)


def test_bin_samples_reads_columns_and_keeps_the_index():
    frame = pd.DataFrame({"age": [17.0, 30.0, 64.0, 90.0], "income": [1e3, 5e4, 2e5, 7e4]}, index=list("abcd"))
    one = bin_samples(frame, 4, bounds=(18, 65), clip=True, column="age")
    assert isinstance(one, pd.Series) and list(one.index) == list("abcd") and one.name == "age"
    assert one.tolist() == bin_samples(frame["age"].to_numpy(), 4, bounds=(18, 65), clip=True).tolist()
    two = bin_samples(frame, 4, bounds=([18, 0], [65, 1e5]), clip=True, column=["age", "income"])
    assert isinstance(two, pd.Series) and list(two.index) == list("abcd")
    assert two.tolist() == bin_samples(frame.to_numpy(), 4, bounds=([18, 0], [65, 1e5]), clip=True).tolist()
    with pytest.raises(ValueError, match="x is a DataFrame with 2 column"):
        bin_samples(frame, 4)
    with pytest.raises(ValueError, match=r"x has 1 missing value\(s\) \(NA\) in row\(s\) at position\(s\) 2"):
        bin_samples(pd.Series([0.1, 0.2, None]), 4)


def test_empty_columns_are_no_data_not_a_crash():
    "An empty Series or column releases an empty Series, as an empty list releases an empty array."
    y = privatize(pd.Series([], dtype="int64", name="answer"), R, rng=0)
    assert isinstance(y, pd.Series) and y.size == 0 and y.name == "answer"
    z = privatize(pd.DataFrame({"a": pd.Series([], dtype="Int64")}), R, column="a", rng=0)
    assert isinstance(z, pd.Series) and z.size == 0 and z.name == "a"
    with pytest.raises(ValueError, match="x must hold at least one point"):
        bin_samples(pd.Series([], dtype=float), 2)
