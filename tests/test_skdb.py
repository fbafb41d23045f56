"""Selective kDB: the incremental leave-one-out equals refitting without each row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.classifiers.metrics import log_loss, rmse, zero_one_loss
from pybncsmooth.errors import HyperparameterError
from conftest import DATA


@pytest.fixture(scope="module")
def small() -> pd.DataFrame:
    df = pd.read_csv(DATA / "uci" / "breastcancer_disc5.csv.gz", dtype=str, keep_default_na=False, na_values=[""])
    return df.iloc[:60, :7]


def _brute_force_losses(df, info, k, loss_fn):
    """Refit an m-estimate sub-model without each row, for every (k', l)."""
    from pybncsmooth.data import encode

    enc = encode(df, na="level")
    dfc = df.copy()
    for c in df.columns:
        dfc[c] = pd.Categorical(df[c].fillna("<NA>"), categories=list(enc.schema[c]))
    full = info.extra["full_kdb"]
    order = info.extra["selection"].order
    y = dfc["Class"].cat.codes.to_numpy()
    out = np.zeros((k + 1, len(order)))
    for kk in range(k + 1):
        for li in range(len(order)):
            chosen = order[: li + 1]
            sub = bs.DAG({"Class": [], **{f: full.parents(f)[: 1 + kk] for f in chosen}}, nodes=["Class", *chosen])
            proba = np.zeros((len(dfc), 2))
            for i in range(len(dfc)):
                net = bs.fit(sub, dfc.drop(index=dfc.index[i]), method="mestimate", m=1)
                proba[i] = net.predict_proba(dfc.iloc[[i]], "Class").to_numpy()[0]
            out[kk, li] = loss_fn(proba, y)
    return out


@pytest.mark.parametrize("loss,fn", [("rmse", rmse), ("log_loss", log_loss)])
def test_incremental_loo_equals_refits(small, loss, fn):
    dag, info = bs.learn_skdb(small, "Class", 2, m=1, loss=loss, return_info=True)
    sel = info.extra["selection"]
    brute = _brute_force_losses(small, info, 2, fn)
    np.testing.assert_allclose(sel.loss, brute, rtol=0, atol=1e-12)
    # the selected sub-model is the best one
    assert sel.loss[sel.k, sel.n_attributes - 1] == pytest.approx(sel.loss.min())


def test_binary_search_path_equals_dense_maps(small, monkeypatch):
    import pybncsmooth.classifiers.skdb as skdb_mod

    _, dense = bs.learn_skdb(small, "Class", 3, return_info=True)
    monkeypatch.setattr(skdb_mod, "_DENSE_MAP_LIMIT", 0)
    _, searched = bs.learn_skdb(small, "Class", 3, return_info=True)
    np.testing.assert_array_equal(dense.extra["selection"].loss, searched.extra["selection"].loss)


def test_zero_one_loss_selection(small):
    dag, info = bs.learn_skdb(small, "Class", 1, loss="zero_one", return_info=True)
    sel = info.extra["selection"]
    assert np.all((sel.loss >= 0) & (sel.loss <= 1))
    brute = _brute_force_losses(small, info, 1, zero_one_loss)
    np.testing.assert_allclose(sel.loss, brute, atol=1e-12)


def test_selected_structure_is_a_truncated_kdb(small):
    dag, info = bs.learn_skdb(small, "Class", 3, return_info=True)
    sel = info.extra["selection"]
    full = info.extra["full_kdb"]
    chosen = sel.order[: sel.n_attributes]
    assert sorted(dag.nodes) == sorted(["Class", *chosen])
    for f in chosen:
        assert dag.parents(f) == full.parents(f)[: 1 + sel.k]
    # node order: the class, then the chosen features in column order
    assert dag.nodes[0] == "Class"
    assert [n for n in dag.nodes[1:]] == [c for c in small.columns if c in chosen]


def test_skdb_bad_input(small):
    with pytest.raises(HyperparameterError, match="loss"):
        bs.learn_skdb(small, "Class", 2, loss="hinge")
    with pytest.raises(HyperparameterError, match="larger than the number of features"):
        bs.learn_skdb(small, "Class", 10)
    with pytest.raises(HyperparameterError, match="pairwise"):
        bs.learn_skdb(small, "Class", 1, na="pairwise")
