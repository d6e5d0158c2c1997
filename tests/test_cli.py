"""The `ldpbook` console script, driven as a subprocess the way a user runs it."""
import contextlib
import csv
import io
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

import numpy as np
import pytest

from forked_script import ForkedScript
from ldpbook.cli import MAX_INPUT_BYTES, REPRODUCTIONS
from ldpbook.estimated import two_stage_size
from ldpbook.foundations import privatize
from ldpbook.spr import divergence_optimal

SCRIPT = Path(sys.executable).with_name("ldpbook")


def ldpbook(*args, cwd=None, **kwargs):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600,
                          **kwargs)


@pytest.fixture(scope="module")
def forked():
    """The command forked from one start (tests/forked_script.py): the error tables launch it 84 times, the tests of
    its answers (values, formats, files read, figures written) about 25 more. A test about the process itself
    (start-up, signals, pipes, memory limits, permissions, a seed against fresh entropy) starts the real script."""
    runner = ForkedScript(SCRIPT)
    yield runner
    runner.close()


def assert_one_line_error(done, command, secrets=()):
    "Exit code 2, one line on stderr naming the command, no traceback, nothing on stdout, no data value echoed."
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.count("\n") == 1 and done.stderr.endswith("\n"), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert re.match(rf"ldpbook( {command})?: error: ", done.stderr), done.stderr   # parser or subcommand
    for secret in secrets:
        assert secret not in done.stderr, (secret, done.stderr)


@pytest.mark.parametrize("sub", [[], ["optimal"], ["closeness"], ["reproduce"]])
def test_every_subcommand_has_help(sub):
    done = ldpbook(*sub, "--help")
    assert done.returncode == 0 and "usage: ldpbook" in done.stdout


def test_help_says_how_infinity_is_written_and_what_a_seed_means():
    optimal = " ".join(ldpbook("optimal", "--help").stdout.split())
    assert '"Infinity"' in optimal
    closeness = " ".join(ldpbook("closeness", "--help").stdout.split())
    assert "NOT eps-DP" in closeness and "fresh entropy" in closeness and "reproducible research" in closeness


def test_optimal_json_matches_the_library(forked):
    p, q = [0.1, 0.4, 0.2, 0.3], [0.3, 0.1, 0.4, 0.2]
    done = forked("optimal", "--p", ",".join(map(str, p)), "--q", ",".join(map(str, q)), "--eps", "0.7")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    ref = divergence_optimal(p, q, 0.7)
    assert out["value"] == pytest.approx(ref.value, rel=1e-12)
    assert [tuple(b) for b in out["partition"]] == [tuple(b) for b in ref.partition]
    assert np.array_equal(out["channel"], ref.channel)


def test_inline_lists_in_brackets_work_as_the_help_promises(forked):
    plain = forked("optimal", "--p", "0.1,0.4,0.2,0.3", "--q", "0.3,0.1,0.4,0.2", "--eps", "0.7")
    bracketed = forked("optimal", "--p", "[0.1,0.4,0.2,0.3]", "--q", "[0.3, 0.1, 0.4, 0.2]", "--eps", "0.7")
    assert bracketed.returncode == 0, bracketed.stderr
    assert bracketed.stdout == plain.stdout


def strict_json(text):
    "json.loads that refuses the bare NaN / Infinity / -Infinity Python's json would otherwise accept."
    def refuse(word):
        raise ValueError(f"bare {word} is not JSON")
    return json.loads(text, parse_constant=refuse)


def test_json_output_is_valid_json_with_infinity_as_a_string(forked):
    done = forked("optimal", "--p", "1,0", "--q", "0,1", "--eps", "inf")     # KL of disjoint supports: infinite
    assert done.returncode == 0, done.stderr
    out = strict_json(done.stdout)
    assert out["value"] == "Infinity" and out["eps"] == "Infinity" and float(out["value"]) == np.inf
    finite = strict_json(forked("optimal", "--p", "0.5,0.5", "--q", "0.2,0.8", "--eps", "1").stdout)
    assert isinstance(finite["value"], float) and finite["value"] > 0


def test_optimal_from_files_csv_output_budget_and_parameters(forked, tmp_path):
    (tmp_path / "p.json").write_text(json.dumps({"p": [0.5, 0.2, 0.2, 0.1]}))
    (tmp_path / "q.csv").write_text("q\n0.1\n0.2\n0.3\n0.4\n")
    done = forked("optimal", "--p", tmp_path / "p.json", "--q", tmp_path / "q.csv", "--eps", "2",
                   "--divergence", "renyi", "--alpha", "2", "--ell", "2", "--format", "csv")
    assert done.returncode == 0, done.stderr
    comment, table = done.stdout.split("\n", 1)
    ref = divergence_optimal([0.5, 0.2, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4], 2.0, divergence="renyi", ell=2, renyi_order=2.0)
    assert f"value={ref.value!r}" in comment
    rows = list(csv.reader(io.StringIO(table)))
    assert rows[0] == ["symbol", "output_0", "output_1"]
    assert np.array_equal(np.array(rows[1:], dtype=float)[:, 1:], ref.channel)


def test_optimal_text_summary_for_people(forked, tmp_path):
    p, q = [0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]
    done = forked("optimal", "--p", "0.4,0.3,0.2,0.1", "--q", "0.1,0.2,0.3,0.4", "--eps", "1", "--format", "text")
    assert done.returncode == 0, done.stderr
    ref = divergence_optimal(p, q, 1.0)
    lines = done.stdout.splitlines()
    assert lines[1] == f"kl between the two laws of the output: {ref.value:.6g}"
    for j, block in enumerate(ref.partition):
        assert f"  block {j}: symbols {' '.join(map(str, block))}" in lines
    rows = [line.split(": ")[1].split() for line in lines if line.startswith("  symbol ")]
    assert np.allclose(np.array(rows, dtype=float), ref.channel, atol=5e-5)
    big = np.linspace(1, 2, 30)
    (tmp_path / "p.csv").write_text("\n".join(repr(float(v)) for v in big / big.sum()))
    (tmp_path / "q.csv").write_text("\n".join(repr(float(v)) for v in big[::-1] / big.sum()))
    out = tmp_path / "summary.txt"
    done = forked("optimal", "--p", tmp_path / "p.csv", "--q", tmp_path / "q.csv", "--eps", "1", "--format", "text",
                  "--out", out)
    assert done.returncode == 0, done.stderr
    assert out.read_text().rstrip().endswith("(30 symbols: the channel is in --format json or csv)")


def test_a_misspelled_option_is_answered_with_the_subcommands_closest(forked):
    cases = [(("design", "x0.csv", "x1.csv", "--k", "7", "--eps", "1", "--confidance", "0.9"), "--confidance",
              "--confidence"),
             (("survey-test", "groups", "a.csv", "b.csv", "--formt", "text"), "--formt", "--format"),
             (("optimal", "--p", "0.5,0.5", "--q", "0.2,0.8", "--eps", "1", "--renyi_order=2"), "--renyi_order",
              "--renyi-order"),
             (("design", "x0.csv", "x1.csv", "--k", "7", "--eps", "1", "--two_stage"), "--two_stage", "--two-stage")]
    for args, slip, meant in cases:
        done = forked(*args)
        assert done.returncode == 2 and done.stdout == "", args
        assert f"did you mean {meant} (for {slip})?" in done.stderr, done.stderr
        assert len(done.stderr.splitlines()) == 1
    done = forked("optimal", "--p", "0.5,0.5", "--q", "0.2,0.8", "--eps", "1", "--zzz", "3")
    assert done.returncode == 2 and "did you mean" not in done.stderr        # nothing close: no guess


def test_csv_rows_columns_header_and_bom_are_read_alike(forked, tmp_path):
    files = {"row.csv": "0.1,0.4,0.2,0.3\n", "column.csv": "p\n0.1\n0.4\n\n0.2\n0.3\n",
             "bom.csv": "\ufeffp\r\n0.1\r\n0.4\r\n0.2\r\n0.3\r\n",
             "quoted.csv": '"a","b","c","d"\n"0.1","0.4","0.2","0.3"\n'}
    outputs = set()
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        done = forked("optimal", "--p", tmp_path / name, "--q", "0.3,0.1,0.4,0.2", "--eps", "0.7")
        assert done.returncode == 0, (name, done.stderr)
        outputs.add(done.stdout)
    assert len(outputs) == 1


# ---------------------------------------------------------------------------------------------------------------
# The error table: each user mistake or hostile input gives one line on stderr and exit code 2, no traceback,
# and no data value in the message (for the private test, stderr is a release channel).
# ---------------------------------------------------------------------------------------------------------------

SECRET = "0.6180339887"          # values planted in the data: none may appear on stderr
SECRETS = (SECRET, SECRET[2:], "secretword", "2.71828", "271828", "7000000000000")


@pytest.fixture(scope="module")
def files():
    folder = Path(tempfile.mkdtemp())
    good = "x\n" + "\n".join(f"{v:.6f}" for v in np.linspace(0.05, 0.95, 40))
    table = {
        "good.csv": good,
        "empty.csv": "",
        "blank.csv": "\n\n  \n",
        "header_only.csv": "x\n",
        "abc.csv": "abc,0.5,0.5\n",
        "text_cell.csv": f"x\n{SECRET}\nsecretword\n0.5\n",
        "nan.csv": f"x\n{SECRET}\nnan\n",
        "inf.csv": f"x\n{SECRET}\ninf\n",
        "overflow.csv": f"x\n{SECRET}\n1e999\n",
        "two_columns.csv": f"a,b\n{SECRET},0.2\n0.3,0.4\n",
        "ragged.csv": f"{SECRET},0.2\n0.3\n",
        "empty_cell.csv": f"{SECRET},,0.2\n",
        "outside.csv": f"x\n{SECRET}\n1.{SECRET[2:]}\n0.5\n",
        "negative.csv": f"x\n{SECRET}\n-0.25\n0.5\n",
        "labels_fraction.csv": "3\n1\n2.71828\n0\n",
        "labels_negative.csv": "3\n1\n-271828\n0\n",
        "labels_big.csv": "3\n1\n7000000000000\n0\n",
        "one.csv": f"{SECRET}\n",
        "unquoted_newline.csv": 'x\n"0.5\n',
        "bad.json": "{not json",
        "big_int.json": "[" + "7" * 400 + "]",
        "bool.json": "[true, 0.5, 0.5]",
        "string.json": f'["{SECRET}", 0.5]',
        "null.json": "[null, 0.5]",
        "nested.json": f"[[{SECRET}], [0.5]]",
        "object.json": f'{{"a": [{SECRET}], "b": [0.5]}}',
        "scalar.json": f"{SECRET}",
        "nan.json": f"[{SECRET}, NaN]",
        "infinity.json": f"[{SECRET}, Infinity]",
        "deep.json": "[" * 200_000 + "]" * 200_000,
        "empty.json": "[]",
    }
    for name, text in table.items():
        (folder / name).write_text(text)
    (folder / "binary.csv").write_bytes(bytes(range(256)) * 4)
    (folder / "nul.csv").write_bytes(b"x\n0.5\n\x000.25\n")
    (folder / "latin1.csv").write_bytes("x\n0,5\xe9\n".encode("latin-1"))
    with open(folder / "huge.csv", "wb") as handle:          # sparse: no disk space used
        handle.truncate(MAX_INPUT_BYTES + 1)
    (folder / "a-folder").mkdir()
    (folder / "not-a-folder").write_text("")
    (folder / "rb_large.csv").write_text("\n".join(["0.5"] * 100_001))
    yield folder
    shutil.rmtree(folder)


P_OK, Q_OK = ["--q", "0.5,0.5", "--eps", "1"], ["--p", "0.5,0.5", "--eps", "1"]

OPTIMAL_ERRORS = [   # (arguments after `ldpbook optimal`, a phrase the message must contain)
    (["--p", "{f}/missing.csv", *P_OK], "no such file"),
    (["--p", "no-such-data-file", *P_OK], "no such file"),
    (["--p", "{f}/a-folder", *P_OK], "is a folder"),
    (["--p", "/proc/self/mem", *P_OK], "cannot read"),
    (["--p", "/dev/zero", *P_OK], "not a regular file"),
    (["--p", "{f}/huge.csv", *P_OK], "larger than the limit of 32 MiB"),
    (["--p", "{f}/binary.csv", *P_OK], "not UTF-8 text"),
    (["--p", "{f}/latin1.csv", *P_OK], "not UTF-8 text"),
    (["--p", "{f}/nul.csv", *P_OK], "NUL bytes"),
    (["--p", "{f}/empty.csv", *P_OK], "no numbers found"),
    (["--p", "{f}/blank.csv", *P_OK], "no numbers found"),
    (["--p", "{f}/header_only.csv", *P_OK], "no numbers found"),
    (["--p", "{f}/abc.csv", *P_OK], "row 1, column 1 is not a number"),
    (["--p", "abc,0.5,0.5", *P_OK], "item 1 of the inline list is not a number"),
    (["--p", "0.5,abc", *P_OK], "item 2 of the inline list is not a number"),
    (["--p", "0.5,,0.5", *P_OK], "item 2 of the inline list is not a number"),
    (["--p", "0.5,nan", *P_OK], "not a number"),
    (["--p", "0.5,1e999", *P_OK], "must be finite"),
    (["--p", "{f}/text_cell.csv", *P_OK], "row 3, column 1 is not a number"),
    (["--p", "{f}/nan.csv", *P_OK], "row 3, column 1 is not a number"),
    (["--p", "{f}/inf.csv", *P_OK], "not a number"),
    (["--p", "{f}/overflow.csv", *P_OK], "must be finite"),
    (["--p", "{f}/two_columns.csv", *P_OK], "one row or one column"),
    (["--p", "{f}/ragged.csv", *P_OK], "one row or one column"),
    (["--p", "{f}/empty_cell.csv", *P_OK], "column 2 is not a number"),
    (["--p", "{f}/unquoted_newline.csv", *P_OK], "not a valid CSV file"),
    (["--p", "{f}/bad.json", *P_OK], "not valid JSON"),
    (["--p", "{f}/big_int.json", *P_OK], "must be finite"),
    (["--p", "{f}/bool.json", *P_OK], "entry 1 of the list is a boolean, not a number"),
    (["--p", "{f}/string.json", *P_OK], "entry 1 of the list is a string, not a number"),
    (["--p", "{f}/null.json", *P_OK], "entry 1 of the list is null"),
    (["--p", "{f}/nested.json", *P_OK], "entry 1 of the list is a list"),
    (["--p", "{f}/object.json", *P_OK], "JSON list of numbers"),
    (["--p", "{f}/scalar.json", *P_OK], "JSON list of numbers"),
    (["--p", "{f}/nan.json", *P_OK], "NaN is not a JSON number"),
    (["--p", "{f}/infinity.json", *P_OK], "Infinity is not a JSON number"),
    (["--p", "{f}/deep.json", *P_OK], "nested too deeply"),
    (["--p", "{f}/empty.json", *P_OK], "no numbers found"),
    (["--p", "{f}/missing\nline.csv", *P_OK], "no such file"),
    (["--p", "0.5,0.6", *P_OK], "must sum to 1"),
    (["--p", "", *P_OK], "--p is empty"),
    (["--p", "  ", *P_OK], "--p is empty"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "1", "--max-symbols", "1"], "more than --max-symbols 1"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "1", "--max-symbols", "0"], "whole number"),
    (["--p", f"1.25,-0.25,{SECRET}", *P_OK], "must be non-negative"),
    (["--p", "0.5,0.5", "--q", "0.3,0.3,0.4", "--eps", "1"], "same length"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "-1"], "eps must be non-negative"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "nan"], "expected a number"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "abc"], "expected a number"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "1", "--divergence", "kullback"], "divergence kind"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "1", "--divergence", "egamma"], "gamma"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "1", "--ell", "5"], "ell"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "1", "--ell", "1e400"], "whole number"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "1", "--format", "xml"], "invalid choice"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "1", "--bogus"], "unrecognized arguments"),
    (["--p", "0.5,0.5"], "required"),
]


@pytest.mark.parametrize("args,needle", OPTIMAL_ERRORS, ids=[str(i) for i in range(len(OPTIMAL_ERRORS))])
def test_optimal_error_table(forked, files, args, needle):
    done = forked("optimal", *(a.replace("{f}", str(files)) for a in args))
    assert_one_line_error(done, "optimal", secrets=SECRETS)
    assert needle in done.stderr, done.stderr


DATA = ["{f}/good.csv", "{f}/good.csv"]

CLOSENESS_ERRORS = [   # (arguments after `ldpbook closeness`, a phrase the message must contain)
    (["{f}/outside.csv", "{f}/good.csv", "--eps", "1"], "every point must lie in [0, 1]"),
    (["{f}/good.csv", "{f}/negative.csv", "--eps", "1"], "every point must lie in [0, 1]"),
    (["{f}/nan.csv", "{f}/good.csv", "--eps", "1"], "not a number"),
    (["{f}/one.csv", "{f}/good.csv", "--eps", "1"], "at least 2 observations"),
    (["{f}/labels_fraction.csv", "{f}/labels_negative.csv", "--eps", "1", "--labels", "4"], "whole number in [0, K)"),
    (["{f}/good.csv", "{f}/labels_negative.csv", "--eps", "1", "--labels", "4"], "whole number in [0, K)"),
    (["{f}/labels_big.csv", "{f}/good.csv", "--eps", "1", "--labels", "4"], "whole number in [0, K)"),
    (["{f}/good.csv", "{f}/text_cell.csv", "--eps", "1"], "not a number"),
    ([*DATA, "--eps", "0"], "--eps must be positive"),
    ([*DATA, "--eps", "-1"], "--eps must be positive"),
    ([*DATA, "--eps", "nan"], "expected a number"),
    ([*DATA, "--eps", "1e-320"], "too small"),
    ([*DATA, "--eps", "1", "--alpha", "2"], "--alpha must lie in the open interval (0, 1)"),
    ([*DATA, "--eps", "1", "--alpha", "0"], "--alpha must lie in the open interval (0, 1)"),
    ([*DATA, "--eps", "1", "--alpha", "5e-324"], "--alpha is too small"),
    ([*DATA, "--eps", "1", "--n-permutations", "10"], "use --n-permutations 19 or more"),
    ([*DATA, "--eps", "1", "--n-permutations", "1e8"], "must be at most 1e+07"),
    ([*DATA, "--eps", "1", "--n-permutations", "0"], "whole number"),
    ([*DATA, "--eps", "1", "--n-permutations", "2.5"], "whole number"),
    ([*DATA, "--eps", "1", "--kappa", "0"], "whole number"),
    ([*DATA, "--eps", "1", "--kappa", "1e30"], "whole number from 1 to 2^53"),
    ([*DATA, "--eps", "1", "--labels", "1e30"], "whole number from 1 to 2^53"),
    ([*DATA, "--eps", "1", "--seed", "-1"], "whole number"),
    ([*DATA, "--eps", "1", "--statistic", "mean"], "invalid choice"),
    (["{f}/rb_large.csv", "{f}/rb_large.csv", "--eps", "1"], "use --statistic split"),
    (["{f}/missing.csv", "{f}/good.csv", "--eps", "1"], "no such file"),
    (["/proc/self/mem", "{f}/good.csv", "--eps", "1"], "cannot read"),
    (["{f}/a-folder", "{f}/good.csv", "--eps", "1"], "is a folder"),
]


@pytest.mark.parametrize("args,needle", CLOSENESS_ERRORS, ids=[str(i) for i in range(len(CLOSENESS_ERRORS))])
def test_closeness_error_table(forked, files, args, needle):
    done = forked("closeness", *(a.replace("{f}", str(files)) for a in args))
    assert_one_line_error(done, "closeness", secrets=SECRETS)
    assert needle in done.stderr, done.stderr


def test_the_forked_script_answers_as_the_script_does(forked, files, tmp_path):
    "The same exit code, standard output and standard error as the console script, for errors and for answers."
    rows = [OPTIMAL_ERRORS[i] for i in (0, 3, 36)] + [(["--p", "0.1,0.4,0.2,0.3", "--q", "0.3,0.1,0.4,0.2",
                                                         "--eps", "0.7", "--format", "csv"], "")]
    commands = [["optimal", *(a.replace("{f}", str(files)) for a in args)] for args, _ in rows]
    commands += [["closeness", *(a.replace("{f}", str(files)) for a in args)] for args, _ in CLOSENESS_ERRORS[:1]]
    commands += [["closeness", files / "good.csv", files / "good.csv", "--eps", "1", "--seed", "3"], ["--bogus"],
                 ["reproduce", "table1", "--out", files / "not-a-folder", "--quiet"]]
    for command in commands:
        real, fork = ldpbook(*command, cwd=tmp_path), forked(*command, cwd=tmp_path)
        assert (fork.returncode, fork.stdout, fork.stderr) == (real.returncode, real.stdout, real.stderr), command
    assert {forked(*command).returncode for command in commands} == {0, 2}


@pytest.mark.parametrize("bad_value", [-np.inf, -0.5, np.nan])
def test_a_negative_or_nan_optimal_value_is_refused_not_printed(monkeypatch, capsys, bad_value):
    "Rounding at extreme parameters (e.g. Renyi of order 1e308) must not reach the user as a divergence below 0."
    import ldpbook.spr
    from ldpbook.cli import main
    real = ldpbook.spr.divergence_optimal

    def broken(*args, **kwargs):
        mechanism = real(*args, **kwargs)
        return type("Mechanism", (), {"value": bad_value, "partition": mechanism.partition,
                                      "channel": mechanism.channel})()
    monkeypatch.setattr(ldpbook.spr, "divergence_optimal", broken)
    assert main(["optimal", "--p", "0.5,0.5", "--q", "0.2,0.8", "--eps", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "no divergence is" in captured.err and captured.err.count("\n") == 1


def test_a_large_alphabet_is_refused_at_once_with_the_way_to_run_it_anyway(forked, tmp_path):
    k = 200_001
    (tmp_path / "p.csv").write_text("\n".join(["1"] + ["0"] * (k - 1)))
    (tmp_path / "q.csv").write_text("\n".join(["0"] * (k - 1) + ["1"]))
    done = forked("optimal", "--p", tmp_path / "p.csv", "--q", tmp_path / "q.csv", "--eps", "1")
    assert_one_line_error(done, "optimal")
    assert "200001 symbols, more than --max-symbols 100000" in done.stderr and "time growing as k²" in done.stderr


def test_an_unexpected_exception_is_one_line_not_a_traceback(monkeypatch, capsys):
    import ldpbook.spr
    from ldpbook.cli import main

    def broken(*args, **kwargs):
        raise RuntimeError("an internal failure")
    monkeypatch.setattr(ldpbook.spr, "divergence_optimal", broken)
    assert main(["optimal", "--p", "0.5,0.5", "--q", "0.2,0.8", "--eps", "1"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == \
        "ldpbook optimal: internal error (RuntimeError): please report it with the command line\n"


def test_an_unreadable_file(files):
    secret = files / "secret.csv"
    secret.write_text("0.5,0.5")
    secret.chmod(0)
    command = [str(SCRIPT), "optimal", "--p", str(secret), *P_OK]
    if os.geteuid() == 0:         # root reads any file: run without the capabilities that let it
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot make a file unreadable")
        command = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert_one_line_error(done, "optimal")
    assert "cannot read it (Permission denied)" in done.stderr


def test_out_must_be_a_writable_folder(forked, files):
    for out, needle in ((files / "not-a-folder", "is a file, not a folder"),
                        (files / "not-a-folder" / "below", "cannot write there (Not a directory)"),
                        ("/proc/ldpbook-figures", "cannot write there")):
        done = forked("reproduce", "table1", "--out", out, "--quiet")
        assert_one_line_error(done, "reproduce")
        assert needle in done.stderr
    assert not any(files.glob("table1.*"))


def test_unknown_options_and_missing_subcommand_are_one_line(forked):
    for args in ([], ["--bogus"], ["frobnicate"], ["reproduce", "fig99"], ["optimal", "--p", "0.5,0.5"]):
        done = forked(*args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def limited_memory(limit=3 * 2**30):
    "A child process whose address space is capped: a table of a billion cells (8 GB) cannot be allocated."
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


@pytest.mark.parametrize("extra", [["--kappa", "1e9"], ["--kappa", "1000000000", "--statistic", "split"]])
def test_a_billion_bins_costs_memory_of_the_data_only(files, extra):
    done = ldpbook("closeness", files / "good.csv", files / "good.csv", "--eps", "1", *extra,
                   preexec_fn=limited_memory())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("reject: ") and "cells=1000000000 " in done.stdout


def test_labels_up_to_a_trillion_cost_memory_of_the_data_only(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps([0, 999_999_999_999, 5, 5, 17]))
    (tmp_path / "y.json").write_text(json.dumps([3, 999_999_999_999, 5, 123_456_789_012, 6]))
    done = ldpbook("closeness", tmp_path / "x.json", tmp_path / "y.json", "--eps", "1", "--labels", "1e12",
                   preexec_fn=limited_memory())
    assert done.returncode == 0, done.stderr
    assert "cells=1000000000000 " in done.stdout


# ---------------------------------------------------------------------------------------------------------------
# A reader that closes the pipe: quiet, with the status a shell reports for SIGPIPE (128 + 13)
# ---------------------------------------------------------------------------------------------------------------

def test_output_piped_into_head_ends_quietly():
    done = subprocess.run(["bash", "-c", f"set -o pipefail; '{SCRIPT}' closeness --help | head -n 1"],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("usage: ldpbook closeness") and done.stderr == ""
    assert done.returncode in (0, 141)        # 0 when the short help fit in the pipe before head closed it


def test_pipe_closed_before_the_output_is_written():
    child = subprocess.Popen([str(SCRIPT), "optimal", "--p", "0.5,0.5", "--q", "0.2,0.8", "--eps", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()                     # the reader is gone before the result is printed
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=120) == 141 and stderr == ""


def test_pipe_closed_during_a_long_output(tmp_path):
    k = 20_000
    rng = np.random.default_rng(0)
    p, q = rng.random(k), rng.random(k)
    (tmp_path / "p.json").write_text(json.dumps((p / p.sum()).tolist()))
    (tmp_path / "q.json").write_text(json.dumps((q / q.sum()).tolist()))
    child = subprocess.Popen([str(SCRIPT), "optimal", "--p", tmp_path / "p.json", "--q", tmp_path / "q.json",
                              "--eps", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout.read(100).startswith(b"{")       # 1.5 MB follow: more than a pipe holds
    child.stdout.close()
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=120) == 141 and stderr == ""


def test_a_full_disk_or_a_closed_stdout_is_one_line(files):
    command = f"'{SCRIPT}' optimal --p 0.5,0.5 --q 0.2,0.8 --eps 1"
    for redirect, needle in ((">/dev/full", "No space left on device"), (">&-", "standard output is closed")):
        for unbuffered in ("", "1"):            # PYTHONUNBUFFERED changes how Python writes to stdout
            env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
            done = subprocess.run(["bash", "-c", f"{command} {redirect}"], capture_output=True, text=True,
                                  timeout=120, env=env)
            assert_one_line_error(done, "optimal")
            assert needle in done.stderr


def test_ctrl_c_ends_quietly_with_status_130(tmp_path):
    out = tmp_path / "figures"
    # As from a terminal: SIGINT at its default disposition. A process inherits an ignored SIGINT (Unix keeps it
    # ignored, as for a background job), and a pytest worker may run with SIGINT ignored after other tests.
    child = subprocess.Popen([str(SCRIPT), "reproduce", "fig2", "--out", out, "--quiet"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for _ in range(600):                       # the folder is made after parsing, before the long computation
        if out.is_dir() or child.poll() is not None:
            break
        time.sleep(0.1)
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 130 and stderr == b"" and stdout == b""


def _loaded(pid, library):
    "Whether the process has mapped a file of `library` (its import has begun)."
    try:
        return f"/{library}/" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("library", ["numpy", "scipy"])
def test_ctrl_c_during_start_up_ends_quietly(library):
    """Ctrl-C while numpy (the command line's own import) or scipy (the chapters', inside `main`) is being imported:
    no traceback, status 130. (Before the script runs, while Python imports `site`, Python itself reports it.)"""
    child = subprocess.Popen([str(SCRIPT), "optimal", "--p", "0.5,0.5", "--q", "0.2,0.8", "--eps", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    while child.poll() is None and not _loaded(child.pid, library):
        time.sleep(0.001)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=120)
    assert stderr == b"", stderr
    assert child.returncode == 130 or (child.returncode == 0 and stdout.startswith(b"{")), child.returncode


# ---------------------------------------------------------------------------------------------------------------
# The private test
# ---------------------------------------------------------------------------------------------------------------

def test_closeness_prints_only_the_private_decision(forked, tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / "x.csv").write_text("x\n" + "\n".join(map(str, rng.uniform(0.0, 0.5, 300))))
    (tmp_path / "y.csv").write_text("y\n" + "\n".join(map(str, rng.uniform(0.5, 1.0, 300))))
    done = forked("closeness", tmp_path / "x.csv", tmp_path / "y.csv", "--eps", "1", "--kappa", "8")
    assert done.returncode == 0, done.stderr
    # disjoint halves: the observed statistic beats every permuted one by > 60 noise scales, so the decision is
    # True with probability > 1 - 1e-14 even though the randomness is fresh
    assert done.stdout.startswith("reject: True   (the eps-DP release)")
    assert "pvalue" not in done.stdout.lower() and "statistic=rb" in done.stdout   # the statistic's *name* only
    assert done.stdout.count("\n") == 2


def test_a_fixed_seed_is_reproducible_and_says_it_is_not_a_private_release(tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / "x.csv").write_text("\n".join(map(str, rng.random(400))))
    (tmp_path / "y.csv").write_text("\n".join(map(str, rng.random(400) ** 1.5)))
    runs = [ldpbook("closeness", tmp_path / "x.csv", tmp_path / "y.csv", "--eps", "2", "--kappa", "8",
                    "--statistic", statistic, "--seed", "1") for statistic in ("rb", "rb", "split", "split")]
    assert all(r.returncode == 0 for r in runs)
    assert runs[0].stdout == runs[1].stdout and runs[2].stdout == runs[3].stdout
    assert all("NOT an eps-DP release" in r.stdout for r in runs)


def test_closeness_with_labels_and_non_private(forked, tmp_path):
    (tmp_path / "x.csv").write_text("0,1,2,3,0,1,2,3")
    (tmp_path / "y.csv").write_text("0,0,0,0,1,1,1,1")
    done = forked("closeness", tmp_path / "x.csv", tmp_path / "y.csv", "--eps", "inf", "--labels", "4")
    assert done.returncode == 0 and "non-private" in done.stdout and "cells=4 " in done.stdout


# ---------------------------------------------------------------------------------------------------------------
# Reproductions
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["table1", "fig5"])
def test_reproduce_writes_png_and_csv(forked, tmp_path, name):
    done = forked("reproduce", name, "--out", tmp_path / "new" / "folder", "--quiet")
    assert done.returncode == 0, done.stderr
    png, table = tmp_path / "new" / "folder" / f"{name}.png", tmp_path / "new" / "folder" / f"{name}.csv"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    rows = list(csv.DictReader(table.open()))
    assert len(rows) >= 10 and all(v != "" for v in rows[0].values())


def test_reproduce_certified_gives_the_shipped_rows(forked, tmp_path):
    "The quick run of `reproduce certified` is the first five pilots per size, truth and design of the shipped file."
    from ldpbook.estimated import read_certified_data
    done = forked("reproduce", "certified", "--out", tmp_path, "--quiet")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "certified.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = [{key: value if key == "pair" else int(value) for key, value in row.items()}
            for row in csv.DictReader((tmp_path / "certified.csv").open())]
    assert rows == [row for row in read_certified_data() if row["rep"] < 5]


def test_design_ordered_splits_the_order(forked, tmp_path):
    "design --ordered prints a split of the symbol order, the one certified_design(ordered=True) gives."
    from ldpbook.estimated import certified_design
    rng = np.random.default_rng(9)
    x0, x1 = rng.choice(5, 600, p=[0.3, 0.25, 0.2, 0.15, 0.1]), rng.choice(5, 600, p=[0.1, 0.15, 0.2, 0.25, 0.3])
    (tmp_path / "x0.csv").write_text("\n".join(map(str, x0)))
    (tmp_path / "x1.csv").write_text("\n".join(map(str, x1)))
    done = forked("design", tmp_path / "x0.csv", tmp_path / "x1.csv", "--eps", "1", "--k", "5", "--ordered")
    assert done.returncode == 0, done.stderr
    report, ref = json.loads(done.stdout), certified_design(x0, x1, 1.0, k=5, ordered=True)
    t = len(report["partition"][0])
    assert report["partition"] == [list(range(t)), list(range(t, 5))] == [list(b) for b in ref.mechanism.partition]
    assert report["sample_size"]["n"] == ref.n


def test_design_two_stage_and_the_second_stage(forked, tmp_path):
    "design --two-stage plans the first stage; survey-test stage-two sizes the second from its answers."
    rng = np.random.default_rng(6)
    for name, law in (("x0", [0.1, 0.2, 0.3, 0.4]), ("x1", [0.4, 0.3, 0.2, 0.1])):
        (tmp_path / f"{name}.csv").write_text("\n".join(map(str, rng.choice(4, 400, p=law))))
    pilots = [tmp_path / "x0.csv", tmp_path / "x1.csv"]
    done = forked("design", *pilots, "--eps", "1", "--k", "4", "--two-stage", "--out", tmp_path / "d.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "d.json").read_text())
    size = report["sample_size"]
    assert size["n"] is None and size["stage_one"] > 0 and report["holdout_sizes"] == [0, 0]
    text = forked("design", *pilots, "--eps", "1", "--k", "4", "--two-stage", "--format", "text")
    assert f"first {size['stage_one']} respondents per group" in text.stdout
    Q, T = np.array(report["channel"]), np.isin(np.arange(2), report["merged_outputs"])
    for name, law in (("s0", [0.1, 0.2, 0.3, 0.4]), ("s1", [0.4, 0.3, 0.2, 0.1])):
        answers = privatize(rng.choice(4, size["stage_one"], p=law), Q, rng=rng)
        (tmp_path / f"{name}.csv").write_text("\n".join(map(str, answers)))
    first = [tmp_path / "s0.csv", tmp_path / "s1.csv"]
    second = forked("survey-test", "stage-two", *first, "--channel", tmp_path / "d.json")
    assert second.returncode == 0, second.stderr
    counts = [int(T[np.loadtxt(f, dtype=int)].sum()) for f in first]
    n2 = json.loads(second.stdout)["n"]
    assert n2 == two_stage_size(*(np.loadtxt(f, dtype=int) for f in first), merged=T) and n2 > 0, counts
    for bad in (["--merged", "0,1"], ["--confidence", "1"], ["--beta", "0"]):
        assert_one_line_error(forked("survey-test", "stage-two", *first, "--channel", tmp_path / "d.json", *bad),
                              "survey-test")


def test_reproduce_registry_and_unknown_name(forked):
    assert {"fig1", "fig5", "table1", "fig2", "fig3", "chernoff"} <= set(REPRODUCTIONS)
    done = forked("reproduce", "fig99")
    assert done.returncode == 2 and "invalid choice" in done.stderr and done.stderr.count("\n") == 1


# ---------------------------------------------------------------------------------------------------------------
# Fuzzing the readers and the parser in-process: every input is read or refused with a UsageError / exit code 2
# ---------------------------------------------------------------------------------------------------------------

from hypothesis import event, given, settings, strategies as st   # noqa: E402

from ldpbook.cli import UsageError, main, read_vector      # noqa: E402

CSV_ALPHABET = st.sampled_from(list("0123456789.,;eE+-\n\r\t \"'[]{}:abcnaifNI\x00\ufeff") + ["nan", "inf", "1e999"])


def check_read(spec):
    try:
        vector = read_vector(spec, "X")
    except UsageError as err:
        assert "\n" not in str(err)
        return
    assert vector.ndim == 1 and vector.size > 0 and np.isfinite(vector).all() and vector.dtype == float


@settings(max_examples=150)
@given(text=st.lists(CSV_ALPHABET, max_size=40).map("".join), suffix=st.sampled_from([".csv", ".json", ".txt"]))
def test_any_text_file_is_read_or_refused(tmp_path_factory, text, suffix):
    path = tmp_path_factory.mktemp("fuzz") / f"data{suffix}"
    path.write_text(text, encoding="utf-8")
    check_read(str(path))


@settings(max_examples=100)
@given(data=st.binary(max_size=200), suffix=st.sampled_from([".csv", ".json"]))
def test_any_bytes_are_read_or_refused(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("fuzz") / f"data{suffix}"
    path.write_bytes(data)
    check_read(str(path))


@settings(max_examples=100)
@given(value=st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
                          lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner,
                                                                                       max_size=2), max_leaves=8))
def test_any_json_value_is_read_or_refused(tmp_path_factory, value):
    path = tmp_path_factory.mktemp("fuzz") / "data.json"
    path.write_text(json.dumps(value))                     # json.dumps writes NaN / Infinity for such floats
    check_read(str(path))


@settings(max_examples=150)
@given(spec=st.lists(CSV_ALPHABET, min_size=1, max_size=20).map("".join))
def test_any_inline_list_is_read_or_refused(spec):
    check_read(spec)


VECTORS = ["0.5,0.5", "[0.2,0.8]", "1,0", "0,1", "0.5", "1", "0.5,0.5,0", "1e-300,1", "0.5,-0.5,1", "x", ""]
NUMBERS = ["0", "1", "-1", "inf", "nan", "1e308", "700", "2", "0.5", "1e-320", "x"]
DIVERGENCES = ["kl", "tv", "chi2", "hellinger", "renyi", "egamma", "bogus"]
EXTRAS = st.sampled_from(DIVERGENCES).map(lambda v: ["--divergence", v]) \
    | st.sampled_from(NUMBERS).map(lambda v: ["--gamma", v]) | st.sampled_from(NUMBERS).map(lambda v: ["--alpha", v]) \
    | st.sampled_from(["1", "2", "3", "0", "1e9", "x"]).map(lambda v: ["--ell", v]) \
    | st.sampled_from(["csv", "json", "xml"]).map(lambda v: ["--format", v])


@settings(max_examples=150)
@given(p=st.sampled_from(VECTORS), q=st.sampled_from(VECTORS), eps=st.sampled_from(NUMBERS),
       extras=st.lists(EXTRAS, max_size=3))
def test_any_optimal_command_line_exits_0_or_2(p, q, eps, extras):
    argv = ["--p", p, "--q", q, "--eps", eps, *(word for pair in extras for word in pair)]
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            code = main(["optimal", *argv])
        except SystemExit as done:                           # argparse: usage errors exit 2
            code = done.code
    out, err = out.getvalue(), err.getvalue()
    event(f"exit code {code}")
    assert code in (0, 2), (argv, err)
    assert (code == 0) == (err == "") and err.count("\n") <= 1 and "Traceback" not in err, (argv, err)
    if code == 0 and out.startswith("{"):
        assert float(strict_json(out)["value"]) >= 0
    elif code == 0:
        assert float(out.split()[1].removeprefix("value=")) >= 0


def test_ctrl_c_that_python_cannot_deliver_still_ends_quietly(monkeypatch, capsys):
    """A Ctrl-C that arrives inside a weakref callback (as in the import system's module locks) cannot propagate:
    Python used to print 'Exception ignored in: ... KeyboardInterrupt' and the run went on to print its result.
    Now nothing is printed and the status is 130."""
    import ldpbook.spr
    real = ldpbook.spr.divergence_optimal

    def interrupted(*args, **kwargs):
        class Lock:
            pass
        lock = Lock()
        ref = weakref.ref(lock, lambda _: (os.kill(os.getpid(), signal.SIGINT), time.sleep(0.5)))
        del lock                                     # the callback runs here; the handler raises inside it
        assert ref() is None
        return real(*args, **kwargs)

    monkeypatch.setattr(ldpbook.spr, "divergence_optimal", interrupted)
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        monkeypatch.setattr(signal, "getsignal", lambda s: signal.default_int_handler)
    status = main(["optimal", "--p", "0.5,0.5", "--q", "0.2,0.8", "--eps", "1"])
    out, err = capsys.readouterr()
    assert (status, out, err) == (130, "", "")


# ---------------------------------------------------------------------------------------------------------------
# One vocabulary on the command line: --version, --column for tables, --format/--out on every subcommand that answers


def test_version_prints_the_package_version():
    from ldpbook import __version__
    done = ldpbook("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"ldpbook {__version__}"


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    "A survey's export: several columns, a header, the answers in `visits` (the second column)."
    path = tmp_path_factory.mktemp("table") / "export.csv"
    rows = ["id,visits,group"] + [f"{i},{v},{'ab'[i % 2]}" for i, v in enumerate([0, 3, 1, 2, 0, 1, 2, 2, 1, 0] * 3)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_column_picks_the_data_of_a_table_by_name_or_number(forked, table, tmp_path):
    column = tmp_path / "visits.csv"
    column.write_text("visits\n" + "\n".join(map(str, [0, 3, 1, 2, 0, 1, 2, 2, 1, 0] * 3)) + "\n")
    plain = forked("survey-test", "groups", column, column)
    assert plain.returncode == 0, plain.stderr
    for pick in ("visits", "2"):
        done = forked("survey-test", "groups", table, table, "--column", pick)
        assert done.returncode == 0 and done.stdout == plain.stdout, (pick, done.stderr)
    design = forked("design", table, table, "--k", "4", "--eps", "1", "--column", "visits")
    assert design.returncode == 0, design.stderr
    assert json.loads(design.stdout)["k"] == 4


@pytest.mark.parametrize("args, says", [
    (["--column", "nope"], "--column nope is not a name of the header row"),
    (["--column", "9"], "has no column 9"),
    ([], "choose one with --column"),
])
def test_a_table_without_the_right_column_is_refused_clearly(forked, table, args, says):
    done = forked("closeness", table, table, "--eps", "1", "--labels", "4", *args)
    assert_one_line_error(done, "closeness")
    assert says in done.stderr


def test_column_is_refused_where_there_is_no_table(forked):
    done = forked("closeness", "0.1,0.2,0.3", "0.4,0.5,0.6", "--eps", "1", "--column", "1")
    assert_one_line_error(done, "closeness")
    assert "--column picks a column of a CSV file" in done.stderr


def test_closeness_and_optimal_answer_in_json_and_to_a_file(forked, table, tmp_path):
    done = forked("closeness", table, table, "--eps", "1", "--labels", "4", "--column", "visits", "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report) >= {"reject", "release", "eps", "alpha", "n_x", "n_y"} and report["n_x"] == 30
    text = forked("closeness", table, table, "--eps", "1", "--labels", "4", "--column", "visits")
    assert text.stdout.startswith("reject: ")                       # text stays the default of closeness
    out = tmp_path / "mechanism.json"
    done = forked("optimal", "--p", "0.5,0.5", "--q", "0.2,0.8", "--eps", "1", "--out", out)
    assert done.returncode == 0 and done.stdout.strip() == f"wrote {out}"
    assert sorted(json.loads(out.read_text())["partition"]) == [[0], [1]]
    missing = forked("closeness", table, table, "--eps", "1", "--labels", "4", "--column", "visits",
                     "--out", tmp_path / "no" / "such" / "r.json")
    assert_one_line_error(missing, "closeness")


def test_closeness_bins_data_on_public_bounds_and_says_so_when_they_are_missing(forked, tmp_path):
    ages = tmp_path / "ages.csv"
    ages.write_text("age\n" + "\n".join(map(str, [23, 45, 67, 89, 12, 34, 56, 78, 101, -3])) + "\n")
    done = forked("closeness", ages, ages, "--eps", "1", "--bounds", "0,100", "--kappa", "4", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["n_x"] == 10                      # 101 and -3 are clipped, not dropped
    missing = forked("closeness", ages, ages, "--eps", "1")
    assert_one_line_error(missing, "closeness", secrets=("101", "-3"))
    assert "--bounds LO,HI, never its own min and max" in missing.stderr and "rescale" not in missing.stderr
    for bad in ("5,1", "0", "0,inf", "a,b"):
        assert_one_line_error(forked("closeness", ages, ages, "--eps", "1", "--bounds", bad), "closeness")


def test_the_renyi_order_has_its_own_option_and_the_old_one_still_works(forked):
    new = forked("optimal", "--p", "0.5,0.3,0.2", "--q", "0.2,0.3,0.5", "--eps", "1", "--divergence", "renyi",
                 "--renyi-order", "2")
    old = forked("optimal", "--p", "0.5,0.3,0.2", "--q", "0.2,0.3,0.5", "--eps", "1", "--divergence", "renyi",
                 "--alpha", "2")
    assert new.returncode == old.returncode == 0 and new.stdout == old.stdout and new.stderr == old.stderr == ""
