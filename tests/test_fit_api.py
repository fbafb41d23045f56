"""bs.fit(): structure specs, estimator semantics on exact small cases, bad input."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import (
    EmptyDataError,
    HyperparameterError,
    MissingColumnError,
    MissingValueError,
    NonCategoricalError,
    SingleLevelError,
    StructureError,
    UnseenLevelError,
)
from pybncsmooth.estimators import Bayes, MEstimate
from conftest import BNLEARN, modelstring_of


@pytest.fixture()
def tiny() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "A": ["a0", "a0", "a0", "a1", "a1", "a1", "a1", "a0"],
            "B": ["b0", "b1", "b1", "b0", "b2", "b2", "b2", "b0"],
            "C": ["c0", "c1", "c1", "c0", "c0", "c1", "c1", "c1"],
        }
    )


def test_mestimate_exact_values_and_backoff(tiny):
    df = tiny.assign(B=pd.Categorical(tiny["B"], categories=["b0", "b1", "b2"]))
    net = bs.fit(["C ~ A + B"], df, method="mestimate", m=2)
    t = net.cpt("C")  # axes C, A, B
    # (A=a0, B=b1): counts C = (0, 2) -> ((0 + 1) / 4, (2 + 1) / 4)
    np.testing.assert_allclose(t[:, 0, 1], [1 / 4, 3 / 4])
    # (A=a0, B=b2) never occurs: back off to P(C | A=a0): counts (1, 3) -> (2/6, 4/6)
    np.testing.assert_allclose(t[:, 0, 2], [2 / 6, 4 / 6])
    # (A=a1, B=b1) never occurs: back off to P(C | A=a1): counts (2, 2) -> (3/6, 3/6)
    np.testing.assert_allclose(t[:, 1, 1], [0.5, 0.5])
    # a deeper example where the ancestor is not uniform
    df2 = df.iloc[[0, 1, 2, 7]]  # A = a0 only; C = c0, c1, c1, c1
    t2 = bs.fit(
        ["C ~ A + B"], df2.assign(A=pd.Categorical(df2["A"], categories=["a0", "a1"])), method="mestimate", m=2
    ).cpt("C")
    # (a1, anything): no a1 at all -> back off to the root: (1 + 1, 3 + 1) / 6
    np.testing.assert_allclose(t2[:, 1, 0], [2 / 6, 4 / 6])
    # m = 0 gives relative frequencies where there are data
    t0 = bs.fit(["C ~ A + B"], df, method="mestimate", m=0).cpt("C")
    np.testing.assert_allclose(t0[:, 1, 2], [1 / 3, 2 / 3])


def test_bayes_internal_nodes_are_bdeu_marginals(tiny):
    net = bs.fit(["C ~ A + B"], tiny, method="bayes", iss=6)
    tree = net.tree("C")
    est = net.cpd("C").estimate
    # level 1 (split on A, q1 = 2): alpha = 6 / (2 * 2) = 1.5
    n = tree.levels[1].counts.astype(float)
    np.testing.assert_allclose(est.probs[1], (n + 1.5) / (n.sum(1, keepdims=True) + 3))
    # root: alpha = 6 / 2 = 3
    n0 = tree.levels[0].counts.astype(float)
    np.testing.assert_allclose(est.probs[0], (n0 + 3) / (n0.sum() + 6))


def test_structure_specs_agree(tiny, tmp_path):
    ms = "[A][B|A][C|A:B]"
    ref = bs.fit(ms, tiny, method="bayes")
    specs = [
        bs.DAG.from_modelstring(ms),
        ["B ~ A", "C ~ A + B", "A ~ 1"],
        nx.DiGraph([("A", "B"), ("A", "C"), ("B", "C")]),
        ref,
    ]
    for spec in specs:
        net = bs.fit(spec, tiny, method="bayes")
        for n in ref.nodes:
            np.testing.assert_allclose(
                net.cpt_frame(n).set_index([n] + ref.parents(n))["prob"].sort_index().to_numpy(),
                ref.cpt_frame(n).set_index([n] + ref.parents(n))["prob"].sort_index().to_numpy(),
            )
    ref.write(tmp_path / "s.bif")
    from_file = bs.fit(str(tmp_path / "s.bif"), tiny, method="bayes")
    assert from_file.max_abs_diff(ref) < 1e-15
    # the file's levels are the schema: an unknown level in the data is an error
    with pytest.raises(UnseenLevelError, match="'A'.*'a9'"):
        bs.fit(tmp_path / "s.bif", tiny.assign(A=["a9"] + list(tiny["A"][1:])))


def test_estimator_objects_and_hyperparameter_errors(tiny):
    net = bs.fit("[A][B|A]", tiny, method=MEstimate(m=3))
    assert net.method == "mestimate" and net.info["hyperparameters"] == {"m": 3.0}
    with pytest.raises(HyperparameterError, match="no hyperparameter 'alpha'.*iss, unseen"):
        bs.fit("[A][B|A]", tiny, method="bayes", alpha=2)
    with pytest.raises(HyperparameterError, match="unknown method 'bogus'"):
        bs.fit("[A][B|A]", tiny, method="bogus")
    with pytest.raises(HyperparameterError, match="positive"):
        Bayes(iss=0)
    with pytest.raises(HyperparameterError, match="non-negative"):
        MEstimate(m=-1)
    with pytest.raises(HyperparameterError, match="together with an estimator object"):
        bs.fit("[A][B|A]", tiny, method=MEstimate(), m=2)
    assert set(bs.available_methods()) >= {"mle", "bayes", "mestimate"}


def test_bad_input_to_fit(tiny):
    with pytest.raises(MissingColumnError, match="'Q' \\(node \\(a parent of 'B'\\)\\)"):
        bs.fit("[Q][B|Q]", tiny)
    with pytest.raises(EmptyDataError):
        bs.fit("[A][B|A]", tiny.iloc[:0])
    with pytest.raises(EmptyDataError, match="no chunk"):
        bs.fit("[A][B|A]", iter([]))
    with pytest.raises(SingleLevelError, match="'A'"):
        bs.fit("[A][B|A]", tiny.assign(A="a0"))
    with pytest.raises(MissingValueError, match="'B'"):
        bs.fit("[A][B|A]", tiny.assign(B=[None] + list(tiny["B"][1:])))
    with pytest.raises(NonCategoricalError, match="'A'"):
        bs.fit("[A][B|A]", tiny.assign(A=np.linspace(0, 1, 8)))
    with pytest.raises(StructureError, match="cannot read"):
        bs.fit("A -> B", tiny)
    with pytest.raises(StructureError, match="cannot use a int"):
        bs.fit(3, tiny)
    with pytest.raises(bs.errors.DataError, match="chunk 1"):
        bs.fit("[A][B|A]", [tiny, "not a frame"])
    with pytest.raises(bs.errors.DuplicateColumnError):
        bs.fit("[A][B|A]", pd.concat([tiny, tiny[["A"]]], axis=1))


def test_non_string_column_labels_are_accepted():
    df = pd.DataFrame({0: ["x", "y", "x"], 1: ["u", "u", "v"]})
    net = bs.fit(["1 ~ 0"], df, method="mle")
    assert net.parents("1") == ["0"]


def test_fit_metadata_and_na_drop(tiny):
    df = tiny.assign(C=[None, "c1", "c1", "c0", "c0", "c1", "c1", "c1"])
    net = bs.fit("[A][B|A][C|A:B]", df, method="mle", na="drop")
    assert net.info["n_rows"] == 7 and net.info["n_dropped"] == 1
    assert net.tree("A").total == 7
    lev = bs.fit("[A][B|A][C|A:B]", df, method="mle", na="level")
    assert lev.levels("C") == ["c0", "c1", "<NA>"]
    # prediction with the NA level
    p = lev.predict_proba(df, "A")
    assert np.isfinite(p.to_numpy()).all()


def test_housevotes_with_missing_votes():
    hv = bs.load_dataset("housevotes84")
    nb = ["V%d ~ Class" % i for i in range(1, 17)]
    avail = bs.fit(nb, hv, method="bayes", na="available")
    assert avail.tree("V1").total == int(hv["V1"].notna().sum())
    level = bs.fit(nb, hv, method="bayes", na="level")
    assert level.levels("V2")[-1] == "<NA>"
    p = level.predict_proba(hv, "Class")
    acc = (p.idxmax(axis=1).astype(str).to_numpy() == hv["Class"].astype(str).to_numpy()).mean()
    assert acc > 0.88  # naive Bayes on this set is about 90% accurate (resubstitution)


def test_reference_bif_as_structure_for_a_refit(alarm):
    net = bs.fit(BNLEARN / "alarm.bif", alarm, method="bayes", iss=1)
    ref = bs.fit(modelstring_of("alarm"), alarm, method="bayes", iss=1)
    assert net.max_abs_diff(ref) < 1e-15
