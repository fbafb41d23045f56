"""BNClassifier and scikit-learn: clone, params, pipelines, grid search, CV; the
formula front end builds the same model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline

import pybncsmooth as bs
from pybncsmooth.errors import UnseenLevelError


@pytest.fixture(scope="module")
def votes():
    hv = bs.load_dataset("housevotes84")
    return hv.drop(columns="Class"), hv["Class"]


@pytest.fixture(scope="module")
def numeric():
    rng = np.random.default_rng(4)
    n = 600
    y = rng.integers(0, 3, n)
    X = pd.DataFrame(
        {
            "a": rng.normal(y, 0.7),
            "b": rng.normal(-y, 1.0),
            "c": rng.uniform(0, 1, n),
            "d": rng.choice(["p", "q"], n),
        }
    )
    return X, pd.Series(np.array(["lo", "mid", "hi"])[y], name="level")


def test_get_set_params_and_clone():
    clf = bs.BNClassifier(structure="kdb", k=2, method="mestimate", m=3)
    params = clf.get_params()
    assert params["m"] == 3 and params["structure"] == "kdb" and params["k"] == 2
    c = clone(clf)
    assert c.get_params() == params and c is not clf
    c.set_params(m=5, structure="nb", iss=2)
    assert c.m == 5 and c.structure == "nb" and c.get_params()["iss"] == 2
    with pytest.raises(ValueError, match="invalid parameter 'bogus'"):
        c.set_params(bogus=1)
    assert "m=3" in repr(clf)


@pytest.mark.parametrize("structure", ["nb", "tan", "kdb", "skdb"])
def test_fit_predict_proba_order_of_classes(votes, structure):
    X, y = votes
    k = {"k": 2} if structure in ("kdb", "skdb") else {}  # k applies to kDB and selective kDB only
    clf = bs.BNClassifier(structure=structure, method="bayes", **k).fit(X, y)
    assert list(clf.classes_) == ["democrat", "republican"]
    p = clf.predict_proba(X)
    assert p.shape == (len(X), 2) and np.allclose(p.sum(axis=1), 1)
    # predict_proba columns follow classes_, identical to the network's posterior
    net_p = clf.network_.predict_proba(X, clf.target_)
    np.testing.assert_allclose(p, net_p[clf.classes_].to_numpy())
    assert (clf.predict(X) == clf.classes_[p.argmax(axis=1)]).all()
    assert clf.score(X, y) > 0.85
    assert clf.n_features_in_ == 16


def test_cross_val_score_and_grid_search(votes):
    X, y = votes
    scores = cross_val_score(bs.BNClassifier(structure="tan", method="mestimate"), X, y, cv=5)
    assert scores.shape == (5,) and scores.mean() > 0.9
    grid = GridSearchCV(
        bs.BNClassifier(method="mestimate"),
        {"structure": ["nb", "tan"], "m": [0.1, 1.0, 10.0]},
        cv=3,
        scoring="neg_log_loss",
    ).fit(X, y)
    assert grid.best_params_["structure"] in ("nb", "tan")
    assert grid.best_estimator_.network_.estimator.m == grid.best_params_["m"]


def test_pipeline_with_discretizer(numeric):
    X, y = numeric
    pipe = Pipeline([("disc", bs.MDLDiscretizer()), ("clf", bs.BNClassifier(structure="tan", method="bayes"))])
    pipe.fit(X, y)
    p = pipe.predict_proba(X)
    assert p.shape == (600, 3)
    assert list(pipe.classes_) == ["hi", "lo", "mid"]
    acc = cross_val_score(pipe, X, y, cv=3).mean()
    assert acc > 0.6  # the classes are separated by a and b (chance is 1/3)
    # the same through the classifier's own discretize= parameter
    own = bs.BNClassifier(structure="tan", method="bayes", discretize="mdl").fit(X, y)
    np.testing.assert_allclose(own.predict_proba(X), p, atol=1e-12)


def test_formula_front_end_builds_the_same_model(votes, numeric):
    X, y = votes
    df = X.assign(Class=y)
    for structure, k in [("nb", {}), ("tan", {}), ("kdb", {"k": 2}), ("skdb", {"k": 3})]:
        clf = bs.BNClassifier(structure=structure, method="mestimate", m=2, **k).fit(X, y)
        net = bs.fit("Class ~ .", df, structure=structure, method="mestimate", m=2, na="level", **k)
        assert net.nodes == clf.dag_.nodes
        assert all(net.parents(n) == clf.dag_.parents(n) for n in net.nodes)  # same branching orders
        np.testing.assert_allclose(net.predict_proba(df, "Class").to_numpy(), clf.predict_proba(X), atol=1e-12)
    Xn, yn = numeric
    dfn = Xn.assign(level=yn)
    net = bs.fit("level ~ .", dfn, structure="tan", discretize="mdl", method="bayes")
    clf = bs.BNClassifier(structure="tan", method="bayes", discretize="mdl").fit(Xn, yn)
    # the network keeps its discretiser: it is queried with raw numbers
    np.testing.assert_allclose(net.predict_proba(dfn, "level").to_numpy(), clf.predict_proba(Xn), atol=1e-12)


def test_classifier_bad_input(votes):
    X, y = votes
    with pytest.raises(bs.errors.DataError, match="rows"):
        bs.BNClassifier().fit(X, y[:10])
    with pytest.raises(bs.errors.SingleLevelError):
        bs.BNClassifier().fit(X, pd.Series(["a"] * len(X)))
    with pytest.raises(bs.errors.HyperparameterError, match="structure"):
        bs.BNClassifier(structure="forest").fit(X, y)
    with pytest.raises(bs.errors.HyperparameterError, match="larger than the number of features"):
        bs.BNClassifier(structure="kdb", k=40).fit(X, y)
    with pytest.raises(bs.errors.NonCategoricalError):
        bs.BNClassifier().fit(pd.DataFrame({"a": np.linspace(0, 1, 20)}), np.repeat([0, 1], 10))
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        bs.BNClassifier().predict(X)
    clf = bs.BNClassifier(structure="nb").fit(X, y)
    bad = X.iloc[:3].astype(object).copy()
    bad.iloc[0, 0] = "maybe"
    with pytest.raises(UnseenLevelError, match="'V1'"):
        clf.predict_proba(bad)
    p = clf.set_params(on_unseen="backoff").predict_proba(bad)
    assert np.isfinite(p).all()


def test_single_level_features_are_left_out():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(["x", "y"], 100), "const": ["k"] * 100})
    y = pd.Series(rng.choice(["u", "v"], 100))
    clf = bs.BNClassifier(structure="tan").fit(X, y)
    assert clf.ignored_features_ == ["const"]
    assert "const" not in clf.network_.nodes
    assert clf.predict_proba(X).shape == (100, 2)


def test_k_is_clipped_when_single_level_features_are_left_out():
    # k = 2 is valid for the three given features; with "c1" and "c2" constant only
    # "a" remains, and kDB-2 on it is the naive Bayes model (k clipped, not refused).
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(["x", "y"], 100), "c1": ["k"] * 100, "c2": ["j"] * 100})
    y = pd.Series(rng.choice(["u", "v"], 100))
    for structure in ("kdb", "skdb"):
        clf = bs.BNClassifier(structure=structure, k=2).fit(X, y)
        assert clf.ignored_features_ == ["c1", "c2"]
        assert clf.network_.parents("a") == [clf.target_]
        nb = bs.BNClassifier(structure="nb").fit(X, y)
        np.testing.assert_allclose(clf.predict_proba(X), nb.predict_proba(X), atol=1e-12)
    with pytest.raises(bs.errors.HyperparameterError, match="larger than the number of features"):
        bs.BNClassifier(structure="kdb", k=4).fit(X, y)


def test_arrays_and_unnamed_y():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, (200, 4))
    y = (X[:, 0] + rng.integers(0, 2, 200)) % 2
    clf = bs.BNClassifier(structure="kdb", k=1).fit(X, y)
    assert list(clf.classes_) == [0, 1]
    assert clf.predict(X).shape == (200,)


# ----------------------------------------------------------------------------- scikit-learn's own checks


@pytest.mark.parametrize("structure", ["nb", "tan", "kdb", "skdb", "eskdb"])
@pytest.mark.parametrize("discretize", ["equal_frequency", "equal_width", "mdl"])
def test_sklearn_check_estimator_passes(structure, discretize):
    """scikit-learn's check_estimator (its 54 checks: numeric arrays, pickling, sparse and
    empty input refused with its messages, sample-order invariance, n_features_in_, ...)."""
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checks' tiny random samples trip our data warnings
        extra = {"n_estimators": 2, "random_state": 0} if structure == "eskdb" else {}
        if structure in ("kdb", "skdb", "eskdb"):
            extra["k"] = 2
        clf = bs.BNClassifier(structure=structure, discretize=discretize, **extra)
        results = check_estimator(clf, on_fail=None)
    failed = [f"{r['check_name']}: {r['exception']}" for r in results if r["status"] == "failed"]
    assert len(results) >= 50 and not failed, failed


def test_numeric_arrays_without_a_discretiser_keep_a_clear_error():
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = np.array([0, 1] * 10)
    with pytest.raises(bs.errors.NonCategoricalError, match="'x0'"):
        bs.BNClassifier(structure="nb").fit(X, y)
    with pytest.raises(TypeError, match="[Ss]parse"):
        import scipy.sparse

        bs.BNClassifier(structure="nb", discretize="mdl").fit(scipy.sparse.csr_matrix(X), y)
