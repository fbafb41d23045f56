"""Discretisers (fitted on training data only) and the evaluation protocol."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import pybncsmooth as bs
from pybncsmooth.data.discretize import mdl_cut_points
from pybncsmooth.classifiers.metrics import auc, log_loss, rmse, zero_one_loss
from pybncsmooth.errors import DataError, HyperparameterError

# ----------------------------------------------------------------------------- discretisers


def test_mdl_finds_the_class_boundaries_and_nothing_in_noise():
    v = np.arange(1, 21, dtype=float)
    y = np.array(["a"] * 10 + ["b"] * 10)
    np.testing.assert_allclose(mdl_cut_points(v, y), [10.5])
    y3 = np.array(["a"] * 7 + ["b"] * 7 + ["c"] * 6)
    np.testing.assert_allclose(mdl_cut_points(v, y3), [7.5, 14.5])
    rng = np.random.default_rng(0)
    noise = mdl_cut_points(rng.normal(size=300), rng.choice(["a", "b"], 300))
    assert noise.size == 0
    # a boundary too weak for the MDL criterion on few rows is rejected
    assert mdl_cut_points(np.array([1.0, 2.0, 3.0, 4.0]), np.array(["a", "a", "b", "a"])).size == 0


def test_mdl_criterion_value_exact():
    # 8 rows, one cut separating 4 'a' from 4 'b': Gain = 1 bit; the threshold is
    # (log2(7) + log2(3^2 - 2) - (2*1 - 0 - 0)) / 8
    v = np.arange(8, dtype=float)
    y = np.array(list("aaaabbbb"))
    threshold = (math.log2(7) + math.log2(7) - 2) / 8
    assert 1.0 > threshold
    np.testing.assert_allclose(mdl_cut_points(v, y), [3.5])


def test_equal_width_and_frequency():
    X = pd.DataFrame({"x": np.arange(10, dtype=float), "s": list("abababcdcd")})
    ew = bs.EqualWidthDiscretizer(n_bins=3).fit(X)
    np.testing.assert_allclose(ew.cut_points_["x"], [3.0, 6.0])
    out = ew.transform(X)
    assert list(out["x"].cat.categories) == ["(-inf,3]", "(3,6]", "(6,inf)"]
    assert out["x"].cat.codes.tolist() == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert out["s"].tolist() == X["s"].tolist()  # non-numeric columns pass through
    ef = bs.EqualFrequencyDiscretizer(n_bins=2).fit(X)
    np.testing.assert_allclose(ef.cut_points_["x"], [4.5])
    # repeated values: quantiles merge
    ef2 = bs.EqualFrequencyDiscretizer(n_bins=4).fit(pd.DataFrame({"x": [1.0] * 8 + [2.0, 3.0]}))
    np.testing.assert_allclose(ef2.cut_points_["x"], [1.0])


def test_discretizer_fitted_on_training_only_and_keeps_missing():
    train = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    test = pd.DataFrame({"x": [-5.0, 1.5, np.nan, 100.0]})
    d = bs.EqualWidthDiscretizer(n_bins=3).fit(train)
    out = d.transform(test)
    assert out["x"].cat.codes.tolist() == [0, 1, -1, 2]
    assert test["x"].isna().sum() == 1  # the input is not modified
    with pytest.raises(DataError, match="supervised"):
        bs.MDLDiscretizer().fit(train)
    with pytest.raises(HyperparameterError, match="n_bins"):
        bs.EqualWidthDiscretizer(n_bins=0).fit(train)


def test_discretizer_round_trip_in_native_file(tmp_path):
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 300)
    df = pd.DataFrame({"a": rng.normal(y * 2.0, 1.0), "b": rng.choice(["u", "v"], 300), "y": y.astype(str)})
    net = bs.fit("y ~ .", df, structure="nb", discretize="mdl", method="bayes")
    net.write(tmp_path / "m.pbn")
    back = bs.read_network(tmp_path / "m.pbn")
    np.testing.assert_allclose(back.predict_proba(df, "y").to_numpy(), net.predict_proba(df, "y").to_numpy())


# ----------------------------------------------------------------------------- metrics


def test_metrics_on_a_small_case():
    proba = np.array([[0.8, 0.2], [0.4, 0.6], [0.5, 0.5], [0.1, 0.9]])
    y = np.array([0, 0, 1, 1])
    assert zero_one_loss(proba, y) == 0.5  # row 1 predicted 1; row 2 ties -> class 0
    # (0.04 + 0.04) + (0.36 + 0.36) + (0.25 + 0.25) + (0.01 + 0.01) = 1.32
    assert rmse(proba, y) == pytest.approx(math.sqrt(1.32 / 4))
    assert log_loss(proba, y) == pytest.approx(-(math.log(0.8) + math.log(0.4) + math.log(0.5) + math.log(0.9)) / 4)
    assert auc(proba, y) == pytest.approx(roc_auc_score(y, proba[:, 1]))
    # three classes: prevalence-weighted one-vs-rest
    rng = np.random.default_rng(0)
    p3 = rng.dirichlet([1, 1, 1], 50)
    y3 = rng.integers(0, 3, 50)
    w = np.bincount(y3, minlength=3) / 50
    ovr = [roc_auc_score(y3 == k, p3[:, k]) for k in range(3)]
    assert auc(p3, y3) == pytest.approx(float(np.dot(w, ovr)))


def test_sign_test_and_win_draw_loss():
    assert bs.sign_test(10, 0) == pytest.approx(2 * 0.5**10)
    assert bs.sign_test(5, 5) == pytest.approx(1.0)
    assert bs.sign_test(0, 0) == 1.0
    res = pd.DataFrame(
        {
            "dataset": ["d1", "d1", "d2", "d2", "d3", "d3", "d4", "d4"],
            "model": ["a", "b"] * 4,
            "repeat": 0,
            "fold": 0,
            "rmse": [0.1, 0.2, 0.3, 0.3, 0.5, 0.4, 0.1, 0.3],
            "auc": [0.9, 0.8, 0.7, 0.7, 0.6, 0.7, 0.9, 0.8],
        }
    )
    w = bs.win_draw_loss(res, "a", "b", "rmse")
    assert (w["wins"], w["draws"], w["losses"]) == (2, 1, 1)
    assert w["p_value"] == pytest.approx(1.0)
    # one-tailed (Zhang 2020): P(W >= 2) for W ~ Binomial(3, 1/2) = 4 / 8
    assert w["p_one_sided"] == pytest.approx(0.5)
    assert bs.sign_test(8, 2, "greater") == pytest.approx(56 / 1024)
    # Wilcoxon signed-rank over the data sets' differences (the draw dropped)
    from scipy.stats import wilcoxon

    assert w["p_wilcoxon"] == pytest.approx(wilcoxon([0.1 - 0.2, 0.5 - 0.4, 0.1 - 0.3]).pvalue)
    with pytest.raises(HyperparameterError, match="alternative"):
        bs.sign_test(3, 1, "less")
    w_auc = bs.win_draw_loss(res, "a", "b", "auc")  # higher is better
    assert (w_auc["wins"], w_auc["draws"], w_auc["losses"]) == (2, 1, 1)
    with pytest.raises(HyperparameterError, match="'c'"):
        bs.win_draw_loss(res, "a", "c")


def test_evaluate_is_tidy_reproducible_and_uses_common_folds():
    hv = bs.load_dataset("housevotes84")
    models = {"nb": bs.BNClassifier(structure="nb"), "tan": bs.BNClassifier(structure="tan", method="mestimate")}
    r1 = bs.evaluate(models, hv, "Class", cv="5x2", random_state=3, progress=False)
    r2 = bs.evaluate(models, hv, "Class", cv="5x2", random_state=3, progress=False)
    assert len(r1) == 20 and set(r1["model"]) == {"nb", "tan"}
    assert list(r1.columns[:4]) == ["dataset", "model", "repeat", "fold"]
    pd.testing.assert_frame_equal(
        r1.drop(columns=["fit_seconds", "predict_seconds"]), r2.drop(columns=["fit_seconds", "predict_seconds"])
    )
    assert r1[["zero_one", "rmse", "log_loss", "auc"]].notna().all().all()
    # the folds are the folds of scikit-learn's RepeatedStratifiedKFold with that seed
    from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score

    cvs = cross_val_score(
        bs.BNClassifier(structure="nb"),
        hv.drop(columns="Class"),
        hv["Class"],
        cv=RepeatedStratifiedKFold(n_splits=2, n_repeats=5, random_state=3),
    )
    np.testing.assert_allclose(1 - r1[r1.model == "nb"]["zero_one"].to_numpy(), cvs)


def test_evaluate_bad_input():
    hv = bs.load_dataset("housevotes84")
    models = {"nb": bs.BNClassifier(structure="nb")}
    with pytest.raises(DataError, match="too few"):
        bs.evaluate(models, hv.iloc[:3], "Class", cv="5x2")
    with pytest.raises(DataError, match="fewer than the 10 folds"):
        bs.evaluate(
            models,
            pd.concat([hv.iloc[:40], hv[hv.Class == "republican"].iloc[:0]]).assign(
                Class=["democrat"] * 35 + ["republican"] * 5
            ),
            "Class",
            cv="10",
        )
    with pytest.raises(HyperparameterError, match="5x2"):
        bs.evaluate(models, hv, "Class", cv="five")
    with pytest.raises(HyperparameterError, match="metric"):
        bs.evaluate(models, hv, "Class", metrics=["accuracy"])
    with pytest.raises(bs.errors.MissingColumnError, match="'Party' \\(class\\)"):
        bs.evaluate(models, hv, "Party")
    with pytest.raises(bs.errors.SingleLevelError):
        bs.evaluate(models, hv.assign(Class="x"), "Class")
