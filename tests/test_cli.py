"""The pybncsmooth command line."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.frontends.cli import main
from conftest import BNLEARN, modelstring_of


@pytest.fixture()
def asia_csv(tmp_path, asia):
    path = tmp_path / "asia.csv"
    asia.to_csv(path, index=False)
    return path


def test_fit_writes_a_bif_equal_to_bnlearns(asia_csv, tmp_path, capsys):
    out = tmp_path / "asia.bif"
    rc = main(["fit", str(asia_csv), "-s", modelstring_of("asia"), "-m", "bayes", "-p", "iss=1", "-o", str(out)])
    assert rc == 0
    assert "method=bayes" in capsys.readouterr().out
    # levels read from CSV text sort as bytes: "no" < "yes" as in bnlearn's factors
    assert out.read_bytes() == (BNLEARN / "asia.bif").read_bytes()


def test_fit_with_chunks_and_native_output(asia_csv, tmp_path):
    out = tmp_path / "asia.pbn"
    assert (
        main(
            [
                "fit",
                str(asia_csv),
                "-s",
                modelstring_of("asia"),
                "-m",
                "mestimate",
                "-p",
                "m=2",
                "--chunksize",
                "777",
                "-o",
                str(out),
                "-v",
            ]
        )
        == 0
    )
    net = bs.read_network(out)
    assert net.method == "mestimate" and net.estimator.m == 2.0 and net.n_rows == 5000


def test_predict_and_info(asia_csv, tmp_path, capsys, asia):
    preds = tmp_path / "p.csv"
    assert main(["predict", str(BNLEARN / "asia.bif"), str(asia_csv), "-t", "L", "-o", str(preds)]) == 0
    got = pd.read_csv(preds)
    assert list(got.columns) == ["L", "P(L=no)", "P(L=yes)"]
    ref = bs.read_network(BNLEARN / "asia.bif").predict_proba(asia, "L")
    np.testing.assert_allclose(got["P(L=yes)"].to_numpy(), ref["yes"].to_numpy(), rtol=1e-12)
    capsys.readouterr()
    assert main(["info", str(BNLEARN / "asia.bif"), "--cpt", "D"]) == 0
    out = capsys.readouterr().out
    assert "[A][S][B|S][L|S][T|A][E|L:T][D|B:E][X|E]" in out
    assert "P(D | B, E)" in out and "0.900130" in out


def test_errors_are_one_line_with_status_2(asia_csv, tmp_path, capsys):
    assert main(["fit", str(asia_csv), "-s", "[A][B|Q]"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pybncsmooth: error:") and "'Q'" in err
    assert main(["fit", str(asia_csv), "-s", "[A][Zz|A]"]) == 2
    assert "'Zz' (node) is not a column" in capsys.readouterr().err
    assert main(["fit", str(asia_csv), "-s", "[A]", "-m", "bayes", "-p", "alpha=3"]) == 2
    assert "no hyperparameter 'alpha'" in capsys.readouterr().err
    bad = tmp_path / "bad.bif"
    bad.write_text("network x {\n}\nvariable A {\n  type discrete [ 2 ] { a };\n}\n")
    assert main(["info", str(bad)]) == 2
    assert "bad.bif:4" in capsys.readouterr().err


def test_demo_runs(capsys):
    assert main(["demo", "--repeats", "1"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "held-out log-likelihood" in out and "bayes iss=1" in out
    # one split: means without a standard error, and no estimator named best
    assert "no estimator is named best" in out and not re.search(r"± \d", out)
    assert captured.err == ""  # no progress bar where standard error is not a terminal


def test_console_script_entry_point(asia_csv):
    res = subprocess.run(
        [sys.executable, "-m", "pybncsmooth.frontends.cli", "info", str(BNLEARN / "learning_test.modelstring.txt")],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2 and "extension" in res.stderr


def test_fit_and_predict_from_parquet(tmp_path, asia):
    pytest.importorskip("pyarrow")
    path = tmp_path / "asia.parquet"
    asia.to_parquet(path)
    out = tmp_path / "asia.pbn"
    assert main(["fit", str(path), "-s", modelstring_of("asia"), "-m", "mle", "-o", str(out)]) == 0
    net = bs.read_network(out)
    ref = bs.fit(modelstring_of("asia"), asia, method="mle")
    assert net.max_abs_diff(ref) == 0.0
    preds = tmp_path / "p.csv"
    assert main(["predict", str(out), str(path), "-t", "E", "-o", str(preds)]) == 0
    assert len(pd.read_csv(preds)) == 5000


def test_methods_lists_the_declared_hyperparameters(capsys):
    assert main(["methods", "hls"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "hls:"
    assert "  tau = 1.0  [number > 0]" in out and "max_iter = 100  [integer >= 1]" in out
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    for method in bs.available_methods():
        assert f"{method}:\n" in out


def test_query_prints_the_posterior_and_the_map_state(capsys):
    net = bs.read_network(BNLEARN / "asia.bif")
    assert main(["query", str(BNLEARN / "asia.bif"), "--target", "L", "--evidence", "S=yes", "-e", "X=yes"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "P(L | S=yes, X=yes)"
    p = net.query("L", {"S": "yes", "X": "yes"})
    assert f"{p['yes']:.6g}" in out and f"{p['no']:.6g}" in out
    assert main(["query", str(BNLEARN / "asia.bif"), "-t", "L", "-t", "T", "-e", "S=yes", "--map"]) == 0
    out = capsys.readouterr().out
    state, prob = net.map_query(["L", "T"], {"S": "yes"})
    assert f"L = {state['L']}" in out and f"T = {state['T']}" in out and f"{prob:.6g}" in out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["-e", "S=maybe"], "variable 'S' has level(s) 'maybe' not seen"),
        (["-e", "Syes"], "--evidence expects VARIABLE=LEVEL, got 'Syes'"),
        (["-e", "S=yes", "-e", "S=no"], "--evidence gives 'S' twice"),
        (["-e", "L=yes"], "'L' is both a query target and evidence"),
        (["--interval", "0.9"], "no posterior draws of node"),
    ],
)
def test_query_errors_are_one_line_with_status_2(capsys, extra, message):
    assert main(["query", str(BNLEARN / "asia.bif"), "-t", "L", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
