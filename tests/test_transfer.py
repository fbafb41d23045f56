"""A new domain's concentration learned from its rows (adapt), classifiers adapted to a new
domain, and rows without a fitted domain answered by the population."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from scipy.special import gammaln

import pybncsmooth as bs
from pybncsmooth.errors import MissingColumnError, UnseenDomainError, UnseenDomainWarning
from pybncsmooth.estimators._domain_prior import (
    ADAPT_GRID,
    NOVEL_WEIGHT,
    grid_weights,
    nested_log_evidence,
    own_concentrations,
)
from conftest import adapted_by_hand


def _dm(n: np.ndarray, a: np.ndarray) -> float:
    """log Dirichlet-multinomial of the counts ``n`` (one sequence) under parameters ``a``."""
    return float(gammaln(a.sum()) - gammaln(a.sum() + n.sum()) + (gammaln(a + n) - gammaln(a)).sum())


def _nested_by_quadrature(n: np.ndarray, m: np.ndarray, A: float, s: float) -> float:
    """log of int Beta(t; A m) DM(n; s (t, 1 - t)) dt by adaptive quadrature (two levels)."""
    def f(t: float) -> float:
        prior = (A * m[0] - 1) * np.log(t) + (A * m[1] - 1) * np.log1p(-t) - (
            gammaln(A * m[0]) + gammaln(A * m[1]) - gammaln(A))
        return float(np.exp(prior + _dm(n, s * np.array([t, 1 - t]))))
    val, _ = integrate.quad(f, 0, 1, epsabs=0, epsrel=1e-12, limit=400)
    return float(np.log(val))


# ----------------------------------------------------------------------------- the nested evidence


@pytest.mark.parametrize("n", [[5, 0], [3, 4], [12, 1], [40, 25]])
def test_the_new_rows_evidence_is_the_nested_integral(n):
    n = np.array(n, dtype=float)
    m, A = np.array([0.35, 0.65]), 7.5
    grid = np.log([0.05, 0.7, 3.0, 40.0, 2e3])
    got = nested_log_evidence(n[None], m[None], np.array([A]), grid)
    want = [_nested_by_quadrature(n, m, A, np.exp(g)) for g in grid]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    # a pooled vector known exactly: the plain Dirichlet-multinomial; one row says nothing about s
    plain = nested_log_evidence(n[None], m[None], None, grid)
    np.testing.assert_allclose(plain, [_dm(n, np.exp(g) * m) for g in grid], rtol=1e-12)
    np.testing.assert_array_equal(nested_log_evidence(np.array([[1.0, 0.0]]), m[None], np.array([A]), grid), 0.0)


# ----------------------------------------------------------------------------- the posterior by hand


def _three_sites(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for site, p, n in (("s1", 0.30, 120), ("s2", 0.35, 90), ("s3", 0.55, 60)):
        rows.append(pd.DataFrame({"site": site, "A": np.where(rng.random(n) < p, "a", "b")}))
    df = pd.concat(rows, ignore_index=True)
    return df.assign(site=pd.Categorical(df.site), A=pd.Categorical(df.A, categories=["a", "b"]))


def _posterior_by_hand(net: bs.FittedNetwork, n_new: np.ndarray) -> np.ndarray:
    """The new site's posterior of s on the grid, from the fit's counts alone: the sites'
    evidence (each against the others' pooled vector, moment-matched), Laird's EM for the
    mixing distribution, the sites' profiles and the flat prior as components, the new
    rows' nested evidence by quadrature."""
    est = net.cpd("A").estimate
    ls, ws = est.info["s_domain_log"], est.info["s_domain_weights"]
    counts = net.cpd("A").tree.leaf_table()[1].astype(float)  # the three sites, in code order
    beta = np.full(2, 1.0 / 2)  # bayes, iss = 1: the root's cell pseudo-count 1 / r
    e = counts * np.array([ws @ ((np.exp(ls) + 1) / (c.sum() + np.exp(ls))) for c in counts])[:, None]
    s = np.exp(ADAPT_GRID)
    curves = np.zeros((3, len(s)))
    for d in range(3):
        rest = beta + e.sum(axis=0) - e[d]
        A, m = rest.sum(), rest / rest.sum()
        sp = s * A / (s + A + 1)
        curves[d] = [_dm(counts[d], x * m) for x in sp]
    h = grid_weights()
    lik = np.exp(curves - curves.max(axis=1, keepdims=True))
    G = h.copy()
    for _ in range(1000):
        R = G * lik
        R /= R.sum(axis=1, keepdims=True)
        new, G_old = R.mean(axis=0), G
        G = new
        if np.abs(new - G_old).max() < 1e-9:
            break
    comps = G * lik
    comps /= comps.sum(axis=1, keepdims=True)
    novel = h * s / (s + 1) ** 2
    comps = np.vstack([comps, novel / novel.sum()])
    A_all = beta.sum() + e.sum()
    pooled = net.for_domain(None).cpt("A")
    L = np.array([_nested_by_quadrature(n_new, pooled, A_all, x) for x in s])
    L = np.exp(L - L.max())
    z = comps @ L
    w = np.array([1, 1, 1, NOVEL_WEIGHT]) * z
    w /= w.sum()
    post = (w / z) @ (comps * L)
    return post / post.sum()


def test_the_new_domains_posterior_of_s_by_hand():
    net = bs.fit("[A]", _three_sites(), method="bayes", domain="site")
    new = pd.DataFrame({"A": pd.Categorical(["a"] * 9 + ["b"] * 3, categories=["a", "b"])})
    a = net.adapt(new, "s4")
    info = a.cpd("A").estimate.info
    ls, w = own_concentrations(info)[3]
    got = np.zeros(len(ADAPT_GRID))
    got[np.searchsorted(ADAPT_GRID, ls - 1e-9)] = w
    want = _posterior_by_hand(net, np.array([9.0, 3.0]))
    np.testing.assert_allclose(got, want, atol=1e-9)
    # the table: (n + s' m) / (N + s') averaged over that posterior, s' = s A / (s + A + 1)
    pooled = net.for_domain(None).cpt("A")
    np.testing.assert_allclose(a.for_domain("s4").cpt("A"), adapted_by_hand([9.0, 3.0], pooled, info, 3), rtol=1e-12)
    # the fitted sites' tables, and their shared posterior, are untouched
    for d in ("s1", "s2", "s3"):
        np.testing.assert_array_equal(a.for_domain(d).cpt("A"), net.for_domain(d).cpt("A"))
    np.testing.assert_array_equal(info["s_domain_weights"], net.cpd("A").estimate.info["s_domain_weights"])
    # s_domain= still fixes it
    fixed = net.adapt(new, "s4", s_domain=2.0)
    finfo = fixed.cpd("A").estimate.info
    assert own_concentrations(finfo)[3][0].tolist() == [np.log(2.0)]
    A = finfo["s_domain_mass"][0]
    sp = 2.0 * A / (2.0 + A + 1)
    np.testing.assert_allclose(fixed.for_domain("s4").cpt("A"), (np.array([9, 3]) + sp * pooled) / (12 + sp),
                               rtol=1e-12)


# ----------------------------------------------------------------------------- incrementality


def _sites(seed: int, spreads: dict, n: int) -> pd.DataFrame:
    """``B | A`` in sites whose tables sit ``spreads[site]`` away from a common one."""
    rng = np.random.default_rng(seed)
    base = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3]])
    rows = []
    for site, s in spreads.items():
        tab = np.array([rng.dirichlet(s * b) for b in base])
        a = rng.choice(2, n, p=[0.6, 0.4])
        b = (tab[a].cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1).clip(max=2)
        rows.append(pd.DataFrame({"site": site, "A": a, "B": b}))
    df = pd.concat(rows, ignore_index=True).astype(str)
    return df.assign(**{c: pd.Categorical(df[c]) for c in df})


@pytest.mark.parametrize("method", ["hmd", "hdp"])
def test_adapting_in_parts_equals_adapting_once(method):
    df = _sites(1, {"s1": 50, "s2": 80, "s3": 30, "s4": 60}, 300)
    kw = {"iterations": 200} if method == "hdp" else {}
    net = bs.fit("[A][B|A]", df[df.site != "s4"], method=method, domain="site", random_state=0, **kw)
    rows = df[df.site == "s4"].drop(columns="site").iloc[:40]
    once = net.adapt(rows, "s4")
    twice = net.adapt(rows.iloc[:15], "s4").adapt(rows.iloc[15:], "s4")
    assert twice.max_abs_diff(once) < 1e-12
    for n in ("A", "B"):
        np.testing.assert_allclose(twice.cpt(n, stat="sd"), once.cpt(n, stat="sd"), atol=1e-12)
        own_1, own_2 = (own_concentrations(x.cpd(n).estimate.info)[3] for x in (once, twice))
        np.testing.assert_allclose(own_2[1], own_1[1], atol=1e-12)
    # a fitted site given more rows: its own posterior, its prior without its own evidence
    grow = net.adapt(rows.iloc[:10].assign(), "s1").adapt(rows.iloc[10:], "s1")
    assert grow.max_abs_diff(net.adapt(rows, "s1")) < 1e-12
    assert 0 in own_concentrations(grow.cpd("B").estimate.info)


# ----------------------------------------------------------------------------- how far a domain sits


def _spread_sites(seed: int, near: float = 100.0, far: float = 1.0, per: int = 600) -> pd.DataFrame:
    """Five sites whose tables of ``A`` and ``B | A`` are drawn as ``Dir(near * population)``
    and one, ``far``, as ``Dir(far * population)``: a domain of known spread."""
    rng = np.random.default_rng(seed)
    pop_a, pop_b = rng.dirichlet(np.full(4, 2.0)), rng.dirichlet(np.full(5, 2.0), size=4)
    rows = []
    for site, s in (("s0", near), ("s1", near), ("s2", near), ("s3", near), ("s4", near), ("far", far)):
        pa, pb = rng.dirichlet(s * pop_a), np.array([rng.dirichlet(s * r) for r in pop_b])
        a = rng.choice(4, per, p=pa)
        b = (pb[a].cumsum(axis=1) < rng.random(per)[:, None]).sum(axis=1).clip(max=4)
        rows.append(pd.DataFrame({"site": site, "A": a, "B": b}))
    df = pd.concat(rows, ignore_index=True).astype(str)
    return df.assign(**{c: pd.Categorical(df[c]) for c in df})


def _lodo_scores(df: pd.DataFrame, held: str, seed: int) -> dict:
    """The held-out site adapted from 20 of its rows; its other rows scored (log-likelihood
    per row) under adapt, under adapt with the fitted sites' shared concentration (what
    adapt did before it learned the new domain's own), the same estimator pooled and the
    separate fit (bayes, iss = 1); the adapted site's learned concentration."""
    nodes = ["A", "B"]
    rows = df[df.site == held].sample(frac=1.0, random_state=seed)
    ad, te = rows.iloc[:20][nodes], rows.iloc[20:][nodes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pop = bs.fit("[A][B|A]", df[df.site != held], method="hmd", domain="site")
        a = pop.adapt(ad, held)
        shared = {n: float(np.exp(pop.cpd(n).estimate.info["s_domain_log"] @ pop.cpd(n).estimate.info[
            "s_domain_weights"])) for n in nodes}
        old = pop.adapt(ad, held, s_domain=shared)
        pooled = bs.fit("[A][B|A]", pd.concat([df[df.site != held][nodes], ad]), method="hmd")
        sep = bs.fit("[A][B|A]", ad, method="bayes", iss=1)
    rep = a.domain_report(draws=0)
    s_d = float(np.exp(np.log(rep.loc[rep.domain == held, "s_domain"]).mean()))
    return {"adapt": a.for_domain(held).logpdf(te).mean(), "shared": old.for_domain(held).logpdf(te).mean(),
            "pooled": pooled.logpdf(te).mean(), "separate": sep.logpdf(te).mean(), "s": s_d}


@pytest.mark.slow
def test_a_far_domain_keeps_its_counts_and_a_typical_one_borrows():
    """Eight draws of six sites, one far from the rest (spread 1 against 100).  In every
    draw the far site learns a concentration a twentieth of a typical site's or less and
    scores 0.25 nats/row or more above the shared concentration (which pulled it toward
    the population as hard as a typical site); a typical site does no worse than with the
    shared one.  Against the separate fit on its 20 rows, the far site is within 0.01
    nats/row or better in the median draw (and in five of the eight: 20 rows cannot always
    tell a spread of 1 from one of 10, seed 4 loses 0.17)."""
    gap_sep = []
    for seed in range(8):
        df = _spread_sites(seed)
        far, typical = _lodo_scores(df, "far", seed), _lodo_scores(df, "s1", seed)
        assert far["s"] < typical["s"] / 20, seed
        assert far["adapt"] > far["shared"] + 0.25 and far["adapt"] > far["pooled"] + 0.3, seed
        assert typical["adapt"] > typical["shared"] - 0.005 and typical["adapt"] > typical["separate"] + 0.1, seed
        gap_sep.append(far["adapt"] - far["separate"])
    assert np.median(gap_sep) > -0.01
    assert sum(g > -0.01 for g in gap_sep) >= 5


# ----------------------------------------------------------------------------- reports and draws


def test_the_report_and_the_draws_of_an_adapted_domain(tmp_path):
    df = _sites(4, {"s1": 50, "s2": 80, "s3": 30, "far": 1.0}, 400)
    net = bs.fit("[A][B|A]", df[df.site != "far"], method="hmd", domain="site")
    a = net.adapt(df[df.site == "far"].drop(columns="site").iloc[:30], "far")
    rep = a.domain_report(draws=0)
    mine = rep[rep.domain == "far"]
    others = rep[rep.domain != "far"]
    assert (mine.s_domain.to_numpy() < others.groupby("node").s_domain.first()[mine.node].to_numpy()).all()
    assert mine.shrinkage.max() < others.shrinkage.min()
    # parameter draws of the adapted domain: around its tables, with its sds
    dB = a._posterior_tables(4000, np.random.default_rng(1))["B"][..., a.domains.index("far")]
    np.testing.assert_allclose(dB.mean(axis=0), a.cpt("B")[..., a.domains.index("far")], atol=0.01)
    np.testing.assert_allclose(dB.std(axis=0), a.cpt("B", stat="sd")[..., a.domains.index("far")], rtol=0.12,
                               atol=0.004)
    # saved and read back: the same tables, the same own posterior
    path = tmp_path / "a.pbn"
    a.write(path)
    back = bs.read_network(path)
    assert back.max_abs_diff(a) == 0.0
    for n in ("A", "B"):
        own_a, own_b = (own_concentrations(x.cpd(n).estimate.info)[a.domains.index("far")] for x in (a, back))
        np.testing.assert_array_equal(own_a[1], own_b[1])
    assert back.adapt(df[df.site == "far"].drop(columns="site").iloc[30:40], "far").max_abs_diff(
        a.adapt(df[df.site == "far"].drop(columns="site").iloc[30:40], "far")) < 1e-12


# ----------------------------------------------------------------------------- rows without a fitted domain


def test_rows_without_a_domain_get_the_population():
    df = _sites(5, {"s1": 20, "s2": 40}, 300)
    net = bs.fit("[A][B|A]", df, method="hmd", domain="site")
    rows = df.drop(columns="site").iloc[:12]
    pop = net.for_domain(None)
    with pytest.warns(UnseenDomainWarning, match="no domain column 'site'"):
        lp = net.logpdf(rows)
    np.testing.assert_allclose(lp, pop.logpdf(rows), atol=1e-12)
    with pytest.warns(UnseenDomainWarning, match="no domain column"):
        pp = net.predict_proba(rows, "B")
    np.testing.assert_allclose(pp.to_numpy(), pop.predict_proba(rows, "B").to_numpy(), atol=1e-12)
    # a missing value in the domain column: that row alone
    mixed = df.iloc[:4].copy()
    mixed["site"] = mixed["site"].astype(object)
    mixed.loc[mixed.index[1], "site"] = None
    with pytest.warns(UnseenDomainWarning, match="1 row"):
        lp_mixed = net.logpdf(mixed)
    assert lp_mixed[1] == pytest.approx(pop.logpdf(mixed.iloc[[1]].drop(columns="site"))[0], abs=1e-12)
    assert lp_mixed[0] == pytest.approx(net.for_domain(mixed.site.iloc[0]).logpdf(mixed.iloc[[0]])[0], abs=1e-12)
    # refused on request: per call, or as the fit's option
    with pytest.raises(MissingColumnError, match="'site' \\(domain\\)"):
        net.logpdf(rows, on_unseen_domain="error")
    strict = bs.fit("[A][B|A]", df, method="hmd", domain="site", on_unseen_domain="error")
    assert strict.options.on_unseen_domain == "error"
    with pytest.raises(MissingColumnError):
        strict.predict_proba(rows, "B")
    with pytest.raises(UnseenDomainError, match="'s9'"):
        strict.logpdf(df.iloc[:3].assign(site="s9"))
    with pytest.raises(UnseenDomainError):
        strict.for_domain("s9")
    np.testing.assert_allclose(strict.predict_proba(rows, "B", on_unseen_domain="warn").to_numpy(),
                               pp.to_numpy(), atol=1e-12)
    with pytest.raises(bs.errors.HyperparameterError, match="on_unseen_domain"):
        net.logpdf(rows, on_unseen_domain="ignore")


# ----------------------------------------------------------------------------- classifiers


def _chile_split():
    df = bs.load_dataset("chile")
    old = df[df.region != "N"].copy()
    old["region"] = old["region"].cat.remove_unused_categories()
    return df, old, df[df.region == "N"]


@pytest.mark.parametrize("structure", ["nb", "tan"])
def test_a_classifier_adapted_by_maximum_likelihood_equals_the_refit(structure):
    df, old, new = _chile_split()
    feats = [c for c in df if c not in ("vote",)]
    clf = bs.BNClassifier(structure=structure, method="mle", domain="region").fit(old[feats], old["vote"])
    rows = new.iloc[:60]
    clf.adapt(rows[feats], rows["vote"], "N")
    # the same structure refitted with the new domain's rows: N's tables are its own frequencies in both, and
    # every configuration these rows reach was seen in them
    both = pd.concat([old, rows])
    ref = bs.fit(clf.dag_, both[[*feats, "vote"]].rename(columns={"vote": clf.target_}), method="mle",
                 domain="region")
    want = ref.predict_proba(rows[feats], clf.target_).to_numpy()
    np.testing.assert_allclose(clf.predict_proba(rows[feats]), want, atol=1e-12)
    # integer weights are repeated rows
    w = np.resize([1, 2, 3], len(rows))
    a = bs.BNClassifier(structure=structure, method="mle", domain="region").fit(old[feats], old["vote"])
    a.adapt(rows[feats], rows["vote"], "N", sample_weight=w)
    rep = rows.loc[rows.index.repeat(w)]
    b = bs.BNClassifier(structure=structure, method="mle", domain="region").fit(old[feats], old["vote"])
    b.adapt(rep[feats], rep["vote"], "N")
    np.testing.assert_allclose(a.predict_proba(rows[feats]), b.predict_proba(rows[feats]), atol=1e-12)


def test_every_eskdb_member_is_adapted():
    df, old, new = _chile_split()
    feats = [c for c in df if c != "vote"]
    clf = bs.BNClassifier(structure="eskdb", n_estimators=3, k=2, method="mle", domain="region",
                          random_state=0).fit(old[feats], old["vote"])
    dags = list(clf.dags_)
    rows = new.iloc[:80]
    clf.adapt(rows[feats], rows["vote"], "N")
    assert clf.dags_ == dags and all("N" in m.domains for m in clf.estimators_)
    both = pd.concat([old, rows])[[*feats, "vote"]].rename(columns={"vote": clf.target_})
    refits = [bs.fit(dag, both, method="mle", domain="region", na="level") for dag in dags]
    want = np.mean([r.predict_proba(rows[feats], clf.target_).to_numpy() for r in refits], axis=0)
    np.testing.assert_allclose(clf.predict_proba(rows[feats]), want, atol=1e-12)


def test_a_hierarchical_classifier_learns_the_new_region():
    """Each Chilean region left out, the TAN-hmd classifier adapted from its first 20
    rows: the held-out log-likelihood of the classes rises in four regions of five
    (C, M, S, SA: by 0.009-0.019 nats/row) and N, a typical region, stays within 0.001."""
    df = bs.load_dataset("chile")
    feats = [c for c in df if c != "vote"]
    gains = {}
    for region in df.region.cat.categories:
        old = df[df.region != region].copy()
        old["region"] = old["region"].cat.remove_unused_categories()
        new = df[df.region == region]
        clf = bs.BNClassifier(structure="tan", method="hmd", domain="region").fit(old[feats], old["vote"])
        test = new.iloc[20:]
        y = pd.Categorical(test["vote"], categories=clf.classes_).codes
        with pytest.warns(UnseenDomainWarning):
            before = clf.predict_proba(test[feats])
        clf.adapt(new.iloc[:20][feats], new.iloc[:20]["vote"], region)
        after = clf.predict_proba(test[feats])
        ll = [np.log(p[np.arange(len(y)), y]).mean() for p in (before, after)]
        gains[region] = ll[1] - ll[0]
    assert sum(g > 0.005 for g in gains.values()) >= 4 and min(gains.values()) > -0.002, gains
    df, old, new = _chile_split()
    test = new.iloc[20:]
    # a classifier fitted without domains is the population; its domain column is named at adapt
    plain = bs.BNClassifier(structure="nb", method="hmd").fit(old[[c for c in feats if c != "region"]], old["vote"])
    plain.adapt(new.iloc[:20].drop(columns=["vote", "region"]), new.iloc[:20]["vote"], "N", column="site")
    assert plain.options_.domain == "site" and plain.network_.domains == ["N"]
    X = test.drop(columns=["vote", "region"])
    with pytest.warns(UnseenDomainWarning, match="no domain column 'site'"):
        p_pop = plain.predict_proba(X)
    p_n = plain.predict_proba(X.assign(site="N"))
    assert not np.allclose(p_pop, p_n)
    with pytest.raises(bs.errors.DataError, match="domain column is 'region'"):
        clf.adapt(new.iloc[:5][feats], new.iloc[:5]["vote"], "N", column="site")
    with pytest.raises(MissingColumnError, match="'age' \\(feature\\)"):
        clf.adapt(new.iloc[:5][["sex", "region"]], new.iloc[:5]["vote"], "N")


# ----------------------------------------------------------------------------- evaluate_domains


def test_evaluate_domains_reports_what_the_adapted_domain_learned():
    df = _spread_sites(6, per=200)
    ev = bs.evaluate_domains("[A][B|A]", df, "site", k_grid=(0, 20))
    r = ev.results
    hier = r[(r.scheme == "lodo") & (r.setting == "hierarchical")]
    assert hier.loc[hier.k == 20, "s_domain"].notna().all() and hier.loc[hier.k == 0, "s_domain"].isna().all()
    far = hier[(hier.k == 20) & (hier.domain == "far")]
    typical = hier[(hier.k == 20) & (hier.domain != "far")]
    assert float(far.s_domain.iloc[0]) < typical.s_domain.min()
    assert float(far.shrinkage.iloc[0]) < typical.shrinkage.min()
    # the share of domains where the hierarchical setting beats both, counted again by hand
    s = ev.summary()
    lo = r[(r.scheme == "lodo") & (r.k == 20)].set_index(["setting", "domain"])["loglik"]
    wins = [(lo["hierarchical", d] > lo["pooled", d]) and (lo["hierarchical", d] > lo["separate", d])
            for d in ("s0", "s1", "s2", "s3", "s4", "far")]
    assert s.loc[("lodo", 20, "hierarchical"), "beats_both"] == pytest.approx(np.mean(wins))
    assert np.isnan(s.loc[("lodo", 20, "pooled"), "beats_both"])
