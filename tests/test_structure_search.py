"""bs.hc and bs.tabu against bnlearn's hc() and tabu() (BDeu, iss 1) on the first
10,000 rows of bnlearn's alarm, insurance and hailfinder data sets
(tests/data/structure/searches.json, written by make_golden.R there), and the
searches' controls: whitelist, blacklist, start, maxp, max_iter, restarts."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import CycleError, HyperparameterError, StructureError, UnknownNodeError

from conftest import load_reference_csv

STRUCT = Path(__file__).parent / "data" / "structure"
GOLDEN = json.loads((STRUCT / "searches.json").read_text())
_FRAMES: dict[str, pd.DataFrame] = {}


def load_rows(name: str) -> pd.DataFrame:
    """The first 10,000 rows of a bnlearn data set, as Categoricals in bnlearn's level order."""
    if name not in _FRAMES:
        if name == "hailfinder":
            lv = json.loads((STRUCT / "hailfinder.levels.json").read_text())
            codes = pd.read_csv(STRUCT / "hailfinder.codes.csv.gz")
            _FRAMES[name] = pd.DataFrame({v: pd.Categorical.from_codes(codes[v].to_numpy(), categories=lv["levels"][v])
                                          for v in lv["columns"]})
        else:
            _FRAMES[name] = load_reference_csv(name).iloc[:10000].copy()
    return _FRAMES[name]


@pytest.mark.parametrize("name", ["alarm", "insurance", "hailfinder"])
def test_hc_bdeu_reaches_bnlearns_network(name):
    df = load_rows(name)
    ref = GOLDEN[name]["hc"]
    dag = bs.hc(df, score="bde", iss=1)
    got = bs.score(dag, df, "bde", iss=1)
    assert got >= ref["score"] - 1e-9 * abs(ref["score"])
    # the same scan order and tolerance: bnlearn's path, arc for arc
    assert dag.modelstring() == ref["modelstring"]
    assert dag.nodes == [str(c) for c in df.columns]


@pytest.mark.parametrize("name", ["alarm", "insurance", "hailfinder"])
def test_tabu_bdeu_at_least_bnlearns_score(name):
    df = load_rows(name)
    ref = GOLDEN[name]["tabu"]
    dag = bs.tabu(df, score="bde", iss=1)
    got = bs.score(dag, df, "bde", iss=1)
    assert got >= ref["score"] - 1e-9 * abs(ref["score"])
    assert math.isclose(got, ref["score"], rel_tol=1e-9)  # an equivalent network at worst


def test_tabu_escapes_where_hc_stops():
    df = load_rows("alarm")
    assert GOLDEN["alarm"]["tabu"]["score"] > GOLDEN["alarm"]["hc"]["score"] + 100  # the golden case has room
    assert bs.score(bs.tabu(df, "bde", iss=1), df, "bde", iss=1) > bs.score(bs.hc(df, "bde", iss=1), df, "bde", iss=1)


@pytest.fixture(scope="module")
def small() -> pd.DataFrame:
    return load_reference_csv("asia").iloc[:3000].copy()


def test_result_is_a_dag_that_fit_takes(small):
    dag = bs.hc(small, score="bic")
    assert isinstance(dag, bs.DAG)
    net = bs.fit(dag, small, method="bayes", iss=1)
    assert net.modelstring() == dag.modelstring()


def test_whitelist_blacklist_and_maxp_are_obeyed(small):
    free = bs.hc(small, score="bde", iss=1)
    arcs = set(free.arcs)
    assert ("S", "B") in arcs or ("B", "S") in arcs
    dag = bs.hc(small, score="bde", iss=1, whitelist=[("A", "X")], blacklist=[("S", "B"), ("B", "S")])
    got = set(dag.arcs)
    assert ("A", "X") in got
    assert ("S", "B") not in got and ("B", "S") not in got
    capped = bs.hc(small, score="bde", iss=1, maxp=1)
    assert max(len(capped.parents(v)) for v in capped.nodes) <= 1
    assert any(len(free.parents(v)) == 2 for v in free.nodes)  # the cap bites
    as_frame = bs.hc(small, score="bde", iss=1, blacklist=pd.DataFrame({"from": ["S", "B"], "to": ["B", "S"]}),
                     whitelist=pd.DataFrame({"from": ["A"], "to": ["X"]}))
    assert as_frame == dag


def test_start_and_max_iter(small):
    start = "[A][S][T][L][B][E][X][D|A]"
    same = bs.hc(small, score="bic", start=start, max_iter=0)
    assert set(same.arcs) == {("A", "D")}
    one = bs.hc(small, score="bic", max_iter=1)
    assert len(one.arcs) == 1
    full = bs.hc(small, score="bic", start=start)
    assert ("A", "D") not in set(full.arcs)  # a bad start arc is removed
    assert bs.score(full, small, "bic") >= bs.score(bs.DAG.from_modelstring(start), small, "bic")


def test_restarts_are_reproducible_and_never_worse(small):
    base = bs.hc(small, score="bde", iss=1)
    a = bs.hc(small, score="bde", iss=1, restart=4, perturb=3, random_state=7)
    b = bs.hc(small, score="bde", iss=1, restart=4, perturb=3, random_state=7)
    assert a == b
    assert bs.score(a, small, "bde", iss=1) >= bs.score(base, small, "bde", iss=1) - 1e-9


def test_every_score_searches(small):
    for score in ("loglik", "aic", "bic", "bde", "bds", "k2"):
        dag = bs.hc(small, score=score)
        empty = bs.DAG({v: [] for v in small.columns}, nodes=list(small.columns))
        assert bs.score(dag, small, score) > bs.score(empty, small, score)


def test_bad_controls_are_named(small):
    with pytest.raises(UnknownNodeError, match="'Q'"):
        bs.hc(small, whitelist=[("A", "Q")])
    with pytest.raises(StructureError, match="both"):
        bs.hc(small, whitelist=[("A", "S"), ("S", "A")])
    with pytest.raises(CycleError, match="the graph has a cycle: A -> T -> S -> A$"):
        bs.hc(small, start="[A|S][S|T][T][L][B][E][X][D]", whitelist=[("A", "T")])
    with pytest.raises(UnknownNodeError, match=r"^unknown node 'Q' \(the blacklist names it"):
        bs.hc(small, blacklist=[("Q", "A")])
    with pytest.raises(StructureError, match="maxp"):
        bs.hc(small, start="[A][S][T][L][B][E|T:L][X][D]", maxp=1)
    with pytest.raises(HyperparameterError, match="restart"):
        bs.hc(small, restart=-1)
    with pytest.raises(HyperparameterError, match="tabu"):
        bs.tabu(small, tabu=0)
    with pytest.raises(HyperparameterError, match="type must be one of"):
        bs.hc(small, score="bdeu")


def test_only_the_changed_nodes_are_rescored_and_each_family_counted_once(small):
    from pybncsmooth.learning.scores import make_scorer
    from pybncsmooth.learning.search import _constraints, _Search

    nodes = list(small.columns)
    scorer = make_scorer(small, nodes, "bde", {"iss": 1})
    counted = []
    scorer.counts = (lambda f: lambda child, parents: counted.append((child, tuple(parents))) or f(child, parents))(
        scorer.counts)
    am, wl, bl, limit = _constraints(nodes, None, None, None, None)
    s = _Search(scorer, nodes, am, wl, bl, limit)
    p = len(nodes)
    s.fill(range(p))
    empty = np.zeros((1, p, p), dtype=np.int8)
    steps = 0
    while True:
        op, i, j = s.step(empty, 0, 0.0)
        if op == 0:
            break
        updated = s.apply(op, i, j)
        assert len(updated) == (2 if op == 3 else 1)
        calls = [0]
        family = s.s.family
        s.s.family = lambda c, pa, _f=family: calls.__setitem__(0, calls[0] + 1) or _f(c, pa)
        s.fill(updated)
        s.s.family = family
        assert calls[0] <= len(updated) * (p - 1)  # the changed nodes' operations only
        steps += 1
    assert steps > 0
    assert len(counted) == len(set(counted)) == len(scorer.cache)  # each family counted once, cached by content
    assert s.dag() == bs.hc(small, "bde", iss=1)
