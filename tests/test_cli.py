"""The `ldpbook` console script, driven as a subprocess the way a user runs it."""
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ldpbook.cli import REPRODUCTIONS
from ldpbook.spr import optimal_mechanism

SCRIPT = Path(sys.executable).with_name("ldpbook")


def ldpbook(*args, cwd=None):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.mark.parametrize("sub", [[], ["optimal"], ["closeness"], ["reproduce"]])
def test_every_subcommand_has_help(sub):
    done = ldpbook(*sub, "--help")
    assert done.returncode == 0 and "usage: ldpbook" in done.stdout


def test_optimal_json_matches_the_library():
    p, q = [0.1, 0.4, 0.2, 0.3], [0.3, 0.1, 0.4, 0.2]
    done = ldpbook("optimal", "--p", ",".join(map(str, p)), "--q", ",".join(map(str, q)), "--eps", "0.7")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    ref = optimal_mechanism(p, q, 0.7)
    assert out["value"] == pytest.approx(ref.value, rel=1e-12)
    assert [tuple(b) for b in out["partition"]] == [tuple(b) for b in ref.partition]
    assert np.allclose(out["channel"], ref.channel, rtol=0, atol=0)


def test_optimal_from_files_csv_output_budget_and_parameters(tmp_path):
    (tmp_path / "p.json").write_text(json.dumps({"p": [0.5, 0.2, 0.2, 0.1]}))
    (tmp_path / "q.csv").write_text("q\n0.1\n0.2\n0.3\n0.4\n")
    done = ldpbook("optimal", "--p", tmp_path / "p.json", "--q", tmp_path / "q.csv", "--eps", "2",
                   "--divergence", "renyi", "--alpha", "2", "--ell", "2", "--format", "csv")
    assert done.returncode == 0, done.stderr
    comment, table = done.stdout.split("\n", 1)
    ref = optimal_mechanism([0.5, 0.2, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4], 2.0, divergence="renyi", ell=2, alpha=2.0)
    assert f"value={ref.value!r}" in comment
    rows = list(csv.reader(io.StringIO(table)))
    assert rows[0] == ["symbol", "output_0", "output_1"]
    assert np.array_equal(np.array(rows[1:], dtype=float)[:, 1:], ref.channel)


@pytest.mark.parametrize("args,needle", [
    (["--p", "0.5,0.6", "--q", "0.5,0.5", "--eps", "1"], "p must sum to 1"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "-1"], "eps must be non-negative"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "nan"], "eps must not be NaN"),
    (["--p", "0.5,0.5", "--q", "0.3,0.3,0.4", "--eps", "1"], "same length"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "1", "--divergence", "kullback"], "divergence kind"),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "1", "--divergence", "egamma"], "gamma="),
    (["--p", "0.5,0.5", "--q", "0.5,0.5", "--eps", "1", "--ell", "5"], "ell"),
    (["--p", "missing.csv", "--q", "0.5,0.5", "--eps", "1"], "no such file"),
    (["--p", "0.5,abc", "--q", "0.5,0.5", "--eps", "1"], "not a number"),
])
def test_optimal_user_errors_are_one_line_exit_2(args, needle):
    done = ldpbook("optimal", *args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert needle in done.stderr and done.stderr.startswith("ldpbook optimal: error:")


def test_bad_json_file(tmp_path):
    (tmp_path / "p.json").write_text("{not json")
    done = ldpbook("optimal", "--p", tmp_path / "p.json", "--q", "0.5,0.5", "--eps", "1")
    assert done.returncode == 2 and "not valid JSON" in done.stderr


def test_closeness_prints_only_the_private_decision(tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / "x.csv").write_text("x\n" + "\n".join(map(str, rng.random(400))))
    (tmp_path / "y.csv").write_text("y\n" + "\n".join(map(str, rng.random(400) ** 3)))
    done = ldpbook("closeness", tmp_path / "x.csv", tmp_path / "y.csv", "--eps", "2", "--kappa", "8", "--seed", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("reject: True") and "eps-DP release" in done.stdout
    assert "pvalue" not in done.stdout.lower() and "statistic=" in done.stdout   # the statistic's *name* only
    again = ldpbook("closeness", tmp_path / "x.csv", tmp_path / "y.csv", "--eps", "2", "--kappa", "8", "--seed", "1")
    assert again.stdout == done.stdout


def test_closeness_with_labels_and_errors(tmp_path):
    (tmp_path / "x.csv").write_text("0,1,2,3,0,1,2,3")
    (tmp_path / "y.csv").write_text("0,0,0,0,1,1,1,1")
    done = ldpbook("closeness", tmp_path / "x.csv", tmp_path / "y.csv", "--eps", "inf", "--labels", "4", "--seed", "0")
    assert done.returncode == 0 and "non-private" in done.stdout
    (tmp_path / "bad.csv").write_text("0.5,1.5")
    for args in ([tmp_path / "bad.csv", tmp_path / "y.csv", "--eps", "1"],
                 [tmp_path / "x.csv", tmp_path / "y.csv", "--eps", "0"],
                 [tmp_path / "x.csv", tmp_path / "y.csv", "--eps", "1", "--alpha", "2"],
                 [tmp_path / "bad.csv", tmp_path / "y.csv", "--eps", "1", "--labels", "4"]):
        bad = ldpbook("closeness", *args)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


@pytest.mark.parametrize("name", ["table1", "fig5"])
def test_reproduce_writes_png_and_csv(tmp_path, name):
    done = ldpbook("reproduce", name, "--out", tmp_path, "--quiet")
    assert done.returncode == 0, done.stderr
    png, table = tmp_path / f"{name}.png", tmp_path / f"{name}.csv"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    rows = list(csv.DictReader(table.open()))
    assert len(rows) >= 10 and all(v != "" for v in rows[0].values())


def test_reproduce_registry_and_unknown_name():
    assert {"fig1", "fig5", "table1", "fig2", "fig3"} <= set(REPRODUCTIONS)
    done = ldpbook("reproduce", "fig99")
    assert done.returncode == 2 and "invalid choice" in done.stderr and done.stderr.count("\n") == 1
    missing = ldpbook("optimal", "--p", "0.5,0.5")
    assert missing.returncode == 2 and "required" in missing.stderr and missing.stderr.count("\n") == 1
