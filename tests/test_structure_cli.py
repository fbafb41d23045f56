"""The command line's learn: a structure search from a data file, written fitted."""

from __future__ import annotations

import numpy as np
import pytest

import pybncsmooth as bs
from pybncsmooth.frontends.cli import main


@pytest.fixture()
def asia_csv(tmp_path):
    df = bs.load_dataset("asia").iloc[:2000].copy()
    df["site"] = np.arange(len(df)) % 3
    path = tmp_path / "asia.csv"
    df.to_csv(path, index=False)
    return path, df


def test_learn_bde_equals_the_python_search(asia_csv, tmp_path, capsys):
    path, df = asia_csv
    out = tmp_path / "net.bif"
    assert main(["learn", str(path), "--score", "bde", "-p", "iss=10", "--domain", "site", "-o", str(out), "-q"]) == 0
    printed = capsys.readouterr().out.splitlines()[0]
    nodes = bs.read_table(str(path)).drop(columns="site")
    dag = bs.hc(nodes, score="bde", iss=10)
    assert printed == dag.modelstring()
    net = bs.read_network(str(out))
    assert net.modelstring() == dag.modelstring()


def test_learn_bhd_with_domain_fits_the_domains(asia_csv, tmp_path, capsys):
    path, df = asia_csv
    out = tmp_path / "net.pbn"
    assert main(["learn", str(path), "--score", "bhd", "--domain", "site", "--method", "hmd", "-o", str(out), "-q"]) == 0
    printed = capsys.readouterr().out.splitlines()[0]
    assert printed == bs.hc(bs.read_table(str(path)), score="bhd", domain="site").modelstring()
    assert out.exists()


def test_learn_errors_name_the_column(asia_csv, capsys):
    path, _ = asia_csv
    assert main(["learn", str(path), "--score", "bhd", "--domain", "region"]) == 2
    assert "region" in capsys.readouterr().err
