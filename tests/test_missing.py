"""Missing values at query time: the observed cells' probability and the class posterior
with the missing cells summed out exactly (checked against brute-force enumeration)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs

ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


@pytest.fixture(scope="module")
def net():
    return bs.fit(ASIA, bs.load_dataset("asia"), method="bayes", iss=2)


def _holes(df: pd.DataFrame, rate: float, seed: int, keep: tuple[str, ...] = ()) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = df.copy()
    for c in out.columns:
        if c in keep:
            continue
        out.loc[rng.random(len(out)) < rate, c] = np.nan
    return out


def _completions(net, row: pd.Series):
    """Every completion of a row's missing cells, as a data frame."""
    miss = [c for c in net.nodes if pd.isna(row[c])]
    combos = list(itertools.product(*[net.levels(c) for c in miss]))
    full = pd.DataFrame([row.to_dict()] * len(combos))
    for j, c in enumerate(miss):
        full[c] = [combo[j] for combo in combos]
    return full.astype({c: pd.CategoricalDtype(net.levels(c)) for c in net.nodes})


def test_logpdf_sums_out_missing_cells(net):
    data = _holes(bs.load_dataset("asia").iloc[:60], 0.3, 1)
    lp = net.logpdf(data)
    assert np.isfinite(lp).all()
    for i in range(len(data)):
        full = _completions(net, data.iloc[i])
        brute = np.log(np.exp(net.logpdf(full)).sum())
        assert lp[i] == pytest.approx(brute, rel=1e-10, abs=1e-12)
    complete = bs.load_dataset("asia").iloc[:60]
    np.testing.assert_array_equal(net.logpdf(complete), net.logpdf(complete))  # no hole: the plain sum
    all_missing = data.iloc[:3].copy()
    all_missing[:] = np.nan
    np.testing.assert_allclose(net.logpdf(all_missing), 0.0, atol=1e-12)  # nothing observed: probability 1


def test_predict_proba_with_missing_features_is_the_exact_posterior(net):
    data = _holes(bs.load_dataset("asia").iloc[:60], 0.35, 2)
    post = net.predict_proba(data, "L").to_numpy()
    for i in range(len(data)):
        row = data.iloc[i].copy()
        row["L"] = np.nan
        full = _completions(net, row)
        w = np.exp(net.logpdf(full))
        p = np.array([w[(full["L"] == lev).to_numpy()].sum() for lev in net.levels("L")])
        np.testing.assert_allclose(post[i], p / p.sum(), rtol=1e-9, atol=1e-12)
    # rows without missing values keep the fast path, the same numbers
    clean = bs.load_dataset("asia").iloc[:20]
    np.testing.assert_allclose(net.predict_proba(clean, "L").sum(axis=1), 1.0)


def test_missing_is_a_level_where_the_fit_made_it_one():
    df = _holes(bs.load_dataset("asia").iloc[:800], 0.1, 3)
    lev = bs.fit(ASIA, df, method="bayes", na="level")
    lp = lev.logpdf(df.iloc[:20])
    assert np.isfinite(lp).all()
    # the same rows under a network that sums missing cells out differ
    avail = bs.fit(ASIA, df, method="bayes", na="available")
    assert np.abs(avail.logpdf(df.iloc[:20]) - lp).max() > 1e-3


def test_classifier_with_missing_features_marginalises():
    votes = bs.load_dataset("housevotes84")
    X, y = votes.drop(columns="Class"), votes["Class"]
    clf = bs.BNClassifier(structure="nb", method="bayes", na="pairwise").fit(X, y)
    p = clf.predict_proba(X.iloc[:40])
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    # naive Bayes: summing a feature out equals dropping its factor
    net = clf.network_
    for i in range(40):
        row = X.iloc[i]
        logp = np.log(net.cpt("Class"))
        for f in X.columns:
            if pd.notna(row[f]):
                logp = logp + np.log(net.cpt(f)[net.levels(f).index(row[f])])
        q = np.exp(logp - logp.max())
        np.testing.assert_allclose(p[i], q / q.sum(), rtol=1e-9)


def test_too_many_connected_missing_cells_are_refused_by_name(monkeypatch):
    from pybncsmooth.model.query import inference

    net = bs.fit(ASIA, bs.load_dataset("asia"), method="bayes")
    row = bs.load_dataset("asia").iloc[:1].copy()
    for c in ("T", "L", "E", "B"):
        row.loc[row.index[0], c] = np.nan
    monkeypatch.setattr(inference, "MAX_FACTOR_CELLS", 4)
    with pytest.raises(bs.errors.DataError, match="too many connected missing values"):
        net.logpdf(row)
