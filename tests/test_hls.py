"""Hierarchical linear smoothing (Cooper et al. 2025): the exact ridge optima of the reference,
the authors' solver stopping short, gradients, a one-level tree as plain ridge
logistic regression, unobserved child values, domains and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.counting.context_tree import ContextTree
from pybncsmooth.errors import ConvergenceWarning, HyperparameterError
from pybncsmooth.estimators import HLS
from pybncsmooth.estimators.hls._kernels import hessp, objective_grad
from pybncsmooth.estimators.hls.estimator import flatten_tree
from pybncsmooth.model.cpd import TreeCPD
from conftest import DATA

HLSDATA = DATA / "hls"
SETS = [(2, 1000), (5, 1000), (2, 100000), (5, 100000)]


def reference_tree(card: int, n: int) -> tuple[ContextTree, np.ndarray]:
    counts = pd.read_csv(HLSDATA / f"counts_card{card}_n{n}.csv").to_numpy()
    cfg = np.array(list(itertools.product(range(card), repeat=4)))  # P1 slowest, as the files
    return ContextTree.from_leaves("X", ["P1", "P2", "P3", "P4"], card, [card] * 4, cfg, counts), cfg


def table(name: str) -> np.ndarray:
    return pd.read_csv(HLSDATA / name).to_numpy()


@pytest.mark.parametrize("card,n", SETS)
def test_reproduces_the_exact_ridge_optimum(card, n):
    tree, cfg = reference_tree(card, n)
    est = HLS().estimate(tree)
    assert est.info["converged"] and est.info["max_gradient"] <= 1e-9
    ours = TreeCPD(tree, est).probs(cfg)  # unobserved configurations back off to their ancestors
    opt = table(f"hls_ridge_optimum_card{card}_n{n}.csv")
    assert np.abs(ours - opt).max() < 1e-6  # the tolerance; measured <= 1e-11


@pytest.mark.parametrize("card,n", [(2, 1000), (5, 1000)])
def test_fit_from_data_equals_fit_from_the_reference_counts(card, n):
    df = pd.read_csv(DATA / "hdp" / "table3" / f"table3_card{card}_n{n}.csv")
    df = pd.DataFrame({c: pd.Categorical(df[c], categories=list(range(card))) for c in df.columns})
    net = bs.fit(["X ~ P1 + P2 + P3 + P4"] + [f"P{i} ~ 1" for i in range(1, 5)], df, method="hls")
    ours = np.moveaxis(net.cpt("X"), 0, -1).reshape(-1, card)
    assert np.abs(ours - table(f"hls_ridge_optimum_card{card}_n{n}.csv")).max() < 1e-6


def _least_penalty(probs: np.ndarray, card: int) -> float:
    """The smallest ridge penalty ||B||^2 / 2 of any coefficients on the authors' design
    (every prefix of the full product of parent values, root column dropped) that
    reproduce ``probs`` (rows in product order).  Symmetric softmax leaves a free constant
    per row; the binary form fixes the first value's predictor at 0."""
    cfg = np.array(list(itertools.product(range(card), repeat=4)))
    cols = []
    for depth in range(1, 5):
        code = np.ravel_multi_index(cfg[:, :depth].T, [card] * depth)
        cols.append(np.eye(card**depth)[code])
    U = np.concatenate(cols, axis=1)
    logp = np.log(probs)
    P = np.linalg.inv(U @ U.T)  # the minimum-norm b with U b = y has ||b||^2 = y^T P y
    if card == 2:
        y = logp[:, 1] - logp[:, 0]
        return 0.5 * float(y @ P @ y)
    k = logp.shape[1]
    c = -np.linalg.solve(k * P, P @ logp.sum(axis=1))  # the best row constants
    return 0.5 * sum(float((logp[:, j] + c) @ P @ (logp[:, j] + c)) for j in range(k))


@pytest.mark.parametrize("card,n", SETS)
def test_we_reach_a_lower_objective_than_the_authors_solver(card, n):
    tree, cfg = reference_tree(card, n)
    est = HLS().estimate(tree)
    counts = pd.read_csv(HLSDATA / f"counts_card{card}_n{n}.csv").to_numpy()
    theirs = table(f"hls_ridge_card{card}_n{n}.csv")
    # a lower bound of the authors' objective: their likelihood plus the least penalty of
    # any coefficients giving their tables
    lower_bound_theirs = -float((counts * np.log(theirs)).sum()) + _least_penalty(theirs, card)
    ours = est.info["objective"]
    assert ours < lower_bound_theirs
    # and their tables are within their solver's tolerance of the optimum (README: up to 1.9e-2)
    assert np.abs(TreeCPD(tree, est).probs(cfg) - theirs).max() < 2e-2


def test_gradient_and_hessian_against_finite_differences():
    tree, _ = reference_tree(5, 1000)
    parent, leaf0, counts, _, _ = flatten_tree(tree)
    rng = np.random.default_rng(0)
    n, K, r = len(parent), 5, 5
    B = rng.normal(scale=0.3, size=(n, K))
    B[0] = 0
    eta, G, p = np.empty((n, K)), np.empty((n, K)), np.empty((len(counts), r))
    f0 = objective_grad(B, parent, leaf0, counts, 1.7, eta, G, p)
    G0, p0 = G.copy(), p.copy()
    h = 1e-6
    for i, k in [(1, 0), (7, 3), (n - 1, 4), (40, 2)]:
        Bp, Bm = B.copy(), B.copy()
        Bp[i, k] += h
        Bm[i, k] -= h
        fp = objective_grad(Bp, parent, leaf0, counts, 1.7, eta, G, p)
        fm = objective_grad(Bm, parent, leaf0, counts, 1.7, eta, G, p)
        assert (fp - fm) / (2 * h) == pytest.approx(G0[i, k], rel=1e-6, abs=1e-6)
    V = rng.normal(size=(n, K))
    V[0] = 0
    Hv, dn = np.empty((n, K)), np.empty((n, K))
    hessp(V, parent, leaf0, counts, p0, 1.7, dn, Hv)
    Gp, Gm = np.empty((n, K)), np.empty((n, K))
    objective_grad(B + h * V, parent, leaf0, counts, 1.7, eta, Gp, p)
    objective_grad(B - h * V, parent, leaf0, counts, 1.7, eta, Gm, p)
    np.testing.assert_allclose((Gp - Gm)[1:] / (2 * h), Hv[1:], rtol=1e-5, atol=1e-5)
    assert np.isfinite(f0)


@pytest.mark.parametrize("r", [2, 4])
def test_one_level_tree_is_ridge_logistic_regression(r):
    """Against scikit-learn's LogisticRegression on the one-hot design of the parent
    (no intercept, C = 1/tau), weighted by the counts."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(r)
    q = 6
    counts = rng.integers(0, 30, size=(q, r))
    counts[2] = 0
    counts[2, 0] = 3
    tree = ContextTree.from_leaves("X", ["P"], r, [q], np.arange(q).reshape(-1, 1), counts)
    tau = 0.5
    est = HLS(tau=tau).estimate(tree)
    X, y, w = [], [], []
    for cfg in range(q):
        for x in range(r):
            if counts[cfg, x]:
                X.append(np.eye(q)[cfg])
                y.append(x)
                w.append(counts[cfg, x])
    lr = LogisticRegression(C=1 / tau, fit_intercept=False, tol=1e-12, max_iter=10000)
    lr.fit(np.array(X), np.array(y), sample_weight=np.array(w, dtype=float))
    theirs = lr.predict_proba(np.eye(q))
    np.testing.assert_allclose(est.probs[1], theirs, atol=1e-6)


def test_unobserved_child_values_get_a_proper_small_probability():
    # the reference's quirks: 3+ values of which two occur (it equalises them) and a binary
    # child with one value never seen (it raises); we keep every value in the fit
    tree = ContextTree.from_leaves("X", ["P"], 3, [2], np.array([[0], [1]]), np.array([[5, 0, 1], [2, 0, 6]]))
    p = HLS().estimate(tree).probs[1]
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.all(p[:, 1] > 0) and np.all(p[:, 1] < 0.15)
    assert p[0, 0] > p[0, 2] and p[1, 2] > p[1, 0]  # the data's order is kept
    binary = ContextTree.from_leaves("X", ["P"], 2, [2], np.array([[0], [1]]), np.array([[7, 0], [3, 0]]))
    pb = HLS().estimate(binary).probs[1]
    # below the uniform 0.5 the penalty pulls toward, and smaller with more rows (7 vs 3)
    assert np.all((pb[:, 1] > 0) & (pb[:, 1] < 0.5)) and np.allclose(pb.sum(axis=1), 1)
    assert pb[0, 1] < pb[1, 1]


def test_network_fit_classifier_domains_and_summary(asia):
    ms = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
    net = bs.fit(ms, asia, method="hls")
    s = net.node_summary()
    assert s["converged"].all()
    for node in net.nodes:
        np.testing.assert_allclose(net.cpt(node).sum(axis=0), 1.0, atol=1e-12)
    # a parentless node keeps its intercept: the ridge-shrunk marginal, close to the frequencies
    freq = asia["A"].value_counts(normalize=True)[net.levels("A")].to_numpy()
    assert np.abs(net.cpt("A") - freq).max() < 2e-3
    df = bs.load_dataset("housevotes84")
    clf = bs.BNClassifier(structure="kdb", k=2, method="hls", na="level").fit(df.drop(columns="Class"), df["Class"])
    assert clf.score(df.drop(columns="Class"), df["Class"]) > 0.9
    grouped = asia.assign(site=np.where(np.arange(len(asia)) % 3 == 0, "a", "b"))
    multi = bs.fit(ms, grouped, method="hls", domain="site")
    assert multi.domains == ["a", "b"]
    assert np.abs(multi.for_domain("a").cpt("D") - multi.for_domain("b").cpt("D")).max() < 0.1


def test_bad_input_and_non_convergence(asia):
    for bad in (0, -1, float("inf"), "x"):
        with pytest.raises(HyperparameterError, match="tau"):
            bs.fit("[A][S|A]", asia, method="hls", tau=bad)
    with pytest.raises(HyperparameterError, match="max_iter"):
        HLS(max_iter=0)
    with pytest.warns(ConvergenceWarning) as caught:
        net = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", asia, method="hls", max_iter=1)
    assert any("node 'D': stopped after 1 iterations" in str(w.message) for w in caught)
    assert not net.node_summary().loc["D", "converged"]


# ----------------------------------------------------------------------------- hls-bayes


def _is_posterior_mean(tree: ContextTree, var: float, draws: int, seed: int) -> np.ndarray:
    """Posterior mean of the leaves' P(second value) under beta ~ N(0, var), binary child,
    by importance sampling from the prior (exact up to Monte-Carlo error)."""
    parent, leaf0, counts, _, _ = flatten_tree(tree)
    n = len(parent)
    rng = np.random.default_rng(seed)
    B = rng.normal(scale=np.sqrt(var), size=(draws, n))
    B[:, 0] = 0
    eta = np.zeros((draws, n))
    for i in range(1, n):
        eta[:, i] = eta[:, parent[i]] + B[:, i]
    leaf_eta = eta[:, leaf0:]
    loglik = (counts[:, 1] * leaf_eta - counts.sum(1) * np.logaddexp(0, leaf_eta)).sum(axis=1)
    w = np.exp(loglik - loglik.max())
    p1 = 1 / (1 + np.exp(-leaf_eta))
    return (w[:, None] * p1).sum(axis=0) / w.sum()


def test_hls_bayes_sampler_matches_the_exact_posterior_mean():
    """Fixed prior variance, a binary child with two binary parents (six coefficients):
    the Gibbs sampler's posterior means against importance sampling (2e6 prior draws).
    Tolerance 0.01: the sampler's Monte-Carlo error with 20000 sweeps is about 0.002."""
    cfg = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    counts = np.array([[3, 1], [1, 4], [0, 2], [5, 0]])
    tree = ContextTree.from_leaves("X", ["P1", "P2"], 2, [2, 2], cfg, counts)
    exact = _is_posterior_mean(tree, 1.5, 2_000_000, 0)
    est = bs.estimators.HLSBayes(iterations=20000, burn_in=1000, variance=1.5, random_state=3).estimate(tree)
    np.testing.assert_allclose(est.probs[-1][:, 1], exact, atol=0.01)
    assert np.all(est.sd[-1] > 0.05)


def test_hls_bayes_is_reproducible_and_approaches_the_ridge_with_data():
    out = {}
    for card, n in [(2, 1000), (2, 100000)]:
        tree, cfg = reference_tree(card, n)
        ridge = TreeCPD(tree, HLS().estimate(tree)).probs(cfg)
        a = bs.estimators.HLSBayes(iterations=600, random_state=7).estimate(tree)
        b = bs.estimators.HLSBayes(iterations=600, random_state=7).estimate(tree)
        np.testing.assert_array_equal(a.probs[-1], b.probs[-1])
        out[n] = np.abs(TreeCPD(tree, a).probs(cfg) - ridge).mean()
    # measured 0.012 at 1000 rows and 0.0002 at 100000
    assert out[100000] < 0.002 < out[1000]


def test_hls_bayes_in_a_network_with_chains_and_sd(asia):
    ms = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
    net = bs.fit(ms, asia.iloc[:1000], method="hls-bayes", iterations=300, n_chains=2, random_state=0)
    s = net.node_summary()
    assert "rhat" in s and s["rhat"].notna().all()
    sd = net.cpt("D", stat="sd")
    assert np.isfinite(sd).all() and (sd > 0).all()
    with pytest.raises(HyperparameterError, match="burn_in"):
        bs.fit(ms, asia, method="hls-bayes", iterations=10, burn_in=10)
    with pytest.raises(HyperparameterError, match="variance"):
        bs.fit(ms, asia, method="hls-bayes", variance=-1)


def test_hls_bayes_two_level_draws_stay_finite_and_precise_for_extreme_predictors():
    """A binary child's draws and sds go through the logistic of the predictor; the form
    1 / (1 + exp(-eta)) overflowed (a RuntimeWarning in long runs) for eta below -709 and
    lost every digit of the smaller probability as 1 - p for eta above 37."""
    from pybncsmooth.estimators.hls.posterior import softmax_columns

    eta = np.array([[-1000.0], [-40.0], [0.0], [40.0], [1000.0]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is exact enough
        p = softmax_columns(eta, 2)
    tail = np.exp(-40.0) / (1.0 + np.exp(-40.0))  # 4.2483542552915889e-18
    np.testing.assert_allclose(p[:, 1], [0.0, tail, 0.5, 1.0, 1.0], rtol=1e-13, atol=0)
    np.testing.assert_allclose(p[:, 0], [1.0, 1.0, 0.5, tail, 0.0], rtol=1e-13, atol=0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-15)
    # more levels: the softmax after subtracting the row's largest predictor
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        q = softmax_columns(np.array([[1000.0, 0.0, -1000.0], [0.0, 0.0, 0.0]]), 3)
    np.testing.assert_allclose(q, [[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-15, atol=1e-300)


@pytest.mark.parametrize("method", ["hls-bayes", "hdp"])
def test_unseen_configuration_below_a_node_is_the_dirichlet_backoff(tmp_path, method):
    """A configuration absent below a level-1 node is Dir(t phi_a), phi_a around the
    leaves below the node (each by its expected tables at t), t's posterior learned from
    the leaves (hmd's back-off, for hls-bayes and hdp alike): the fit keeps that
    posterior, the draws' mean is the centre (node_centres at t's posterior mean; within
    0.02: observed 0.006) and their sd the reported unseen sd (4%: 8000 draws put the
    Monte Carlo error near 1%, and the reported sd takes t at its mean; observed 1%),
    and a saved network draws the same."""
    from pybncsmooth.estimators.hmd.backoff import backoff_concentration, centre_sd, node_centres
    from pybncsmooth.model.draws import posterior_of

    rng = np.random.default_rng(5)
    theta = {(0, 0): [0.9, 0.05, 0.05], (0, 1): [0.1, 0.8, 0.1], (0, 2): [0.2, 0.2, 0.6],
             (1, 0): [0.5, 0.3, 0.2], (1, 1): [0.3, 0.4, 0.3], (1, 2): [0.2, 0.3, 0.5], (1, 3): [0.6, 0.2, 0.2]}
    cfg = list(theta)
    pick = rng.integers(len(cfg), size=400)  # (A=0, B=3) never drawn
    a = np.array([cfg[i][0] for i in pick])
    b = np.array([cfg[i][1] for i in pick])
    x = np.array([rng.choice(3, p=theta[cfg[i]]) for i in pick])
    df = pd.DataFrame({"A": pd.Categorical.from_codes(a, ["a0", "a1"]),
                       "B": pd.Categorical.from_codes(b, ["b0", "b1", "b2", "b3"]),
                       "X": pd.Categorical.from_codes(x, ["x0", "x1", "x2"])})
    net = bs.fit("[A][B][X|A:B]", df, method=method, iterations=600, random_state=0)
    cpd = net.cpd("X")
    est, post = cpd.estimate, posterior_of(cpd)
    n = cpd.tree.levels[-1].counts
    own = (n + 1 / 3) / (n.sum(axis=1, keepdims=True) + 1)  # the siblings' own frequencies, not the fit's means
    log_t, w = backoff_concentration(cpd.tree, 1, own, np.full(3, 1 / 3))
    assert len(post.backoff) == 1
    np.testing.assert_allclose(post.backoff[0][0], log_t)
    np.testing.assert_allclose(post.backoff[0][1], w)
    node = int(np.flatnonzero(cpd.tree.levels[1].value == 0)[0])  # A = a0
    sd_want = centre_sd(cpd.tree, est.probs[-1], np.full(3, 1 / 3), post.backoff)[0][node]
    centre = node_centres(cpd.tree, 1, est.probs[-1], np.full(3, 1 / 3), float(np.exp(w @ log_t)))[0][node]
    d = net._posterior_tables(8000, np.random.default_rng(1))["X"][:, :, 0, 3]  # (draws, X) at A=a0, B=b3
    np.testing.assert_allclose(net.cpt("X", stat="sd")[:, 0, 3], sd_want, rtol=1e-12)
    np.testing.assert_allclose(d.mean(axis=0), centre, atol=0.02)
    np.testing.assert_allclose(d.std(axis=0), sd_want, rtol=0.04)
    path = tmp_path / "n.pbn"
    net.write(path)
    back = bs.read_network(path)
    again = back._posterior_tables(50, np.random.default_rng(2))["X"]
    np.testing.assert_array_equal(again, net._posterior_tables(50, np.random.default_rng(2))["X"])
