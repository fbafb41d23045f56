"""Issue 58: a new domain borrows node by node.  Each node of an adapted domain chooses
its table (a copy of a fitted domain's, the population's spread, an unusual type of its
own), the choices tied across the nodes with prior probability 1/2
(:func:`pybncsmooth.estimators.domains.prior.node_choice_weights`).  Checked: the
posterior of the choices against enumeration; a domain like a fitted one in one node and
like none in the other keeps its own rows there and borrows in the first; the regret
criterion (leave one domain out, 20 rows, 8 draws) on simulated two-node shapes
(``benchmarks/bench_domains.py``'s ``two_nodes``)."""

from __future__ import annotations

import itertools
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_domains import draw_rows, two_nodes  # noqa: E402


def test_the_choices_posterior_by_enumeration():
    """Three nodes, two fitted domains and two kinds of new type: the posterior of each
    node's choice is the sum, over every joint choice of the nodes (tied: one choice for
    all, prior 1/2 times pi_c; untied: prior 1/2 times the product of the nodes'
    pi_c), of its prior times its likelihood, normalised."""
    from pybncsmooth.estimators.domains.prior import choice_prior, node_choice_weights

    rng = np.random.default_rng(3)
    atom_ev = rng.normal(-5, 2, size=(3, 2))
    new_ev = rng.normal(-5, 2, size=(3, 2))
    L = np.concatenate([atom_ev, new_ev], axis=1)
    for share, tied in ((0.5, 0.5), (0.3, 0.8), (0.5, 0.0), (0.5, 1.0)):
        pi = np.exp(choice_prior(2, 2, share))
        post = np.zeros((3, 4))
        z = 0.0
        for combo in itertools.product(range(4), repeat=3):
            like = np.exp(sum(L[v, c] for v, c in enumerate(combo)))
            prior = (1 - tied) * np.prod([pi[c] for c in combo])
            if len(set(combo)) == 1:
                prior += tied * pi[combo[0]]
            z += prior * like
            for v, c in enumerate(combo):
                post[v, c] += prior * like
        post /= z
        wa, wn, p_tied = node_choice_weights(atom_ev, new_ev, share, tied)
        np.testing.assert_allclose(np.concatenate([wa, wn], axis=1), post, rtol=1e-10)
        t = tied * sum(pi[c] * np.exp(L[:, c].sum()) for c in range(4))
        assert p_tied == pytest.approx(t / z, rel=1e-10)
    # the prior: half on the fitted domains, a quarter on each kind of new type
    np.testing.assert_allclose(np.exp(choice_prior(5, 2)), [0.1] * 5 + [0.25, 0.25], rtol=1e-12)


def _left_out(df: pd.DataFrame, held: str, seed: int, method: str = "hmd") -> tuple:
    """``held`` left out, adapted from draw ``seed`` of 20 of its rows; the adapted
    network, the separate fit (bayes, iss = 1) and the population."""
    ad, _ = draw_rows(df, "dom", seed, 20)[held]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pop = bs.fit("[G][Y|G]", df[df.dom != held], method=method, domain="dom", random_state=0)
        a = pop.adapt(ad[["G", "Y"]], held)
    return a, bs.fit("[G][Y|G]", ad[["G", "Y"]], method="bayes", iss=1), pop


@pytest.mark.parametrize("method", ["hmd", "hdp"])
def test_an_unusual_node_keeps_its_rows_and_a_typical_one_borrows(method):
    """The shape of the issue (``two_nodes("mixed")``): d5's outcome rate is 0.05 where
    the other domains give 0.30-0.61, its group share 0.47 like d3's.  From a draw with
    1 positive of 20 (0 of 10 and 1 of 10 by group) its outcome table ends at most 0.3
    of the way from the separate fit's (0.02, 0.12) to the population's (0.47, 0.40):
    0.12 and 0.20 (hmd), 0.23 and 0.27 of the way; before issue 58 it was 0.18 and
    0.24, 0.35 and 0.43 of the way (the unusual type's ``s`` near 3).  Its group share
    borrows (most like d3)."""
    df = two_nodes("mixed", 0)[0]
    a, sep, pop = _left_out(df, "d5", 2, method)
    j = a.domains.index("d5")
    y1, y_sep, y_pop = a.cpt("Y")[1, :, j], sep.cpt("Y")[1], pop.for_domain(None).cpt("Y")[1]
    assert ((y1 - y_sep) / (y_pop - y_sep) < 0.3).all(), (y1, y_sep, y_pop)
    rep = a.domain_report(draws=0).set_index(["domain", "node"])
    # Y mostly a type of its own, G most like d3
    # (hmd: p_new 0.71 in Y, d3 the likeliest copy of the rest, 0.17)
    assert rep.loc[("d5", "Y"), "p_new"] > 0.6 and rep.loc[("d5", "G"), "like"] == "d3", rep.loc["d5"]


def _regrets(shape: str, method: str = "hmd") -> pd.DataFrame:
    """Leave each domain of ``two_nodes(shape, 0)`` out, adapt from each of 8 draws of 20
    rows, score the rest: adapt's, pooled's and separate's log-likelihood per row."""
    df = two_nodes(shape, 0)[0]
    out = []
    for held in df.dom.cat.categories:
        others = df[df.dom != held]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pop = bs.fit("[G][Y|G]", others, method=method, domain="dom", random_state=0)
            for seed in range(1, 9):
                ad, te = (x[["G", "Y"]] for x in draw_rows(df, "dom", seed, 20)[held])
                la = pop.adapt(ad, held).for_domain(held).logpdf(te).mean()
                lp = bs.fit("[G][Y|G]", pd.concat([others[["G", "Y"]], ad]), method=method,
                            random_state=0).logpdf(te).mean()
                ls = bs.fit("[G][Y|G]", ad, method="bayes", iss=1).logpdf(te).mean()
                out.append(dict(domain=held, draw=seed, adapt=la, pooled=lp, separate=ls))
    res = pd.DataFrame(out)
    res["regret"] = np.maximum(res.pooled, res.separate) - res.adapt
    return res


def _criterion(res: pd.DataFrame) -> None:
    by = res.groupby("domain").regret
    assert (by.mean() <= 0.01).all(), by.mean().round(4).to_dict()
    assert res.regret.max() <= 0.05, res.sort_values("regret").tail(3)
    assert (res.adapt - res.pooled).mean() > 0 and (res.adapt - res.separate).mean() > 0


def test_the_regret_criterion_where_no_domain_departs():
    """``two_nodes("alike")``: every domain's mean regret over 8 draws at most 0.01
    nats/row and no draw over 0.05 (adapt at most 0.0042 behind on average, worst draw
    0.037); adapt stays within 0.003 nats/row of pooling on average (0.0013 behind), and
    beats the separate fit by far (pooling is the truth here: it cannot be beaten on
    average)."""
    res = _regrets("alike")
    by = res.groupby("domain").regret
    assert (by.mean() <= 0.01).all() and res.regret.max() <= 0.05, by.agg(["mean", "max"])
    assert (res.adapt - res.pooled).mean() > -0.003 and (res.adapt - res.separate).mean() > 0.05


def test_the_regret_criterion_where_a_domain_is_unusual_in_one_node():
    """``two_nodes("mixed")``, d5 (outcome 0.05, the others 0.30-0.61; its group like
    d3's): its mean regret over 8 draws was 0.031 nats/row (the unusual type's ``s`` and
    its small prior share pulled the outcome toward the population); now 0.0086, at most
    0.01, and no draw over 0.05 (worst 0.043)."""
    df = two_nodes("mixed", 0)[0]
    reg = []
    for seed in range(1, 9):
        a, sep, _ = _left_out(df, "d5", seed)
        _, te = draw_rows(df, "dom", seed, 20)["d5"]
        others = df[df.dom != "d5"]
        ad = draw_rows(df, "dom", seed, 20)["d5"][0][["G", "Y"]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lp = bs.fit("[G][Y|G]", pd.concat([others[["G", "Y"]], ad]), method="hmd",
                        random_state=0).logpdf(te[["G", "Y"]]).mean()
        la = a.for_domain("d5").logpdf(te[["G", "Y"]]).mean()
        reg.append(max(lp, sep.logpdf(te[["G", "Y"]]).mean()) - la)
    assert np.mean(reg) <= 0.01 and max(reg) <= 0.05, np.round(reg, 4)


@pytest.mark.xfail(strict=True, reason=(
    "issue 58's criterion is not met on these shapes (hmd and hdp alike).  'mixed': d3 (group share 0.47 like d5's, "
    "outcome 0.34 like d2's, both near the population's centre) has mean regret 0.038 nats/row, worst draw 0.097: "
    "in 5 of its 8 draws 12-13 of its 20 rows are in g1, the two fitted domains at 0.65/0.67 explain that best, and "
    "their copies take the group node (tied, also the outcome) where pooling sits near the truth.  'departs': d2's "
    "mean is 0.0114, single draws of d3 and d4 reach 0.12 and 0.11 (the unusual node's 15-17 of 20 rows are about as "
    "likely under a copy of a domain near the centre as under the diffuse unusual type).  No prior tried in this "
    "family reached the criterion on either shape: choices tied at 0.5-0.99 or a per-node departure model (each node "
    "follows the domain's choice with probability 0.5-0.95), new type 0.5-1 (1: never a copy), unusual share "
    "0.5-0.75, leave-one-out evidence (d3 in 'mixed' 0.029-0.038; 'departs' worst draw 0.069-0.12).  It is not "
    "shown unattainable: chosen with hindsight on the held-out rows, one of adapt's own choices per node gives "
    "largest domain means -0.015 ('mixed') and -0.004 ('departs'), no draw over 0.004 "
    "(benchmarks/bench_domains.py --regret --choices)"))
@pytest.mark.parametrize("shape", ["mixed", "departs"])
def test_the_regret_criterion_on_the_shapes_that_depart(shape):
    _criterion(_regrets(shape))


def test_evaluate_domains_averages_each_domains_regret_over_draws():
    """``n_draws=4``: each left-out domain adapted from four draws of its 20 rows (the
    population fitted once); ``summary(by_domain=True)`` gives each domain's regret
    averaged over them and its worst draw, ``summary()`` the largest domain mean
    (``max_domain_regret``); the first domain's first draw is the scheme's without
    ``n_draws`` (the same random stream)."""
    df = two_nodes("mixed", 0, per=120)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = bs.evaluate_domains("[G][Y|G]", df, "dom", k_grid=(20,), n_draws=4, random_state=1)
        one = bs.evaluate_domains("[G][Y|G]", df, "dom", k_grid=(20,), random_state=1)
    r = ev.results
    lodo = r[(r.scheme == "lodo") & (r.setting == "hierarchical")]
    assert sorted(lodo.draw.unique()) == [0, 1, 2, 3] and len(lodo) == 6 * 4
    assert lodo.groupby("domain", observed=True).loglik.nunique().min() > 1  # the draws differ
    by = ev.summary(by_domain=True).loc[("lodo", 20, "hierarchical")]
    want = lodo.groupby("domain", observed=True).regret
    np.testing.assert_allclose(by["regret"].to_numpy(), want.mean().reindex(by.index).to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(by["max_regret"].to_numpy(), want.max().reindex(by.index).to_numpy(), rtol=1e-12)
    assert (by["n_draws"] == 4).all()
    top = ev.summary().loc[("lodo", 20, "hierarchical")]
    assert top["max_domain_regret"] == pytest.approx(want.mean().max(), rel=1e-12)
    assert top["regret"] == pytest.approx(lodo.regret.mean(), rel=1e-12)
    first = lodo[lodo.draw == 0].set_index("domain").loglik
    o = one.results
    o = o[(o.scheme == "lodo") & (o.setting == "hierarchical")].set_index("domain").loglik
    assert first["d0"] == pytest.approx(o["d0"], rel=1e-12) and first["d1"] != pytest.approx(o["d1"], rel=1e-6)
    with pytest.raises(bs.errors.HyperparameterError, match="n_draws"):
        bs.evaluate_domains("[G][Y|G]", df, "dom", k_grid=(20,), n_draws=0)


def test_the_hindsight_rules_of_the_choices_benchmark():
    """``bench_domains.choice_oracles`` on hand-made node log-likelihoods: two domains,
    one draw each, nodes G and Y, choices c0-c2.  The regret is to the better of pooled
    and separate summed over the nodes; ``joint``: the best single choice for every
    node; ``per_node``: the best choice per node; ``pool_or_sep``: the better of pooled
    and separate per node."""
    from bench_domains import choice_oracles

    rows = pd.DataFrame({
        "data": "x", "method": "hmd", "domain": ["a", "a", "b", "b"], "draw": 1, "node": ["G", "Y", "G", "Y"],
        "adapt": [-0.70, -0.60, -0.50, -0.40], "pooled": [-0.69, -0.65, -0.60, -0.38],
        "separate": [-0.72, -0.61, -0.52, -0.45],
        "c0": [-0.68, -0.70, -0.55, -0.39], "c1": [-0.75, -0.59, -0.49, -0.50], "c2": [-0.71, -0.62, -0.53, -0.41]})
    got = choice_oracles(rows).set_index("domain")
    # a: pooled -1.34, separate -1.33 (ref); c0 -1.38, c1 -1.34, c2 -1.33; per node -0.68 - 0.59
    np.testing.assert_allclose(got.loc["a", ["adapt", "joint", "per_node", "pool_or_sep"]].to_numpy(float),
                               [-1.33 + 1.30, -1.33 + 1.33, -1.33 + 1.27, -1.33 + 1.30], atol=1e-12)
    # b: pooled -0.98, separate -0.97 (ref); c0 -0.94, c1 -0.99, c2 -0.94; per node -0.49 - 0.39
    np.testing.assert_allclose(got.loc["b", ["adapt", "joint", "per_node", "pool_or_sep"]].to_numpy(float),
                               [-0.97 + 0.90, -0.97 + 0.94, -0.97 + 0.88, -0.97 + 0.90], atol=1e-12)
