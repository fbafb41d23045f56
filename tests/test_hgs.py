"""HGS and M-branch (Zhang 2020: Ch. 5, eqs. 45-49; Sec. 2.3.2, eqs. 17-18): the
leave-one-out objective against brute force, its gradient against finite differences,
the compiled optimiser against the thesis's gradient descent, exact small cases, edge cases, and the
two estimators wherever an estimator works."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.counting import count_tree
from pybncsmooth.errors import StatisticUnavailableError
from pybncsmooth.estimators import HGS, MBranch
from pybncsmooth.estimators.hgs.estimator import HGSProblem


def _tree(seed: int = 0, n: int = 60, cards=(3, 2, 3), r: int = 3):
    rng = np.random.default_rng(seed)
    cols = [rng.integers(0, c, n) for c in cards]
    x = (cols[0] + rng.integers(0, 2, n)) % r
    return count_tree("X", [f"P{i}" for i in range(len(cards))], x, cols, r, list(cards)), x, cols


# ----------------------------------------------------------------------------- HGS objective


@pytest.mark.parametrize("loss", ["log", "squared"])
def test_loo_objective_equals_brute_force(loss):
    """Eq. (46)-(47): leaving each row out of the counts (leaf and ancestors) and applying
    eq. (45) with the ancestors' frequencies gives the closed form, row by row."""
    cards, r = [3, 2], 3
    tree, x, cols = _tree(1, 25, cards, r)
    prob = HGSProblem(tree, "node", loss)
    rng = np.random.default_rng(5)
    w = rng.uniform(0.2, 3.0, prob.size)
    value, _ = prob.value_and_grad(w)
    a = prob.expand(w)
    total = 0.0
    for i in range(len(x)):
        keep = np.arange(len(x)) != i
        # the left-out row's leaf and its ancestors' indices in the full tree
        node = 0
        num, den = 0.0, 0.0
        u = prob.prior / r
        for j in range(len(cards)):
            full_lev = tree.levels[j + 1]
            node = int(np.flatnonzero((full_lev.parent == node) & (full_lev.value == cols[j][i]))[0])
        leaf = node
        # ancestors: walk up from the leaf in the full tree; their LOO counts from the reduced data
        anc = []
        k = leaf
        for j in range(len(cards), 0, -1):
            k = int(tree.levels[j].parent[k])
            anc.append((j - 1, k))
        for depth, idx in anc:
            mask = np.ones(len(x) - 1, dtype=bool)
            for jj in range(depth):
                mask &= cols[jj][keep] == cols[jj][i]
            n_p = np.bincount(x[keep][mask], minlength=r)
            if n_p.sum() + prob.prior > 0:
                num += a[depth][idx] * (n_p[x[i]] + u) / (n_p.sum() + prob.prior)
                den += a[depth][idx]
        leaf_mask = np.all([c[keep] == c[i] for c in cols], axis=0)
        n_l = np.bincount(x[keep][leaf_mask], minlength=r)
        theta = (n_l[x[i]] + u + num) / (n_l.sum() + prob.prior + den)
        total += -math.log(theta) if loss == "log" else (1 - theta) ** 2
    assert value == pytest.approx(total / len(x), rel=1e-12)


@pytest.mark.parametrize("tying", ["node", "level"])
@pytest.mark.parametrize("loss", ["log", "squared"])
def test_gradient_matches_finite_differences(tying, loss):
    tree, _, _ = _tree(2, 80, (3, 2, 3), 3)
    prob = HGSProblem(tree, tying, loss)
    w = np.random.default_rng(3).uniform(0.3, 4.0, prob.size)
    _, g = prob.value_and_grad(w)
    h = 1e-6
    fd = np.empty_like(w)
    for i in range(len(w)):
        e = np.zeros_like(w)
        e[i] = h
        fd[i] = (prob.value_and_grad(w + e)[0] - prob.value_and_grad(w - e)[0]) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-9)


def _thesis_descent(prob: HGSProblem, rate: float, eps: float, max_steps: int = 200000) -> np.ndarray:
    """Algorithm 17: fixed-step gradient descent from alpha = 1 until the cost improves by
    less than eps (weights kept positive)."""
    w = np.ones(prob.size)
    cost, g = prob.value_and_grad(w)
    for _ in range(max_steps):
        w = np.maximum(w - rate * g, 1e-12)
        new, g = prob.value_and_grad(w)
        if cost - new < eps:
            break
        cost = new
    return w


def _interior_tree():
    """Two parents that both matter a little: the optimum weights are finite (one of them
    at 0, a boundary both optimisers reach), unlike data where a parent is irrelevant
    (weight -> infinity, where fixed-step descent crawls)."""
    rng = np.random.default_rng(0)
    n = 150
    p0, p1 = rng.integers(0, 2, n), rng.integers(0, 3, n)
    base = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]])
    probs = base[p0] * np.array([1.0, 0.8, 1.3])[p1][:, None] ** np.array([0, 1, 2])[None, :]
    probs /= probs.sum(axis=1, keepdims=True)
    x = np.array([rng.choice(3, p=pr) for pr in probs])
    return count_tree("X", ["P0", "P1"], x, [p0, p1], 3, [2, 3])


@pytest.mark.parametrize("tying", ["node", "level"])
def test_optimiser_reaches_the_thesis_gradient_descent_optimum(tying):
    tree = _interior_tree()
    w, prob, report = HGS(tying=tying).fit_weights(tree)
    assert report["converged"] and report["iterations"] < 100
    w_gd = _thesis_descent(prob, rate=1000.0, eps=1e-15)
    f_ours, f_gd = prob.value_and_grad(w)[0], prob.value_and_grad(w_gd)[0]
    assert f_ours == pytest.approx(f_gd, abs=1e-9)
    np.testing.assert_allclose(w, w_gd, rtol=2e-4, atol=1e-6)
    assert (w > 1.0).all() and (w < 100.0).all()  # an interior optimum


def test_level_weights_by_joint_newton_match_coordinate_descent():
    """tying="level" optimises its few weights jointly by damped Newton; on trees of a
    kDB-3 over real data it ends at the coordinate-descent loss or below."""
    from pybncsmooth.estimators.hgs._kernels import hgs_minimize

    votes = bs.load_dataset("housevotes84")
    net = bs.BNClassifier(structure="kdb", k=3, method="mestimate").fit(votes, "Class").network_
    for node in net.nodes[1:]:
        w, prob, report = HGS(tying="level").fit_weights(net.tree(node))
        assert report["converged"] and report["iterations"] < 100
        d, L = prob.depth, len(prob.rows)
        theta = np.ascontiguousarray(np.stack(prob.theta_p))
        keep = np.ascontiguousarray(np.stack([k[:, 0] for k in prob.keep_p]))
        A = prob.leaf_num0 + (keep[:, :, None] * theta).sum(axis=0)
        D = prob.leaf_den0[:, 0] + keep.sum(axis=0)
        u = np.zeros(d)
        widx = np.ascontiguousarray(np.stack([prob.weight_index(j) for j in range(d)]))
        _, cd_loss = hgs_minimize(
            np.ascontiguousarray(prob.rows), np.ascontiguousarray(prob.leaf_num0), prob.leaf_den0[:, 0].copy(),
            A, D, u, widx, np.arange(d), np.zeros(d, dtype=np.int64), np.full(d, L, dtype=np.int64),
            theta, keep, 1.0 / prob.N, False, 1e-12, 5000,
        )  # fmt: skip
        assert report["loo_loss"] <= cd_loss + 1e-6, node
        assert report["loo_loss"] == pytest.approx(prob.value_and_grad(w)[0], rel=1e-12)


def test_estimates_follow_eq_45_exactly():
    """A two-level tree with given weights, by hand."""
    # P with two values; leaf 0: X counts (3, 1), leaf 1: (0, 2)
    x = np.array([0, 0, 0, 1, 1, 1])
    p = np.array([0, 0, 0, 0, 1, 1])
    tree = count_tree("X", ["P"], x, [p], 2, [2])
    prob = HGSProblem(tree, prior=2.0)
    w = np.array([3.0])  # alpha_root
    root, leaves = prob.estimates(w)[0], prob.estimates(w)[1]
    # root: (n + prior / 2) / (6 + prior) with n = (3, 3)
    np.testing.assert_allclose(root[0], [(3 + 1) / 8, (3 + 1) / 8])
    # leaf 0: (n_l + prior / 2 + alpha_root * root) / (4 + prior + alpha_root)
    np.testing.assert_allclose(leaves[0], [(3 + 1 + 1.5) / 9, (1 + 1 + 1.5) / 9])
    np.testing.assert_allclose(leaves[1], [(0 + 1 + 1.5) / 7, (2 + 1 + 1.5) / 7])
    # prior = 0: eq. (45) as the thesis writes it (ancestors' frequencies; 0 where unseen)
    thesis = HGSProblem(tree, prior=0.0).estimates(w)
    np.testing.assert_allclose(thesis[0][0], [0.5, 0.5])
    np.testing.assert_allclose(thesis[1][1], [(0 + 1.5) / 5, (2 + 1.5) / 5])
    lone = count_tree("X", ["P"], np.array([0, 0]), [np.array([0, 1])], 2, [2])
    assert HGSProblem(lone, prior=0.0).estimates(np.array([1e-9]))[1][0, 1] < 1e-9


def test_edge_cases_single_rows_one_child_and_unseen_configurations():
    # a single row in all: nothing to learn, uniform-smoothed frequencies
    one = count_tree("X", ["P"], np.array([1]), [np.array([0])], 3, [2])
    e = HGS().estimate(one)
    assert np.isfinite(e.probs[1]).all() and e.probs[1][0].argmax() == 1 and (e.probs[1] > 0).all()
    # leaves of one row each, a node with one child, a class seen once only
    x = np.array([0, 1, 2, 0, 1, 0])
    p1 = np.array([0, 0, 0, 1, 1, 2])
    p2 = np.array([0, 1, 2, 0, 0, 1])  # P1 = 1 has one child (P2 = 0)
    t = count_tree("X", ["P1", "P2"], x, [p1, p2], 4, [3, 3])  # level 3 of X never seen
    est = HGS().estimate(t)
    for p in est.probs:
        assert np.isfinite(p).all() and (p > 0).all()
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
    # a configuration absent from the data backs off to its deepest ancestor
    net = bs.fit(
        ["X ~ P1 + P2"],
        pd.DataFrame({"X": x.astype(str), "P1": p1.astype(str), "P2": p2.astype(str)}),
        method="hgs",
    )
    cpt = net.cpt("X")  # axes (X, P1, P2)
    np.testing.assert_allclose(cpt[:, 2, 0], net.cpd("X").estimate.probs[1][2])  # P1=2, P2=0 unseen


def test_tying_by_level_has_one_weight_per_depth():
    tree, _, _ = _tree(6, 200, (3, 3, 2), 3)
    e = HGS().estimate(tree)  # the default: one weight per depth
    assert e.info["alpha_levels"].shape == (3,) and "alpha" not in e.info
    assert HGS().get_params()["tying"] == "level"
    e2 = HGS(tying="node").estimate(tree)
    assert e2.info["alpha"].shape == (1 + 3 + 9,)  # the internal nodes: root, 3, 3 x 3
    # per-node weights fit the training rows' LOO at least as well
    assert e2.info["loo_loss"] <= e.info["loo_loss"] + 1e-12


# ----------------------------------------------------------------------------- M-branch


def test_mbranch_follows_eqs_17_and_18():
    x = np.array([0, 0, 0, 1, 1, 1, 0, 1, 1])
    p = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
    tree = count_tree("X", ["P"], x, [p], 2, [2])
    est = MBranch(M=4.0)
    m_root = 4.0 * (1 + (1 - 1 / 2) * math.sqrt(9))  # height 2
    m_leaf = 4.0  # height 1: Delta = 0
    assert est.weights(tree) == pytest.approx([m_root, m_leaf])
    e = est.estimate(tree)
    root = (np.array([4, 5]) + m_root * 0.5) / (9 + m_root)
    np.testing.assert_allclose(e.probs[0][0], root)
    np.testing.assert_allclose(e.probs[1][0], (np.array([3, 1]) + m_leaf * root) / (4 + m_leaf))
    np.testing.assert_allclose(e.probs[1][1], (np.array([1, 4]) + m_leaf * root) / (5 + m_leaf))
    # M = 0: the frequencies
    np.testing.assert_allclose(MBranch(M=0).estimate(tree).probs[1], [[0.75, 0.25], [0.2, 0.8]])


# ----------------------------------------------------------------------------- everywhere


@pytest.mark.parametrize("method", ["hgs", "mbranch"])
def test_both_work_wherever_an_estimator_works(method, asia, tmp_path):
    ms = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
    net = bs.fit(ms, asia, method=method)
    for node in net.nodes:
        np.testing.assert_allclose(net.cpt(node).sum(axis=0), 1.0)
    # chunked = in memory
    parts = bs.fit(ms, [asia.iloc[:1700], asia.iloc[1700:]], method=method)
    assert net.max_abs_diff(parts) < 1e-12
    # a domain as the first split
    df = asia.assign(site=np.where(np.arange(len(asia)) % 3 == 0, "a", "b"))
    multi = bs.fit(ms, df, method=method, domain="site")
    assert np.isfinite(multi.for_domain("a").logpdf(asia.iloc[:50])).all()
    # no posterior: its bootstrap over rows does not cover the truth, so a single-domain
    # fit refuses an sd naming the calibrated estimators, and a multi-domain fit says it
    # has none
    with pytest.raises(StatisticUnavailableError, match="bootstrap over rows.*calibrated.*'mestimate'"):
        net.cpt("D", stat="sd")
    with pytest.raises(StatisticUnavailableError, match="multi-domain"):
        multi.cpt("D", stat="sd")
    # classifiers of every structure
    votes = bs.load_dataset("housevotes84")
    for kw in (dict(structure="nb"), dict(structure="tan"), dict(structure="kdb", k=2), dict(structure="skdb", k=2)):
        clf = bs.BNClassifier(method=method, **kw).fit(votes, "Class")
        assert clf.score(votes.drop(columns="Class"), votes["Class"]) > 0.85
    ens = bs.BNClassifier(structure="eskdb", method=method, k=2, n_estimators=3, random_state=0)
    assert ens.fit(votes, "Class").predict_proba(votes.drop(columns="Class")).shape == (len(votes), 2)
    # the command line and the R bridge's table list it from its declarations
    from pybncsmooth.frontends.cli import main
    from pybncsmooth.interop.r_bridge import method_table

    csv = tmp_path / "asia.csv"
    asia.to_csv(csv, index=False)
    assert main(["fit", str(csv), "-s", ms, "-m", method, "-o", str(tmp_path / "n.pbn")]) == 0
    assert method in method_table()["method"]


def test_hgs_is_competitive_on_held_out_rows(asia):
    """Held-out log-likelihood per row on asia (its true DAG), 300 training rows, ten
    splits: HGS within 0.01 nats of the best of m-estimates and BDeu (a smoothing with
    learned weights must not be worse than a fixed one by more than noise), M-branch
    finite."""
    ms = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
    rng = np.random.default_rng(0)
    scores = {"hgs": [], "mestimate": [], "bayes": [], "mbranch": []}
    for _ in range(10):
        idx = rng.permutation(len(asia))
        tr, te = asia.iloc[idx[:300]], asia.iloc[idx[300:2300]]
        for m in scores:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scores[m].append(bs.fit(ms, tr, method=m).loglik(te, on_unseen="backoff") / len(te))
    mean = {m: float(np.mean(v)) for m, v in scores.items()}
    assert mean["hgs"] > max(mean["mestimate"], mean["bayes"]) - 0.01, mean
    assert np.isfinite(mean["mbranch"])
