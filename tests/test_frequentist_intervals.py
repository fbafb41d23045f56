"""Intervals of the estimators without a posterior: Wilson score intervals for ``mle``,
the implied Dirichlet posterior for ``mestimate``, none (a refusal) for ``hgs``,
``mbranch`` and ``hls``, whose bootstrap over rows
(:mod:`pybncsmooth.estimators.bootstrap`) remains their parameter draws; checked against
closed forms and on a known network."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

import pybncsmooth as bs
from pybncsmooth.errors import StatisticUnavailableError

ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
BNLEARN = Path(__file__).parent / "data" / "bnlearn"
FREQUENTIST = ["mle", "mestimate", "hls", "hgs", "mbranch"]


@pytest.fixture(scope="module")
def asia():
    return bs.load_dataset("asia").iloc[:600]


@pytest.mark.parametrize("method", ["mle", "mestimate"])
def test_calibrated_estimators_give_intervals_sds_draws_and_query_intervals(asia, method):
    net = bs.fit(ASIA, asia, method=method)
    f = net.cpt_frame("D", interval=0.9, draws=200, random_state=1)
    assert f.attrs["interval"] == ("confidence" if method == "mle" else "credible")
    assert (f["lower"] <= f["prob"] + 1e-12).all() and (f["prob"] <= f["upper"] + 1e-12).all()
    assert (f["upper"] - f["lower"] > 0).all() and np.isfinite(f["sd"]).all() and (f["sd"] > 0).all()
    # reproducible from random_state
    assert f.equals(net.cpt_frame("D", interval=0.9, draws=200, random_state=1))
    draws = net._posterior_tables(50, np.random.default_rng(0))
    np.testing.assert_allclose(draws["E"].sum(axis=1), 1.0, atol=1e-12)
    assert len(net.sample_parameters(2, random_state=0)) == 2
    if method == "mestimate":
        # its draws' query intervals covered 0.72 (insurance, 200 rows): refused
        with pytest.raises(StatisticUnavailableError, match="'mestimate' gives no query interval.*0.72.*'hdp', 'hmd'"):
            net.query("L", {"S": "yes"}, interval=0.9)
        assert net.query("L", {"S": "yes"}).sum() == pytest.approx(1.0)
        return
    q = net.query("L", {"S": "yes"}, interval=0.9, draws=100, random_state=2)
    assert q.attrs["interval"] == "bootstrap" and q.attrs["level"] == 0.9
    assert (q["lower"] <= q["prob"] + 1e-12).all() and (q["prob"] <= q["upper"] + 1e-12).all()
    assert (q["upper"] > q["lower"]).all()


@pytest.mark.parametrize("method", ["hls", "hgs", "mbranch"])
def test_a_bootstrap_prints_no_interval_and_names_the_calibrated_estimators(asia, method):
    # their bootstrap over rows covered 0.52-0.69 of known networks' entries (insurance,
    # 2000 rows): sds, CPT intervals and query intervals are refused, and the error says
    # which estimators' are calibrated; the point estimates, queries without intervals
    # and the bootstrap's parameter draws remain
    net = bs.fit(ASIA, asia, method=method)
    names = "'hdp', 'hmd', 'hls-bayes', 'mestimate', 'mle'"
    for call, what in [(lambda: net.cpt_frame("D", interval=0.9), "interval of node 'D'"),
                       (lambda: net.cpt("D", stat="sd"), "standard deviation of node 'D'"),
                       (lambda: net.query("L", {"S": "yes"}, interval=0.9), "query interval")]:
        with pytest.raises(StatisticUnavailableError, match=f"{method!r} gives no {what}") as e:
            call()
        assert "0.52-0.69" in str(e.value) and names in str(e.value)
    assert net.cpt_frame("D")["prob"].between(0, 1).all()
    assert net.query("L", {"S": "yes"}).sum() == pytest.approx(1.0)
    assert len(net.sample_parameters(2, random_state=0)) == 2


@pytest.mark.parametrize("hyper", [{}, {"iss": 10}, {"unseen": "backoff"}, {"domain": "G"}])
def test_bayes_with_its_bdeu_prior_prints_no_interval_and_names_the_calibrated_estimators(asia, hyper, tmp_path):
    # the exact BDeu posterior's 90% intervals covered 0.44-0.79 of the true entries of
    # thin configurations on seven known networks (benchmarks/bench_coverage.py;
    # test_calibration's known network: 0.75): sds and CPT intervals are refused, naming
    # the estimators whose intervals are calibrated, whatever iss, unseen rule or domain;
    # the point estimates, the posterior's draws and query intervals (0.86-0.97 of random
    # queries on four networks) remain
    data = asia.assign(G=pd.Categorical(np.arange(len(asia)) % 2)) if "domain" in hyper else asia
    net = bs.fit(ASIA, data, method="bayes", **hyper)
    names = "calibrated sds and intervals: 'hdp', 'hmd', 'hls-bayes', 'mestimate', 'mle'"
    for call, what in [(lambda: net.cpt_frame("D", interval=0.9), "posterior interval of node 'D'"),
                       (lambda: net.cpt("D", stat="sd"), "posterior standard deviation of node 'D'")]:
        with pytest.raises(StatisticUnavailableError, match=f"'bayes' gives no {what}") as e:
            call()
        assert "0.44-0.79" in str(e.value) and names in str(e.value) and "BDeu" in str(e.value)
    assert net.cpt_frame("D")["prob"].between(0, 1).all()
    notes = str(net.summary(nodes="D"))
    assert "No sds or intervals: method 'bayes' gives no" in notes and "std err" not in notes
    assert len(net.sample_parameters(2, random_state=0)) == 2
    if "domain" not in hyper:
        q = net.query("L", {"S": "yes"}, interval=0.9, draws=100, random_state=2)
        assert q.attrs["interval"] == "credible" and (q["lower"] < q["upper"]).all()
        # a native file keeps the refusal, and so does one written before the BDeu
        # posterior had a kind of its own (its posterior saved as "dirichlet")
        net.write(tmp_path / "b.pbn")
        with pytest.raises(StatisticUnavailableError, match="'bayes' gives no posterior interval"):
            bs.read_network(tmp_path / "b.pbn").cpt_frame("D", interval=0.9)
        from pybncsmooth.estimators.closed.classical import BDeuPosterior

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(BDeuPosterior, "kind", "dirichlet")
            net.write(tmp_path / "old.pbn")
        with np.load(tmp_path / "old.pbn", allow_pickle=False) as z:
            assert json.loads(bytes(z["header"]))["cpds"]["D"]["posterior"]["kind"] == "dirichlet"
        back = bs.read_network(tmp_path / "old.pbn")
        assert isinstance(back.cpd("D").estimate.posterior, BDeuPosterior)
        with pytest.raises(StatisticUnavailableError, match="'bayes' gives no posterior standard deviation"):
            back.cpt("D", stat="sd")


def test_bayes_with_an_experts_prior_keeps_its_intervals(asia):
    # an expert's pseudo-counts (fit(prior=...)) are the user's stated belief: its exact
    # Dirichlet posterior's sds and intervals are given (Beta marginals of Dir(n + w P))
    expert = bs.fit(ASIA, asia.iloc[:100], method="mestimate")
    net = bs.fit(ASIA, asia, method="bayes", prior=expert, prior_weight=20)
    f = net.cpt_frame("D", interval=0.9)
    assert f.attrs["interval"] == "credible" and (f["upper"] > f["lower"]).all()
    np.testing.assert_allclose(f["sd"], net.cpt("D", stat="sd").reshape(-1, order="F"))


def test_mestimate_intervals_are_the_beta_marginals_of_its_pseudo_counts():
    # B | A, m = 2, r = 3: an observed configuration's vector is Dir(n + 2/3), its entries'
    # intervals that Dirichlet's Beta marginals and sds sqrt(p (1 - p) / (n + m + 1)); the
    # configuration without rows [0, 1] with sd sqrt(p (1 - p)) around the back-off
    from scipy.stats import beta

    df = pd.DataFrame({"A": pd.Categorical(["a"] * 40 + ["b"] * 7, categories=["a", "b", "c"]),
                       "B": pd.Categorical(list("xxyz") * 10 + list("xyyyyyz"))})
    net = bs.fit(["B ~ A"], df, method="mestimate", m=2)
    f = net.cpt_frame("B", interval=0.8)
    counts = pd.crosstab(df.B, df.A).to_numpy()
    for j, a in enumerate(["a", "b"]):
        alpha = counts[:, j] + 2 / 3
        rest = alpha.sum() - alpha
        rows = f[f["A"] == a]
        np.testing.assert_allclose(rows["prob"], alpha / alpha.sum(), rtol=1e-12)
        np.testing.assert_allclose(rows["lower"], beta.ppf(0.1, alpha, rest), rtol=1e-9)
        np.testing.assert_allclose(rows["upper"], beta.ppf(0.9, alpha, rest), rtol=1e-9)
        p = alpha / alpha.sum()
        np.testing.assert_allclose(rows["sd"], np.sqrt(p * (1 - p) / (counts[:, j].sum() + 3)), rtol=1e-12)
    none = f[f["A"] == "c"]
    assert (none["lower"] == 0).all() and (none["upper"] == 1).all()
    m = none["prob"].to_numpy()
    np.testing.assert_allclose(none["sd"], np.sqrt(m * (1 - m)), rtol=1e-12)
    # its draws: Dir(n + m/r) where rows were (mean and sd of 4000 draws, within 4 Monte
    # Carlo standard errors), Dir(m phi) around the root's posterior where none were
    d = net._posterior_tables(4000, np.random.default_rng(0))["B"]
    got = net.cpt("B")
    np.testing.assert_allclose(d.mean(axis=0)[:, :2], got[:, :2], atol=4 * net.cpt("B", stat="sd").max() / 63)
    np.testing.assert_allclose(d.mean(axis=0)[:, 2], got[:, 2], atol=0.03)
    # m = 0 is maximum likelihood, and so are its intervals
    zero = bs.fit(["B ~ A"], df, method="mestimate", m=0).cpt_frame("B", interval=0.9)
    mle = bs.fit(["B ~ A"], df, method="mle").cpt_frame("B", interval=0.9)
    pd.testing.assert_frame_equal(zero, mle)


def test_mle_intervals_are_wilsons_and_its_sd_the_binomial_standard_error():
    df = pd.DataFrame({"A": pd.Categorical(["a"] * 40 + ["b"] * 7, categories=["a", "b", "c"]),
                       "B": pd.Categorical(list("xxyz") * 10 + list("xyyyyyz"))})
    net = bs.fit(["B ~ A"], df, method="mle")
    f = net.cpt_frame("B", interval=0.9)
    counts = pd.crosstab(df.B, df.A).to_numpy()  # (B, A) over a and b
    for j, a in enumerate(["a", "b"]):
        n = counts[:, j]
        lo, hi = proportion_confint(n, n.sum(), alpha=0.1, method="wilson")
        rows = f[f["A"] == a]
        np.testing.assert_allclose(rows["lower"], lo, rtol=1e-12)
        np.testing.assert_allclose(rows["upper"], hi, rtol=1e-12)
        p = n / n.sum()
        np.testing.assert_allclose(rows["sd"], np.sqrt(p * (1 - p) / n.sum()), rtol=1e-12)
    # a configuration without rows: the data say nothing, [0, 1]; its sd that of a vector
    # that may be any vertex around the back-off estimate
    none = f[f["A"] == "c"]
    assert (none["lower"] == 0).all() and (none["upper"] == 1).all()
    m = none["prob"].to_numpy()
    np.testing.assert_allclose(none["sd"], np.sqrt(m * (1 - m)), rtol=1e-12)


def test_the_bootstrap_of_a_root_is_the_multinomial_one():
    # a node without parents: p = (n + m/r) / (N + m) over multinomial resamples of the N
    # rows has sd sqrt(N p0 (1 - p0)) / (N + m), p0 = n / N, exactly; 4000 replicates put
    # the sd within 5% (its Monte Carlo error is 1-1.5%: a skewed proportion's sd)
    df = pd.DataFrame({"B": pd.Categorical(list("xxxyz") * 8)})
    N, n = 40, np.array([24, 8, 8])
    net = bs.fit("[B]", df, method="mbranch", M=1)  # a root: m_v = M, the m-estimate with m = 1
    d = net._posterior_tables(4000, np.random.default_rng(3))["B"]
    expect = np.sqrt(N * (n / N) * (1 - n / N)) / (N + 1)
    np.testing.assert_allclose(d.std(axis=0), expect, rtol=0.05)
    np.testing.assert_allclose(d.mean(axis=0), (n + 1 / 3) / (N + 1), atol=0.003)
    # hgs on a root is the same m-estimate (its prior is 1): the refitting bootstrap and
    # the closed form's, fed the same resamples, agree draw for draw
    h = bs.fit("[B]", df, method="hgs")._posterior_tables(300, np.random.default_rng(3))["B"]
    np.testing.assert_allclose(h, d[:300], atol=1e-12)


def test_a_resample_that_misses_a_configuration_backs_it_off():
    # B | A with one row under a = 'b': about e^-1 of the resamples miss it, and then the
    # m-estimate answers with the root's estimate, as the estimator does for an absent
    # configuration
    df = pd.DataFrame({"A": pd.Categorical(["a"] * 30 + ["b"]), "B": pd.Categorical(list("xy") * 15 + ["y"])})
    net = bs.fit(["B ~ A"], df, method="mbranch")
    reps = net.cpd("B").estimate.posterior.replicates(net.tree("B"), 2000, np.random.default_rng(0))
    leaf, root = reps[1][:, 1], reps[0][:, 0]
    missed = np.isclose(leaf, root).all(axis=1)
    assert 0.32 < missed.mean() < 0.42


def test_mle_covers_rich_configurations_of_a_known_network():
    # Wilson intervals of alarm's 435 entries whose configuration had 20+ of 2000 sampled
    # rows (within 0.001): observed 0.917 (the benchmark's target is 0.85 or more)
    ref = bs.read_network(BNLEARN / "alarm.bif")
    data = ref.sample(2000, random_state=0)
    net = bs.fit(ref.dag, data, method="mle")
    hits = tot = 0
    for v in ref.nodes:
        f = net.cpt_frame(v, interval=0.9)
        truth = ref.cpt(v).reshape(-1, order="F")
        rows = data.groupby([data[p] for p in ref.parents(v)], observed=False).size() if ref.parents(v) else None
        n = np.full(len(truth), len(data)) if rows is None else np.repeat(
            rows.to_numpy().reshape([len(ref.levels(p)) for p in ref.parents(v)]).reshape(-1, order="F"),
            len(ref.levels(v)))
        rich = n >= 20
        hits += int(((f["lower"] - 1e-3 < truth) & (truth < f["upper"] + 1e-3))[rich].sum())
        tot += int(rich.sum())
    assert tot > 400 and 0.85 <= hits / tot <= 0.95, hits / tot


def test_mestimate_covers_seen_configurations_of_a_known_network():
    # the implied Dirichlet's 90% intervals on alarm (2000 rows, seed 0), entries of
    # configurations with rows (within 0.001): observed 0.90 of 644 (1-19 rows: 0.87 of
    # 209; 20+ rows: 0.92 of 435; benchmarks/bench_coverage.py).  Bounds: the issue's
    # 0.85 floor and 0.95 ceiling on seen configurations
    ref = bs.read_network(BNLEARN / "alarm.bif")
    data = ref.sample(2000, random_state=0)
    net = bs.fit(ref.dag, data, method="mestimate")
    hits = tot = 0
    for v in ref.nodes:
        f = net.cpt_frame(v, interval=0.9)
        truth = ref.cpt(v)
        lo, hi = (f[c].to_numpy().reshape(truth.shape, order="F") for c in ("lower", "upper"))
        pa = ref.parents(v)
        rows = (data.groupby(pa, observed=False).size().to_numpy().reshape([len(ref.levels(p)) for p in pa])
                if pa else np.array(len(data)))
        sel = np.broadcast_to(rows, truth.shape) >= 1
        hits += int(((lo - 1e-3 < truth) & (truth < hi + 1e-3))[sel].sum())
        tot += int(sel.sum())
    assert tot > 600 and 0.85 <= hits / tot <= 0.95, hits / tot


def test_multi_domain_fits_and_files_say_why_they_have_none(asia):
    grouped = asia.assign(G=pd.Categorical(np.arange(len(asia)) % 2))
    net = bs.fit(ASIA, grouped, method="hgs", domain="G")
    with pytest.raises(StatisticUnavailableError, match="'hgs'.*multi-domain.*Bayesian"):
        net.cpt_frame("D", interval=0.9)
    read = bs.read_network(BNLEARN / "asia.bif")
    with pytest.raises(StatisticUnavailableError, match="read from a file.*fit the network from data"):
        read.query("L", {"S": "yes"}, interval=0.9)
    with pytest.raises(StatisticUnavailableError, match="read from a file.*fit the network from data"):
        read.cpt("L", stat="sd")


def test_bootstrap_draws_survive_a_native_file(asia, tmp_path):
    net = bs.fit(ASIA, asia, method="hgs")
    net.write(tmp_path / "n.pbn")
    back = bs.read_network(tmp_path / "n.pbn")
    a = net._posterior_tables(20, np.random.default_rng(4))
    b = back._posterior_tables(20, np.random.default_rng(4))
    for v in net.nodes:
        np.testing.assert_array_equal(a[v], b[v])
