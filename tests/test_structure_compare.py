"""bs.cpdag, bs.shd and bs.compare against bnlearn's cpdag(), shd() and compare() on the
true alarm and insurance networks and the networks bnlearn's hc() and tabu() learned
from their first 10,000 rows (tests/data/structure/searches.json); small exact cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pybncsmooth as bs
from pybncsmooth.errors import StructureError

GOLDEN = json.loads((Path(__file__).parent / "data" / "structure" / "searches.json").read_text())


@pytest.mark.parametrize("name", ["alarm", "insurance"])
def test_cpdag_arcs_equal_bnlearns(name):
    g = GOLDEN[name]
    for ms, key in ((g["truth"], "cpdag_truth_arcs"), (g["hc"]["modelstring"], "cpdag_hc_arcs")):
        got = sorted(bs.cpdag(ms).arcs)
        assert got == sorted(tuple(a) for a in g[key])


@pytest.mark.parametrize("name", ["alarm", "insurance"])
def test_shd_and_compare_equal_bnlearns(name):
    g = GOLDEN[name]
    truth, learned = g["truth"], g["hc"]["modelstring"]
    assert bs.shd(learned, truth) == g["shd_hc_truth"]
    assert bs.shd(g["tabu"]["modelstring"], truth) == g["shd_tabu_truth"]
    assert bs.compare(truth, learned) == g["compare_cpdag"]
    assert bs.compare(truth, learned, cpdag=False) == g["compare_dag"]
    assert bs.compare(bs.cpdag(truth), bs.cpdag(learned)) == g["compare_cpdag"]
    detail = bs.compare(truth, learned, arcs=True)
    assert {k: len(v) for k, v in detail.items()} == g["compare_cpdag"]


def test_small_cases_exactly():
    chain = bs.DAG({"B": ["A"], "C": ["B"]}, nodes=["A", "B", "C"])
    cp = bs.cpdag(chain)
    assert cp.directed == frozenset() and cp.undirected == {("A", "B"), ("B", "C")}
    assert bs.shd(chain, bs.DAG({"A": ["B"], "B": ["C"]}, nodes=["A", "B", "C"])) == 0  # equivalent
    collider = bs.DAG({"C": ["A", "B"]}, nodes=["A", "B", "C"])
    assert bs.cpdag(collider).directed == {("A", "C"), ("B", "C")}
    assert bs.shd(chain, collider) == 3  # A-B: undirected vs absent; B-C: undirected vs B->C; A-C: absent vs A->C
    # R1: a collider's head propagates: A -> C <- B, C - D becomes C -> D
    r1 = bs.DAG({"C": ["A", "B"], "D": ["C"]}, nodes=["A", "B", "C", "D"])
    assert bs.cpdag(r1).directed == {("A", "C"), ("B", "C"), ("C", "D")}
    # R2: A -> B -> C with A - C: the arc A -> C is compelled
    r2 = bs.DAG({"B": ["A", "D"], "C": ["A", "B"]}, nodes=["A", "B", "C", "D"])
    assert ("A", "C") in bs.cpdag(r2).directed
    # R3: A - C, A - D, C -> B <- D (C, D not adjacent), A - B: A -> B
    r3 = bs.DAG({"C": ["A"], "D": ["A"], "B": ["A", "C", "D"]}, nodes=["A", "B", "C", "D"])
    cp3 = bs.cpdag(r3)
    assert cp3.directed == {("C", "B"), ("D", "B"), ("A", "B")}
    assert cp3.undirected == {("A", "C"), ("A", "D")}
    assert bs.compare(chain, collider) == {"tp": 0, "fp": 2, "fn": 2}
    assert bs.compare(chain, chain, cpdag=False) == {"tp": 2, "fp": 0, "fn": 0}


def test_mismatched_nodes_are_named():
    with pytest.raises(StructureError, match="'D'"):
        bs.shd("[A][B|A]", "[A][B|A][D]")
