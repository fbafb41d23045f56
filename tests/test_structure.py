"""DAGs, bnlearn model strings, formulas, edge lists and networkx graphs."""

from __future__ import annotations

import json

import networkx as nx
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import (
    CycleError,
    DuplicateNodeError,
    FormulaError,
    ModelStringError,
    UnknownNodeError,
)
from pybncsmooth.structure.modelstring import r_sorted
from conftest import BNLEARN, load_golden, modelstring_of


@pytest.mark.parametrize("name", ["asia", "learning_test", "insurance", "alarm"])
def test_modelstring_gives_bnlearn_node_and_parent_order(name):
    golden = "bayes_iss1" if name != "learning_test" else "mle"
    ref = load_golden(f"{name}.{golden}.json")
    dag = bs.DAG.from_modelstring(modelstring_of(name))
    assert dag.nodes == ref["meta"]["node_order"]
    for node, nd in ref["nodes"].items():
        assert dag.parents(node) == nd["parents"]
        assert dag.children(node) == nd["children"]


def test_modelstring_written_as_bnlearn_writes_it():
    # bnlearn's modelstring() lists nodes by depth, ties in node order
    dag = bs.DAG.from_modelstring("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]")
    assert dag.modelstring() == "[A][S][B|S][L|S][T|A][E|L:T][D|B:E][X|E]"
    # the hc-learned asia network (node order = the data's column order)
    hc = (BNLEARN / "asia.hc_learned.modelstring.txt").read_text().strip()
    learned = bs.DAG.from_modelstring(hc, node_order=["A", "S", "T", "L", "B", "E", "X", "D"])
    assert learned.modelstring() == hc
    assert bs.modelstring(learned) == hc


def test_modelstring_round_trip_on_reference_networks():
    for name in ["asia", "learning_test", "insurance", "alarm"]:
        dag = bs.DAG.from_modelstring(modelstring_of(name))
        again = bs.DAG.from_modelstring(dag.modelstring())
        assert again == dag


def test_written_order_option_keeps_the_string_order():
    dag = bs.DAG.from_modelstring("[Z][A][E|Z:A]", order="written")
    assert dag.nodes == ["Z", "A", "E"]
    assert dag.parents("E") == ["Z", "A"]
    assert bs.DAG.from_modelstring("[Z][A][E|Z:A]").parents("E") == ["A", "Z"]


def test_names_with_dots_underscores_digits():
    dag = bs.DAG.from_modelstring("[x.1][y_2|x.1][Z3|x.1:y_2]")
    assert dag.parents("Z3") == ["x.1", "y_2"]
    assert dag.modelstring() == "[x.1][y_2|x.1][Z3|x.1:y_2]"


def test_r_collation_emulation():
    # glibc's en_US.UTF-8: letters and digits first, case-insensitively; then lower
    # case before upper case
    assert r_sorted(["AntiTheft", "Antilock", "b", "B", "a", "A10", "A2"]) == [
        "a",
        "A10",
        "A2",
        "Antilock",
        "AntiTheft",
        "b",
        "B",
    ]


@pytest.mark.parametrize(
    "bad,exc,match",
    [
        ("", ModelStringError, "declares no node"),
        ("[A][B|A", ModelStringError, "never closed"),
        ("[A]x[B]", ModelStringError, "expected '\\['"),
        ("[A][B|]", ModelStringError, "'\\|' but no parents"),
        ("[A][B|A:]", ModelStringError, "empty parent name"),
        ("[A][]", ModelStringError, "empty node name"),
        ("[A][B|A|C]", ModelStringError, "more than one"),
        ("[A][A]", DuplicateNodeError, "'A'"),
        ("[A][B|A:A]", DuplicateNodeError, "'A'"),
        ("[A][B|C]", UnknownNodeError, "'C'"),
        ("[A|B][B|A]", CycleError, "A -> B -> A|B -> A -> B"),
        ("[A|A]", CycleError, "A -> A"),
        ("[A[B]]", ModelStringError, "inside a node block"),
    ],
)
def test_malformed_modelstrings(bad, exc, match):
    with pytest.raises(exc, match=match):
        bs.DAG.from_modelstring(bad)


def test_modelstring_error_points_at_position():
    with pytest.raises(ModelStringError) as e:
        bs.DAG.from_modelstring("[A][B|A]  junk")
    assert e.value.position == 10
    assert "character 11" in str(e.value)


def test_formulas():
    dag = bs.DAG.from_formulas(["D ~ A + C", "A ~ 1", "C ~ 1", "B ~ A"])
    assert dag.nodes == ["D", "A", "C", "B"]
    assert dag.parents("D") == ["A", "C"]  # written order kept
    assert dag.parents("A") == []
    dag2 = bs.DAG.from_formulas("D ~ A + C")
    assert dag2.nodes == ["D", "A", "C"]
    dot = bs.DAG.from_formulas("Y ~ .", variables=["X1", "Y", "X2"])
    assert dot.parents("Y") == ["X1", "X2"]
    quoted = bs.DAG.from_formulas(["`blood pressure` ~ age + `body mass`"])
    assert quoted.parents("blood pressure") == ["age", "body mass"]


@pytest.mark.parametrize(
    "bad,exc,match",
    [
        ("D A + C", FormulaError, "exactly one '~'"),
        ("D ~ ", FormulaError, "nothing on the right"),
        ("D ~ A + ", FormulaError, "empty term"),
        ("D ~ A + 1", FormulaError, "'1' can only stand alone"),
        ("D ~ D", FormulaError, "its own parent"),
        ("D ~ A + A", DuplicateNodeError, "'A'"),
        ("D ~ a b", FormulaError, "not a plain name"),
        ("D ~ .", FormulaError, "needs the list of variables"),
        ("D ~ A - B", FormulaError, "'-' is not supported"),
    ],
)
def test_malformed_formulas(bad, exc, match):
    with pytest.raises(exc, match=match):
        bs.DAG.from_formulas([bad])


def test_duplicate_formula_and_cycle_in_formulas():
    with pytest.raises(DuplicateNodeError, match="'B'"):
        bs.DAG.from_formulas(["B ~ A", "B ~ C"])
    with pytest.raises(CycleError):
        bs.DAG.from_formulas(["B ~ A", "C ~ B", "A ~ C"])


def test_edges_and_networkx_round_trip():
    dag = bs.DAG.from_modelstring(modelstring_of("alarm"))
    again = bs.DAG.from_edges(dag.to_edges(), nodes=dag.nodes)
    assert again == dag
    g = dag.to_networkx()
    assert isinstance(g, nx.DiGraph)
    assert nx.is_directed_acyclic_graph(g)
    assert bs.DAG.from_networkx(g) == dag
    # parent order from edge insertion order when no 'order' attribute
    h = nx.DiGraph()
    h.add_edges_from([("C", "X"), ("A", "X")])
    assert bs.DAG.from_networkx(h).parents("X") == ["C", "A"]
    with pytest.raises(bs.errors.StructureError, match="directed"):
        bs.DAG.from_networkx(nx.Graph([("a", "b")]))


def test_markov_blanket_topological_order_and_depths():
    dag = bs.DAG.from_modelstring("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]")
    assert dag.markov_blanket("E") == ["B", "D", "L", "T", "X"]
    assert dag.markov_blanket("A") == ["T"]
    assert dag.depths() == {"A": 1, "B": 2, "D": 4, "E": 3, "L": 2, "S": 1, "T": 2, "X": 4}
    order = dag.topological_order()
    pos = {n: i for i, n in enumerate(order)}
    assert all(pos[p] < pos[n] for p, n in dag.arcs)
    assert dag.roots() == ["A", "S"] and dag.leaves() == ["D", "X"]


def test_dag_validation_messages():
    with pytest.raises(UnknownNodeError, match="'Q'"):
        bs.DAG({"B": ["Q"]}, nodes=["B"])
    with pytest.raises(DuplicateNodeError, match="'A'"):
        bs.DAG({}, nodes=["A", "A"])
    with pytest.raises(CycleError) as e:
        bs.DAG({"A": ["C"], "B": ["A"], "C": ["B"], "D": []})
    assert sorted(e.value.cycle) == ["A", "B", "C"]
    with pytest.raises(UnknownNodeError):
        bs.DAG({"B": ["A"]}).parents("Z")


def test_with_parents_and_subgraph():
    dag = bs.DAG.from_modelstring("[A][B][C|A:B]")
    assert dag.with_parents("C", ["B", "A"]).parents("C") == ["B", "A"]
    assert dag.with_parents("C", ["B", "A"]).same_graph(dag)
    assert dag.subgraph(["A", "C"]).parents("C") == ["A"]
    assert "3 nodes" in repr(dag)


def test_levels_json_fixture_is_consistent():
    # guards the fixtures themselves: column order of the CSV differs from node order
    lv = json.loads((BNLEARN / "asia.levels.json").read_text())
    assert lv["columns"] == ["A", "S", "T", "L", "B", "E", "X", "D"]
