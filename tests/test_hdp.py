"""The HDP estimator: invariants, the authors' Java outputs, the worked example,
reproducibility, back-off, diagnostics and multi-domain fits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import HyperparameterError
from pybncsmooth.estimators import HDP
from pybncsmooth.estimators.hdp._kernels import check_invariants, hdp_init
from pybncsmooth.estimators._stirling import SHARED_TABLE, log_stirling_py
from pybncsmooth.estimators.hdp.estimator import _TreeState
from conftest import shrunk_by_hand, DATA

HDPDATA = DATA / "hdp"


def table3(card: int, n: int) -> pd.DataFrame:
    suffix = ".gz" if n == 100000 else ""
    df = pd.read_csv(HDPDATA / "table3" / f"table3_card{card}_n{n}.csv{suffix}")
    return pd.DataFrame({c: pd.Categorical(df[c], categories=list(range(card))) for c in df.columns})


def java(iterations: int, card: int, n: int) -> np.ndarray:
    ref = pd.read_csv(HDPDATA / f"java_hdp_{iterations}it_card{card}_n{n}.csv")
    return ref[[f"p{k}" for k in range(card)]].to_numpy()


def ours(net: bs.FittedNetwork, card: int) -> np.ndarray:
    # rows: parent configurations with P1 slowest, as the Java files
    return np.moveaxis(net.cpt("X"), 0, -1).reshape(-1, card)


def test_stirling_numbers_exact():
    # S(5, k) = 24, 50, 35, 10, 1
    for k, s in zip(range(1, 6), [24, 50, 35, 10, 1]):
        assert log_stirling_py(5, k) == pytest.approx(np.log(s), abs=1e-12)
    assert log_stirling_py(5, 0) == -np.inf and log_stirling_py(0, 0) == 0.0
    # sum_t S(n, t) = n!
    row = np.array([log_stirling_py(30, t) for t in range(1, 31)])
    assert np.logaddexp.reduce(row) == pytest.approx(np.sum(np.log(np.arange(1, 31))), rel=1e-12)
    # beyond the exact table the approximation stays within 1e-4 (relative to S)
    from pybncsmooth.estimators._stirling import _saddle_log_stirling

    tab, _ = SHARED_TABLE.ensure(3000)
    for t in (4, 10, 100, 1500):
        assert _saddle_log_stirling(3000, t) == pytest.approx(tab[3000 * 3001 // 2 + t], abs=1e-4)


def test_stirling_memo_keeps_neighbouring_counts_apart():
    # Beyond the exact table values are memoised by (n, t). The sampler asks for a few
    # large leaf counts n with the same window of t; a slot function that ignored n
    # made those evict each other and recompute the saddle point at every sweep.
    from pybncsmooth.estimators._stirling import log_stirling, new_memo

    tab, n_max = SHARED_TABLE.ensure(0)
    keys, vals = new_memo(16)
    wanted = [(n, t) for n in (n_max + 104, n_max + 404, n_max + 904, n_max + 1304) for t in range(15, 36)]
    first = [log_stirling(n, t, tab, n_max, keys, vals) for n, t in wanted]
    assert (keys >= 0).sum() == len(wanted)
    again = [log_stirling(n, t, tab, n_max, keys, vals) for n, t in wanted]
    assert again == first


@pytest.mark.parametrize("tying", ["level", "single", "parent", "none"])
def test_invariants_hold_after_every_sweep(tying):
    df = table3(5, 1000)
    est = HDP(iterations=300, tying=tying, debug=True, random_state=3)
    net = bs.fit(["X ~ P1 + P2 + P3 + P4"], df, method=est)
    t = net.cpt("X")
    assert np.allclose(t.sum(axis=0), 1.0) and np.isfinite(t).all()
    # and directly on the state after a run
    tree = net.tree("X")
    st = _TreeState.build(tree, tying)
    n = st.leaf_counts.copy()
    tt = np.zeros_like(n)
    nsum = np.zeros(st.n_nodes, dtype=np.int64)
    tsum = nsum.copy()
    hdp_init(n, tt, nsum, tsum, st.parent, st.lstart, 2.0)
    assert check_invariants(n, tt, st.parent, st.lstart) == -1
    tt[st.lstart[-2], 0] += 1  # a broken state is detected
    assert check_invariants(n, tt, st.parent, st.lstart) >= 0


def _layout_by_hand(tree, tying):
    """Every node's parent and concentration group written out (flat numbering, level
    by level): one group a level, one for all nodes below the root, one per parent's
    children, or one per node."""
    sizes = tree.level_sizes()
    lstart = np.concatenate(([0], np.cumsum(sizes)))
    parent, group, levels, key = [-1], [-1], [], None
    for lev in range(1, tree.depth + 1):
        for j, p in enumerate(tree.levels[lev].parent):
            p = int(p + lstart[lev - 1])
            k = {"level": lev, "single": 0, "parent": p, "none": lstart[lev] + j}[tying]
            if k != key:
                key = k
                levels.append(lev)
            parent.append(p)
            group.append(len(levels) - 1)
    return np.array(parent), np.array(group), np.array(levels)


@pytest.mark.parametrize("tying", ["level", "single", "parent", "none"])
def test_tree_layout_is_the_parents_and_groups_written_out(tying):
    rng = np.random.default_rng(5)
    n = 40  # few rows: some parent configurations are absent
    df = pd.DataFrame({v: pd.Categorical(rng.integers(0, c, n), categories=range(c))
                       for v, c in [("X", 2), ("A", 3), ("B", 4), ("C", 2)]})
    tree = bs.fit(["X ~ A + B + C"], df, method="mle").tree("X")
    st = _TreeState.build(tree, tying)
    parent, group, levels = _layout_by_hand(tree, tying)
    np.testing.assert_array_equal(st.parent, parent)
    np.testing.assert_array_equal(st.group, group)
    np.testing.assert_array_equal(st.group_level, levels)
    # every group is a run of consecutive nodes: its members from its offsets
    for g in range(len(levels)):
        members = st.group_nodes[st.group_off[g] : st.group_off[g + 1]]
        np.testing.assert_array_equal(members, np.flatnonzero(group == g))
    # the entries of the table: the leaves, and inner nodes missing a child (unseen configurations)
    lstart = st.lstart
    want = np.ones(st.n_nodes, dtype=bool)
    for lev in range(tree.depth):
        kids = np.bincount(parent[lstart[lev + 1] : lstart[lev + 2]], minlength=lstart[lev + 1])
        want[lstart[lev] : lstart[lev + 1]] = kids[lstart[lev] : lstart[lev + 1]] < tree.parent_cards[lev]
    assert want[: lstart[-2]].any() and not want[: lstart[-2]].all()  # the case the rows were chosen for
    np.testing.assert_array_equal(st.used, want)


def _schedule_by_hand(tree):
    """The sweep's schedule written out: per level bottom-up, the (node, value) pairs
    with data (at least two counts at the leaves, one above), ordered by their rank
    among their parent's pairs, then by parent."""
    sizes = tree.level_sizes()
    lstart = np.concatenate(([0], np.cumsum(sizes)))
    out_i, out_k = [], []
    for lev in range(tree.depth, 0, -1):
        counts = tree.levels[lev].counts
        par = tree.levels[lev].parent
        rows = []
        for j in range(sizes[lev]):
            for k in range(tree.child_card):
                if counts[j, k] >= (2 if lev == tree.depth else 1):
                    rows.append((par[j], j, k))
        rank, last, cur = [], None, 0
        for p, _, _ in rows:
            cur = cur + 1 if p == last else 0
            last = p
            rank.append(cur)
        for q in sorted(range(len(rows)), key=lambda q: (rank[q], rows[q][0], q)):
            out_i.append(lstart[lev] + rows[q][1])
            out_k.append(rows[q][2])
    return np.array(out_i, dtype=np.int64), np.array(out_k, dtype=np.int64)


@pytest.mark.parametrize("seed", range(4))
def test_schedule_is_the_round_robin_over_parents(seed):
    rng = np.random.default_rng(seed)
    n = [30, 300, 3000, 20][seed]
    df = pd.DataFrame({v: pd.Categorical(rng.integers(0, c, n), categories=range(c))
                       for v, c in [("X", 3), ("A", 4), ("B", 2), ("C", 5)]})
    tree = bs.fit(["X ~ A + B + C"], df, method="mle").tree("X")
    st = _TreeState.build(tree, "level")
    want_i, want_k = _schedule_by_hand(tree)
    assert len(want_i) > 0
    np.testing.assert_array_equal(st.sched_i, want_i)
    np.testing.assert_array_equal(st.sched_k, want_k)


# The Java outputs: mean absolute difference of the CPT entries below 0.005 (the
# Java output's own 5000-vs-50000-iteration spread is 0.0017 on card5_n1000).
JAVA_TOL = 0.005


@pytest.mark.parametrize("card,iterations", [(2, 20000), (5, 20000)])
def test_agrees_with_java_on_1000_rows(card, iterations):
    net = bs.fit(["X ~ P1 + P2 + P3 + P4"], table3(card, 1000), method="hdp", iterations=iterations, random_state=11)
    diff = np.abs(ours(net, card) - java(50000, card, 1000))
    assert diff.mean() < JAVA_TOL
    assert diff.max() < 0.05


def test_agrees_with_java_on_100000_rows():
    net = bs.fit(["X ~ P1 + P2 + P3 + P4"], table3(2, 100000), method="hdp", iterations=5000, random_state=11)
    diff = np.abs(ours(net, 2) - java(5000, 2, 100000))
    assert diff.mean() < JAVA_TOL


@pytest.mark.parametrize(
    "ds,prior,ref",
    [
        ("dataset1", {}, "java_dataset1_50000it.csv"),
        ("dataset2", {}, "java_dataset2_50000it.csv"),
        ("dataset1", {"prior_shape": 0.0, "prior_rate": 0.0}, "java_dataset1_50000it_improper_prior.csv"),
        ("dataset2", {"prior_shape": 0.0, "prior_rate": 0.0}, "java_dataset2_50000it_improper_prior.csv"),
    ],
)
def test_worked_example_of_table_1(ds, prior, ref):
    df = pd.read_csv(HDPDATA / "worked_example" / f"{ds}.csv").astype(str)
    # under the improper prior the concentration's posterior is heavy-tailed and 50000
    # sweeps leave a Monte-Carlo spread of about 0.01 on P(X1 | Y = 0); a million sweeps
    # of this two-leaf tree take half a second and bring it to about 0.003
    iterations = 1_000_000 if prior else 50000
    net = bs.fit("[Y][X1|Y]", df, method="hdp", iterations=iterations, random_state=2, **prior)
    expected = pd.read_csv(HDPDATA / "worked_example" / ref)[["p0", "p1"]].to_numpy()
    np.testing.assert_allclose(net.cpt("X1").T, expected, atol=0.01)


def test_single_level_tree_is_a_closed_form_dirichlet():
    # a node without parents: its root is not sampled, so the estimate is the
    # posterior mean under Dirichlet(alpha0 / r) with alpha0 = the initial concentration
    df = pd.DataFrame({"A": list("aaaaaabbbc")})
    net = bs.fit("[A]", df, method="hdp", iterations=100, random_state=0, initial_concentration=3.0)
    n = np.array([6, 3, 1])
    np.testing.assert_allclose(net.cpt("A"), (n + 1.0) / (10 + 3.0), rtol=1e-12)
    # what the sampler records, in closed form: sd of the Dirichlet, sweeps after burn-in,
    # no concentration draws; several chains give constant draws (R-hat 1)
    v = (n + 1.0) / 13.0
    est = net.cpd("A").estimate
    np.testing.assert_allclose(est.sd[0][0], np.sqrt(v * (1 - v) / 14.0), rtol=1e-12)
    assert est.info["n_records"] == 90 and est.info["n_chains"] == 1 and "rhat" not in est.info
    assert est.info["concentrations"].shape == (0, 1)
    two = bs.fit("[A]", df, method="hdp", iterations=100, n_chains=2, random_state=0, initial_concentration=3.0)
    info = two.cpd("A").estimate.info
    assert info["n_records"] == 180 and info["rhat"] == 1.0
    # beside a lone root, a sampled tree draws what it draws estimated alone (the
    # generator gives one seed to the fit, whatever the lone roots)
    from pybncsmooth.counting import count_tree

    df2 = df.assign(B=list("xyxyxyxxyy"))
    net2 = bs.fit("[A][B|A]", df2, method="hdp", iterations=200, random_state=np.random.default_rng(3))
    a_codes, b_codes = pd.factorize(df2["A"], sort=True)[0], pd.factorize(df2["B"], sort=True)[0]
    tree = count_tree("B", ["A"], b_codes, [a_codes], 2, [3])
    alone = HDP(iterations=200, random_state=np.random.default_rng(3)).estimate(tree)
    for got, want in zip(net2.cpd("B").estimate.probs, alone.probs):
        np.testing.assert_array_equal(got, want)


def test_same_seed_same_answer_whatever_the_threads():
    df = bs.load_dataset("asia")
    ms = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
    a = bs.fit(ms, df, method="hdp", iterations=400, random_state=7, n_jobs=1)
    b = bs.fit(ms, df, method="hdp", iterations=400, random_state=7, n_jobs=2)
    c = bs.fit(ms, df, method="hdp", iterations=400, random_state=8, n_jobs=2)
    for node in a.nodes:
        assert np.array_equal(a.cpt(node), b.cpt(node))
    assert any(not np.array_equal(a.cpt(n), c.cpt(n)) for n in a.nodes)
    # an estimator object with a Generator is reproducible from the generator's seed
    g1 = bs.fit(ms, df, method="hdp", iterations=200, random_state=np.random.default_rng(5))
    g2 = bs.fit(ms, df, method="hdp", iterations=200, random_state=np.random.default_rng(5))
    assert all(np.array_equal(g1.cpt(n), g2.cpt(n)) for n in g1.nodes)


def test_unseen_configurations_back_off_to_the_deepest_ancestor():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "A": pd.Categorical(rng.choice(["a0", "a1"], 300), categories=["a0", "a1", "a2"]),
            "B": rng.choice(["b0", "b1"], 300),
            "C": rng.choice(["c0", "c1"], 300),
        }
    )
    net = bs.fit(["C ~ A + B"], df, method="hdp", iterations=500, random_state=1)
    probs = net.cpd("C").estimate.probs
    t = net.cpt("C")  # axes C, A, B; A = a2 never occurs
    np.testing.assert_allclose(t[:, 2, 0], probs[0][0])  # back off to the root
    np.testing.assert_allclose(t[:, 2, 1], probs[0][0])
    q = pd.DataFrame({"A": ["a2", "a0"], "B": ["b1", "b0"], "C": ["c0", "c1"]})
    lp = net.logpdf(q.assign(A=pd.Categorical(q["A"], categories=["a0", "a1", "a2"])))
    assert np.isfinite(lp).all()


def test_chains_rhat_concentrations_and_summary():
    df = table3(2, 1000)
    net = bs.fit(["X ~ P1 + P2 + P3 + P4"], df, method="hdp", iterations=2000, n_chains=3, random_state=4)
    info = net.cpd("X").estimate.info
    assert info["n_chains"] == 3
    assert 0.99 < info["rhat"] < 1.1  # converged chains on this easy tree
    conc = info["concentrations"]
    assert conc.shape == (2000 // 5, 5)  # one column per tree level (root not sampled: nan)
    assert np.isnan(conc[:, 0]).all() and np.isfinite(conc[:, 1:]).all()
    assert (conc[:, 1:] > 0).all() and (conc[:, 1:] <= 4000).all()
    summ = net.node_summary()
    assert "rhat" in summ.columns and summ.loc["X", "rhat"] == pytest.approx(info["rhat"])


def test_more_data_pulls_estimates_toward_the_mle():
    # a statistical check: on the large table3 set the leaves have thousands of rows,
    # so the HDP estimates must be close to the relative frequencies
    df = table3(2, 100000)
    hdp = bs.fit(["X ~ P1 + P2 + P3 + P4"], df, method="hdp", iterations=1000, random_state=0)
    mle = bs.fit(["X ~ P1 + P2 + P3 + P4"], df, method="mle")
    assert np.abs(hdp.cpt("X") - mle.cpt("X")).max() < 0.01


def test_multi_domain_shrinks_small_domains_toward_the_pool():
    # the domain is the last split of every context tree: P(B | A) -> P(B | A, site).  The
    # pooled tree is the HDP fit without the domain; a site's leaf is the posterior mean
    # (n + s_D * pooled) / (N + s_D) averaged over the posterior of the concentration s_D, so a
    # small site that differs is pulled toward the pooled configuration, not replaced by it.
    rng = np.random.default_rng(9)
    n = 3000
    dom = rng.choice(["big", "small"], n, p=[0.97, 0.03])
    a = rng.choice(["x", "y"], n)
    p_on = np.where(dom == "small", 0.85, np.where(a == "x", 0.8, 0.3))
    b = np.where(rng.random(n) < p_on, "on", "off")
    df = pd.DataFrame({"site": dom, "A": a, "B": b})
    net = bs.fit("[A][B|A]", df, method="hdp", domain="site", iterations=3000, random_state=2)
    pooled = bs.fit("[A][B|A]", df[["A", "B"]], method="hdp", iterations=3000, random_state=2)
    cpd = net.cpd("B")
    assert cpd.tree.parents == ("A", "site")
    # the levels above the domain are the pooled fit's, draw for draw
    np.testing.assert_array_equal(cpd.estimate.probs[1], pooled.cpd("B").estimate.probs[1])
    info = cpd.estimate.info
    assert 1.0 < info["s_domain"] < 1e4  # the sites differ: neither complete pooling nor none
    small = df[(df.site == "small") & (df.A == "y")]
    own = (small["B"] == "off").mean()
    pool = pooled.cpt("B")[0, 1]  # P(B = off | A = y) pooled
    t_small = net.for_domain("small").cpt("B")
    assert min(own, pool) < t_small[0, 1] < max(own, pool)
    n_off, n_tot = (small["B"] == "off").sum(), len(small)
    expected = shrunk_by_hand(np.array([n_off, n_tot - n_off]), pooled.cpt("B")[:, 1], info)[0]
    assert t_small[0, 1] == pytest.approx(expected, rel=1e-12)
    assert np.allclose(net.cpt("B")[..., 1], t_small)


def test_hyperparameter_validation():
    with pytest.raises(HyperparameterError, match="tying"):
        HDP(tying="bogus")
    with pytest.raises(HyperparameterError, match="burn_in"):
        HDP(iterations=100, burn_in=100)
    with pytest.raises(HyperparameterError, match="iterations"):
        HDP(iterations=0)
    with pytest.raises(HyperparameterError, match="prior_shape"):
        HDP(prior_shape=-1)
    with pytest.raises(HyperparameterError, match="random_state"):
        bs.fit("[A]", pd.DataFrame({"A": ["a", "b"]}), method="hdp", random_state="seed")
    assert HDP(iterations=5000).effective_burn_in == 500
    assert HDP(iterations=50000).effective_burn_in == 1000


def test_random_generator_moments():
    """The sampler's own generator: uniforms, gammas and betas have the right moments
    (200000 draws: the standard errors of the means are below 0.005 of the means)."""
    from numba import njit

    from pybncsmooth.estimators._rng import beta, gamma, new_state, normal, uniform

    @njit
    def draws(s, kind, a, b, n):
        out = np.empty(n)
        for i in range(n):
            if kind == 0:
                out[i] = uniform(s)
            elif kind == 1:
                out[i] = normal(s)
            elif kind == 2:
                out[i] = gamma(s, a)
            else:
                out[i] = beta(s, a, b)
        return out

    n = 200_000
    u = draws(new_state(1), 0, 0.0, 0.0, n)
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002 and u.min() >= 0 and u.max() < 1
    z = draws(new_state(2), 1, 0.0, 0.0, n)
    assert abs(z.mean()) < 0.01 and abs(z.var() - 1) < 0.01
    for a in (0.3, 1.0, 2.5, 40.0):
        g = draws(new_state(3), 2, a, 0.0, n)
        assert abs(g.mean() - a) < 0.01 * max(a, 1) and abs(g.var() - a) < 0.03 * max(a, 1)
    for a, b in ((0.5, 3.0), (2.0, 30.0), (5.0, 1.0)):
        q = draws(new_state(4), 3, a, b, n)
        m = a / (a + b)
        v = a * b / ((a + b) ** 2 * (a + b + 1))
        assert abs(q.mean() - m) < 0.005 and abs(q.var() - v) < 0.05 * v + 1e-4
    # same seed, same stream
    assert np.array_equal(draws(new_state(9), 3, 2.0, 3.0, 100), draws(new_state(9), 3, 2.0, 3.0, 100))


def test_shrinkage_plot():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    net = bs.fit(["X ~ P1 + P2 + P3 + P4"], table3(5, 1000), method="hdp", iterations=200, random_state=0)
    ax = net.plot_shrinkage("X", value=1)
    offsets = ax.collections[1].get_offsets()  # the estimates of the 400 largest leaves
    leaves = net.tree("X").levels[-1]
    biggest = np.argsort(-leaves.counts.sum(axis=1), kind="stable")[:400]
    assert len(offsets) == 400
    np.testing.assert_allclose(np.sort(offsets[:, 1]), np.sort(net.cpd("X").estimate.probs[-1][biggest, 1]))
    plt.close("all")
