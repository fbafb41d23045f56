"""Our structure scores as pgmpy structure scores (pybncsmooth.learning.pgmpy_score):
pgmpy's hill climbing searches with BHD and BDeu, the local score is our family term,
and the domain column never becomes a node."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import DataError, HyperparameterError, UnknownNodeError
from pybncsmooth.learning import pgmpy_score


@pytest.fixture
def sites() -> pd.DataFrame:
    df = bs.load_dataset("asia").iloc[:1500].reset_index(drop=True)
    df["site"] = pd.Categorical(np.array(["a", "b", "c"])[np.arange(len(df)) % 3])
    return df


def test_importing_the_adapter_does_not_import_pgmpy():
    code = ("import sys, pybncsmooth, pybncsmooth.learning.pgmpy_score as m; "
            "print('pgmpy' in sys.modules, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_bhd_local_score_is_our_family_term(sites):
    pytest.importorskip("pgmpy")
    score = pgmpy_score(sites, "bhd", domain="site")
    terms = bs.score("[A][S][T|A][L|S][B|S][E|T:L][X|E][D|B:E]", sites, "bhd", domain="site", by_node=True)
    for node, parents in {"D": ["B", "E"], "E": ["L", "T"], "A": [], "T": ["A"]}.items():
        assert score.local_score(node, parents) == pytest.approx(terms[node], rel=1e-12, abs=0)
        assert score.local_score(node, parents[::-1]) == score.local_score(node, parents)  # a set of parents
    assert score.nodes == ["A", "S", "T", "L", "B", "E", "X", "D"]


def test_bde_local_score_equals_ours_and_pgmpys_bdeu(sites):
    pytest.importorskip("pgmpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        from pgmpy.estimators import BDeu
    pooled = sites.drop(columns="site")
    ours = pgmpy_score(pooled, "bde", iss=1)
    theirs = BDeu(pooled, equivalent_sample_size=1)
    terms = bs.score("[A][S][T][L][B][X][E|T:L][D|B:E]", pooled, "bde", iss=1, by_node=True)
    assert ours.local_score("E", ["T", "L"]) == pytest.approx(terms["E"], rel=1e-12)
    assert ours.local_score("D", ["B", "E"]) == pytest.approx(theirs.local_score("D", ["B", "E"]), rel=1e-12)


def test_pgmpy_hill_climbing_with_bhd_returns_a_dag_over_the_nodes(sites):
    pytest.importorskip("pgmpy")
    import networkx as nx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        from pgmpy.estimators import HillClimbSearch
        score = pgmpy_score(sites, "bhd", domain="site")
        dag = HillClimbSearch(sites.drop(columns="site")).estimate(scoring_method=score, show_progress=False)
    assert sorted(dag.nodes()) == sorted(["A", "S", "T", "L", "B", "E", "X", "D"])
    assert nx.is_directed_acyclic_graph(dag)
    assert dag.number_of_edges() >= 6
    # the network pgmpy found scores, by our bs.score, the sum of the local scores it climbed on, far above the empty graph
    learned = bs.DAG({v: list(dag.predecessors(v)) for v in dag.nodes()})
    total = bs.score(learned, sites, "bhd", domain="site")
    assert total == pytest.approx(sum(score.local_score(v, list(dag.predecessors(v))) for v in dag.nodes()), rel=1e-12)
    assert total > bs.score("[A][S][T][L][B][E][X][D]", sites, "bhd", domain="site") + 100


def test_the_newer_pgmpy_search_takes_the_same_object(sites):
    pytest.importorskip("pgmpy")
    cd = pytest.importorskip("pgmpy.causal_discovery")
    if not hasattr(cd, "HillClimbSearch"):
        pytest.skip("this pgmpy has no pgmpy.causal_discovery.HillClimbSearch")
    score = pgmpy_score(sites, "bhd", domain="site")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        from pgmpy.estimators import HillClimbSearch
        legacy = HillClimbSearch(sites.drop(columns="site")).estimate(scoring_method=score, show_progress=False)
    est = cd.HillClimbSearch(scoring_method=score, show_progress=False, return_type="dag")
    graph = est.fit(sites.drop(columns="site")).causal_graph_
    assert sorted(graph.edges()) == sorted(legacy.edges())


def test_the_domain_column_is_not_a_node(sites):
    pytest.importorskip("pgmpy")
    score = pgmpy_score(sites, "bhd", domain="site")
    with pytest.raises(DataError, match="the domain column 'site' is not a node"):
        score.local_score("site", [])
    with pytest.raises(DataError, match="the domain column 'site' is not a node"):
        score.local_score("A", ["site"])
    with pytest.raises(UnknownNodeError, match="'Z'"):
        score.local_score("Z", [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        from pgmpy.estimators import HillClimbSearch
        with pytest.raises(DataError, match="drop"):
            HillClimbSearch(sites).estimate(scoring_method=score, show_progress=False)


def test_bad_hyperparameters_name_the_problem(sites):
    pytest.importorskip("pgmpy")
    with pytest.raises(HyperparameterError, match="needs domain="):
        pgmpy_score(sites, "bhd")
    with pytest.raises(HyperparameterError, match="does not take 'domain'"):
        pgmpy_score(sites, "bde", domain="site")
    with pytest.raises(DataError, match="DataFrame"):
        pgmpy_score(sites.to_numpy(), "bde")
