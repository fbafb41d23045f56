"""ESKDB's fit shortcuts give what the plain code gives: every feature's sampled kDB
parents drawn in one sort, the statistics' MI computed once, the trees' flat tables
made once for the selection's and the tempering's passes."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.options import Options
from pybncsmooth.classifiers import _tempering
from pybncsmooth.classifiers import skdb as skdb_mod
from pybncsmooth.structure import learning
from pybncsmooth.structure.learning import _kdb_parents, _sampled_kdb_parents, sample_order


@pytest.mark.parametrize("p,k,zeros", [(1, 2, 0.0), (2, 1, 0.0), (7, 3, 0.3), (40, 5, 0.0), (40, 5, 0.5),
                                       (25, 30, 0.2)])
def test_parents_sampled_in_one_sort_are_those_drawn_feature_by_feature(p, k, zeros):
    rng = np.random.default_rng(p * 100 + k)
    w = rng.random((p, p))
    w[rng.random((p, p)) < zeros] = 0.0  # zero CMI: sorted after every positive one, by a uniform key
    w[0, 0] = -1.0  # a negative score is clipped to zero (never read off the diagonal: kept for the clip)
    names = [f"f{i}" for i in range(p)]
    order = [names[i] for i in rng.permutation(p)]
    pos = {f: i for i, f in enumerate(names)}
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    want = [_kdb_parents(f, order[:i], k, w, pos, g1) for i, f in enumerate(order)]
    got = _sampled_kdb_parents(order, k, w, pos, g2)
    assert got == want
    assert g1.random() == g2.random()  # the stream left where the feature-by-feature draws leave it


def test_sample_order_keys_are_the_formula():
    rng = np.random.default_rng(4)
    w = np.array([0.5, 0.0, 2.0, 0.0, 1e-3, 0.7])
    u = np.random.default_rng(4).random((2, len(w)))
    with np.errstate(divide="ignore"):
        keys = np.where(w > 0, np.log(1.0 - u[0]) / np.where(w > 0, w, 1.0), -np.inf)
    want = np.lexsort((-u[1], -keys))
    np.testing.assert_array_equal(sample_order(w, rng), want)
    # the zero weights last, the positive ones by their keys
    assert set(want[-2:]) == {1, 3}


def _frame(n: int = 240) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(12)
    y = rng.integers(0, 3, n)
    cols = {}
    prev = y
    for i in range(5):
        v = np.where(rng.random(n) < 0.65, (prev + y) % 3, rng.integers(0, 3, n))
        cols[f"x{i}"] = pd.Categorical.from_codes(v, categories=["a", "b", "c"])
        prev = v
    return pd.DataFrame(cols), pd.Series(pd.Categorical.from_codes(y, categories=["p", "q", "r"]), name="cls")


def test_mi_is_computed_once_and_dropped_on_merge(monkeypatch):
    X, y = _frame()
    df = X.assign(cls=y)
    stats = learning.source_statistics(df, "cls", None, Options())
    calls = []
    real = __import__("pybncsmooth.structure.statistics", fromlist=["mi_from_counts"]).mi_from_counts
    monkeypatch.setattr("pybncsmooth.structure.statistics.mi_from_counts", lambda t: calls.append(1) or real(t))
    first = stats.mi()
    assert stats.mi(["x3", "x1"]) == {"x3": first["x3"], "x1": first["x1"]}
    assert len(calls) == 5
    assert first["x0"] == pytest.approx(real(stats.feature_counts[0]), rel=0, abs=0)
    more = learning.source_statistics(df.iloc[:40], "cls", None, Options())
    stats.merge(more)  # new counts: the MI again
    again = stats.mi()
    assert len(calls) == 10 and again["x0"] != first["x0"]
    assert again["x0"] == real(stats.feature_counts[0])


def test_tempering_reads_the_selection_s_tables(monkeypatch):
    """The tables are made once per tree for both passes (the memo the selection
    filled), and the ensemble is the one each pass's own memo gives."""
    X, y = _frame()
    made = []
    real = skdb_mod._attribute_tables
    monkeypatch.setattr(skdb_mod, "_attribute_tables", lambda tree, m: made.append(id(tree)) or real(tree, m))
    clf = bs.BNClassifier(structure="eskdb", method="mestimate", k=2, n_estimators=4, random_state=3,
                          n_jobs=1).fit(X, y)
    assert len(made) == len(set(made))  # no tree flattened twice
    shared = clf.predict_proba(X)
    # each pass with a memo of its own: the tables made again, the same ensemble
    monkeypatch.setattr(_tempering, "tempering_exponent",
                        lambda *a, tables=None, _f=_tempering.tempering_exponent: _f(*a, tables=None))
    import pybncsmooth.classifiers.eskdb as eskdb_mod

    monkeypatch.setattr(eskdb_mod, "tempering_exponent", _tempering.tempering_exponent)
    made.clear()
    own = bs.BNClassifier(structure="eskdb", method="mestimate", k=2, n_estimators=4, random_state=3,
                          n_jobs=1).fit(X, y)
    assert len(made) > len(set(made))
    assert own.exponent_ == clf.exponent_
    np.testing.assert_array_equal(own.predict_proba(X), shared)


def test_tempering_reads_the_selection_s_codes_of_a_frame(monkeypatch):
    """A data frame (one chunk) is encoded once with its schema (the statistics' pass,
    which learns the levels, is not counted here): the counting, selection and
    tempering passes read one encoding, and the ensemble is the one each pass encoding its own gives; two
    chunks (a list of frames) are each encoded per pass."""
    X, y = _frame()
    encoded = []
    encode_mod = sys.modules["pybncsmooth.data.encode"]  # the module (the package's name is the function)
    real = encode_mod.encode
    monkeypatch.setattr(encode_mod, "encode", lambda df, *a, **kw: encoded.append(len(df)) or real(df, *a, **kw))

    def fit(data):
        return bs.BNClassifier(structure="eskdb", method="mestimate", k=2, n_estimators=4, random_state=3,
                               n_jobs=1).fit(data, "cls")

    df = X.assign(cls=y)
    shared = fit(df)
    assert encoded == [len(df)]  # one for the three passes
    encoded.clear()
    two = fit([df.iloc[:100], df.iloc[100:]])
    assert encoded == [100, 140] * 3  # the last chunk held is not the first read again
    np.testing.assert_array_equal(two.predict_proba(X), shared.predict_proba(X))
    real_chunk = skdb_mod.encoded_chunk
    monkeypatch.setattr(_tempering, "encoded_chunk", lambda memo, *a: real_chunk(None, *a))
    monkeypatch.setattr(skdb_mod, "encoded_chunk", lambda memo, *a: real_chunk(None, *a))
    encoded.clear()
    own = fit(df)
    assert encoded == [len(df)] * 3  # each pass its own
    np.testing.assert_array_equal(own.predict_proba(X), shared.predict_proba(X))


def test_tempering_by_keys_is_the_node_by_node_tempering(monkeypatch):
    """The tempering's posteriors through the by-key kernel (rows on few paths) give the
    ensemble's exponent and probabilities of the node-by-node kernel."""
    X, y = _frame(n=600)
    used = []
    real = _tempering.loo_level_posterior_by_key
    monkeypatch.setattr(_tempering, "loo_level_posterior_by_key", lambda *a: used.append(1) or real(*a))

    def fit():
        return bs.BNClassifier(structure="eskdb", method="mestimate", k=2, n_estimators=4, random_state=5,
                               n_jobs=1).fit(X, y)

    keyed = fit()
    assert len(used) > 0
    monkeypatch.setattr(_tempering, "_level_keys", lambda tables, K, level: 10**9)
    used.clear()
    plain = fit()
    assert used == []
    assert keyed.exponent_ == plain.exponent_
    np.testing.assert_array_equal(keyed.predict_proba(X), plain.predict_proba(X))


def test_tempering_by_class_is_the_node_by_node_tempering(monkeypatch):
    """Six classes, the by-key kernel kept out: the tempering's posteriors through the
    by-class kernel give the exponent and probabilities of the node-by-node kernel."""
    rng = np.random.default_rng(21)
    n = 500
    y = rng.integers(0, 6, n)
    cols, prev = {}, y
    for i in range(5):
        v = np.where(rng.random(n) < 0.6, (prev + y) % 3, rng.integers(0, 3, n))
        cols[f"x{i}"] = pd.Categorical.from_codes(v, categories=["a", "b", "c"])
        prev = v
    X = pd.DataFrame(cols)
    yy = pd.Series(pd.Categorical.from_codes(y, categories=list("pqrstu")), name="cls")
    monkeypatch.setattr(_tempering, "_level_keys", lambda tables, K, level: 10**9)
    used = []
    real = _tempering.loo_level_posterior_by_class
    monkeypatch.setattr(_tempering, "loo_level_posterior_by_class", lambda *a: used.append(1) or real(*a))

    def fit():
        return bs.BNClassifier(structure="eskdb", method="mestimate", k=3, n_estimators=4, random_state=2,
                               n_jobs=1).fit(X, yy)

    by_class = fit()
    assert len(used) > 0
    monkeypatch.setattr(_tempering, "_BY_CLASS_MIN_CLASSES", 100)
    used.clear()
    plain = fit()
    assert used == []
    assert by_class.exponent_ == plain.exponent_
    np.testing.assert_array_equal(by_class.predict_proba(X), plain.predict_proba(X))
