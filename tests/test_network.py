"""FittedNetwork queries: logpdf, predict_proba, sample, CPT frames, domains."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import (
    DataError,
    DenseTableTooLargeError,
    MissingColumnError,
    UnknownNodeError,
    UnseenLevelError,
    ZeroProbabilityWarning,
)
from conftest import shrunk_by_hand, BNLEARN, modelstring_of


@pytest.fixture(scope="module")
def asia_net(asia):
    return bs.fit(modelstring_of("asia"), asia, method="bayes", iss=1)


def _all_configurations(net) -> pd.DataFrame:
    levels = [net.levels(n) for n in net.nodes]
    rows = list(itertools.product(*levels))
    df = pd.DataFrame(rows, columns=net.nodes)
    for n in net.nodes:
        df[n] = pd.Categorical(df[n], categories=net.levels(n))
    return df


def test_logpdf_is_the_sum_of_cpt_logs(asia_net):
    df = _all_configurations(asia_net)
    lp = asia_net.logpdf(df)
    # brute force from the dense tables
    manual = np.zeros(len(df))
    for n in asia_net.nodes:
        t = asia_net.cpt(n)
        idx = tuple(df[v].cat.codes.to_numpy() for v in [n] + asia_net.parents(n))
        manual += np.log(t[idx])
    np.testing.assert_allclose(lp, manual, rtol=0, atol=1e-12)
    # a joint distribution sums to one over all 2^8 configurations
    assert np.exp(lp).sum() == pytest.approx(1.0, abs=1e-12)
    assert asia_net.loglik(df) == pytest.approx(lp.sum())


@pytest.mark.parametrize("target", ["A", "E", "L", "D", "S"])
def test_predict_proba_equals_brute_force_posterior(asia_net, target):
    df = _all_configurations(asia_net)
    joint = np.exp(asia_net.logpdf(df))
    others = [n for n in asia_net.nodes if n != target]
    got = asia_net.predict_proba(df, target)
    keys = df[others].astype(str).agg("|".join, axis=1)
    denom = pd.Series(joint).groupby(keys.to_numpy()).transform("sum").to_numpy()
    expected = joint / denom
    codes = df[target].cat.codes.to_numpy()
    np.testing.assert_allclose(got.to_numpy()[np.arange(len(df)), codes], expected, rtol=1e-10, atol=1e-14)
    assert list(got.columns) == asia_net.levels(target)
    np.testing.assert_allclose(got.sum(axis=1), 1.0)


def test_predict_proba_needs_only_the_markov_blanket(asia_net, asia):
    target = "T"
    mb = asia_net.dag.markov_blanket(target)
    assert mb == ["A", "E", "L"]
    full = asia_net.predict_proba(asia.iloc[:50], target)
    only_mb = asia_net.predict_proba(asia.iloc[:50][mb], target)
    pd.testing.assert_frame_equal(full, only_mb)
    with pytest.raises(MissingColumnError, match="'L' \\(Markov-blanket variable of 'T'\\)"):
        asia_net.predict_proba(asia[["A", "E"]], target)
    with pytest.raises(UnknownNodeError):
        asia_net.predict_proba(asia, "nope")
    pred = asia_net.predict(asia.iloc[:50], target)
    assert pred.dtype == "category" and list(pred.cat.categories) == ["no", "yes"]
    assert (pred.to_numpy() == np.where(full["yes"] > full["no"], "yes", "no")).all()


def test_unseen_levels_at_prediction(asia_net, asia):
    bad = asia.iloc[:5].copy()
    bad["B"] = bad["B"].astype(str)
    bad.loc[bad.index[2], "B"] = "maybe"
    with pytest.raises(UnseenLevelError) as e:
        asia_net.predict_proba(bad, "S")
    assert e.value.column == "B" and e.value.levels == ["maybe"]
    # back-off: B is a child of S, its factor is dropped for that row
    p = asia_net.predict_proba(bad, "S", on_unseen="backoff")
    row = bad.iloc[[2]].drop(columns=["B"])
    # S's Markov blanket is B, L; without B only L and the prior speak
    manual = asia_net.cpt("S") * asia_net.cpt("L")[asia_net.levels("L").index(row["L"].iloc[0])]
    np.testing.assert_allclose(p.iloc[2].to_numpy(), manual / manual.sum(), rtol=1e-12)
    # logpdf cannot evaluate a row whose own value is unknown
    with pytest.raises(DataError, match="'B'"):
        asia_net.logpdf(bad, on_unseen="backoff")


def test_backoff_of_an_unknown_parent_uses_the_ancestor(asia):
    net = bs.fit(modelstring_of("asia"), asia, method="mestimate", m=1)
    rows = asia.iloc[:3].copy()
    rows["B"] = rows["B"].astype(str)
    rows.loc[rows.index[0], "B"] = "unknown"
    p = net.predict_proba(rows, "E", on_unseen="backoff")
    # E's blanket: parents L, T; children D (parents B, E) and X. With B unknown,
    # D's context tree (split on B first) answers from its root, which does not
    # depend on E: the posterior is P(E | L, T) P(X | E), normalised.
    codes = {v: net.levels(v).index(rows[v].iloc[0]) for v in ["L", "T", "X"]}
    manual = net.cpt("E")[:, codes["L"], codes["T"]] * net.cpt("X")[codes["X"], :]
    np.testing.assert_allclose(p.iloc[0].to_numpy(), manual / manual.sum(), rtol=1e-12)
    root = net.tree("D").levels[0].counts[0]
    np.testing.assert_allclose(net.cpd("D").probs(np.array([[-1, 0]]))[0], (root + 0.5) / (root.sum() + 1))
    # the other rows are unaffected
    full = net.predict_proba(asia.iloc[:3], "E")
    np.testing.assert_allclose(p.iloc[1:].to_numpy(), full.iloc[1:].to_numpy())


def test_sampling_is_reproducible_and_recovers_the_cpts(asia_net):
    a = asia_net.sample(1000, random_state=7)
    b = asia_net.sample(1000, random_state=7)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(asia_net.sample(1000, random_state=8))
    assert list(a.columns) == asia_net.nodes
    assert all(a[c].dtype == "category" for c in a.columns)
    big = asia_net.sample(400_000, random_state=1)
    refit = bs.fit(asia_net.dag, big, method="mle")
    for n in ["S", "B", "L", "X"]:
        # every column of these tables rests on >= 1e4 draws: the standard error of a
        # proportion is at most 0.005, so 0.02 is a 4-sigma bound
        np.testing.assert_allclose(refit.cpt(n), asia_net.cpt(n), atol=0.02)
    # the deterministic E = T or L is reproduced exactly where the data decide it
    np.testing.assert_allclose(refit.cpt("E")[:, 0, 0], asia_net.cpt("E")[:, 0, 0], atol=0.002)


def test_cpt_frames(asia_net):
    tidy = asia_net.cpt_frame("D")
    assert list(tidy.columns) == ["D", "B", "E", "prob"]
    assert len(tidy) == 8
    # node fastest, then parents: as R's as.data.frame(table)
    assert tidy["D"].astype(str).tolist()[:2] == ["no", "yes"]
    assert tidy["prob"].iloc[0] == pytest.approx(0.90012963, abs=5e-9)
    wide = asia_net.cpt_frame("D", wide=True)
    assert wide.shape == (4, 2) and wide.index.names == ["B", "E"]
    np.testing.assert_allclose(wide.sum(axis=1), 1.0)
    root = asia_net.cpt_frame("A", wide=True)
    assert root.shape == (1, 2)


def test_summary_and_repr(asia_net):
    s = asia_net.node_summary()
    assert list(s.index) == asia_net.nodes
    assert s.loc["D", "parents"] == "B, E"
    assert s.loc["D", "parameters"] == 4 and s.loc["D", "n"] == 5000
    assert asia_net.n_params == 18
    assert "method=bayes" in repr(asia_net)


def test_dense_table_limit():
    rng = np.random.default_rng(0)
    cols = {f"P{i}": rng.choice(list("abcdefghij"), 200) for i in range(8)}
    cols["X"] = rng.choice(["u", "v"], 200)
    df = pd.DataFrame(cols)
    net = bs.fit([f"X ~ {' + '.join(f'P{i}' for i in range(8))}"], df, method="mestimate")
    with pytest.raises(DenseTableTooLargeError, match="'X'"):
        net.cpt("X")
    # queries still work through the tree
    lp = net.logpdf(df)
    assert np.isfinite(lp).all()
    p = net.predict_proba(df, "X")
    assert np.allclose(p.sum(axis=1), 1.0)


def test_zero_probability_rows_warn_and_get_uniform():
    df = pd.DataFrame({"C": ["a", "a", "b", "b"], "X": ["u", "u", "v", "v"]})
    net = bs.fit("[C][X|C]", df, method="mle")
    test = pd.DataFrame({"X": pd.Categorical(["u", "v"], categories=["u", "v"])})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = net.predict_proba(test, "C")
    np.testing.assert_allclose(p.to_numpy(), [[1, 0], [0, 1]])
    # with X's table zero everywhere for a value: make an impossible row
    df2 = pd.DataFrame({"C": ["a", "b"], "X": pd.Categorical(["u", "u"], categories=["u", "v"])})
    net2 = bs.fit("[C][X|C]", df2, method="mle")
    with pytest.warns(ZeroProbabilityWarning, match="1 row"):
        p2 = net2.predict_proba(pd.DataFrame({"X": pd.Categorical(["v"], categories=["u", "v"])}), "C")
    np.testing.assert_allclose(p2.to_numpy(), [[0.5, 0.5]])
    assert np.isneginf(net2.logpdf(pd.DataFrame({"C": ["a"], "X": ["v"]})))[0]


def test_networks_read_from_files_answer_queries(asia_net, asia):
    bif = bs.read_network(BNLEARN / "asia.bif")
    p1 = bif.predict_proba(asia.iloc[:100], "L")
    p2 = asia_net.predict_proba(asia.iloc[:100], "L")
    np.testing.assert_allclose(p1.to_numpy(), p2.to_numpy(), atol=1e-6)
    with pytest.raises(DataError, match="dense table"):
        bif.tree("L")
    # an unknown parent value in a dense table is averaged over
    cpd = bif.cpd("D")
    np.testing.assert_allclose(cpd.probs(np.array([[-1, 0]]))[0], bif.cpt("D")[:, :, 0].mean(axis=1))


def test_plot_cpt(asia_net):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    ax = asia_net.plot_cpt("D")
    assert ax.get_title() == "P(D | B, E)"
    assert len(ax.images) == 1
    np.testing.assert_allclose(ax.images[0].get_array(), asia_net.cpt_frame("D", wide=True).to_numpy().T)
    import matplotlib.pyplot as plt

    plt.close("all")


def test_multi_domain_fit():
    rng = np.random.default_rng(3)
    n = 4000
    dom = rng.choice(["u1", "u2", "u3"], n, p=[0.5, 0.45, 0.05])
    a = rng.choice(["x", "y"], n)
    p_b = np.where(dom == "u1", 0.9, np.where(dom == "u2", 0.2, 0.5))
    b = np.where(rng.random(n) < np.where(a == "x", p_b, 1 - p_b), "on", "off")
    df = pd.DataFrame({"user": dom, "A": a, "B": b})
    net = bs.fit("[A][B|A]", df, method="mestimate", m=1, domain="user")
    assert net.domain == "user" and net.domains == ["u1", "u2", "u3"]
    assert net.parents("B") == ["A"]
    t = net.cpt("B")
    assert t.shape == (2, 2, 3)  # (B, A, user): the domain last, as bnlearn's hdir
    sub = df[df.user == "u2"]
    alone = bs.fit("[A][B|A]", sub.drop(columns="user"), method="mestimate", m=1)
    pooled = bs.fit("[A][B|A]", df.drop(columns="user"), method="mestimate", m=1)
    # the domain's counts around the pooled m-estimate, with the learned concentration: the
    # users differ strongly, so it is small and u2 (1800 rows) stays within 0.01 of its own
    info = net.cpd("B").estimate.info
    assert 0.1 < info["s_domain"] < 50
    n_u2 = pd.crosstab(sub["B"], sub["A"]).to_numpy()  # (B, A)
    expect = shrunk_by_hand(n_u2, pooled.cpt("B"), info)
    np.testing.assert_allclose(t[..., 1], expect, atol=1e-12)
    assert np.abs(t[..., 1] - alone.cpt("B")).max() < 0.01
    one = net.for_domain("u2")
    np.testing.assert_allclose(one.cpt("B"), expect, atol=1e-12)
    assert one.domain is None
    lp = one.logpdf(sub.drop(columns="user"))
    a_code, b_code = sub["A"].map({"x": 0, "y": 1}).to_numpy(), sub["B"].map({"off": 0, "on": 1}).to_numpy()
    np.testing.assert_allclose(lp, np.log(one.cpt("A")[a_code]) + np.log(expect[b_code, a_code]), atol=1e-12)
    # bnlearn's grouped layout (the group as a root parent of every node) is recognised
    net2 = bs.fit("[user][A|user][B|A:user]", df, method="mestimate", m=1, domain="user")
    np.testing.assert_allclose(net2.cpt("B"), t)
    with pytest.raises(MissingColumnError, match="domain"):
        bs.fit("[A][B|A]", df.drop(columns="user"), domain="user")
    with pytest.raises(bs.errors.StructureError, match="root parent"):
        bs.fit("[user][A|user][B|A]", df, domain="user")
    samp = net.sample(10, random_state=0, domain="u3")
    assert list(samp.columns) == ["A", "B"]
    with pytest.raises(DataError, match="domain="):
        net.sample(10)
