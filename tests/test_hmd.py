"""The hierarchical Multinomial-Dirichlet estimator (Azzimonti et al. 2019): bnlearn's hdir
tables, the variational fixed point, exact posterior moments, limits, uncertainty,
domains and bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.special as sp
from scipy import optimize

import pybncsmooth as bs
from pybncsmooth.errors import (
    ConvergenceWarning,
    DataError,
    HyperparameterError,
    MissingColumnError,
    StatisticUnavailableError,
    StructureError,
    UnseenDomainWarning,
)
from pybncsmooth.estimators.hmd._kernels import outer_bound
from pybncsmooth.estimators._special import digamma, polygamma
from pybncsmooth.estimators.hmd.estimator import exact_alpha_moments, fit_hmd_matrix
from conftest import load_golden, load_reference_csv, modelstring_of

HDIR = [
    ("asia_grouped", "asia_grouped.hdir_default.json"),
    ("asia_grouped", "asia_grouped.hdir_iss=10_alpha0=5.json"),
    ("asia_grouped", "asia_grouped.hdir_default_empty_g9.json"),
    ("alarm_grouped", "alarm_grouped.hdir_default.json"),
]


def _grouped(name: str, gold: str) -> pd.DataFrame:
    df = load_reference_csv(name)
    if "empty_g9" in gold:  # the same data with a ninth, empty group level
        df = df.copy()
        df["group"] = df["group"].cat.add_categories(["g9"])
    return df


@pytest.fixture(scope="module")
def asia_grouped() -> pd.DataFrame:
    return load_reference_csv("asia_grouped")


def _fit_gold(name: str, gold: str, **kw) -> tuple[bs.FittedNetwork, dict]:
    g = load_golden(gold)
    m = g["meta"]
    net = bs.fit(
        modelstring_of(name), _grouped(name, gold), method="hmd", group="group", iss=m["iss"], alpha0=m["alpha0"], **kw
    )
    return net, g


# ----------------------------------------------------------------------------- special functions


def test_special_functions_match_scipy():
    xs = np.logspace(-11, 5, 300)
    for x in xs:
        assert digamma(x) == pytest.approx(sp.digamma(x), rel=1e-13)
        assert polygamma(1, x) == pytest.approx(sp.polygamma(1, x), rel=1e-13)
        assert polygamma(2, x) == pytest.approx(sp.polygamma(2, x), rel=1e-12)


# ----------------------------------------------------------------------------- bnlearn's hdir


@pytest.mark.parametrize("name,gold", HDIR)
def test_compat_bnlearn_reproduces_hdir_tables(name, gold):
    net, g = _fit_gold(name, gold, compat="bnlearn")
    assert net.domain == "group"
    worst = 0.0
    for node, nd in g["nodes"].items():
        if node == "group":
            continue
        assert net.parents(node) + ["group"] == nd["dims"][1:]
        t = net.cpt(node)
        assert t.shape == nd["table"].shape
        worst = max(worst, float(np.abs(t - nd["table"]).max()))
    assert worst < 1e-6, worst  # the tolerance; measured 3e-8


def test_compat_empty_group_gets_population_tables():
    net, g = _fit_gold("asia_grouped", "asia_grouped.hdir_default_empty_g9.json", compat="bnlearn")
    g9 = net.for_domain("g9")
    # P(A = yes | g9) is kappa's, 0.345 in the reference README, while A is "yes" in 0.84% of rows
    assert g9.cpt("A")[1] == pytest.approx(g["nodes"]["A"]["table"][1, 8], abs=1e-6)
    assert g9.cpt("A")[1] == pytest.approx(0.345, abs=5e-4)
    kappa = net.cpd("A").estimate.info["kappa"]
    np.testing.assert_allclose(g9.cpt("A"), kappa / kappa.sum(), atol=1e-12)


def test_default_converges_past_bnlearn_to_a_higher_bound():
    name, gold = HDIR[3]
    conv, g = _fit_gold(name, gold)
    comp, _ = _fit_gold(name, gold, compat="bnlearn")
    diffs = [float(np.abs(conv.cpt(n) - comp.cpt(n)).max()) for n in conv.nodes]
    # the reference README: running bnlearn's iterations to convergence moves alarm's tables by up to 2.3e-3
    assert max(diffs) == pytest.approx(2.35e-3, abs=2e-4)
    for n in conv.nodes:
        a, b = conv.cpd(n).estimate.info, comp.cpd(n).estimate.info
        assert a["converged"]
        assert a["elbo"] >= b["elbo"] - 1e-9 * abs(b["elbo"])


@pytest.mark.parametrize("name,gold", HDIR[:2])
def test_default_reproduces_the_readme_distance_from_bnlearn(name, gold):
    conv, g = _fit_gold(name, gold)
    worst = max(float(np.abs(conv.cpt(n) - g["nodes"][n]["table"]).max()) for n in conv.nodes)
    expected = {"asia_grouped.hdir_default.json": 8.6e-4, "asia_grouped.hdir_iss=10_alpha0=5.json": 2.7e-4}[gold]
    assert worst == pytest.approx(expected, abs=0.1e-4)


def test_elbo_never_decreases():
    rng = np.random.default_rng(3)
    for R, J in [(2, 3), (5, 8), (12, 40), (50, 4)]:
        theta = rng.dirichlet(np.full(R, 0.7), size=J)
        N = np.stack([rng.multinomial(rng.integers(0, 60), t) for t in theta], axis=1).astype(float)
        for s in (0.1, 1.0, float(R)):
            fit = fit_hmd_matrix(N, s, 1.0)
            tr = fit.elbo_trace
            assert fit.converged and len(tr) >= 1
            assert np.all(np.diff(tr) >= -1e-10 * np.abs(tr[1:])), (R, J, s, np.diff(tr).min())
            assert fit.elbo == pytest.approx(tr[-1], rel=1e-12)


def test_fixed_point_is_the_optimum_of_the_bound():
    """An independent optimiser of L~ over (log tau, kappa), nu = s kappa + N, finds
    nothing higher than our fixed point."""
    rng = np.random.default_rng(5)
    N = rng.integers(0, 12, size=(4, 5)).astype(float)
    s, a0 = 2.0, np.ones(4)
    fit = fit_hmd_matrix(N, s, 1.0, tol=1e-14)

    def neg(z):
        k = np.exp(z[1:] - z[1:].max())
        k /= k.sum()
        return -outer_bound(N, s * k[:, None] + N, k, float(np.exp(z[0])), a0, s)

    z0 = np.concatenate([[np.log(fit.tau)], np.log(fit.kappa)])
    best = -neg(z0)
    for start in [z0, np.zeros(5), rng.normal(size=5)]:
        res = optimize.minimize(
            neg, start, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-13, "maxiter": 20000}
        )
        assert -res.fun <= best + 1e-8 * abs(best)


# ----------------------------------------------------------------------------- exact moments


def test_exact_integration_of_a_known_case():
    # one column, no data: the prior, E[alpha] = s * alpha0 / s0, Var = s^2 k(1-k)/(s0+1)
    m, c = exact_alpha_moments(np.zeros((2, 1)), 3.0, np.array([1.0, 3.0]))
    np.testing.assert_allclose(m, [0.75, 2.25], atol=1e-8)
    assert c[0, 0] == pytest.approx(9 * 0.25 * 0.75 / 5, rel=1e-7)


def test_vi_against_exact_posterior_moments():
    """Paper 001 Sec. 3.2: data sampled from the model with s = |X|, alpha0 = 1;
    VI estimates of theta against exact integration.  The paper reports a mean
    squared error of 1e-5 on average; the VI mean of alpha itself is an
    approximation (the factorised q and the bound of Lemma 6), off by up to a few
    hundredths of s on these cases (measured: 0.011 for |X| = 2, 0.04 for |X| = 3)."""
    rng = np.random.default_rng(1)
    mses, dalpha = [], []
    for R, J, n in [(2, 2, 20), (2, 4, 40), (2, 6, 80), (2, 8, 160), (3, 2, 40), (3, 4, 80)]:
        s = float(R)
        alpha = s * rng.dirichlet(np.ones(R))
        theta = rng.dirichlet(alpha, size=J)
        y = rng.integers(0, J, size=n)
        N = np.stack([rng.multinomial((y == j).sum(), theta[j]) for j in range(J)], axis=1).astype(float)
        Ea, Ca = exact_alpha_moments(N, s)
        fit = fit_hmd_matrix(N, s, 1.0)
        ny = N.sum(axis=0)
        exact = (N + Ea[:, None]) / (ny + s)
        vi = (N + fit.alpha_mean[:, None]) / (ny + s)
        mses.append(((exact - vi) ** 2).mean())
        dalpha.append(np.abs(Ea - fit.alpha_mean).max() / s)
        # the VI variance of alpha is smaller than the exact one (mean-field), but of its order
        ratio = np.diag(fit.alpha_cov) / np.diag(Ca)
        assert np.all((ratio > 0.2) & (ratio < 1.2)), ratio
    assert np.mean(mses) < 1e-5
    assert max(dalpha) < 0.02


# ----------------------------------------------------------------------------- one CPT


def _frame(rows: dict) -> pd.DataFrame:
    return pd.DataFrame({k: pd.Categorical(v) for k, v in rows.items()})


def test_single_cpt_is_eq8_with_the_pooled_kappa(learning_test):
    net = bs.fit(modelstring_of("learning_test"), learning_test, method="hmd", s="levels")
    for node in net.nodes:
        est = net.cpd(node).estimate
        tree = net.tree(node)
        n = tree.levels[-1].counts
        r = tree.child_card
        assert est.info["s"] == r  # the paper's default s = |X|
        expected = (n + r * est.info["kappa"]) / (n.sum(axis=1, keepdims=True) + r)
        np.testing.assert_allclose(est.probs[-1], expected, atol=1e-12)
        assert est.info["converged"]
        t = net.cpt(node)
        np.testing.assert_allclose(t.sum(axis=0), 1.0, atol=1e-12)


def test_limits_huge_counts_give_mle_and_no_data_gives_prior():
    df = _frame({"A": ["a", "b"] * 3, "B": ["x", "y", "y", "y", "x", "y"]})
    small = bs.fit(["B ~ A"], df, method="hmd")
    big = bs.fit(["B ~ A"], pd.concat([df] * 100000, ignore_index=True), method="hmd")
    mle = bs.fit(["B ~ A"], df, method="mle")
    assert np.abs(big.cpt("B") - mle.cpt("B")).max() < 1e-4
    assert np.abs(small.cpt("B") - mle.cpt("B")).max() > 0.05
    # no data for a configuration: the pooled distribution kappa
    d2 = _frame({"A": pd.Categorical(["a", "a", "a"], categories=["a", "b"]), "B": ["x", "y", "y"]})
    net = bs.fit(["B ~ A"], d2, method="hmd")
    kappa = net.cpd("B").estimate.info["kappa"]
    np.testing.assert_allclose(net.cpt("B")[:, 1], kappa, atol=1e-12)
    # no data at all under a huge alpha0: kappa is the prior mean (uniform)
    fit = fit_hmd_matrix(np.zeros((3, 2)), 3.0, 1.0)
    np.testing.assert_allclose(fit.kappa, 1 / 3, atol=1e-9)


def test_sd_is_eq9_and_shrinks_with_data():
    # with s fixed (the paper's |X|): eq. (9) with the variational moments of alpha
    df = bs.load_dataset("asia")
    net = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", df, method="hmd", s="levels")
    est = net.cpd("D").estimate
    n = net.tree("D").levels[-1].counts
    s, k, tau = est.info["s"], est.info["kappa"], est.info["tau"]
    ny = n.sum(axis=1, keepdims=True)
    m = (n + s * k) / (ny + s)
    var_alpha = s * s * k * (1 - k) / (tau + 1)
    var = var_alpha / ((ny + s) * (ny + s + 1)) + m * (1 - m) / (ny + s + 1)
    np.testing.assert_allclose(est.sd[-1], np.sqrt(var), rtol=1e-10)
    sd = net.cpt("D", stat="sd")
    assert sd.shape == net.cpt("D").shape and np.all(sd > 0)
    small = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", df.iloc[:200], method="hmd")
    assert small.cpt("S", stat="sd").max() > 3 * net.cpt("S", stat="sd").max()
    frame = net.cpt_frame("D", interval=0.95)
    assert list(frame.columns) == ["D", "B", "E", "prob", "sd", "lower", "upper"]
    assert np.all(frame["lower"] <= frame["prob"]) and np.all(frame["prob"] <= frame["upper"])
    assert np.all((frame["lower"] >= 0) & (frame["upper"] <= 1))


def test_learned_s_mixes_the_dirichlet_columns_over_the_posterior_of_s_and_u():
    # default: s integrated over its grid posterior, u over importance-weighted particles;
    # mean and sd are the mixture's moments, computed here by hand from the particles
    df = bs.load_dataset("asia").iloc[:400]
    net = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", df, method="hmd")
    est = net.cpd("D").estimate
    post = est.posterior.post
    n = net.tree("D").levels[-1].counts.astype(float)
    m1 = np.zeros(n.shape)
    m2 = np.zeros(n.shape)
    for k, s in enumerate(post.s):
        for u, w in zip(post.u[k], post.weights[k]):
            a = n + s * u
            A = n.sum(axis=1, keepdims=True) + s
            m1 += w * a / A
            m2 += w * a * (a + 1) / (A * (A + 1))
    np.testing.assert_allclose(est.probs[-1], m1, rtol=1e-10)
    np.testing.assert_allclose(est.sd[-1], np.sqrt(m2 - m1**2), rtol=1e-8)
    assert abs(post.weights.sum() - 1) < 1e-12 and len(post.s) >= 3
    assert est.info["s_grid"].min() >= 1e-3 and est.info["s_grid"].max() <= 1e7
    # an unseen configuration's sd is the predictive Dir(s u)'s, wider than any seen column's
    assert est.sd[0].min() > est.sd[-1].max()


def _grouped_columns(seed: int, n: int, t: float = 30.0) -> tuple[pd.DataFrame, np.ndarray]:
    """X (11 levels) | A (6), B (8): the columns of one value of A are Dir(t phi_a) around
    a centre of their own (fixed truth, seed 100), B skewed so that rows miss many
    configurations; ``n`` rows drawn with ``seed``."""
    truth_rng = np.random.default_rng(100)
    phi = truth_rng.dirichlet(np.full(11, 0.5), size=6)
    theta = np.stack([truth_rng.dirichlet(t * phi[a] + 1e-3, size=8) for a in range(6)])
    rng = np.random.default_rng(seed)
    a = rng.choice(6, n)
    b = rng.choice(8, n, p=[0.3, 0.25, 0.15, 0.1, 0.08, 0.06, 0.04, 0.02])
    x = (rng.random(n)[:, None] > np.cumsum(theta[a, b], axis=1)).sum(axis=1).clip(max=10)
    cat = lambda p, k, v: pd.Categorical([f"{p}{i}" for i in v], categories=[f"{p}{i}" for i in range(k)])  # noqa: E731
    return pd.DataFrame({"A": cat("a", 6, a), "B": cat("b", 8, b), "X": cat("x", 11, x)}), theta


def test_unseen_configuration_backs_off_to_its_context_tree_node():
    # configurations alike within a value of their first parent: an unseen one is drawn
    # around the observed columns of its value of A, not around the pooled kappa (which
    # the flat model answers: mean L1 error then equals kappa's, ratio 1.0), and its 90%
    # interval covers the truth (observed over 3 x 150 rows: 21 unseen configurations,
    # L1 ratio 0.76, coverage within 0.001 0.98; the flat model's 1.0 and 0.93)
    hits = tot = 0
    err = err_kappa = 0.0
    for seed in range(3):
        df, theta = _grouped_columns(seed, 150)
        net = bs.fit(["X ~ A + B"], df, method="hmd")
        assert net.parents("X") == ["A", "B"]
        est, frame = net.cpt("X"), net.cpt_frame("X", interval=0.9)
        lo, hi = (frame[c].to_numpy().reshape(est.shape, order="F") for c in ("lower", "upper"))
        kappa = net.cpd("X").estimate.probs[0][0]
        rows = df.groupby(["A", "B"], observed=False).size().to_numpy().reshape(6, 8)
        for a, b in zip(*np.nonzero(rows == 0)):
            truth = theta[a, b]
            hits += int(((lo[:, a, b] - 1e-3 < truth) & (truth < hi[:, a, b] + 1e-3)).sum())
            tot += 11
            err += np.abs(est[:, a, b] - truth).sum()
            err_kappa += np.abs(kappa - truth).sum()
    assert tot >= 150
    assert err / err_kappa < 0.9, err / err_kappa
    assert 0.85 <= hits / tot <= 0.995, hits / tot


def test_sd_in_domain_fits_is_eq9_for_a_single_parentless_node():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"u": pd.Categorical(rng.choice(["a", "b", "c"], 300)), "X": pd.Categorical(rng.choice(["0", "1", "2"], 300))}
    )
    net = bs.fit("[X]", df, method="hmd", domain="u", domain_model="joint")
    est = net.cpd("X").estimate
    s, k, tau = est.info["s"], est.info["kappa"], est.info["tau"]
    n = net.tree("X").levels[-1].counts
    ny = n.sum(axis=1, keepdims=True)
    m = (n + s * k) / (ny + s)
    var = s * s * k * (1 - k) / (tau + 1) / ((ny + s) * (ny + s + 1)) + m * (1 - m) / (ny + s + 1)
    np.testing.assert_allclose(net.cpt("X", stat="sd").T, np.sqrt(var), rtol=1e-10)


def test_sd_unavailable_names_the_method(asia):
    # a multi-domain fit of an estimator whose uncertainty is a bootstrap over rows
    grouped = asia.assign(G=pd.Categorical(np.arange(len(asia)) % 3))
    net = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", grouped, method="mle", domain="G")
    with pytest.raises(StatisticUnavailableError, match="'mle'.*multi-domain"):
        net.cpt("D", stat="sd")
    with pytest.raises(StatisticUnavailableError, match="'mle'.*multi-domain"):
        net.cpt_frame("D", interval=0.9)
    # a table read from a file keeps no posterior, and the message says what does
    read = bs.read_network(Path(__file__).parent / "data" / "bnlearn" / "asia.bif")
    with pytest.raises(StatisticUnavailableError, match="table read from a file.*fit the network from data"):
        read.cpt("D", stat="sd")


def test_no_nan_on_awkward_inputs():
    rng = np.random.default_rng(2)
    # a node with 50 levels, sparse parents, a one-row domain and an all-zero column
    X = [f"x{i}" for i in rng.integers(0, 50, 400)]
    df = pd.DataFrame(
        {
            "X": pd.Categorical(X, categories=[f"x{i}" for i in range(50)]),
            "P": pd.Categorical(rng.choice(["p", "q", "r"], 400), categories=["p", "q", "r", "never"]),
            # "solo" has one row, "empty" none (an all-zero column of every joint table)
            "u": pd.Categorical(
                ["solo"] + list(rng.choice(["a", "b", "c"], 399)), categories=["a", "b", "c", "empty", "solo"]
            ),
        }
    )
    for kw in ({}, {"domain": "u"}, {"domain": "u", "compat": "bnlearn"}):
        net = bs.fit(["X ~ P", "P ~ 1"], df, method="hmd", **kw)
        for node in net.nodes:
            for stat in ("mean", "sd"):
                t = net.cpt(node, stat=stat)
                assert np.isfinite(t).all() and t.min() >= 0
            np.testing.assert_allclose(net.cpt(node).sum(axis=0), 1.0, atol=1e-10)
        assert np.isfinite(net.logpdf(df)).all()


# ----------------------------------------------------------------------------- domains


def test_domain_tables_shrink_toward_each_other(asia_grouped):
    ms = modelstring_of("asia")
    pooled = bs.fit(ms, asia_grouped.drop(columns="group"), method="mle")
    per = {
        g: bs.fit(ms, asia_grouped[asia_grouped.group == g].drop(columns="group"), method="bayes", iss=1)
        for g in ["g1", "g8"]
    }
    net = bs.fit(ms, asia_grouped, method="hmd", domain="group", iss=50)
    assert net.domains == [f"g{i}" for i in range(1, 9)]
    # the smallest group (25 rows) moves toward the pool; the largest (1825) stays near its own data
    small, large = net.for_domain("g1"), net.for_domain("g8")
    d_small = abs(small.cpt("S")[0] - pooled.cpt("S")[0])
    assert d_small < abs(per["g1"].cpt("S")[0] - pooled.cpt("S")[0])
    assert abs(large.cpt("S")[0] - per["g8"].cpt("S")[0]) < 0.01


def test_structure_with_domain_node_is_recognised(asia_grouped):
    a = bs.fit(modelstring_of("asia_grouped"), asia_grouped, method="hmd", group="group", compat="bnlearn")
    b = bs.fit(modelstring_of("asia"), asia_grouped, method="hmd", domain="group", compat="bnlearn")
    assert a.max_abs_diff(b) == 0.0
    assert "group" not in a.nodes


def test_prediction_with_domains_and_an_unseen_domain(asia_grouped):
    net = bs.fit(modelstring_of("asia"), asia_grouped, method="hmd", domain="group", domain_model="joint")
    rows = asia_grouped.iloc[:5]
    lp = net.logpdf(rows)
    for i in range(5):
        one = net.for_domain(rows["group"].iloc[i]).logpdf(rows.iloc[[i]].drop(columns="group"))
        assert lp[i] == pytest.approx(one[0], rel=1e-12)
    new = rows.astype({"group": str}).assign(group="newcomer")
    with pytest.warns(UnseenDomainWarning, match="newcomer"):
        lp_new = net.logpdf(new)
    with pytest.warns(UnseenDomainWarning, match="newcomer"):
        pop = net.for_domain("newcomer")
    assert np.allclose(lp_new, pop.logpdf(rows.drop(columns="group")))
    kappa = net.cpd("A").estimate.info["kappa"]
    np.testing.assert_allclose(pop.cpt("A"), kappa / kappa.sum(), atol=1e-12)
    with pytest.warns(UnseenDomainWarning):
        p = net.predict_proba(new, "L")
    assert np.allclose(p.sum(axis=1), 1)


def test_native_round_trip_keeps_sd_and_fallback(tmp_path, asia_grouped):
    net = bs.fit(modelstring_of("asia"), asia_grouped, method="hmd", domain="group", domain_model="joint")
    path = tmp_path / "net.pbn"
    net.write(path)
    back = bs.read_network(path)
    for n in net.nodes:
        np.testing.assert_array_equal(back.cpt(n), net.cpt(n))
        np.testing.assert_array_equal(back.cpt(n, stat="sd"), net.cpt(n, stat="sd"))


def test_classifier_uses_hmd_with_no_specific_code():
    from sklearn.model_selection import cross_val_score

    df = bs.load_dataset("housevotes84")
    X, y = df.drop(columns="Class"), df["Class"]
    clf = bs.BNClassifier(structure="tan", method="hmd", na="level")
    scores = cross_val_score(clf, X, y, cv=3)
    assert scores.mean() > 0.85
    clf.fit(X, y)
    p = clf.predict_proba(X)
    assert np.allclose(p.sum(axis=1), 1) and np.isfinite(p).all()


def test_summary_reports_convergence(learning_test):
    net = bs.fit(modelstring_of("learning_test"), learning_test, method="hmd")
    s = net.node_summary()
    roots = [v for v in net.nodes if not net.parents(v)]  # one column: Dir(n + alpha0) in closed form
    assert s["converged"].all() and (s["iterations"].drop(roots) >= 1).all() and (s["iterations"][roots] == 0).all()
    with pytest.warns(ConvergenceWarning, match="iteration cap"):
        capped = bs.fit(modelstring_of("learning_test"), learning_test, method="hmd", s="levels", max_iter=1)
    assert not capped.node_summary()["converged"].any()


# ----------------------------------------------------------------------------- bad input


def test_bad_hyperparameters_are_named(asia_grouped):
    ms = modelstring_of("asia")
    for kw, word in [
        ({"s": 0}, "s must"),
        ({"s": float("inf")}, "s must"),
        ({"alpha0": -1}, "alpha0"),
        ({"iss": float("nan")}, "iss"),
        ({"compat": "weka"}, "compat"),
        ({"compat": "bnlearn", "s": 1.0}, "does not take s="),
        ({"compat": "bnlearn", "tol": 1e-3}, "does not take tol="),
        ({"compat": "bnlearn", "max_iter": 5}, "does not take max_iter="),
        ({"s": 1.0, "iss": 2.0}, "not both"),
        ({"max_iter": 0}, "max_iter"),
    ]:
        with pytest.raises(HyperparameterError, match=word):
            bs.fit(ms, asia_grouped, method="hmd", domain="group", **kw)
    with pytest.raises(HyperparameterError, match="pass domain="):
        bs.fit(ms, asia_grouped.drop(columns="group"), method="hmd", compat="bnlearn")
    with pytest.raises(HyperparameterError, match="iss= applies to domain-pooled"):
        bs.fit(ms, asia_grouped.drop(columns="group"), method="hmd", iss=2)


def test_bad_domains_are_named(asia_grouped):
    ms = modelstring_of("asia")
    one = asia_grouped.assign(group=pd.Categorical(["only"] * len(asia_grouped)))
    with pytest.raises(DataError, match="'group' has 1 level"):
        bs.fit(ms, one, method="hmd", domain="group")
    with pytest.raises(MissingColumnError, match="user"):
        bs.fit(ms, asia_grouped, method="hmd", domain="user")
    with pytest.raises(StructureError, match="not of 'X'"):
        bs.fit(
            "[group][A|group][S|group][T|A:group][L|S:group][B|S:group][E|T:L:group][D|B:E:group][X|E]",
            asia_grouped,
            method="hmd",
            group="group",
        )
    with pytest.raises(StructureError, match="different columns"):
        bs.fit(ms, asia_grouped, method="hmd", domain="group", group="A")
    nas = asia_grouped.copy()
    nas["A"] = nas["A"].astype(object)
    nas.loc[nas.group == "g1", "A"] = None
    nas["A"] = pd.Categorical(nas["A"], categories=asia_grouped["A"].cat.categories)
    with pytest.raises(DataError, match="domain 'g1'.*none is left.*na='drop'"):
        bs.fit(ms, nas, method="hmd", domain="group", na="drop")
    # the caller's data are untouched by every fit above
    assert asia_grouped.equals(load_reference_csv("asia_grouped"))


# ----------------------------------------------------------------------------- sd of the other estimators


def test_sd_of_bayes_and_mestimate_are_the_dirichlet_posteriors(learning_test):
    ms = modelstring_of("learning_test")
    bay = bs.fit(ms, learning_test, method="bayes", iss=10)
    mest = bs.fit(ms, learning_test, method="mestimate", m=2)
    checked = 0
    for node in bay.nodes:
        n = bay.tree(node).levels[-1].counts
        q = int(np.prod([len(bay.levels(p)) for p in bay.parents(node)]))
        p = bay.cpd(node).estimate.probs[-1]
        np.testing.assert_allclose(
            bay.cpd(node).estimate.sd[-1], np.sqrt(p * (1 - p) / (n.sum(1, keepdims=True) + 10 / q + 1))
        )
        # an m-estimate's sd is the Dirichlet posterior's its pseudo-counts imply,
        # Dir(n + m/r): sqrt(p (1 - p) / (N + m + 1))
        N = n.sum(1, keepdims=True)
        pm = mest.cpd(node).estimate.probs[-1]
        np.testing.assert_allclose(mest.cpd(node)._levels("sd")[-1], np.sqrt(pm * (1 - pm) / (N + 3)), rtol=1e-12)
        checked += len(N)
    assert checked >= 10
    # an unseen configuration under bayes: the prior's sd (the estimate's: cpt(stat="sd")
    # refuses bayes' BDeu sds, whose intervals do not cover)
    d = _frame({"A": pd.Categorical(["a"] * 4, categories=["a", "b"]), "B": ["x", "y", "y", "y"]})
    net = bs.fit(["B ~ A"], d, method="bayes", iss=1)
    alpha = 1 / 4
    np.testing.assert_allclose(net.cpd("B").table(stat="sd")[:, 1], np.sqrt(0.25 / (2 * alpha + 1)))


def test_sd_of_hdp_on_a_parentless_node_is_exact():
    # depth 0: the estimate is (n + c/r) / (N + c) with the root concentration c = 2 fixed,
    # the mean of a Dirichlet(n + c/r) posterior; its sd is sqrt(p (1 - p) / (N + c + 1))
    rng = np.random.default_rng(0)
    df = _frame({"X": rng.choice(list("abc"), 40)})
    net = bs.fit("[X]", df, method="hdp", iterations=200, random_state=1)
    p = net.cpt("X")
    np.testing.assert_allclose(net.cpt("X", stat="sd"), np.sqrt(p * (1 - p) / (40 + 2 + 1)), rtol=1e-10)


def test_sd_of_hdp_leaves_is_positive_and_shrinks_with_data():
    df = bs.load_dataset("asia")
    ms = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
    small = bs.fit(ms, df.iloc[:300], method="hdp", iterations=600, random_state=0)
    large = bs.fit(ms, df, method="hdp", iterations=600, random_state=0)
    for node in ("D", "E", "X"):
        a, b = small.cpt(node, stat="sd"), large.cpt(node, stat="sd")
        assert np.isfinite(a).all() and (a >= 0).all()
        assert np.median(b) < np.median(a)


def test_domain_default_s_is_the_number_of_joint_states(asia_grouped):
    net = bs.fit(modelstring_of("asia"), asia_grouped, method="hmd", domain="group", domain_model="joint")
    assert net.cpd("E").estimate.info["s"] == 2 * 2 * 2  # E | L, T: two levels each
    assert net.cpd("A").estimate.info["s"] == 2
    comp = bs.fit(modelstring_of("asia"), asia_grouped, method="hmd", domain="group", compat="bnlearn")
    assert comp.cpd("E").estimate.info["s"] == pytest.approx(1 / 8)  # bnlearn: iss / J, iss = 1


def test_domain_model_too_large_is_refused_with_the_node_named(monkeypatch):
    from pybncsmooth.errors import DenseTableTooLargeError
    from pybncsmooth.estimators.hmd import estimator as hmd_module

    monkeypatch.setattr(hmd_module, "MAX_JOINT_CELLS", 5)
    d = _frame({"A": ["a", "b", "a", "b", "a"], "B": list("xyyyx"), "u": list("pqpqp")})
    # bnlearn's iteration runs on the dense joint table: joint states x domains
    with pytest.raises(DenseTableTooLargeError, match="hmd model of node 'B' \\(4 joint states x 2 domains\\)"):
        bs.fit(["B ~ A", "A ~ 1"], d, method="hmd", domain="u", compat="bnlearn")
    # the joint model's own fit keeps the non-zero counts only: its size is the joint states
    bs.fit(["B ~ A", "A ~ 1"], d, method="hmd", domain="u", domain_model="joint")
    monkeypatch.setattr(hmd_module, "MAX_JOINT_CELLS", 3)
    with pytest.raises(DenseTableTooLargeError, match="hmd model of node 'B' \\(4 joint states\\)"):
        bs.fit(["B ~ A", "A ~ 1"], d, method="hmd", domain="u", domain_model="joint")


@pytest.mark.parametrize("R,J,rate", [(6, 4, 2.0), (40, 300, 0.3), (375, 50, 0.1)])
def test_sparse_fit_reaches_the_dense_fixed_point(R, J, rate):
    # many domains with few counts each: the fit on the non-zero counts reaches the fixed
    # point of the dense fit; both stop when the bound moves by less than 1e-10 relative,
    # so they agree to that precision on the bound and to ~1e-6 on the estimates
    from pybncsmooth.estimators.hmd.estimator import fit_hmd_matrix, fit_hmd_sparse

    rng = np.random.default_rng(R)
    N = rng.poisson(rate, size=(R, J)).astype(float)
    dense = fit_hmd_matrix(N, float(R))
    rows, cols = np.nonzero(N)
    sparse = fit_hmd_sparse(rows, cols, N[rows, cols], R, J, float(R))
    assert dense.converged and sparse.converged and sparse.nu is None
    assert sparse.elbo == pytest.approx(dense.elbo, rel=1e-10)
    assert sparse.tau == pytest.approx(dense.tau, rel=1e-5)
    est = lambda f: (f.s * f.kappa[:, None] + N) / (f.s + N.sum(axis=0))  # noqa: E731
    np.testing.assert_allclose(est(sparse), est(dense), rtol=0, atol=1e-6)


def test_a_node_without_parents_has_the_dirichlet_posterior_of_its_one_column():
    """A root has one column: its posterior is Dir(n + alpha0) exactly (mean, sd, and the
    90% interval of a level seen in none of 200 rows: Beta(1, 201)'s, upper end 0.0148),
    not the spike at the vertex that integrating the unidentified s gives (upper end
    about 0.002, which a true 0.005 lies above)."""
    from scipy.stats import beta

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"A": pd.Categorical(["y"] * 200, categories=["y", "n"]),
                       "B": pd.Categorical(rng.choice(["u", "v"], 200), categories=["u", "v"])})
    net = bs.fit("[A][B|A]", df, method="hmd", random_state=0)
    np.testing.assert_allclose(net.cpt("A"), [201 / 202, 1 / 202], atol=1e-6)
    np.testing.assert_allclose(net.cpt("A", stat="sd"), beta.std(1, 201), rtol=1e-4)
    exact = beta.ppf(0.95, 1, 201)  # 0.01480
    frame = net.cpt_frame("A", interval=0.9, draws=4000, random_state=0)
    assert frame["upper"].to_numpy()[1] == pytest.approx(exact, rel=0.08)  # Monte Carlo quantile of 4000 draws
    q = net.query("A", interval=0.9, draws=4000, random_state=1)
    assert q.loc["n", "upper"] == pytest.approx(exact, rel=0.08)
