"""Calibration of the reported uncertainty: posterior draws, simulation-based
calibration (Talts et al. 2018) and coverage on a known network.

SBC: a truth is drawn from the estimator's own prior, data are simulated from it, the
estimator is fitted, and the rank of the true entry among ``L = 19`` posterior draws
(``_posterior_tables``) is recorded; over replicates the ranks are uniform on
``0..19`` exactly when the posterior is right.  One entry per replicate and class
(a configuration with rows, one without), ranks binned in fives, chi-square on 4
degrees of freedom; every seed is fixed, so each outcome is deterministic, and the
threshold is p > 0.001 (the p-values observed are noted at each test).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import pybncsmooth as bs
from pybncsmooth.errors import StatisticUnavailableError
from pybncsmooth.estimators.hls.posterior import softmax_columns
from pybncsmooth.estimators.posterior import dirichlet
from pybncsmooth.model.cpd import TableCPD
from pybncsmooth.model.draws import beta_interval

L = 19
P_MIN = 1e-3


# ----------------------------------------------------------------------------- helpers
def _frame(codes: dict[str, np.ndarray], cards: dict[str, int]) -> pd.DataFrame:
    return pd.DataFrame(
        {v: pd.Categorical.from_codes(c, categories=[f"{v}{i}" for i in range(cards[v])]) for v, c in codes.items()}
    )


def _simulate(rng: np.random.Generator, theta: np.ndarray, pcards: tuple[int, ...], n: int) -> tuple:
    """``n`` rows: parents uniform, the child from ``theta`` (configuration-major ``(q, r)``)."""
    P = [rng.integers(c, size=n) for c in pcards]
    cfg = np.zeros(n, dtype=np.int64)
    for p, c in zip(P, pcards):
        cfg = cfg * c + p
    u = rng.random(n)
    x = np.minimum((theta[cfg].cumsum(axis=1) < u[:, None]).sum(axis=1), theta.shape[1] - 1)
    return P, x, cfg


def _sbc(prior, method: str, hyper: dict, reps: int, n: int, r: int = 3, pcards=(3, 3), seed: int = 0) -> dict:
    """Ranks of the truth among ``L`` posterior draws, one entry a replicate and class."""
    rng = np.random.default_rng(seed)
    names = [f"P{i}" for i in range(len(pcards))]
    ms = "".join(f"[{p}]" for p in names) + "[X|" + ":".join(names) + "]"
    cards = dict(zip(names, pcards), X=r)
    ranks: dict[str, list[int]] = {"seen": [], "unseen": []}
    q = int(np.prod(pcards))
    for _ in range(reps):
        theta = prior(rng, r, pcards)
        P, x, cfg = _simulate(rng, theta, pcards, n)
        df = _frame({**dict(zip(names, P)), "X": x}, cards)
        net = bs.fit(ms, df, method=method, random_state=int(rng.integers(2**31)), **hyper)
        d = net._posterior_tables(L, np.random.default_rng(int(rng.integers(2**31))))["X"]
        truth = np.moveaxis(theta.reshape(*pcards, r), -1, 0)
        ties = (d == truth[None]).sum(axis=0)
        rk = (d < truth[None]).sum(axis=0) + (rng.random(truth.shape) * (ties + 1)).astype(int)
        seen = np.bincount(cfg, minlength=q).reshape(pcards) > 0
        for cls, mask in (("seen", seen), ("unseen", ~seen)):
            idx = np.argwhere(mask)
            if len(idx):
                j = tuple(idx[rng.integers(len(idx))])
                ranks[cls].append(int(rk[(int(rng.integers(r)),) + j]))
    return ranks


def _pvalue(ranks: list[int]) -> float:
    bins = np.bincount(np.asarray(ranks), minlength=L + 1).reshape(5, -1).sum(axis=1)
    return float(stats.chisquare(bins).pvalue)


def prior_bayes(rng, r, pcards, iss=1.0):
    q = int(np.prod(pcards))
    return dirichlet(np.full((q, r), iss / (r * q)), rng)


def prior_hdp(rng, r, pcards, c0=2.0):
    """The HDP of the estimator: root Dir(c0 / r), one Gamma(2, 1) concentration a level."""
    phi = dirichlet(np.full(r, c0 / r), rng)[None]
    for c in pcards:
        phi = dirichlet(rng.gamma(2.0, 1.0) * np.repeat(phi, c, axis=0), rng)
    return phi


def prior_hmd(rng, r, pcards):
    """1 / (1 + s) uniform (s within [1e-3, 1e7]), u ~ Dir(1), every column Dir(s u)."""
    q = int(np.prod(pcards))
    s = 1.0 / rng.uniform(1.0 / (1.0 + 1e7), 1.0 / (1.0 + 1e-3)) - 1.0
    u = dirichlet(np.ones(r), rng)
    return dirichlet(np.broadcast_to(s * u, (q, r)), rng)


def prior_hls(rng, r, pcards):
    """sigma^2 ~ IG(1/2, 1/2); every node's coefficients N(0, sigma^2); softmax of the path sums."""
    K = r if r >= 3 else 1
    sd = np.sqrt(1.0 / rng.gamma(0.5, 2.0))
    eta = np.zeros((1, K))
    for c in pcards:
        eta = np.repeat(eta, c, axis=0) + sd * rng.standard_normal((eta.shape[0] * c, K))
    return softmax_columns(eta, r)


# ----------------------------------------------------------------------------- SBC
def test_sbc_bayes_exact_dirichlet():
    # observed p: seen 0.42, unseen 0.31
    ranks = _sbc(prior_bayes, "bayes", {}, reps=300, n=8)
    assert _pvalue(ranks["seen"]) > P_MIN and _pvalue(ranks["unseen"]) > P_MIN


def test_sbc_hdp_recorded_states():
    # the exact HDP (root tables integrated out) against its own prior; observed p 0.70 / 0.26
    ranks = _sbc(prior_hdp, "hdp", {"iterations": 400, "root_tables": "integrated"}, reps=300, n=30)
    assert len(ranks["unseen"]) > 50
    assert _pvalue(ranks["seen"]) > P_MIN and _pvalue(ranks["unseen"]) > P_MIN


def test_sbc_hmd_learned_s():
    # s integrated over its grid posterior, u importance-sampled: observed p 0.09
    ranks = _sbc(prior_hmd, "hmd", {}, reps=200, n=30, pcards=(6,))
    assert _pvalue(ranks["seen"]) > P_MIN
    assert len(ranks["unseen"]) < 30 or _pvalue(ranks["unseen"]) > P_MIN


def test_sbc_detects_a_wrong_posterior():
    # the test has power: hmd with s fixed at the paper's |X| is the wrong posterior for
    # truths whose s is drawn from the estimator's prior: its ranks pile at the ends
    # (observed p 1.2e-5, the same replicates that pass with s learned)
    ranks = _sbc(prior_hmd, "hmd", {"s": "levels"}, reps=200, n=30, pcards=(6,))
    assert _pvalue(ranks["seen"]) < P_MIN


def test_sbc_hls_bayes_kept_sweeps():
    # observed p 0.18 (seen)
    ranks = _sbc(prior_hls, "hls-bayes", {"iterations": 600}, reps=150, n=40, pcards=(4,))
    assert _pvalue(ranks["seen"]) > P_MIN


def test_sbc_domain_fit():
    # bayes pooled over 4 domains, each domain's column Dir(s_D theta_y) with s_D
    # log-uniform on [1e-3, 1e7]: the nested posterior of the domains' columns
    # (observed p 0.75 seen, 0.70 for configurations a domain never saw)
    rng = np.random.default_rng(0)
    J, r, c = 4, 3, 3
    ranks: dict[str, list[int]] = {"seen": [], "unseen": []}
    for _ in range(300):
        pooled = dirichlet(np.full((c, r), 1.0 / (r * c)), rng)
        s = np.exp(rng.uniform(np.log(1e-3), np.log(1e7)))
        th = dirichlet(s * np.repeat(pooled[:, None, :], J, axis=1), rng)  # (c, J, r)
        frames = []
        for j in range(J):
            a = rng.integers(c, size=int(rng.integers(1, 30)))
            u = rng.random(len(a))
            x = np.minimum((th[a, j].cumsum(axis=1) < u[:, None]).sum(axis=1), r - 1)
            frames.append(pd.DataFrame({"A": a, "X": x, "D": j}))
        raw = pd.concat(frames)
        df = _frame({"A": raw.A.to_numpy(), "X": raw.X.to_numpy(), "D": raw.D.to_numpy()}, {"A": c, "X": r, "D": J})
        net = bs.fit("[A][X|A]", df, method="bayes", domain="D")
        d = net._posterior_tables(L, np.random.default_rng(int(rng.integers(2**31))))["X"]  # (L, r, c, J)
        truth = np.moveaxis(th, -1, 0)
        rk = (d < truth[None]).sum(0) + (rng.random(truth.shape) * ((d == truth[None]).sum(0) + 1)).astype(int)
        seen = np.zeros((c, J), dtype=bool)
        seen[raw.A.to_numpy(), raw.D.to_numpy()] = True
        for cls, mask in (("seen", seen), ("unseen", ~seen)):
            idx = np.argwhere(mask)
            if len(idx):
                a, j = idx[rng.integers(len(idx))]
                ranks[cls].append(int(rk[rng.integers(r), a, j]))
    assert _pvalue(ranks["seen"]) > P_MIN and _pvalue(ranks["unseen"]) > P_MIN


# ----------------------------------------------------------------------------- coverage
@pytest.fixture(scope="module")
def known_network():
    """A known network with 3-level nodes and CPT columns drawn from Dir(1, 1, 1)."""
    ms = "[A][B|A][C|A:B][D|C][E|C:D]"
    levels = {v: [f"{v}{i}" for i in range(3)] for v in "ABCDE"}
    seed = pd.DataFrame({v: pd.Categorical([levels[v][0]], categories=levels[v]) for v in "ABCDE"})
    shell = bs.fit(ms, seed, method="bayes", iss=1)
    rng = np.random.default_rng(11)
    cpds = {}
    for v in shell.nodes:
        shape = shell.cpt(v).shape
        cols = dirichlet(np.ones((int(np.prod(shape[1:])), shape[0])), rng)
        cpds[v] = TableCPD(v, shell.parents(v), np.moveaxis(cols.reshape(*shape[1:], shape[0]), -1, 0))
    return type(shell)(shell.dag, shell.schema, cpds)


def _sd(net, node: str) -> np.ndarray:
    """The sds of ``cpt(node)`` as the estimate holds them (``bayes`` refuses them at
    ``cpt(stat="sd")``; the others give the same numbers there)."""
    return net.cpd(node).table(10**7, "sd")


def _rows_of_configurations(ref, data: pd.DataFrame, node: str) -> np.ndarray:
    """Training rows of every parent configuration of ``node``, one per entry of
    ``cpt_frame(node)`` (its order)."""
    pa = ref.parents(node)
    r = len(ref.levels(node))
    if not pa:
        return np.full(r, len(data))
    rows = data.groupby(pa, observed=False).size().to_numpy().reshape([len(ref.levels(p)) for p in pa])
    return np.broadcast_to(rows[None], (r, *rows.shape)).reshape(-1, order="F")


@pytest.mark.parametrize(
    "method, hyper",
    [("hdp", {"iterations": 500}), ("hmd", {}), ("hls-bayes", {"iterations": 800}), ("mle", {}), ("mestimate", {}),
     ("bayes", {"iss": 1})],
)
def test_coverage_on_a_known_network(known_network, method, hyper):
    # 90% intervals of every CPT entry (225 over three data sets of 300 rows; strict), the
    # done-when of every estimator that prints an interval: at least 0.85 of all, at most
    # 0.95 of the configurations with rows (213), at least 0.80 in their classes of 1-19
    # (72) and 20+ rows (141); the 12 entries without rows are too few to judge (all
    # covered).  Observed all / seen / thin / rich: hdp 0.91 / 0.91 / 0.94 / 0.89, hmd
    # 0.91 / 0.90 / 0.94 / 0.88, hls-bayes 0.90 / 0.89 / 0.94 / 0.87, mle (Wilson) 0.92 /
    # 0.91 / 0.94 / 0.89, mestimate (Dir(n + m/r)) 0.91 / 0.90 / 0.90 / 0.90.  bayes
    # (iss = 1) refuses its intervals, and this is why: its exact BDeu posterior's Beta
    # marginals (computed here from its means and sds, which the refusal keeps from the
    # public accessors) covered 0.83 of all, its thin configurations 0.75 (a prior that
    # puts 1/27 of a row in a cell), under the 0.80 floor
    hits, tot = np.zeros(3), np.zeros(3)
    for seed in range(3):
        data = known_network.sample(300, random_state=seed)
        net = bs.fit(known_network.dag, data, method=method, random_state=seed, **hyper)
        for v in net.nodes:
            truth = known_network.cpt(v).reshape(-1, order="F")
            if method == "bayes":
                with pytest.raises(StatisticUnavailableError, match="'bayes' gives no posterior interval"):
                    net.cpt_frame(v, interval=0.9)
                lo, hi = beta_interval(net.cpt(v), _sd(net, v), 0.9)
                lo, hi = lo.reshape(-1, order="F"), hi.reshape(-1, order="F")
            else:
                f = net.cpt_frame(v, interval=0.9, random_state=seed)
                lo, hi = f["lower"].to_numpy(), f["upper"].to_numpy()
            rows = _rows_of_configurations(known_network, data, v)
            cls = np.where(rows == 0, 0, np.where(rows < 20, 1, 2))
            ok = (lo <= truth) & (truth <= hi)
            hits += np.bincount(cls, weights=ok, minlength=3)
            tot += np.bincount(cls, minlength=3)
    cover, seen = hits.sum() / tot.sum(), hits[1:].sum() / tot[1:].sum()
    assert tot[1] >= 30 and tot[2] >= 30
    if method == "bayes":
        assert hits[1] / tot[1] < 0.80, (hits / tot, cover)
    else:
        assert cover >= 0.85 and seen <= 0.95 and min(hits[1:] / tot[1:]) >= 0.80, (hits / tot, cover, seen)


@pytest.mark.parametrize("method, hyper", [("hdp", {"iterations": 1000}), ("hmd", {}), ("hls-bayes", {})])
def test_unseen_configurations_at_2000_rows_are_covered(method, hyper):
    # insurance (tests/data: the bnlearn repository's), 2000 rows, seeds 0 and 1: the 90%
    # intervals of the 279 entries whose parent configuration had no row cover at least
    # 0.80 (within 0.001, as benchmarks/bench_coverage.py).  Observed hdp 0.88 (245 of
    # 279), hmd 0.88, hls-bayes 0.88; before hmd's back-off served hdp and hls-bayes below
    # a node of level 1 or deeper, hdp 0.79 (220: its fresh nodes drawn with the sampled
    # concentrations, large at 2000 rows; this test fails there) and hls-bayes 0.84
    from pathlib import Path

    ref = bs.read_network(Path(__file__).parent / "data" / "bnlearn" / "insurance.bif")
    hits = tot = 0
    for seed in (0, 1):
        data = ref.sample(2000, random_state=seed)
        net = bs.fit(ref.dag, data, method=method, random_state=seed, **hyper)
        for v in ref.nodes:
            unseen = _rows_of_configurations(ref, data, v) == 0
            if not unseen.any():
                continue
            f = net.cpt_frame(v, interval=0.9, random_state=seed)
            truth = ref.cpt(v).reshape(-1, order="F")
            ok = ((f["lower"] - 1e-3 < truth) & (truth < f["upper"] + 1e-3)).to_numpy()
            hits += int(ok[unseen].sum())
            tot += int(unseen.sum())
    assert tot > 250 and hits / tot >= 0.80, hits / tot


# ----------------------------------------------------------------------------- the draws' contract
@pytest.fixture(scope="module")
def asia():
    return bs.load_dataset("asia").iloc[:600]


ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


@pytest.mark.parametrize("method, hyper", [("bayes", {}), ("hdp", {"iterations": 300}), ("hmd", {}),
                                           ("hls-bayes", {"iterations": 400})])
def test_posterior_tables_contract(asia, method, hyper):
    net = bs.fit(ASIA, asia, method=method, random_state=0, **hyper)
    a = net._posterior_tables(1000, np.random.default_rng(5))
    b = net._posterior_tables(1000, np.random.default_rng(5))
    for v in net.nodes:
        assert a[v].shape == (1000,) + net.cpt(v).shape
        np.testing.assert_allclose(a[v].sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_array_equal(a[v], b[v])  # reproducible from the generator
        # the draws' moments are the reported ones (Monte Carlo: 1000 draws; hls-bayes's
        # unseen configurations are centred on the predictive, not the back-off value;
        # bayes' sds, refused by cpt(stat="sd"), are the estimate's own)
        sd = _sd(net, v)
        z = np.abs(a[v].mean(axis=0) - net.cpt(v)) / np.maximum(sd, 1e-6)
        assert np.median(z) < 0.15 and z.max() < (0.7 if method == "hls-bayes" else 0.35)
        ratio = a[v].std(axis=0) / np.maximum(sd, 1e-12)
        assert 0.6 < np.median(ratio) < 1.4


def test_draws_of_nodes_are_independent_and_within_a_node_joint(asia):
    net = bs.fit(ASIA, asia, method="hdp", iterations=300, random_state=0)
    d = net._posterior_tables(2000, np.random.default_rng(0))
    # the two entries of a binary column are one draw: perfectly anti-correlated
    col = d["D"][:, :, 0, 0]
    assert np.corrcoef(col[:, 0], col[:, 1])[0, 1] == pytest.approx(-1.0)
    # different nodes: drawn independently
    assert abs(np.corrcoef(d["D"][:, 0, 0, 0], d["X"][:, 0, 0])[0, 1]) < 0.1


def test_bayes_draws_are_the_exact_beta_marginals():
    df = pd.DataFrame({"A": pd.Categorical(list("aab") * 5), "B": pd.Categorical(list("xyzxxy") * 2 + list("xyz"))})
    net = bs.fit(["B ~ A"], df, method="bayes", iss=3)
    d = net._posterior_tables(4000, np.random.default_rng(1))["B"]
    n = pd.crosstab(df.B, df.A).to_numpy()  # (B, A)
    alpha = 3 / (3 * 2)
    a, b = n[0, 0] + alpha, n[:, 0].sum() - n[0, 0] + 2 * alpha
    assert stats.kstest(d[:, 0, 0], stats.beta(a, b).cdf).pvalue > 0.01
    # its sds are those of the exact Beta marginals (kept from cpt(stat="sd"): the BDeu
    # prior's intervals do not cover, test_coverage_on_a_known_network)
    m, sd = net.cpt("B")[0, 0], _sd(net, "B")[0, 0]
    assert sd == pytest.approx(stats.beta(a, b).std(), rel=1e-12) and m == pytest.approx(a / (a + b), rel=1e-12)
    assert beta_interval(np.array(m), np.array(sd), 0.9)[0] == pytest.approx(stats.beta.ppf(0.05, a, b), rel=1e-9)
    with pytest.raises(StatisticUnavailableError, match="'bayes' gives no posterior interval"):
        net.cpt_frame("B", interval=0.9)


def test_unseen_configuration_gets_the_predictive_spread():
    # bayes with back-off: an unseen configuration is Dir((iss/q) phi) around its
    # ancestor's posterior phi: Var = W Var(phi) + (1 - W) m (1 - m), W = (iss/q) / (iss/q + 1)
    df = pd.DataFrame({"A": pd.Categorical(["a"] * 30, categories=["a", "b"]), "B": pd.Categorical(["x", "y", "y"] * 10)})
    net = bs.fit(["B ~ A"], df, method="bayes", iss=2, unseen="backoff")
    root_m, root_sd = net.cpd("B").estimate.probs[0][0], net.cpd("B").estimate.sd[0][0]
    w = 1.0 / (1.0 + 1.0)  # iss / q = 1
    expect = np.sqrt(w * root_sd**2 + (1 - w) * root_m * (1 - root_m))
    np.testing.assert_allclose(_sd(net, "B")[:, 1], expect, rtol=1e-12)
    assert _sd(net, "B")[0, 1] > 3 * root_sd[0]
    # hdp: wider than the node it backs off to
    hd = bs.fit(["B ~ A"], df, method="hdp", iterations=300, random_state=0)
    assert hd.cpt("B", stat="sd")[0, 1] > 1.5 * hd.cpd("B").estimate.sd[0][0, 0]


def test_sample_parameters(asia):
    net = bs.fit(ASIA, asia, method="hmd")
    nets = net.sample_parameters(3, random_state=4)
    again = net.sample_parameters(3, random_state=4)
    assert len(nets) == 3 and nets[0].nodes == net.nodes
    assert all(isinstance(x.cpd(v), TableCPD) for x in nets for v in x.nodes)
    np.testing.assert_array_equal(nets[2].cpt("D"), again[2].cpt("D"))
    assert np.abs(nets[0].cpt("D") - nets[1].cpt("D")).max() > 0
    np.testing.assert_allclose(nets[0].cpt("E").sum(axis=0), 1.0)
    with pytest.raises(StatisticUnavailableError, match="fixed"):
        nets[0].sample_parameters(1)


def test_multi_domain_draws_have_the_domain_last_and_round_trip(asia, tmp_path):
    df = asia.copy()
    df["dom"] = pd.Categorical(np.random.default_rng(0).choice(["u", "v", "w"], len(df)))
    net = bs.fit(ASIA, df, method="hdp", domain="dom", iterations=300, random_state=0)
    d = net._posterior_tables(50, np.random.default_rng(2))
    assert d["D"].shape == (50,) + net.cpt("D").shape and net.cpt("D").shape[-1] == 3
    net.write(tmp_path / "n.pbn")
    back = bs.read_network(tmp_path / "n.pbn")
    e = back._posterior_tables(50, np.random.default_rng(2))
    np.testing.assert_array_equal(d["D"], e["D"])
    one = net.for_domain("u")._posterior_tables(5, np.random.default_rng(0))
    assert one["D"].shape == (5, 2, 2, 2)
    rep = net.domain_report(draws=200, random_state=3)
    assert (rep["js_lower"] <= rep["js_upper"]).all()
    assert rep.equals(net.domain_report(draws=200, random_state=3))


def test_coverage_benchmark_judges_the_entries_an_interval_can_miss():
    """``benchmarks/bench_coverage.py``'s *judgeable* entries: truth in [0.001, 0.999],
    a uniform column (a network author's filler) left out only where its configuration
    had no rows; worked out by hand on a 2-level child of one 3-level parent."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_coverage import judgeable

    truth = np.array([[0.5, 0.5, 1.0], [0.5, 0.5, 0.0]])  # columns: uniform, uniform, deterministic
    seen = np.array([1, 0, 0])  # classes of the configurations: thin, unseen, unseen
    cls = np.broadcast_to(seen[None], truth.shape).ravel()
    np.testing.assert_array_equal(judgeable(truth, cls), [True, False, False, True, False, False])
    three = np.array([[0.2, 1 / 3], [0.3, 1 / 3], [0.5, 1 / 3]])  # an unseen non-uniform column is judged
    np.testing.assert_array_equal(judgeable(three, np.zeros(6, dtype=int)), [True, False, True, False, True, False])


def test_coverage_benchmark_verdict_splits_the_ceiling_by_deterministic_truths():
    """``benchmarks/bench_coverage.py``'s verdict: the done-when (overall >= 0.85, seen <=
    0.95, every class of 30+ entries >= 0.80), and ``MISS (0/1)`` where only the seen
    ceiling fails and the seen entries whose truth lies in (0.001, 0.999) keep it: water
    at 2000 rows with ``mle`` (seen 0.96: 1226 deterministic entries all covered, 1162
    others 0.93) by hand."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_coverage import verdict

    def cell(hits, tot, det, mid):
        return {"hits": np.array(hits), "tot": np.array(tot), "seen_det": np.array(det), "seen_mid": np.array(mid)}

    water = cell([24580, 1162, 1144], [24580, 1198, 1190], [1226, 1226], [1080, 1162])
    assert verdict(water) == "MISS (0/1)"
    assert verdict(cell([24580, 1162, 1144], [24580, 1198, 1190], [1226, 1226], [1110, 1162])) == "MISS"  # 0.955
    assert verdict(cell([90, 90, 90], [100, 100, 100], [0, 0], [180, 200])) == "ok"
    assert verdict(cell([90, 70, 100], [100, 100, 100], [50, 50], [120, 150])) == "MISS"  # a floor: thin 0.70
