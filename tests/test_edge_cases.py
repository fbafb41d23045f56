"""Data edge cases (issue 14, item 3): each gets a sensible answer or a specific error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import DenseTableTooLargeError, SingleLevelError, TooManyLevelsError

METHODS = ["mle", "bayes", "mestimate", "hmd", "hls"]


@pytest.fixture(scope="module")
def base() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {"C": pd.Categorical(rng.choice(["a", "b"], 60)), "X": pd.Categorical(rng.choice(["u", "v", "w"], 60))}
    )


def test_constant_column(base):
    with pytest.raises(SingleLevelError, match="'K' has 1 level"):
        bs.fit(["X ~ C", "C ~ 1", "K ~ C"], base.assign(K="k"), method="bayes")
    clf = bs.BNClassifier(structure="tan").fit(base[["X"]].assign(K="k"), base["C"])
    assert clf.ignored_features_ == ["K"]


def test_single_non_missing_value(base):
    one = base.assign(S=pd.Series([None] * 59 + ["z"], dtype=object))
    net = bs.fit(["X ~ C", "C ~ 1", "S ~ C"], one, method="mestimate", na="level")
    assert net.levels("S") == ["z", "<NA>"]
    with pytest.raises(SingleLevelError, match="'S'"):
        bs.fit(["X ~ C", "C ~ 1", "S ~ C"], one, method="mestimate", na="available")


def test_class_with_one_level(base):
    with pytest.raises(SingleLevelError, match="1 class"):
        bs.BNClassifier().fit(base[["X"]], ["a"] * len(base))


@pytest.mark.parametrize("method", METHODS)
def test_empty_string_levels_and_unused_levels(base, method):
    df = base.assign(X=base["X"].astype(str).replace("u", ""))
    df["X"] = pd.Categorical(df["X"], categories=["", "v", "w", "never"])
    net = bs.fit(["X ~ C", "C ~ 1"], df, method=method)
    assert net.levels("X") == ["", "v", "w", "never"]
    t = net.cpt("X")
    np.testing.assert_allclose(t.sum(axis=0), 1.0, atol=1e-12)
    if method != "mle":
        assert (t[3] > 0).all() and (t[3] < 0.1).all()  # an unused level: small, not zero
    p = net.predict_proba(df.iloc[:5], "C")
    assert np.isfinite(p.to_numpy()).all()


@pytest.mark.parametrize("method", ["mestimate", "hmd", "hls"])
def test_ten_thousand_levels(method):
    rng = np.random.default_rng(1)
    levels = [f"l{i}" for i in range(10000)]
    df = pd.DataFrame(
        {
            "C": pd.Categorical(rng.choice(["a", "b"], 20000)),
            "X": pd.Categorical(rng.choice(levels, 20000), categories=levels),
        }
    )
    net = bs.fit(["X ~ C", "C ~ 1"], df, method=method)
    t = net.cpt("X")
    assert t.shape == (10000, 2)
    np.testing.assert_allclose(t.sum(axis=0), 1.0, atol=1e-9)
    with pytest.raises(TooManyLevelsError, match="'X' has [0-9]+ distinct values"):
        bs.fit(["X ~ C", "C ~ 1"], df.astype({"X": str}), method=method)


@pytest.mark.parametrize("method", METHODS)
def test_one_row(base, method):
    net = bs.fit(["X ~ C", "C ~ 1"], base.iloc[:1], method=method)
    for node in net.nodes:
        t = net.cpt(node)
        assert np.isfinite(t).all()
        np.testing.assert_allclose(t.sum(axis=0), 1.0, atol=1e-12)


@pytest.mark.parametrize("dtype", ["string", "string[pyarrow]"])
def test_nullable_and_pyarrow_strings(base, dtype):
    pytest.importorskip("pyarrow")
    df = base.astype(dtype)
    df.loc[0, "X"] = pd.NA
    net = bs.fit(["X ~ C", "C ~ 1"], df, method="bayes", na="level")
    assert net.levels("X") == ["u", "v", "w", "<NA>"]
    ints = base.assign(X=pd.array(np.arange(60) % 3, dtype="Int64"))
    assert bs.fit(["X ~ C", "C ~ 1"], ints, method="bayes").levels("X") == [0, 1, 2]


def test_sixty_columns_kdb5_stays_sparse():
    rng = np.random.default_rng(2)
    n = 3000
    cols = {"C": rng.choice(["a", "b", "c"], n)}
    for j in range(60):
        cols[f"F{j}"] = rng.choice([f"v{i}" for i in range(5)], n)
    df = pd.DataFrame(cols).astype("category")
    clf = bs.BNClassifier(structure="kdb", k=5, method="mestimate").fit(df.drop(columns="C"), df["C"])
    p = clf.predict_proba(df.drop(columns="C").iloc[:50])
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    net = clf.network_
    deep = max(net.nodes, key=lambda v: len(net.parents(v)))
    assert len(net.parents(deep)) == 6  # the class and five features
    assert net.tree(deep).n_nodes < 20 * n  # observed branches only, not 3 * 5^5 * 5 cells
    with pytest.raises(DenseTableTooLargeError, match=f"node '{deep}' would have [0-9,]+ cells"):
        net.cpt(deep, max_cells=10_000)
