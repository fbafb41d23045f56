"""ESKDB-HDP's fit made faster gives what it gave before: member networks and the
back-off's concentration recorded from the code before the speed-ups (issue 60)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.counting.context_tree import ContextTree
from pybncsmooth.estimators.hmd._backoff_kernels import backoff_loglik
from pybncsmooth.estimators.hmd.backoff import (
    GRID,
    _dm_loglik,
    ancestors_at,
    backoff_concentration,
    learn_backoff,
    expected_tables,
    leaf_sums,
)


def _fixture() -> tuple[pd.DataFrame, pd.Series]:
    """300 rows, six 3-level features each following the one before and the class (so
    the selection keeps kDB parents and the HDP trees have inner levels), 3 classes."""
    rng = np.random.default_rng(60)
    n = 300
    y = rng.integers(0, 3, n)
    cols = {}
    prev = y
    for i in range(6):
        v = np.where(rng.random(n) < 0.7, (prev + y * (i % 2 + 1)) % 3, rng.integers(0, 3, n))
        cols[f"x{i}"] = pd.Categorical.from_codes(v, categories=["a", "b", "c"])
        prev = v
    return pd.DataFrame(cols), pd.Series(pd.Categorical.from_codes(y, categories=["p", "q", "r"]), name="cls")


# recorded from the code before the speed-ups (main at d4ca8ef), same settings
ROWS = [66, 204, 241, 297]
MEMBER0 = [
    [0.003610390375582076, 0.9878127657581989, 0.008576843866218911],
    [0.947829705179818, 0.0012462079463266284, 0.0509240868738554],
    [0.1862092433076828, 0.03145254416412455, 0.7823382125281927],
    [0.7306807780288207, 0.13306073498028037, 0.13625848699089904],
]
MEMBER7 = [
    [0.10708562311899229, 0.889816536740074, 0.0030978401409336638],
    [0.12662923633559167, 0.0006331977759179025, 0.8727375658884905],
    [0.19676017132985194, 0.0068606365952226175, 0.7963791920749255],
    [0.5632936423229251, 0.431881941525998, 0.004824416151076958],
]
FINGERPRINT = -93141.28021615368  # sum over members, rows, classes k of (k + 1) log p
PARENTS0 = [[], ["cls", "x3", "x1"], ["cls", "x3"], ["cls", "x0", "x3", "x1"], ["cls"], ["cls", "x3", "x2", "x1"],
            ["cls", "x4", "x3", "x2"]]
PARENTS7 = [[], ["cls", "x1"], ["cls"], ["cls", "x5", "x1"], ["cls", "x5", "x1"], ["cls", "x3", "x5"],
            ["cls", "x1", "x0"]]
CPT_X0_M0 = [0.9935369704534133, 0.8300187622576243, 0.33241609272559547, 0.9603557532180149, 0.21418410948446934,
             0.6416248527089529, 0.9492155701656277, 0.8476593241245691, 0.4384371674386475, 0.11594765043184291,
             0.02761116992281983, 0.6544598419813945]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_eskdb_hdp_members_are_those_recorded_before_the_speed_ups(n_jobs):
    X, y = _fixture()
    clf = bs.BNClassifier(structure="eskdb", method="hdp", k=5, n_estimators=10, iterations=100, skdb_loss="rmse",
                          random_state=0, n_jobs=n_jobs).fit(X, y)
    assert [clf.estimators_[0].parents(n) for n in clf.estimators_[0].nodes] == PARENTS0
    assert [clf.estimators_[7].parents(n) for n in clf.estimators_[7].nodes] == PARENTS7
    mem = np.stack([net.predict_proba(X, "cls").to_numpy() for net in clf.estimators_])
    # the same arithmetic in the same order: equal up to the last bits a compiler may move
    np.testing.assert_allclose(mem[0, ROWS], MEMBER0, rtol=1e-12, atol=0)
    np.testing.assert_allclose(mem[7, ROWS], MEMBER7, rtol=1e-12, atol=0)
    np.testing.assert_allclose((np.log(mem) * np.arange(1, 4)).sum(), FINGERPRINT, rtol=1e-12)
    np.testing.assert_allclose(clf.estimators_[0].cpt("x0").ravel()[:12], CPT_X0_M0, rtol=1e-12, atol=0)


# member 0's node x0 (parents cls, x3, x1): the back-off concentration's posterior at
# levels 1 and 2, recorded from the NumPy loop the kernel replaced
BACKOFF_X0 = [
    ([-2.302585092994045, -1.7269388197455333, -1.1512925464970216, -0.5756462732485108, 8.881784197001252e-16,
      0.5756462732485126, 1.1512925464970234, 1.726938819745536],
     [1.0933429096928708e-10, 7.972894427802311e-07, 0.001123785210495879, 0.14557989089639042, 0.7706864257613689,
      0.08248893009776656, 0.00012016808629550265, 2.5489055660865315e-09]),
    ([-2.8782313662425567, -2.302585092994045, -1.7269388197455333, -1.1512925464970216, -0.5756462732485108,
      8.881784197001252e-16, 0.5756462732485126, 1.1512925464970234],
     [7.63767945550427e-12, 9.075287202532878e-08, 0.00025185665315729757, 0.0734022875586624, 0.8145613140136914,
      0.11171889372448371, 6.555721279645745e-05, 7.669902686029971e-11]),
]


def test_backoff_concentration_is_the_one_recorded_before_the_kernel():
    X, y = _fixture()
    clf = bs.BNClassifier(structure="eskdb", method="hdp", k=5, n_estimators=10, iterations=100, skdb_loss="rmse",
                          random_state=0, n_jobs=1).fit(X, y)
    post = clf.estimators_[0].cpd("x0").estimate.posterior
    assert len(post.backoff) == 2
    for (lt, w), (lt0, w0) in zip(post.backoff, BACKOFF_X0):
        np.testing.assert_array_equal(lt, lt0)  # the same grid points kept
        # digamma and lgamma compiled (a few ulps from SciPy's) and summed in another order
        np.testing.assert_allclose(w, w0, rtol=1e-9, atol=1e-20)


def _numpy_loglik(tree: ContextTree, level: int, leaf_means: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """The NumPy loop :func:`backoff_loglik` replaced (one ``_dm_loglik`` a grid point)."""
    leaves = tree.levels[-1].counts.astype(np.float64)
    anc = ancestors_at(tree, level)
    keep = leaves.sum(axis=1) >= 2
    rows = leaves.sum(axis=1)
    ll = np.zeros(len(GRID))
    for k, g in enumerate(GRID):
        t = float(np.exp(g))
        own = expected_tables(t, rows)[:, None] * leaf_means
        rest = leaf_sums(tree, level, own)[anc[keep]] - own[keep] + prior
        ll[k] = _dm_loglik(leaves[keep], rest / rest.sum(axis=1, keepdims=True), t)
    return ll


@pytest.mark.parametrize("level", [1, 2])
def test_backoff_kernel_is_the_numpy_likelihood(level):
    rng = np.random.default_rng(5)
    n = 400
    a = rng.integers(0, 3, n)
    b = rng.integers(0, 4, n)
    c = rng.integers(0, 2, n)
    x = np.where(rng.random(n) < 0.6, (a + b) % 3, rng.integers(0, 3, n))
    df = pd.DataFrame({k: pd.Categorical(v) for k, v in dict(x=x, a=a, b=b, c=c).items()})
    net = bs.fit("[a][b][c][x|a:b:c]", df, method="mle")
    tree = net.cpd("x").tree
    r = tree.child_card
    leaves = tree.levels[-1].counts.astype(np.float64)
    own = (leaves + 1.0 / r) / (leaves.sum(axis=1, keepdims=True) + 1.0)
    prior = np.array([0.2, 0.5, 0.3])
    want = _numpy_loglik(tree, level, own, prior)
    got = backoff_loglik(leaves, leaves.sum(axis=1), ancestors_at(tree, level), len(tree.levels[level].value), own,
                         prior, GRID)
    # both sum lgamma terms of the size of t log t whose differences are the result: at
    # large t they lose the same digits to cancellation (rounding of 1e-16 per term)
    t = np.exp(GRID)
    n_terms = 2 * (leaves.sum(axis=1) >= 2).sum() * (r + 1)
    scale = n_terms * (t * np.abs(np.log(t)) + leaves.sum() * np.log(leaves.sum() + t) + 1.0)
    assert np.all(np.abs(got - want) <= 1e-12 * np.abs(want) + 1e-15 * scale), np.max(np.abs(got - want) / scale)
    lt, w = backoff_concentration(tree, level, own, prior)
    assert abs(w.sum() - 1.0) < 1e-12 and len(lt) == len(w) > 1


def test_learn_backoff_in_one_call_is_every_level_s_backoff_concentration():
    rng = np.random.default_rng(8)
    n = 600
    cols = {k: rng.integers(0, c, n) for k, c in dict(a=3, b=4, c=2).items()}
    x = np.where(rng.random(n) < 0.7, (cols["a"] + cols["b"] * cols["c"]) % 3, rng.integers(0, 3, n))
    df = pd.DataFrame({k: pd.Categorical(v) for k, v in dict(x=x, **cols).items()})
    tree = bs.fit("[a][b][c][x|a:b:c]", df, method="mle").cpd("x").tree
    r = tree.child_card
    leaves = tree.levels[-1].counts.astype(np.float64)
    own = (leaves + 1.0 / r) / (leaves.sum(axis=1, keepdims=True) + 1.0)
    got = learn_backoff(tree)
    assert len(got) == tree.depth - 1 == 2
    for level, (lt, w) in enumerate(got, start=1):
        lt1, w1 = backoff_concentration(tree, level, own, np.full(r, 1.0 / r))
        np.testing.assert_array_equal(lt, lt1)
        np.testing.assert_array_equal(w, w1)


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_fused_leave_one_out_pass_is_the_two_kernels(kind):
    from pybncsmooth.classifiers import skdb as skdb_mod
    from pybncsmooth.classifiers._loo import loo_normalize_losses

    X, y = _fixture()
    df = X.assign(cls=y)
    dag, info = bs.learn_skdb(df, "cls", 3, return_info=True)
    full, trees = info.extra["full_kdb"], info.extra["trees"]
    codes = {c: df[c].cat.codes.to_numpy().astype(np.int64) for c in df.columns}
    yy = codes["cls"]
    K, k, m = 3, 3, 1.0
    wt = np.random.default_rng(1).integers(1, 3, len(df)).astype(np.float64)  # weighted rows too
    d = np.minimum(wt, 1.0)
    ny = np.bincount(yy, weights=wt, minlength=K)
    prior = skdb_mod._loo_prior(ny, yy, d, float(ny.sum()), m)
    post_a = np.repeat(prior[None], k + 1, axis=0)
    post_b = post_a.copy()
    order = info.order
    la, lb = np.zeros((k + 1, len(order))), np.zeros((k + 1, len(order)))
    for li, f in enumerate(order):
        pa = full.parents(f)
        P = np.zeros((len(df), len(pa)), dtype=np.int64)
        for j, p in enumerate(pa[1:], start=1):
            P[:, j] = codes[p]
        skdb_mod._attribute_step(trees[f], codes[f], P, yy, K, m, d, post_a)
        loo_normalize_losses(post_a, yy, kind, wt, la[:, li])
        skdb_mod._attribute_step_losses(trees[f], codes[f], P, yy, K, m, d, post_b, kind, wt, lb[:, li])
    np.testing.assert_array_equal(post_b, post_a)
    np.testing.assert_array_equal(lb, la)
    assert la[:, -1].min() > 0


def test_hdp_back_off_left_for_later_is_the_eager_one():
    """A member's back-off (its unseen configurations' sd and its posterior's back-off
    concentrations) is computed when first read, not by the fit: the ensemble's
    probabilities read neither, and the values read later are those the fit computed
    before (the formulas of HDP._combine, written out here)."""
    from pybncsmooth.estimators import HDP
    from pybncsmooth.estimators.base import DeferredEstimate
    from pybncsmooth.estimators.hdp.posterior import hdp_unseen_sd, unseen_weights
    from pybncsmooth.estimators.hmd.backoff import centre_sd

    X, y = _fixture()
    clf = bs.BNClassifier(structure="eskdb", method="hdp", k=5, n_estimators=10, iterations=100, skdb_loss="rmse",
                          random_state=0, n_jobs=1).fit(X, y)
    clf.predict_proba(X)
    net = clf.estimators_[0]
    est = net.cpd("x0").estimate
    assert isinstance(est, DeferredEstimate)
    sampled = [net.cpd(n).estimate for n in net.nodes if n != "cls"]  # the class: a lone root, in closed form
    for e in sampled:  # nothing read yet by the fit and the probabilities
        assert isinstance(e, DeferredEstimate)
        assert "unseen_sd" not in e.__dict__ and "posterior" not in e.__dict__
    tree = net.cpd("x0").tree
    assert tree.depth == 3
    h = HDP(iterations=100)
    every, burn = h.concentration_every, h.effective_burn_in
    first = int(np.count_nonzero((np.arange(burn) + every // 2) % every == 0))
    kept = est.info["concentrations"][first:]
    want = hdp_unseen_sd(est.probs, est.sd, unseen_weights(kept, h.tying, (h.prior_shape, h.prior_rate,
                                                                              h.max_concentration)))
    want = (want[0], *centre_sd(tree, est.probs[-1], np.full(3, 1.0 / 3), learn_backoff(tree)))
    got = est.unseen_sd
    assert len(got) == len(want) == 3
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    post = est.posterior
    assert post.kind == "hdp" and post.n_states > 0
    for (lt, w), (lt0, w0) in zip(post.backoff, learn_backoff(tree)):
        np.testing.assert_array_equal(lt, lt0)
        np.testing.assert_array_equal(w, w0)
    assert est.posterior is post  # computed once, then kept
    # a pickle carries the values computed; a node never read is computed on the way
    import pickle

    other = net.cpd("x1").estimate
    back = pickle.loads(pickle.dumps(other))
    assert "unseen_sd" in back.__dict__ and "posterior" in back.__dict__
    for a, b in zip(back.unseen_sd, other.unseen_sd):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("level", [0, 1, 2, 3, 4])
def test_one_sub_model_s_posterior_is_the_two_kernels_at_its_level(level):
    """Tempering's leave-one-out posteriors at the selected k* alone (one compiled pass
    an attribute) are those of the selection's kernels at that k*, bit for bit (level 4:
    deeper than the trees of k = 3, the full path)."""
    from pybncsmooth.classifiers import skdb as skdb_mod
    from pybncsmooth.classifiers._loo import loo_level_posterior, loo_normalize_losses

    X, y = _fixture()
    df = X.assign(cls=y)
    dag, info = bs.learn_skdb(df, "cls", 3, return_info=True)
    full, trees = info.extra["full_kdb"], info.extra["trees"]
    codes = {c: df[c].cat.codes.to_numpy().astype(np.int64) for c in df.columns}
    codes["x2"] = np.where(np.arange(len(df)) % 17 == 0, -1, codes["x2"])  # unknown codes stop a path
    yy = codes["cls"]
    K, m = 3, 1.0
    kmax = max(level, 3)
    wt = np.random.default_rng(2).integers(1, 3, len(df)).astype(np.float64)
    d = np.minimum(wt, 1.0)
    ny = np.bincount(yy, weights=wt, minlength=K)
    prior = skdb_mod._loo_prior(ny, yy, d, float(ny.sum()), m)
    post_all = np.repeat(prior[None], kmax + 1, axis=0)
    post_one = prior.copy()
    scratch = np.zeros(kmax + 1)
    for f in info.order:
        pa = full.parents(f)
        P = np.zeros((len(df), len(pa)), dtype=np.int64)
        for j, p in enumerate(pa[1:], start=1):
            P[:, j] = codes[p]
        skdb_mod._attribute_step(trees[f], codes[f], P, yy, K, m, d, post_all)
        loo_normalize_losses(post_all, yy, 0, np.ones(len(df)), scratch)
        loo_level_posterior(codes[f], P, yy, K, *skdb_mod._attribute_tables(trees[f], m), m, d, level, post_one)
    np.testing.assert_array_equal(post_one, post_all[level])
    assert not np.array_equal(post_all[0], post_all[min(level, 3) or 1])


def test_tempered_ensemble_losses_are_the_numpy_formula():
    """The compiled sum of the tempered ensemble's log losses is the NumPy formula it
    replaced (exponentials and sums in another order: a few ulps), and picks the same
    exponent."""
    from pybncsmooth.classifiers._tempering import EXPONENTS, best_exponent, ensemble_losses

    rng = np.random.default_rng(11)
    M, n, K = 4, 300, 5
    logits = rng.normal(size=(M, n, K)) * 4.0
    posts = [np.exp(lg) / np.exp(lg).sum(axis=1, keepdims=True) for lg in logits]
    posts[0][:5] = np.eye(K)[0]  # exact zeros: floored
    y = rng.integers(0, K, n)
    w = rng.uniform(0.5, 2.0, n)
    logs = np.log(np.maximum(np.stack(posts), 1e-300))
    want = np.zeros(len(EXPONENTS))
    for g, b in enumerate(EXPONENTS):
        lp = b * logs
        lp -= lp.max(axis=2, keepdims=True)
        q = np.exp(lp)
        q /= q.sum(axis=2, keepdims=True)
        want[g] = np.sum(w * -np.log(np.maximum(q[:, np.arange(n), y].mean(axis=0), 1e-300)))
    got = ensemble_losses(posts, y, w)
    np.testing.assert_allclose(EXPONENTS, 0.05 * np.arange(1, 21), rtol=1e-15)  # the kernel's grid: g steps of 0.05
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert best_exponent(got) == best_exponent(want) < 1.0


def test_tempering_posteriors_from_the_full_trees_are_those_of_the_selected_trees():
    """Tempering reads the full kDB's trees down to k* (one flattening a tree two
    members share): the posteriors of the member's own, truncated trees, bit for bit."""
    from pybncsmooth.classifiers import skdb as skdb_mod
    from pybncsmooth.classifiers._loo import loo_level_posterior
    from pybncsmooth.classifiers._tempering import loo_posteriors
    from pybncsmooth.classifiers.builders import member_trees

    X, y = _fixture()
    df = X.assign(cls=y)
    dag, info = bs.learn_skdb(df, "cls", 3, return_info=True)
    sel = info.extra["selection"]
    assert 0 < sel.k < 3  # the selected trees are cut above the full ones
    codes = {c: df[c].cat.codes.to_numpy().astype(np.int64) for c in df.columns}
    yy = codes["cls"]
    d = np.ones(len(df))
    memo: dict = {}
    got = loo_posteriors(codes, yy, "cls", dag, info, 1.0, d, memo)
    assert len(memo) == sel.n_attributes
    trees = member_trees(dag, info)
    want = skdb_mod._loo_prior(np.bincount(yy, minlength=3).astype(float), yy, d, float(len(df)), 1.0)
    for f in sel.order[: sel.n_attributes]:
        pa = dag.parents(f)
        P = np.zeros((len(df), len(pa)), dtype=np.int64)
        for j, p in enumerate(pa[1:], start=1):
            P[:, j] = codes[p]
        loo_level_posterior(codes[f], P, yy, 3, *skdb_mod._attribute_tables(trees[f], 1.0), 1.0, d, sel.k, want)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(loo_posteriors(codes, yy, "cls", dag, info, 1.0, d, memo), got)  # from the memo



@pytest.mark.parametrize("limit", [1 << 22, 40, 3])
def test_compiled_dense_node_maps_are_the_numpy_ones(monkeypatch, limit):
    """The leave-one-out tables' dense maps made in one compiled pass are those of the
    NumPy loop, levels past the size limit left to the binary search alike."""
    from pybncsmooth.classifiers import skdb as skdb_mod

    X, y = _fixture()
    df = X.assign(cls=y)
    _, info = bs.learn_skdb(df, "cls", 4, return_info=True)
    monkeypatch.setattr(skdb_mod, "_DENSE_MAP_LIMIT", limit)
    seen = set()
    for tree in info.extra["trees"].values():
        got = skdb_mod._attribute_tables(tree, 1.0)
        dense, offs = skdb_mod._dense_node_maps(tree)
        np.testing.assert_array_equal(got[4], dense)
        np.testing.assert_array_equal(got[5], offs)
        seen.add(int((offs[1:] < 0).sum()))
        if (offs[1:] < 0).any():  # the keys then searched
            np.testing.assert_array_equal(got[2], np.concatenate(tree.keys))
    assert len(seen) > 1 or limit == 1 << 22
