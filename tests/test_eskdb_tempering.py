"""ESKDB's tempering: the members' posteriors raised to one exponent chosen by the
ensemble's leave-one-out log loss, then averaged (pybncsmooth.classifiers._tempering)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedKFold

import pybncsmooth as bs
from pybncsmooth.classifiers._tempering import (
    EXPONENTS, best_exponent, ensemble_losses, loo_posteriors, tempered,
)
from pybncsmooth.classifiers.metrics import log_loss, rmse
from pybncsmooth.data.encode import encode
from pybncsmooth.options import NAPolicy
from conftest import DATA


def _split(name: str, fold: int):
    df = pd.read_csv(DATA / "uci" / f"{name}_disc5.csv.gz", dtype=str).astype("category")
    target = df.columns[0]
    y, X = df[target], df.drop(columns=target)
    tr, te = list(StratifiedKFold(n_splits=2, shuffle=True, random_state=1).split(X, y.cat.codes))[fold]
    return X.iloc[tr], y.iloc[tr], X.iloc[te], y.iloc[te].cat.codes.to_numpy()


@pytest.fixture(scope="module")
def breast():
    return _split("breastcancer", 0)


def test_tempered_rows_are_powers_renormalised():
    p = np.array([[0.9, 0.1], [0.5, 0.5], [0.2, 0.8], [1.0, 0.0]])
    np.testing.assert_allclose(tempered(p, 0.5), [[0.75, 0.25], [0.5, 0.5], [1 / 3, 2 / 3], [1.0, 0.0]], rtol=1e-14)
    assert tempered(p, 1.0) is p  # the exponent 1 is the member itself
    q = tempered(np.array([[0.7, 0.2, 0.1]]), 0.25)
    np.testing.assert_allclose(q[0] / q[0, 2], (np.array([0.7, 0.2, 0.1]) / 0.1) ** 0.25, rtol=1e-14)
    np.testing.assert_allclose(q.sum(), 1.0, rtol=1e-15)
    assert EXPONENTS[0] == 0.05 and EXPONENTS[-1] == 1.0 and len(EXPONENTS) == 20


def test_ensemble_losses_and_the_largest_of_tied_exponents():
    # two members, two rows: the loss at each exponent by hand
    posts = [np.array([[0.99, 0.01], [0.3, 0.7]]), np.array([[0.6, 0.4], [0.9, 0.1]])]
    y = np.array([0, 1])
    w = np.array([1.0, 2.0])
    out = ensemble_losses(posts, y, w)
    for g, b in enumerate(EXPONENTS):
        mean = (tempered(posts[0], b) + tempered(posts[1], b)) / 2
        want = -(np.log(mean[0, 0]) + 2 * np.log(mean[1, 1]))
        assert out[g] == pytest.approx(want, rel=1e-12)
    assert best_exponent(out) == EXPONENTS[np.argmin(out)]
    assert best_exponent(np.ones(len(EXPONENTS))) == 1.0  # a tie: the largest (no tempering)
    flat = np.r_[np.full(5, 2.0), np.full(15, 1.0)]
    assert best_exponent(flat) == 1.0 and best_exponent(flat[::-1]) == 0.75


def test_leave_one_out_posteriors_are_those_the_selection_scored(breast):
    """The posteriors the exponent is chosen on are the selected sub-model's: their
    RMSE over the training rows is the selection's recorded leave-one-out RMSE at its
    k* and attribute prefix (the same incremental leave-one-out, to rounding)."""
    Xtr, ytr, _, _ = breast
    df = Xtr.assign(Class=ytr.to_numpy())
    dag, info = bs.learn_skdb(df, "Class", 2, return_info=True)
    sel = info.extra["selection"]
    enc = encode(df, info.extra["schema"], variables=["Class", *sel.order], **NAPolicy("level").encode_args())
    y = enc["Class"].astype(np.int64)
    post = loo_posteriors(enc, y, "Class", dag, info, 1.0, np.ones(len(y)))
    assert post.shape == (len(df), 2)
    np.testing.assert_allclose(post.sum(axis=1), 1.0, rtol=1e-12)
    assert rmse(post, y) == pytest.approx(sel.loss[sel.k, sel.n_attributes - 1], rel=1e-10)
    # and the log loss of learn_skdb(loss="log_loss")'s table at the same sub-model
    _, info_ll = bs.learn_skdb(df, "Class", 2, loss="log_loss", return_info=True)
    want = info_ll.extra["selection"].loss[sel.k, sel.n_attributes - 1]
    assert -np.mean(np.log(post[np.arange(len(y)), y])) == pytest.approx(want, rel=1e-10)


def test_the_ensemble_is_the_mean_of_tempered_members_and_tempering_changes_nothing_else(breast):
    Xtr, ytr, Xte, _ = breast
    # the members' own posteriors, a missing cell read as its level (summed out by default:
    # tests/test_eskdb_missing.py); what this test checks is how they are combined
    kw = dict(structure="eskdb", method="mestimate", n_estimators=4, random_state=0, n_jobs=1, sum_out_missing=False)
    on = bs.BNClassifier(**kw).fit(Xtr, ytr)
    off = bs.BNClassifier(**kw, tempering=False).fit(Xtr, ytr)
    assert off.exponent_ == 1.0 and on.exponent_ in EXPONENTS and on.exponent_ < 1.0
    raw = [net.predict_proba(Xte, on.target_).to_numpy() for net in on.estimators_]
    for a, b, p in zip(on.estimators_, off.estimators_, raw):  # the same members
        np.testing.assert_array_equal(p, b.predict_proba(Xte, off.target_).to_numpy())
    np.testing.assert_allclose(off.predict_proba(Xte), np.mean(raw, axis=0), rtol=1e-12)
    np.testing.assert_allclose(on.predict_proba(Xte), np.mean([tempered(p, on.exponent_) for p in raw], axis=0),
                               rtol=1e-12)
    staged = list(on.staged_predict_proba(Xte))
    np.testing.assert_allclose(staged[-1], on.predict_proba(Xte), rtol=1e-12)
    np.testing.assert_allclose(staged[0], tempered(raw[0], on.exponent_), rtol=1e-12)
    # a single network is never tempered
    assert bs.BNClassifier(structure="nb").fit(Xtr, ytr).exponent_ == 1.0


def test_tempering_fixes_the_over_confident_ensemble_on_breast_cancer():
    """Breast cancer's members keep (nearly) all nine correlated cell measurements
    with few parents: the plain mean of their posteriors has log loss 0.21-0.30 on
    both halves of this split (seeds 0-2, m-estimate members), tempering 0.093-0.12
    (exponents 0.2-0.3), while RMSE moves by less than 0.01 and the errors not at all.
    Asserted with margins of about 0.04 on each side of the 0.16 between them."""
    for fold in (0, 1):
        Xtr, ytr, Xte, yte = _split("breastcancer", fold)
        for seed in (0, 1, 2):
            kw = dict(structure="eskdb", method="mestimate", random_state=seed, n_jobs=1)
            on = bs.BNClassifier(**kw).fit(Xtr, ytr)
            off = bs.BNClassifier(**kw, tempering=False).fit(Xtr, ytr)
            pon, poff = on.predict_proba(Xte), off.predict_proba(Xte)
            assert 0.15 <= on.exponent_ <= 0.4, (fold, seed, on.exponent_)
            assert log_loss(pon, yte) < 0.135 and log_loss(poff, yte) > 0.19, (fold, seed)
            assert abs(rmse(pon, yte) - rmse(poff, yte)) < 0.01
            assert np.mean(pon.argmax(1) != yte) <= np.mean(poff.argmax(1) != yte) + 0.005


def test_a_calibrated_ensemble_is_left_almost_as_it_is():
    """House votes' ensemble is not over-confident: the exponent found is 0.9-1 and the
    log loss moves by less than 0.001 (0.1040-0.1190 on this split, seeds 0-2)."""
    Xtr, ytr, Xte, yte = _split("housevotes84", 0)
    for seed in (0, 1):
        kw = dict(structure="eskdb", method="mestimate", random_state=seed, n_jobs=1)
        on = bs.BNClassifier(**kw).fit(Xtr, ytr)
        off = bs.BNClassifier(**kw, tempering=False).fit(Xtr, ytr)
        assert on.exponent_ >= 0.9
        assert abs(log_loss(on.predict_proba(Xte), yte) - log_loss(off.predict_proba(Xte), yte)) < 0.001


def test_members_with_their_own_cut_points_share_one_exponent():
    """discretize="mdl" on breast cancer's measurements as numbers (missing cells
    included): each member cuts them its own way; the exponent is chosen on the rows
    every member used, from their leave-one-out posteriors on their own codes, and
    applied to every member (seed 2: 0.5, log loss 0.098 against the plain mean's 0.139)."""
    df = pd.read_csv(DATA / "uci" / "breastcancer_disc5.csv.gz")
    target = df.columns[0]
    y, X = df[target], df.drop(columns=target).astype(float)
    assert X.isna().any().any()
    tr, te = list(StratifiedKFold(n_splits=2, shuffle=True, random_state=1).split(X, y))[0]
    yte = pd.Categorical(y.iloc[te]).codes
    kw = dict(structure="eskdb", method="mestimate", n_estimators=3, discretize="mdl", random_state=2, n_jobs=1)
    on = bs.BNClassifier(**kw).fit(X.iloc[tr], y.iloc[tr])
    off = bs.BNClassifier(**kw, tempering=False).fit(X.iloc[tr], y.iloc[tr])
    assert on.exponent_ in EXPONENTS and on.exponent_ < 1.0
    assert all(d is not None for d in on.member_discretizers_)
    Xte = X.iloc[te]
    raw = list(off._member_probas(off._prepare(Xte)))  # the same members, not tempered
    np.testing.assert_allclose(on.predict_proba(Xte), np.mean([tempered(p, on.exponent_) for p in raw], axis=0),
                               rtol=1e-12)
    assert log_loss(on.predict_proba(Xte), yte) < log_loss(off.predict_proba(Xte), yte) - 0.02
