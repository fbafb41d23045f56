"""Every network of the bnlearn repository (the 24 pgmpy 1.1.2 ships) through every
format and object both ways, checked against pgmpy, pyAgrum and bnlearn themselves.

A benchmark-venv test: it needs pgmpy and pyAgrum (and R with bnlearn for the last
check) and skips without them, as on CI.  Run it where they are installed::

    PYTHONPATH=$PWD .venv-bench/bin/python -m pytest tests/test_repository_neighbours.py

Tables must agree to 1e-9, except where a library's own parser stores numbers in
single precision (pyAgrum 3.3 reads BIF and UAI numbers as ``float``): there its table
must equal ours rounded to single precision (within 6e-8, half a unit in the last place
of a float at 1).  pyAgrum's BIF grammar refuses some levels bnlearn writes (child's
``Asy/Patch``, ``<7.5``): those networks reach pyAgrum through XMLBIF, UAI and objects.
pgmpy's UAI reader takes a node's parents from a Python set (their order, and so the
meaning of a table with two or more parents, changes between processes): UAI is
checked with pyAgrum and our own reader only.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import pybncsmooth as bs

pgmpy = pytest.importorskip("pgmpy")
gum = pytest.importorskip("pyagrum")

FOLDER = Path(pgmpy.__file__).parent / "utils" / "example_models"
NAMES = sorted(p.name[: -len(".bif.gz")] for p in FOLDER.glob("*.bif.gz"))
EXACT, SINGLE = 1e-9, 6e-8


@pytest.fixture(scope="module")
def nets() -> dict[str, bs.FittedNetwork]:
    return {}


def _net(nets: dict, name: str) -> bs.FittedNetwork:
    if name not in nets:
        nets[name] = bs.read_network(FOLDER / f"{name}.bif.gz")
    return nets[name]


def _close(ours: bs.FittedNetwork, other: bs.FittedNetwork, tol: float, single: bool = False,
           any_order: bool = False) -> None:
    """The same nodes, levels and tables; ``any_order``: nodes and parents in any order
    (pyAgrum numbers the nodes and orders a CPT's parents its own way when it reads a
    file)."""
    assert (sorted(other.nodes) == sorted(ours.nodes)) if any_order else (other.nodes == ours.nodes)
    for v in ours.nodes:
        got = other.cpt(v)
        if any_order:
            assert sorted(other.parents(v)) == sorted(ours.parents(v)), v
            got = np.transpose(got, [0] + [1 + other.parents(v).index(p) for p in ours.parents(v)])
        else:
            assert other.parents(v) == ours.parents(v), v
        assert [str(x) for x in other.levels(v)] == [str(x) for x in ours.levels(v)], v
        want = ours.cpt(v).astype(np.float32).astype(np.float64) if single else ours.cpt(v)
        np.testing.assert_allclose(got, want, rtol=0, atol=tol, err_msg=v)


def test_all_24_networks_are_there():
    assert len(NAMES) == 24 and "child" in NAMES and "munin1" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_bif_both_ways(name, nets, tmp_path):
    from pgmpy.readwrite import BIFReader

    net = _net(nets, name)
    path = tmp_path / f"{name}.bif"
    net.write(path)
    _close(net, bs.read_network(path), EXACT)
    _close(net, bs.from_pgmpy(BIFReader(str(path)).get_model()), EXACT)
    try:
        bn = gum.loadBN(str(path))
    except gum.GumException as e:  # pyAgrum's grammar: identifiers and numbers only
        assert name == "child", str(e)
        return
    _close(net, bs.from_pyagrum(bn), SINGLE, single=True, any_order=True)


@pytest.mark.parametrize("name", NAMES)
def test_xmlbif_both_ways(name, nets, tmp_path):
    from pgmpy.readwrite import XMLBIFReader, XMLBIFWriter

    net = _net(nets, name)
    net.write(tmp_path / "n.bifxml")
    _close(net, bs.read_network(tmp_path / "n.bifxml"), EXACT)
    _close(net, bs.from_pyagrum(gum.loadBN(str(tmp_path / "n.bifxml"))), EXACT, any_order=True)
    _close(net, bs.from_pgmpy(XMLBIFReader(str(tmp_path / "n.bifxml")).get_model()), EXACT)
    XMLBIFWriter(net.to_pgmpy()).write(str(tmp_path / "pgmpy.xml"))  # and theirs (nodes sorted), read by us
    try:
        theirs = bs.read_network(tmp_path / "pgmpy.xml")
    except bs.errors.FileFormatError as e:  # pgmpy's writer makes '<7.5' and '>=7.5' one name, '_7_5'
        assert name == "child" and "lists level '_7_5' twice" in str(e), str(e)
        return
    _close(net, theirs, EXACT, any_order=True)


@pytest.mark.parametrize("name", NAMES)
def test_uai_both_ways(name, nets, tmp_path):
    net = _net(nets, name)
    for layout in ("uai", "pyagrum", "pgmpy"):
        net.write(tmp_path / f"{layout}.uai", layout=layout)
        back = bs.read_network(tmp_path / f"{layout}.uai", layout=layout)
        assert back.nodes == net.nodes
        for v in net.nodes:
            np.testing.assert_allclose(back.cpt(v), net.cpt(v), rtol=0, atol=EXACT, err_msg=v)
    theirs = bs.from_pyagrum(gum.loadBN(str(tmp_path / "pyagrum.uai")))
    index = {v: str(i) for i, v in enumerate(net.nodes)}  # UAI has no names: pyAgrum's are 0 .. n - 1
    assert sorted(theirs.nodes) == sorted(index.values())
    for v in net.nodes:  # nor labels: pyAgrum's are 0 .. r - 1
        got = theirs.cpt(index[v])
        assert sorted(theirs.parents(index[v])) == sorted(index[p] for p in net.parents(v)), v
        got = np.transpose(got, [0] + [1 + theirs.parents(index[v]).index(index[p]) for p in net.parents(v)])
        np.testing.assert_allclose(got, net.cpt(v).astype(np.float32), rtol=0, atol=SINGLE, err_msg=v)


@pytest.mark.parametrize("name", NAMES)
def test_objects_both_ways_exactly(name, nets):
    net = _net(nets, name)
    _close(net, bs.from_pgmpy(net.to_pgmpy()), 0.0)
    _close(net, bs.from_pyagrum(net.to_pyagrum()), 0.0)


_R_READ = r"""
suppressMessages(library(bnlearn))
files <- commandArgs(TRUE)
out <- list()
for (f in files) {
  fit <- read.bif(f)
  out[[f]] <- lapply(nodes(fit), function(n) {
    p <- fit[[n]]$prob
    list(node = n, dims = if (is.null(names(dimnames(p)))) n else names(dimnames(p)), prob = as.numeric(p))
  })
}
cat(jsonlite::toJSON(out, digits = NA, auto_unbox = FALSE))
"""


def test_bnlearn_reads_what_we_write(nets, tmp_path):
    if shutil.which("Rscript") is None or subprocess.run(
            ["Rscript", "-e", "quit(status = !requireNamespace('bnlearn', quietly = TRUE))"]).returncode:
        pytest.skip("R with bnlearn is not installed")
    files = []
    for name in NAMES:
        files.append(tmp_path / f"{name}.bif")
        _net(nets, name).write(files[-1])
    script = tmp_path / "read.R"
    script.write_text(_R_READ)
    out = subprocess.run(["Rscript", str(script), *map(str, files)], capture_output=True, text=True, check=True)
    read = json.loads(out.stdout)
    for name, f in zip(NAMES, files):
        net = nets[name]
        for entry in read[str(f)]:
            v, dims = entry["node"][0], entry["dims"]
            got = np.array(entry["prob"]).reshape([len(net.levels(d)) for d in dims], order="F")
            want = np.transpose(net.cpt(v), [([v] + net.parents(v)).index(d) for d in dims])
            np.testing.assert_allclose(got, want, rtol=0, atol=EXACT, err_msg=f"{name}: {v}")
