"""The BHD score (Azzimonti, Corani & Scutari 2022): a variational lower bound of the
hierarchical model's log marginal likelihood, checked against an independent numerical
integration of the same marginal likelihood on small cases (the bound lies below it,
and close); its relation to the hmd fit's evidence bound; hc with score="bhd"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special

import pybncsmooth as bs
from pybncsmooth.errors import DataError, HyperparameterError, MissingColumnError
from pybncsmooth.estimators.hmd.estimator import fit_hmd_matrix, hmd_evidence
from pybncsmooth.learning.bhd import bhd_family


def _log_dirmult(n: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """log of the sequence likelihood of counts n under Dir(alpha), integrated (alpha
    may be a stack of rows)."""
    a = np.atleast_2d(alpha)
    return (special.gammaln(a.sum(1)) - special.gammaln(a.sum(1) + n.sum())
            + np.sum(special.gammaln(a + n) - special.gammaln(a), axis=1))


def _exact_binary(table: np.ndarray, s: float, a0: float) -> float:
    """log p(table) of one configuration's (domains, 2) counts: alpha = s (u, 1 - u),
    u ~ Beta(a0, a0), by adaptive quadrature."""
    def f(u: float) -> float:
        al = np.array([s * u, s * (1 - u)])
        lp = sum(_log_dirmult(row, al)[0] for row in table)
        return float(np.exp(lp + (a0 - 1) * np.log(u * (1 - u)) - special.betaln(a0, a0)))

    v, _ = integrate.quad(f, 0, 1, epsabs=0, epsrel=1e-12, limit=400)
    return float(np.log(v))


def _exact_mc(table: np.ndarray, s: float, a0: float, n: int = 400_000, seed: int = 3) -> tuple[float, float]:
    """log p(table) by Monte Carlo over u ~ Dir(a0) and its standard error (delta method)."""
    rng = np.random.default_rng(seed)
    U = rng.dirichlet(np.full(table.shape[1], a0), size=n)
    lp = sum(_log_dirmult(row, s * U) for row in table)
    w = np.exp(lp - lp.max())
    return float(lp.max() + np.log(w.mean())), float(w.std() / w.mean() / np.sqrt(n))


@pytest.mark.parametrize("s,a0", [(2.0, 1.0), (1.0, 0.5), (6.0, 2.0)])
def test_bhd_is_below_the_marginal_likelihood_and_close_binary(s, a0):
    rng = np.random.default_rng(11)
    counts = rng.integers(0, 15, size=(3, 4, 2)).astype(float)  # 3 configurations, 4 domains
    counts[1, 2] = 0  # a domain without rows in a configuration
    exact = np.array([_exact_binary(counts[j][counts[j].sum(1) > 0], s, a0) for j in range(3)])
    got = np.array([bhd_family(counts[j:j + 1], s, a0) for j in range(3)])
    # below, and close: the measured gaps are 0.1 - 0.31 nats a configuration (the
    # mean-field family ignores the posterior dependence of theta and alpha)
    assert np.all(exact - got > 0) and np.all(exact - got < 0.5)
    assert bhd_family(counts, s, a0) == pytest.approx(got.sum(), rel=1e-12)  # a sum over configurations


@pytest.mark.parametrize("s,a0,most", [(3.0, 1.0, 0.75), (None, None, 1.5)])
def test_bhd_is_below_the_marginal_likelihood_and_close_three_levels(s, a0, most):
    counts = np.array([[[3, 1, 0], [0, 4, 2], [2, 2, 1]], [[5, 0, 1], [1, 1, 6], [0, 0, 0]]], dtype=float)
    for j in range(2):
        # the defaults: s = 4 r = 12, alpha0 = 1 / r
        exact, se = _exact_mc(counts[j][counts[j].sum(1) > 0], s or 12.0, a0 or 1 / 3)
        got = bhd_family(counts[j:j + 1], s, a0)
        # measured gaps: 0.59 and 0.64 nats at s = 3, alpha0 = 1; 1.36 and 1.24 at the
        # defaults (the bound loosens as s grows); Monte Carlo standard error <= 0.005
        assert exact - got > 4 * se and exact - got < most


def test_bhd_is_the_hmd_fits_evidence_bound_summed_over_configurations():
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 9, size=(4, 3, 3)).astype(float)
    counts[2] = 0  # an unobserved configuration adds 0
    for s, a0 in ((3.0, 1.0), (12.0, 1 / 3)):
        ref = sum(fit_hmd_matrix(counts[j].T[:, counts[j].sum(1) > 0], s, a0).elbo for j in (0, 1, 3))
        assert bhd_family(counts, s, a0) == pytest.approx(ref, rel=1e-12)
        assert hmd_evidence(counts, s, a0) == pytest.approx(ref, rel=1e-12)
    assert bhd_family(counts) == bhd_family(counts, 12.0, 1 / 3)  # the defaults: s = 4 r, alpha0 = 1 / r


@pytest.mark.parametrize("s,a0", [(2.0, 1.0), (8.0, 0.5), (1.0, 0.05)])
def test_bhd_newton_maximum_matches_the_coordinate_ascent_on_skewed_tables(s, a0):
    """Configurations where a rare level's kappa moves far from its pooled frequency (the
    Newton solver's hard case): the same maximum as the hmd fit's coordinate ascent."""
    T = np.array([[[951, 3], [946, 5], [939, 7], [939, 13], [944, 7]],
                  [[205, 0], [202, 0], [232, 0], [216, 0], [217, 1]],
                  [[0, 0], [0, 0], [0, 0], [1, 0], [0, 0]]], dtype=float)
    ref = sum(fit_hmd_matrix(t.T[:, t.sum(1) > 0], s, a0).elbo for t in T)
    assert bhd_family(T, s, a0) == pytest.approx(ref, rel=1e-12)
    # in at most 8 Newton steps a configuration (the coordinate ascent takes hundreds)
    assert hmd_evidence(T, s, a0, max_iter=8) == pytest.approx(ref, rel=1e-12)
    assert bhd_family(np.ones((3, 4, 1))) == 0.0  # one level: every likelihood is 1


def _sites(n_sites: int = 4, rows: int = 600, seed: int = 2) -> pd.DataFrame:
    """A -> B -> C, B's and C's tables differing between sites (a Dirichlet around the
    shared one), A independent of C given B."""
    rng = np.random.default_rng(seed)
    parts = []
    for k in range(n_sites):
        a = rng.random(rows) < 0.4
        pb = rng.dirichlet([20 * 0.8, 20 * 0.2])
        pb2 = rng.dirichlet([20 * 0.25, 20 * 0.75])
        b = np.where(a, rng.random(rows) < pb[0], rng.random(rows) < pb2[0])
        pc = rng.dirichlet([20 * 0.7, 20 * 0.2, 20 * 0.1])
        pc2 = rng.dirichlet([20 * 0.1, 20 * 0.3, 20 * 0.6])
        c = np.where(b, rng.choice(3, rows, p=pc), rng.choice(3, rows, p=pc2))
        parts.append(pd.DataFrame({"A": a.astype(int), "B": b.astype(int), "C": c, "site": k}))
    df = pd.concat(parts, ignore_index=True)
    return df.astype({"A": "category", "B": "category", "C": "category", "site": "category"})


def test_hc_with_bhd_learns_the_shared_structure_and_fit_takes_it():
    df = _sites()
    dag = bs.hc(df, score="bhd", domain="site")
    assert dag.nodes == ["A", "B", "C"]
    assert bs.shd(dag, "[A][B|A][C|B]") == 0
    net = bs.fit(dag, df, method="hmd", domain="site")
    assert net.modelstring() == dag.modelstring()


def _related(net: "bs.FittedNetwork", n_domains: int, rows: int, c: float, seed: int) -> pd.DataFrame:
    """Rows from n_domains versions of net, each CPT column drawn from Dir(c p) around
    the network's p, ancestral sampling; the domain in the column "site"."""
    rng = np.random.default_rng(seed)
    parts = []
    for d in range(n_domains):
        codes: dict = {}
        for v in net.dag.topological_order():
            t = net.cpt(v)
            r = t.shape[0]
            cols = t.reshape(r, -1).T
            t = np.array([rng.dirichlet(np.maximum(c * p, 1e-3)) for p in cols]).T.reshape(t.shape)
            pa = net.parents(v)
            probs = t[(slice(None), *(codes[p] for p in pa))].T if pa else np.broadcast_to(t, (rows, r))
            u = rng.random(rows)[:, None]
            codes[v] = (np.cumsum(probs, axis=1) < u).sum(axis=1).clip(0, r - 1)
        frame = pd.DataFrame({v: pd.Categorical.from_codes(codes[v], categories=net.levels(v)) for v in net.nodes})
        frame["site"] = d
        parts.append(frame)
    df = pd.concat(parts, ignore_index=True)
    return df.astype({"site": "category"})


def test_hc_bhd_recovers_child_from_related_sites_better_than_pooled_bdeu():
    """The done-when's study in miniature (benchmarks/bench_structure_shd.py runs it
    whole): child, 5 sites of 1,000 rows whose tables differ (concentration 10), three
    seeds.  Measured mean SHD: BHD 0.0, BDeu 11.0 (per seed 0, 0, 0 and 15, 13, 5)."""
    net = bs.read_network(str(Path(__file__).parent / "data" / "repository" / "child.bif.gz"))
    shd_bhd, shd_bde = [], []
    for seed in (1, 2, 3):
        df = _related(net, 5, 1000, 10.0, seed)
        shd_bhd.append(bs.shd(bs.hc(df, score="bhd", domain="site"), net.dag))
        shd_bde.append(bs.shd(bs.hc(df.drop(columns="site"), score="bde", iss=1), net.dag))
    assert np.mean(shd_bhd) <= 2 and np.mean(shd_bde) - np.mean(shd_bhd) >= 5, (shd_bhd, shd_bde)


def test_bhd_bad_input_is_named():
    df = _sites(rows=50)
    with pytest.raises(HyperparameterError, match="domain="):
        bs.score("[A][B|A][C|B]", df, "bhd")
    with pytest.raises(MissingColumnError, match="region"):
        bs.score("[A][B|A][C|B]", df, "bhd", domain="region")
    with pytest.raises(HyperparameterError, match="s must be"):
        bs.score("[A][B|A][C|B]", df, "bhd", domain="site", s=0)
    with pytest.raises(DataError, match="cannot also be a node"):
        bs.score("[A][B|A][C|B][site]", df, "bhd", domain="site")


def _child_sites(seed: int, rows: int = 200) -> tuple["bs.FittedNetwork", pd.DataFrame]:
    """child, 5 nearly homogeneous sites (concentration 10,000) of ``rows`` rows."""
    net = bs.read_network(str(Path(__file__).parent / "data" / "repository" / "child.bif.gz"))
    return net, _related(net, 5, rows, 1e4, seed)


def test_hc_bhd_default_search_never_scores_below_the_plain_climb():
    """The default search (a climb from the pooled BDeu network, iterated local search)
    against bnlearn's plain climb from the empty graph (restart=0).  Measured BHD gains
    on these seeds: 106.5, 0.8, 241.7 nats; SHD to the truth 10, 7, 11 against 15, 7, 20."""
    gains = []
    for seed in (1, 2, 3):
        net, df = _child_sites(seed)
        found = bs.hc(df, score="bhd", domain="site")
        plain = bs.hc(df, score="bhd", domain="site", restart=0)
        assert plain == bs.hc(df, score="bhd", domain="site", start=bs.DAG({v: [] for v in net.nodes}))
        gains.append(bs.score(found, df, "bhd", domain="site") - bs.score(plain, df, "bhd", domain="site"))
    assert min(gains) >= 0, gains
    assert max(gains) > 50, gains  # the default search is not the plain climb


def test_hc_bhd_default_search_is_reproducible_and_seeded():
    _, df = _child_sites(1)
    a = bs.hc(df, score="bhd", domain="site")
    assert a == bs.hc(df, score="bhd", domain="site")  # random_state=None: a fixed seed
    b = bs.hc(df, score="bhd", domain="site", random_state=11)
    assert b == bs.hc(df, score="bhd", domain="site", random_state=11)
    scores = {bs.score(g, df, "bhd", domain="site") for g in (a, b)}
    assert min(scores) >= bs.score(bs.hc(df, score="bhd", domain="site", restart=0), df, "bhd", domain="site")
    restarted = [bs.hc(df, score="bhd", domain="site", restart=3, perturb=2, random_state=5) for _ in range(2)]
    assert restarted[0] == restarted[1]  # bnlearn's random restarts keep their meaning


def test_hc_bhd_honours_start_whitelist_and_blacklist():
    net, df = _child_sites(2)
    # a user's start= is bnlearn's climb from it: with no operation allowed it is returned as given
    assert bs.hc(df, score="bhd", domain="site", start=net.dag, max_iter=0) == net.dag
    from_truth = bs.hc(df, score="bhd", domain="site", start=net.dag)
    assert from_truth == bs.hc(df, score="bhd", domain="site", start=net.dag, restart=0)
    wl, bl = [("Age", "Disease")], [("Disease", "LungParench")]
    found = bs.hc(df, score="bhd", domain="site", whitelist=wl, blacklist=bl)
    assert ("Age", "Disease") in found.arcs and ("Disease", "LungParench") not in found.arcs
    plain = bs.hc(df, score="bhd", domain="site", whitelist=wl, blacklist=bl, restart=0)
    assert bs.score(found, df, "bhd", domain="site") >= bs.score(plain, df, "bhd", domain="site")
    capped = bs.hc(df, score="bhd", domain="site", maxp=1)
    assert max(len(capped.parents(v)) for v in capped.nodes) <= 1
