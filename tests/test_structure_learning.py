"""NB, TAN and kDB structures; TAN against bnlearn's tree.bayes on every golden file."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import DataError, HyperparameterError, MissingColumnError, SingleLevelError
from pybncsmooth.structure.information import conditional_mutual_information, mutual_information
from conftest import BNLEARN, DATA

UCI = DATA / "uci"


def load_uci(name: str) -> pd.DataFrame:
    # as the reference: every column a factor, levels in byte order, empty field = NA
    return pd.read_csv(UCI / f"{name}.csv.gz", dtype=str, keep_default_na=False, na_values=[""])


def golden(name: str) -> dict:
    return json.loads((BNLEARN / f"{name}.json").read_text())


TAN_CASES = [
    ("tan_asia_either", "asia", "E"),
    ("tan_asia_dysp", "asia", "D"),
    ("tan_housevotes84", "housevotes84_disc5", "Class"),
    ("tan_breastcancer", "breastcancer_disc5", "Class"),
    ("tan_dna", "dna_disc5", "Class"),
]


def _data(src: str) -> pd.DataFrame:
    return bs.load_dataset("asia") if src == "asia" else load_uci(src)


def _check_tan(dag: bs.DAG, info, ref: dict, target: str) -> None:
    # the total weight is the same for every maximum spanning tree; the untied arcs must match
    assert info.tree_weight == pytest.approx(ref["tree_total_cmi"], rel=1e-12, abs=1e-12)
    got = set(info.tree_arcs)
    assert {tuple(a) for a in ref["tree_arcs_not_tied"]} <= got
    if ref["tree_is_unique_max_spanning_tree"]:
        assert got == {tuple(a) for a in ref["tree_arcs"]}
        assert set(dag.arcs) == {tuple(a) for a in ref["tan_arcs"]}
    # every arc weight as bnlearn computed it
    weights = dict(zip(map(tuple, ref["tree_arcs"]), ref["tree_arc_cmi"]))
    pos = {f: i for i, f in enumerate(info.features)}
    for (a, b), w in weights.items():
        assert info.cmi[pos[a], pos[b]] == pytest.approx(w, rel=1e-10, abs=1e-14)
    # the class is the first parent of every feature
    for f in info.features:
        assert dag.parents(f)[0] == target


@pytest.mark.parametrize("name,src,target", TAN_CASES, ids=[c[0] for c in TAN_CASES])
def test_tan_equals_bnlearn_tree_bayes(name, src, target):
    ref = golden(name)
    df = _data(src)[[ref["training"], *ref["explanatory"]]]
    dag, info = bs.learn_structure(df, target, "tan", na="pairwise", return_info=True)
    assert info.extra["root"] == ref["tan"]["root"]
    _check_tan(dag, info, ref["tan"], target)
    # naive Bayes: the class is the parent of every feature
    nb = bs.learn_structure(df, target, "nb", na="pairwise")
    assert set(nb.arcs) == {tuple(a) for a in ref["naive_bayes_arcs"]}


@pytest.mark.parametrize(
    "name,src", [("tan_housevotes84", "housevotes84_disc5"), ("tan_breastcancer", "breastcancer_disc5")]
)
def test_tan_complete_cases_variant(name, src):
    ref = golden(name)
    df = load_uci(src)
    dag, info = bs.learn_structure(df, "Class", "tan", na="drop", return_info=True)
    assert ref["tan_complete_cases"]["n_rows"] == int(df.notna().all(axis=1).sum())
    _check_tan(dag, info, ref["tan_complete_cases"], "Class")


def test_information_measures_exact():
    x = np.array([0, 0, 1, 1, 0, 1, -1])
    y = np.array([0, 0, 1, 1, 1, 0, 1])
    # on the 6 complete rows: n = [[2,1],[1,2]]
    expected = sum((nxy / 6) * np.log(nxy * 6 / (3 * 3)) for nxy in (2, 1, 1, 2))
    assert mutual_information(x, y, 2, 2) == pytest.approx(expected, abs=1e-15)
    # conditionally independent given c by construction: CMI = 0
    c = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    xi = np.array([0, 0, 1, 1, 0, 1, 0, 1])
    xj = np.array([0, 1, 0, 1, 0, 0, 1, 1])
    assert conditional_mutual_information(xi, xj, c, 2, 2, 2) == pytest.approx(0.0, abs=1e-15)
    assert conditional_mutual_information(xi, xi, c, 2, 2, 2) == pytest.approx(np.log(2), abs=1e-15)


def _kdb_data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.85, c, 1 - c)  # strongly tied to the class
    b = np.where(rng.random(n) < 0.7, a, rng.integers(0, 2, n))  # depends on a
    d = np.where(rng.random(n) < 0.6, c, 1 - c)
    e = np.where(rng.random(n) < 0.8, b ^ d, rng.integers(0, 2, n))  # depends on b and d
    return pd.DataFrame({"C": c, "A": a, "B": b, "D": d, "E": e}).astype(str)


def test_kdb_orders_by_mi_and_picks_parents_by_cmi():
    df = _kdb_data()
    dag, info = bs.learn_structure(df, "C", "kdb", k=2, return_info=True)
    mi = info.mi
    assert info.order == sorted(info.features, key=lambda f: -mi[f])
    assert info.order[0] == "A"
    # every feature's parents: the class, then earlier features by decreasing CMI
    pos = {f: i for i, f in enumerate(info.features)}
    for i, f in enumerate(info.order):
        pa = dag.parents(f)
        assert pa[0] == "C" and len(pa) == 1 + min(i, 2)
        earlier = info.order[:i]
        cmi = {e: info.cmi[pos[f], pos[e]] for e in earlier}
        assert pa[1:] == sorted(earlier, key=lambda e: -cmi[e])[: min(i, 2)]
    # E depends on B and D given the class
    assert set(dag.parents("E")[1:]) == {"B", "D"}
    k0 = bs.learn_structure(df, "C", "kdb", k=0)
    assert set(k0.arcs) == set(bs.learn_structure(df, "C", "nb").arcs)


def test_bad_classifier_input():
    df = _kdb_data(200)
    with pytest.raises(HyperparameterError, match="k must be >= 0"):
        bs.learn_structure(df, "C", "kdb", k=-1)
    with pytest.raises(HyperparameterError, match="larger than the number of features \\(n_features = 4\\)"):
        bs.learn_structure(df, "C", "kdb", k=5)
    with pytest.raises(HyperparameterError, match="needs k"):
        bs.learn_structure(df, "C", "kdb")
    with pytest.raises(MissingColumnError, match="'Z' \\(class\\)"):
        bs.learn_structure(df, "Z", "tan")
    with pytest.raises(SingleLevelError, match="'C'"):
        bs.learn_structure(df.assign(C="1"), "C", "tan")
    with pytest.warns(
        bs.errors.ClassRelabellingWarning, match=f"'Copy' is identical to the class 'C' on these {len(df)} rows"
    ):
        bs.learn_structure(df.assign(Copy=df["C"].map({"0": "no", "1": "yes"})), "C", "nb")
    with pytest.raises(HyperparameterError, match="kind must be"):
        bs.learn_structure(df, "C", "forest")
    with pytest.raises(bs.errors.MissingValueError):
        bs.learn_structure(df.assign(A=[None] + list(df["A"][1:])), "C", "tan", na="error")
    with pytest.raises(DataError, match="no feature"):
        bs.learn_structure(df[["C"]], "C", "nb")


def test_tan_root_option():
    df = _kdb_data()
    dag, info = bs.learn_structure(df, "C", "tan", root="E", return_info=True)
    assert dag.parents("E") == ["C"]
    assert all(len(dag.parents(f)) == 2 for f in ["A", "B", "D"])
