"""Row weights: fractional counts. Integer weights equal repeated rows for every
estimator; fractional ones give the weighted closed forms; any data source; bad
weights named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import DataError

ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


@pytest.fixture(scope="module")
def asia400():
    return bs.load_dataset("asia").iloc[:400].reset_index(drop=True)


@pytest.mark.parametrize("method", ["mle", "bayes", "mestimate", "hmd", "hls", "hgs", "mbranch", "hdp", "hls-bayes"])
def test_integer_weights_equal_repeated_rows(asia400, method):
    w = np.random.default_rng(0).integers(0, 4, len(asia400))
    rep = asia400.loc[asia400.index.repeat(w)].reset_index(drop=True)
    kw = {"iterations": 100} if method in ("hdp", "hls-bayes") else {}
    a = bs.fit(ASIA, asia400, method=method, weights=w, random_state=0, **kw)
    b = bs.fit(ASIA, rep, method=method, random_state=0, **kw)
    assert a.max_abs_diff(b) == 0.0
    assert a.info["weights"] == "per row"


def test_fractional_weights_give_weighted_frequencies(asia400):
    w = np.random.default_rng(1).random(len(asia400))
    net = bs.fit(ASIA, asia400, method="mle", weights=w)
    assert net.tree("A").fractional and net.tree("A").total == pytest.approx(w.sum())
    # P(E | T, L) by hand: weighted counts over each configuration
    for (t, l), grp in asia400.assign(w=w).groupby(["T", "L"], observed=True):
        for e in ("no", "yes"):
            expect = grp.loc[grp["E"] == e, "w"].sum() / grp["w"].sum()
            got = net.cpt("E")[net.levels("E").index(e), net.levels("T").index(t), net.levels("L").index(l)]
            assert got == pytest.approx(expect, rel=1e-12)
    bay = bs.fit(ASIA, asia400, method="bayes", iss=2, weights=w)
    n_a = np.array([w[(asia400["A"] == v).to_numpy()].sum() for v in ("no", "yes")])
    np.testing.assert_allclose(bay.cpt("A"), (n_a + 1) / (w.sum() + 2), rtol=1e-12)
    with pytest.raises(DataError, match="hdp needs whole counts"):
        bs.fit(ASIA, asia400, method="hdp", weights=w)


def test_weights_column_in_chunks_and_na_drop(asia400, tmp_path):
    w = np.random.default_rng(2).random(len(asia400))
    framed = asia400.assign(wt=w)
    path = tmp_path / "asia.csv"
    framed.to_csv(path, index=False)
    mem = bs.fit(ASIA, asia400, method="bayes", weights=w)
    col = bs.fit(ASIA, framed, method="bayes", weights="wt")
    csv = bs.fit(ASIA, str(path), method="bayes", weights="wt", chunksize=57)
    assert col.max_abs_diff(mem) == 0.0
    assert csv.max_abs_diff(mem) < 1e-12  # sums in another order
    # na="drop": the weights follow the rows that stay
    holes = asia400.copy()
    holes.loc[::7, "D"] = np.nan
    dropped = bs.fit(ASIA, holes, method="mle", na="drop", weights=w)
    keep = holes["D"].notna().to_numpy()
    ref = bs.fit(ASIA, asia400[keep], method="mle", weights=w[keep])
    assert dropped.max_abs_diff(ref) == 0.0
    chunked = bs.fit(ASIA, [holes.assign(wt=w).iloc[:150], holes.assign(wt=w).iloc[150:]], method="mle", na="drop",
                     weights="wt")
    assert chunked.max_abs_diff(ref) < 1e-12


def test_weights_with_domains(asia400):
    df = asia400.assign(site=np.where(np.arange(len(asia400)) % 3 == 0, "a", "b"))
    w = np.random.default_rng(3).integers(1, 3, len(df))
    rep = df.loc[df.index.repeat(w)].reset_index(drop=True)
    a = bs.fit(ASIA, df, method="hmd", domain="site", weights=w)
    assert a.max_abs_diff(bs.fit(ASIA, rep, method="hmd", domain="site")) == 0.0


def test_bad_weights_are_named(asia400, tmp_path):
    n = len(asia400)
    with pytest.raises(DataError, match="one weight per row"):
        bs.fit(ASIA, asia400, weights=np.ones(n - 1))
    bad = np.ones(n)
    bad[5] = -1
    with pytest.raises(DataError, match="negative.*first at row 5"):
        bs.fit(ASIA, asia400, weights=bad)
    bad[5] = np.nan
    with pytest.raises(DataError, match="missing, infinite or negative"):
        bs.fit(ASIA, asia400, weights=bad)
    with pytest.raises(DataError, match="not numbers"):
        bs.fit(ASIA, asia400.assign(wt="x"), weights="wt")
    with pytest.raises(DataError, match="not a column"):
        bs.fit(ASIA, asia400, weights="nope")
    with pytest.raises(DataError, match="only zero weights"):
        bs.fit(ASIA, asia400, weights=np.zeros(n))
    with pytest.raises(DataError, match="only zero weights"):
        bs.fit(ASIA, asia400.assign(wt=0.0), weights="wt")
    with pytest.raises(bs.errors.StructureError, match="weights column 'A'"):
        bs.fit(ASIA, asia400, weights="A")
    path = tmp_path / "a.csv"
    asia400.to_csv(path, index=False)
    with pytest.raises(DataError, match="DataFrame in memory"):
        bs.fit(ASIA, str(path), weights=np.ones(n))


@pytest.mark.parametrize("structure", ["nb", "tan", "kdb"])
def test_classifier_formula_weights_equal_repeated_rows(structure, tmp_path):
    votes = bs.load_dataset("housevotes84").dropna().reset_index(drop=True)
    w = np.random.default_rng(0).integers(0, 3, len(votes))
    rep = votes.loc[votes.index.repeat(w)].reset_index(drop=True)
    k = 2 if structure == "kdb" else None  # k applies to kDB
    kw = dict(structure=structure, k=k, method="hdp", iterations=100, random_state=0)
    a = bs.fit("Class ~ .", votes, weights=w, **kw)
    b = bs.fit("Class ~ .", rep, **kw)
    assert a.modelstring() == b.modelstring()  # the structure's statistics are weighted too
    assert a.max_abs_diff(b) == 0.0
    # data read in chunks: the weights are a column, not a feature
    path = tmp_path / "v.csv"
    votes.assign(w=w).to_csv(path, index=False)
    c = bs.fit("Class ~ .", str(path), structure=structure, k=k, method="bayes", weights="w")
    d = bs.fit("Class ~ .", votes, structure=structure, k=k, method="bayes", weights=w)
    assert "w" not in c.nodes and c.modelstring() == d.modelstring()
    assert c.max_abs_diff(d) < 1e-12



@pytest.mark.parametrize("structure", ["nb", "tan", "kdb", "skdb", "eskdb"])
@pytest.mark.parametrize("discretize", [None, "mdl"])
def test_classifier_sample_weight_equals_repeated_rows(structure, discretize):
    rng = np.random.default_rng(5)
    if discretize is None:
        data = bs.load_dataset("housevotes84").dropna().reset_index(drop=True)
    else:  # numbers, cut by MDL fitted with the weights (ESKDB: every member's own cuts)
        X0 = rng.normal(size=(300, 4))
        data = pd.DataFrame(X0, columns=list("abcd")).assign(Class=np.where(X0[:, 0] + X0[:, 1] > 0, "p", "q"))
    X, y = data.drop(columns="Class"), data["Class"]
    w = rng.integers(0, 3, len(data))
    rep = data.loc[data.index.repeat(w)].reset_index(drop=True)
    extra = {"n_estimators": 3} if structure == "eskdb" else {}
    k = 2 if structure in ("kdb", "skdb", "eskdb") else None  # k applies to the kDB family
    kw = dict(structure=structure, k=k, method="mestimate", discretize=discretize, random_state=0, **extra)
    a = bs.BNClassifier(**kw).fit(X, y, sample_weight=w)
    b = bs.BNClassifier(**kw).fit(rep.drop(columns="Class"), rep["Class"])
    assert [d.modelstring() for d in a.dags_] == [d.modelstring() for d in b.dags_]
    assert all(na.max_abs_diff(nb) == 0.0 for na, nb in zip(a.estimators_, b.estimators_))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_classifier_sample_weight_in_chunks_and_errors(tmp_path):
    votes = bs.load_dataset("housevotes84").dropna().reset_index(drop=True)
    X, y = votes.drop(columns="Class"), votes["Class"]
    w = np.random.default_rng(6).random(len(votes))
    path = tmp_path / "v.csv"
    votes.assign(w=w).to_csv(path, index=False)
    c = bs.BNClassifier(structure="tan", method="bayes").fit(str(path), "Class", sample_weight="w")
    d = bs.BNClassifier(structure="tan", method="bayes").fit(X, y, sample_weight=w)
    assert list(c.feature_names_in_) == list(X.columns)
    np.testing.assert_allclose(c.predict_proba(X), d.predict_proba(X), atol=1e-12)
    with pytest.raises(DataError, match="one weight per row"):
        bs.BNClassifier().fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(DataError, match="only zero"):
        bs.BNClassifier().fit(X, y, sample_weight=np.zeros(len(X)))
    with pytest.raises(DataError, match="name of the column"):
        bs.BNClassifier().fit(str(path), "Class", sample_weight=w)
