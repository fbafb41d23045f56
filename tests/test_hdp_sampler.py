"""The HDP sampler's parts against exact answers: the Stirling ratio tables, the draws
of table counts against their exact (enumerated) posterior, the pooled concentration
step against one beta per node, the ``iterations="auto"`` stopping rule against a long
run, and a simulation-based calibration of the whole sampler."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from pybncsmooth.counting import count_tree
from pybncsmooth.errors import ConvergenceWarning, HyperparameterError
from pybncsmooth.estimators import HDP
from pybncsmooth.estimators.hdp._kernels import _sample_concentrations
from pybncsmooth.estimators._rng import new_state
from pybncsmooth.estimators._stirling import SHARED_TABLE, StirlingRatioTables, log_stirling_py, pcol_offset
from pybncsmooth.estimators.hdp.estimator import _Chain, _TreeState

from test_hdp import table3


def _stirling_rows(n_max: int) -> list[list[int]]:
    """Exact unsigned Stirling numbers of the first kind, S[n][t], as Python integers."""
    rows = [[1]]
    for n in range(1, n_max + 1):
        prev = rows[-1]
        row = [0] * (n + 1)
        for t in range(1, n + 1):
            row[t] = (n - 1) * (prev[t] if t <= n - 1 else 0) + prev[t - 1]
        rows.append(row)
    return rows


def test_ratio_tables_are_exact():
    # R(n, t) = S(n, t+1) / S(n, t) and P(q, t) = S(q+1, t) / S(q, t) against big integers
    S = _stirling_rows(151)
    tab = StirlingRatioTables(disk=False)
    rtab, pcol, n_tab = tab.ensure(150)
    worst = 0.0
    for n in (1, 2, 3, 10, 57, 150):
        for t in range(1, n):
            exact = float(Fraction(S[n][t + 1], S[n][t]))
            worst = max(worst, abs(rtab[n * (n + 1) // 2 + t] / exact - 1))
        assert rtab[n * (n + 1) // 2 + n] == 0.0  # S(n, n + 1) = 0
    for q in (1, 5, 40, 150):
        for t in range(1, q + 1):
            exact = float(Fraction(S[q + 1][t], S[q][t]))
            worst = max(worst, abs(pcol[pcol_offset(t, n_tab) + q - t] / exact - 1))
    assert worst < 1e-13
    # and far out, against the log-space table (itself accurate to about 1e-12 there)
    rtab, pcol, n_tab = tab.ensure(3000)
    logt, _ = SHARED_TABLE.ensure(3000)
    row = 3000 * 3001 // 2
    ts = np.arange(1, 2999)
    np.testing.assert_allclose(rtab[row + ts], np.exp(logt[row + ts + 1] - logt[row + ts]), rtol=1e-9)


def test_large_ratio_tables_are_kept_on_disk_and_mapped_back(tmp_path, monkeypatch):
    # tables of n >= 2048 go to the user cache once; a later process maps them
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    first = StirlingRatioTables()
    r1, p1, n1 = first.ensure(2048)
    assert n1 == 2048 and (tmp_path / "tables" / "stirling_ratio_2048_R.npy").exists()
    assert StirlingRatioTables().ensure(1500)[2] == 1500  # smaller tables are built (milliseconds)
    again = StirlingRatioTables()
    r2, p2, n2 = again.ensure(2048)
    assert n2 == 2048 and isinstance(r2, np.memmap) and isinstance(p2, np.memmap)
    np.testing.assert_array_equal(np.asarray(r1), np.asarray(r2))
    np.testing.assert_array_equal(np.asarray(p1), np.asarray(p2))
    # a damaged file is ignored (rebuilt), not trusted
    (tmp_path / "tables" / "stirling_ratio_2048_P.npy").write_bytes(b"not a table")
    r3, p3, _ = StirlingRatioTables().ensure(2048)
    np.testing.assert_array_equal(np.asarray(p3), np.asarray(p1))


def _run_exact_case(tree, iterations: int, seed: int) -> np.ndarray:
    est = HDP(iterations=iterations, burn_in=100, window=40, concentration_every=10**8, random_state=seed, n_jobs=1)
    return est.estimate(tree)


def test_one_table_count_is_drawn_from_its_exact_conditional():
    # Child X (2 values) under one parent Y (3 values); only the table count of X = 0 in
    # the leaf Y = 0 (12 rows) can move, so every sweep draws it afresh from its exact
    # conditional w(t) ~ S(12, t) a^t (t + 1)! / Gamma(c0 + 4 + t) (all concentrations 2,
    # never resampled; the window covers all of 1..12).  The root's recorded estimate
    # (t + 3) / (t + 6) then averages to its exact expectation.
    x = np.array([0] * 12 + [1] + [0, 1] + [0])
    y = np.array([0] * 13 + [1, 1] + [2])
    tree = count_tree("X", ["Y"], x, [y], 2, [3])
    n = 200_000
    e = _run_exact_case(tree, n + 100, 4)
    t = np.arange(1, 13)
    logw = np.array([log_stirling_py(12, k) for k in t]) + t * np.log(2.0) + gammaln(t + 2) - gammaln(2.0 + 4 + t)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    v = (t + 3) / (t + 6)
    exact, sd = float(w @ v), float(np.sqrt(w @ (v - w @ v) ** 2))
    # iid draws: the standard error is sd / sqrt(n) (about 5e-5)
    assert abs(e.probs[0][0, 0] - exact) < 4 * sd / np.sqrt(n)


def test_weights_beyond_doubles_are_drawn_on_the_log_scale():
    # The case above with 1500 rows in the leaf, concentrations 1e4 and a window over all
    # of 1..1500: the weights relative to w(1) reach e^661, beyond the running sum's
    # bound (1e250), so every draw takes the log-scale path (_draw_log), with the ratios
    # computed again for it.  The draws are iid from the exact conditional
    # w(t) ~ S(1500, t) a^t (t + 1)! / Gamma(a + 4 + t), and the root's estimate
    # (t + 2 + a / 2) / (t + 4 + a) averages to its exact expectation.
    from pybncsmooth.estimators._stirling import SHARED_TABLE

    n_rows, a = 1500, 1e4
    x = np.array([0] * n_rows + [1] + [0, 1] + [0])
    y = np.array([0] * (n_rows + 1) + [1, 1] + [2])
    tree = count_tree("X", ["Y"], x, [y], 2, [3])
    n = 20_000
    est = HDP(iterations=n + 100, burn_in=100, window=1600, concentration_every=10**8, initial_concentration=a,
              max_concentration=a, random_state=3, n_jobs=1)
    e = est.estimate(tree)
    logs, _ = SHARED_TABLE.ensure(n_rows)
    t = np.arange(1, n_rows + 1)
    logw = logs[n_rows * (n_rows + 1) // 2 + t] + t * np.log(a) + gammaln(t + 2) - gammaln(a + 4 + t)
    assert logw.max() - logw[0] > math.log(1e250)  # the case is beyond doubles
    w = np.exp(logw - logw.max())
    w /= w.sum()
    v = (t + 2 + a / 2) / (t + 4 + a)
    exact, sd = float(w @ v), float(np.sqrt(w @ (v - w @ v) ** 2))
    assert abs(e.probs[0][0, 0] - exact) < 4 * sd / np.sqrt(n)


def test_two_moving_table_counts_follow_their_exact_joint_posterior():
    # One path root -> A -> leaf with X counts [8, 0]: the leaf's table count tl (1..8)
    # and the inner node's ti (1..tl) move; their joint posterior is enumerable:
    # S(8, tl) a^tl S(tl, ti) a^ti / Gamma(a + tl) * (ti - 1)! / Gamma(c0 + ti).
    # This exercises the column table P(q, t) with t >= 2 and the inner-node updates.
    x = np.zeros(8, dtype=int)
    a_ = np.zeros(8, dtype=int)
    b_ = np.zeros(8, dtype=int)
    tree = count_tree("X", ["A", "B"], x, [a_, b_], 2, [2, 2])
    n = 200_000
    e = _run_exact_case(tree, n + 100, 7)
    a = c0 = 2.0
    states, logw, vals = [], [], []
    for tl in range(1, 9):
        for ti in range(1, tl + 1):
            lw = (
                log_stirling_py(8, tl)
                + tl * math.log(a)
                + log_stirling_py(tl, ti)
                + ti * math.log(a)
                - math.lgamma(a + tl)
                + math.lgamma(ti)
                - math.lgamma(c0 + ti)
            )
            root = (ti + c0 / 2) / (ti + c0)  # the estimates, top-down (eqs. 12-14)
            inner = (tl + a * root) / (tl + a)
            leaf = (8 + a * inner) / (8 + a)
            states.append((tl, ti))
            logw.append(lw)
            vals.append((root, inner, leaf))
    w = np.exp(np.array(logw) - max(logw))
    w /= w.sum()
    vals = np.array(vals)
    exact = w @ vals
    sd = np.sqrt(w @ (vals - exact) ** 2)
    got = np.array([e.probs[0][0, 0], e.probs[1][0, 0], e.probs[2][0, 0]])
    # a Gibbs chain on two variables: allow an integrated autocorrelation time of 10
    assert np.all(np.abs(got - exact) < 4 * sd * np.sqrt(10 / n))


def test_pooled_concentration_step_matches_one_beta_per_node():
    # alpha' ~ Gamma(shape + sum t_j, rate + sum log 1/q_j), q_j ~ Beta(alpha, n_j): the
    # kernel pools the nodes with n_j <= 32 through Beta(a, n) = prod Beta(a + i, 1);
    # its draws, and those of its keyed step, must have the distribution of the plain
    # one-beta-per-node step.
    rng0 = np.random.default_rng(0)
    nsum = np.concatenate([rng0.integers(1, 9, 300), rng0.integers(9, 33, 40), rng0.integers(33, 400, 20)])
    tsum = np.maximum(1, (np.sqrt(nsum) + rng0.integers(0, 3, nsum.size))).astype(np.int64)
    tsum = np.minimum(tsum, nsum)
    group_nodes = np.arange(nsum.size, dtype=np.int64)
    group_off = np.array([0, nsum.size], dtype=np.int64)
    reps = 20000
    # key 0: the pooled step of a fit; else the keyed step of an update's coupled chains
    # (one beta per node from its own stream, the sweep's key changing every draw)
    for a, key in ((0.4, 0), (3.0, 0), (0.4, 7), (3.0, 7)):
        s = new_state(11)
        ours = np.empty(reps)
        for r in range(reps):
            conc = np.array([a])
            skey = np.uint64(0) if not key else np.uint64((key * 1_000_003 + 2 * r + 1) % 2**64)
            _sample_concentrations(s, nsum, tsum, conc, np.log(conc), group_nodes, group_off, 2.0, 1.0, 1e9, skey)
            ours[r] = conc[0]
        g = np.random.default_rng(5)
        q = g.beta(a, nsum, size=(reps, nsum.size))
        plain = g.gamma(2.0 + tsum.sum(), 1.0 / (1.0 + (-np.log(q)).sum(axis=1)))
        se = np.sqrt(ours.var() / reps + plain.var() / reps)
        assert abs(ours.mean() - plain.mean()) < 4 * se
        assert abs(ours.std() / plain.std() - 1) < 0.05
        assert stats.ks_2samp(ours, plain).pvalue > 1e-3


def test_auto_mode_stops_within_its_error_of_a_long_run():
    tree = count_tree(
        "X",
        ["P1", "P2", "P3", "P4"],
        table3(2, 1000)["X"].cat.codes.to_numpy(),
        [table3(2, 1000)[p].cat.codes.to_numpy() for p in ("P1", "P2", "P3", "P4")],
        2,
        [2] * 4,
    )
    auto = HDP(iterations="auto", random_state=3, n_jobs=2).estimate(tree)
    info = auto.info
    assert info["converged"] and info["rhat"] < 1.01 and info["mcse"] < 1e-3
    assert info["n_chains"] == 2 and 500 < info["iterations"] < 50000
    long = HDP(iterations=200_000, random_state=9, n_jobs=1).estimate(tree)
    used = _TreeState.build(tree, "level").used
    a = np.concatenate(auto.probs)[used]
    b = np.concatenate(long.probs)[used]
    # the reported MCSE is the largest over the entries; the long run's own error is a
    # fifth of it at most
    diff = np.abs(a - b)
    assert np.mean(diff < 2 * info["mcse"]) > 0.95
    assert diff.max() < 5 * info["mcse"]
    # a tolerance that cannot be met stops at max_iterations, unconverged, and says so
    with pytest.warns(ConvergenceWarning, match=r"stopped at max_iterations \(1500 sweeps\).*1 of 1 nodes \('X'"):
        capped = HDP(iterations="auto", tol=1e-9, max_iterations=1500, random_state=3).estimate(tree)
    assert capped.info["converged"] is False and capped.info["iterations"] == 1500


def test_auto_mode_reports_in_the_summary_and_checks_its_options():
    import pybncsmooth as bs

    df = table3(2, 1000)
    net = bs.fit(["X ~ P1 + P2 + P3 + P4"], df, method="hdp", iterations="auto", random_state=1)
    s = net.node_summary()
    assert bool(s.loc["X", "converged"]) and s.loc["X", "iterations"] > 500
    assert s.loc["X", "rhat"] < 1.01 and s.loc["X", "mcse"] < 1e-3
    with pytest.raises(HyperparameterError, match="iterations"):
        HDP(iterations="forever")
    with pytest.raises(HyperparameterError, match="n_chains"):
        HDP(iterations="auto", n_chains=1)
    with pytest.raises(HyperparameterError, match="tol"):
        HDP(iterations="auto", tol=0)
    with pytest.raises(HyperparameterError, match="rhat"):
        HDP(iterations="auto", rhat=1.0)
    with pytest.raises(HyperparameterError, match="max_iterations"):
        HDP(iterations="auto", burn_in=600, max_iterations=500)
    # the default burn-in of 'auto' (500) is named with max_iterations, not met by a NaN later
    with pytest.raises(HyperparameterError, match=r"max_iterations \(400\) must be larger than the burn-in.*500"):
        HDP(iterations="auto", max_iterations=400)


@pytest.mark.slow
def test_simulation_based_calibration():
    """Talts et al. (2018): draw the concentration from its Gamma(2, 1) prior, the
    probability vectors from the HDP (root Dir(c0 / r), leaves Dir(alpha phi_root)) and
    the data; the rank of each true value among posterior draws is uniform when the
    sampler is right.  Posterior draws from the chain's state every 10 sweeps: alpha
    itself, phi_root ~ Dir(c0 / r + the leaves' tables) and phi_leaf ~ Dir(alpha
    phi_root + counts) (the vectors are conditionally Dirichlet given the table counts).
    200 replications, 99 draws each, ranks in 10 bins, chi-square p > 0.001 for each of
    the four quantities (a fixed seed)."""
    r, J, rows, c0 = 3, 4, 12, 2.0
    reps, L, thin, burn = 200, 99, 50, 2000
    g = np.random.default_rng(2024)
    ranks = {q: [] for q in ("alpha", "root", "leaf0", "leaf3")}
    for rep in range(reps):
        alpha = g.gamma(2.0, 1.0)
        root = g.dirichlet(np.full(r, c0 / r))
        leaves = np.array([g.dirichlet(np.maximum(alpha * root, 1e-300)) for _ in range(J)])
        leaves = np.where(np.isfinite(leaves), leaves, 1.0 / r)
        leaves /= leaves.sum(axis=1, keepdims=True)
        y = np.repeat(np.arange(J), rows)
        x = np.concatenate([g.choice(r, rows, p=leaves[j]) for j in range(J)])
        tree = count_tree("X", ["Y"], x, [y], r, [J])
        est = HDP(
            iterations=burn + L * thin,
            burn_in=burn,
            random_state=rep,
            n_jobs=1,
            max_concentration=1e6,
            root_tables="integrated",
        )
        st = _TreeState.build(tree, "level")
        ch = _Chain(est, st, 1000 + rep, "X", burn, 2 * (burn + L * thin), 0)
        ch.advance(burn)
        draws = {q: [] for q in ranks}
        ds = np.random.default_rng(10_000 + rep)
        for _ in range(L):
            ch.advance(thin)
            a = ch.conc[0]
            phi0 = ds.dirichlet(c0 / r + ch.n[0])
            leaf_rows = st.lstart[1] + np.searchsorted(tree.levels[1].value, [0, J - 1])
            draws["alpha"].append(a)
            draws["root"].append(phi0[0])
            for q, node in (("leaf0", leaf_rows[0]), ("leaf3", leaf_rows[1])):
                draws[q].append(ds.dirichlet(np.maximum(a * phi0 + ch.n[node], 1e-300))[0])
        truth = {"alpha": alpha, "root": root[0], "leaf0": leaves[0, 0], "leaf3": leaves[J - 1, 0]}
        for q in ranks:
            ranks[q].append(int(np.sum(np.array(draws[q]) < truth[q])))
    for q, rk in ranks.items():
        counts = np.bincount(np.array(rk) * 10 // (L + 1), minlength=10)
        p = stats.chisquare(counts).pvalue
        assert p > 1e-3, (q, counts, p)
