"""EM over missing cells (na="em", "hard-em"): a two-node fixed point by hand, complete
data give the plain fit, the observed-data likelihood never decreases, chunks equal
the data in memory, estimators that need whole counts."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import DataError, HyperparameterError, StatisticUnavailableError

ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


def _holes(df: pd.DataFrame, rate: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = df.copy()
    for c in out.columns:
        out.loc[rng.random(len(out)) < rate, c] = np.nan
    return out


@pytest.fixture(scope="module")
def asia_holes():
    truth = bs.fit(ASIA, bs.load_dataset("asia"), method="bayes", iss=1)
    train = truth.sample(800, random_state=1)
    return train, _holes(train, 0.2, 0)


def test_two_node_mle_fixed_point_by_hand():
    # A -> B; A missing at random in some rows, B always observed. The observed-data MLE
    # (monotone pattern): P(B = b) from every row, P(A = a | B = b) from the complete rows.
    rng = np.random.default_rng(3)
    n = 600
    a = rng.choice(["a0", "a1"], n, p=[0.3, 0.7])
    b = np.where(rng.random(n) < np.where(a == "a0", 0.8, 0.25), "b0", "b1")
    df = pd.DataFrame({"A": pd.Categorical(a), "B": pd.Categorical(b)})
    df.loc[rng.random(n) < 0.35, "A"] = np.nan
    net = bs.fit("[A][B|A]", df, method="mle", na="em", em_tol=1e-15, em_max_iter=5000)
    comp = df.dropna()
    n_ab = pd.crosstab(comp["A"], comp["B"]).to_numpy().astype(float)  # (A, B)
    p_b = df["B"].value_counts(normalize=True).reindex(["b0", "b1"]).to_numpy()
    joint = n_ab / n_ab.sum(axis=0, keepdims=True) * p_b[None, :]
    p_a = joint.sum(axis=1)
    np.testing.assert_allclose(net.cpt("A"), p_a, atol=1e-8)
    np.testing.assert_allclose(net.cpt("B"), (joint / p_a[:, None]).T, atol=1e-8)
    assert net.info["em"]["converged"]


@pytest.mark.parametrize("method", ["bayes", "hmd", "mestimate", "hls"])
def test_complete_data_give_the_plain_fit(method):
    df = bs.load_dataset("asia").iloc[:500]
    plain = bs.fit(ASIA, df, method=method)
    em = bs.fit(ASIA, df, method=method, na="em")
    assert em.max_abs_diff(plain) < 1e-12
    assert em.info["em"]["iterations"] == 2


def test_soft_em_climbs_and_helps(asia_holes):
    train, holes = asia_holes
    net = bs.fit(ASIA, holes, method="bayes", iss=1, na="em", em_tol=1e-10)
    trace = np.array(net.info["em"]["loglik_trace"])
    # bayes climbs the posterior, not the likelihood: allow the prior's tiny pull
    assert (np.diff(trace) > -1e-6 * np.abs(trace[1:])).all()
    mle = bs.fit(ASIA, holes, method="mestimate", m=1e-6, na="em", em_tol=1e-12)
    assert (np.diff(mle.info["em"]["loglik_trace"]) > -1e-6).all()
    test = bs.fit(ASIA, bs.load_dataset("asia"), method="bayes", iss=1).sample(4000, random_state=9)
    avail = bs.fit(ASIA, holes, method="bayes", iss=1, na="available").logpdf(test).mean()
    assert net.logpdf(test).mean() > avail  # EM uses what incomplete rows say
    assert net.info["na"] == "em"


def test_em_in_chunks_equals_in_memory(asia_holes, tmp_path):
    _, holes = asia_holes
    mem = bs.fit(ASIA, holes, method="bayes", na="em")
    parts = bs.fit(ASIA, [holes.iloc[:300], holes.iloc[300:]], method="bayes", na="em")
    assert parts.max_abs_diff(mem) < 1e-10
    assert parts.info["em"]["iterations"] == mem.info["em"]["iterations"]
    with pytest.raises(DataError, match="read once"):
        bs.fit(ASIA, iter([holes.iloc[:300], holes.iloc[300:]]), method="bayes", na="em")


def test_hard_em_and_whole_count_estimators(asia_holes):
    _, holes = asia_holes
    hard = bs.fit(ASIA, holes, method="bayes", na="hard-em")
    assert hard.info["em"]["hard"] is True and hard.info["em"]["converged"]
    h = bs.fit(ASIA, holes, method="hdp", na="hard-em", iterations=100, random_state=0)
    assert np.isfinite(h.logpdf(holes.dropna())).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(bs.errors.ConvergenceWarning, match="max_iter"):
            bs.fit(ASIA, holes, method="bayes", na="em", em_max_iter=2, em_tol=1e-15)
    with pytest.raises(HyperparameterError, match="em_max_iter"):
        bs.fit(ASIA, holes, method="bayes", na="em", em_max_iter=0)
    with pytest.warns(bs.errors.ConvergenceWarning, match="one E-step"):
        one = bs.fit(ASIA, holes, method="bayes", na="em", em_max_iter=1)
    assert one.info["em"]["iterations"] == 1 and not one.info["em"]["converged"]


def test_mle_with_zero_probabilities_is_named():
    # b1 is seen only in a row whose A is missing: maximum likelihood gives it probability 0
    df = pd.DataFrame({
        "A": pd.Categorical(["a0", "a1", "a0", "a1", None], categories=["a0", "a1"]),
        "B": pd.Categorical(["b0", "b0", "b0", "b0", "b1"], categories=["b0", "b1"]),
    })
    with pytest.raises(DataError, match="row 4: its observed cells have probability 0.*prior"):
        bs.fit("[A][B|A]", df, method="mle", na="em")
    assert np.isfinite(bs.fit("[A][B|A]", df, method="bayes", na="em").cpt("B")).all()


def test_rows_beyond_the_enumeration_cap_give_the_same_expected_counts(asia_holes, monkeypatch):
    from pybncsmooth.pipeline import em as em_module

    _, holes = asia_holes
    enumerated = bs.fit(ASIA, holes, method="bayes", na="em")
    monkeypatch.setattr(em_module, "MAX_COMPLETIONS", 3)  # every row with 2+ binary missing cells: elimination
    eliminated = bs.fit(ASIA, holes, method="bayes", na="em")
    assert eliminated.max_abs_diff(enumerated) < 1e-10
    assert eliminated.info["em"]["loglik_trace"] == pytest.approx(enumerated.info["em"]["loglik_trace"], rel=1e-12)
    hard = bs.fit(ASIA, holes, method="bayes", na="hard-em")  # each missing cell at its most probable value
    assert np.isfinite(hard.logpdf(holes.dropna())).all()


@pytest.mark.parametrize("hard", [False, True])
def test_compiled_estep_equals_enumeration(hard):
    # insurance (27 nodes, 2-5 levels), 30% of cells missing, a domain and row weights: the
    # compiled junction-tree pass gives the expected counts and observed-data log-likelihood
    # of exhaustive enumeration (the NumPy path), and the same most probable completions
    from pybncsmooth.pipeline import em as em_module

    truth = bs.read_network("tests/data/bnlearn/insurance.bif")
    df = truth.sample(400, random_state=3)
    df["site"] = pd.Categorical(np.random.default_rng(4).choice(["a", "b", "c"], len(df)))
    holes = _holes(df.drop(columns="site"), 0.3, 5)
    holes["site"] = df["site"]
    weights = np.random.default_rng(6).integers(0, 4, len(df)).astype(float)
    net = bs.fit(truth.modelstring(), holes, method="bayes", na="available", domain="site", weights=weights)
    specs = [(n, net.cpd(n).tree.parents) for n in net.nodes]
    variables = [v for v in net.schema if v in set(net.nodes) | {"site"}]
    assert set(specs[0][1]) <= set(variables) and "site" in specs[0][1]
    part = em_module._prepare(net.schema, variables, None, holes)[0]
    part = em_module._Part(part.X, weights, part.index)
    if hard:  # the rows the NumPy path enumerates (beyond, each cell takes its own most probable value)
        cards = np.array(net.schema.cardinalities(variables), dtype=float)
        keep = np.flatnonzero((np.log(cards) * (part.X < 0)).sum(axis=1) <= np.log(em_module.MAX_COMPLETIONS))
        assert len(keep) < 400
        part = em_module._Part(part.X[keep], weights[keep], part.index[keep])
    tables = em_module._dense_tables(net, specs, variables)
    assert tables is not None
    fast, ll_fast, n = em_module._estep_part(net, tables, specs, variables, int(hard), 0, part)
    slow, ll_slow, _ = em_module._estep_part(net, None, specs, variables, int(hard), 0, part)
    assert n == len(part.w) > 250 and part.X.min() == -1
    assert ll_fast == pytest.approx(ll_slow, rel=1e-12)
    np.testing.assert_allclose(fast.flat, slow.flat, rtol=0, atol=1e-10)
    assert fast.flat.sum() == pytest.approx(part.w.sum() * len(net.nodes), rel=1e-12)


def test_em_over_dask_partitions_equals_in_memory(asia_holes):
    # each iteration a map-reduce pass of expected counts over the partitions (issue 22,
    # item 5); the frame in memory is encoded once and run through the same E-step
    dd = pytest.importorskip("dask.dataframe")
    _, holes = asia_holes
    ddf = dd.from_pandas(holes, npartitions=3)
    for method, na, tol, rel in (("bayes", "em", 1e-10, 1e-9), ("bayes", "hard-em", 1e-10, 1e-9),
                                 ("hmd", "em", 1e-6, 1e-8)):
        # hmd: its variational fits (one a grid value of s, the proposals of its posterior)
        # stop at their own tolerance, so the last bits of the expected counts (summed in
        # another order over partitions) move its log-likelihood by ~1e-9 relative (1.03e-9
        # measured, over a 100-iteration trace)
        mem = bs.fit(ASIA, holes, method=method, na=na)
        dist = bs.fit(ASIA, ddf, method=method, na=na)
        assert dist.max_abs_diff(mem) < tol
        assert dist.info["em"]["loglik_trace"] == pytest.approx(mem.info["em"]["loglik_trace"], rel=rel)
        assert len(mem.info["em"]["loglik_trace"]) > 2


def test_data_augmentation_for_whole_count_samplers():
    # hdp's sampler takes whole counts: na="em" draws the missing cells (a block of
    # sweeps per draw) and averages the blocks' posterior means (pipeline/augment.py)
    truth = bs.fit(ASIA, bs.load_dataset("asia"), method="bayes", iss=1)
    train = truth.sample(800, random_state=1)
    holes = _holes(train, 0.2, 1)
    test = truth.sample(4000, random_state=9)
    kw = dict(method="hdp", iterations=300, random_state=0)
    avail = bs.fit(ASIA, holes, na="available", **kw)
    da = bs.fit(ASIA, holes, na="em", em_draws=6, em_burn=1, **kw)
    again = bs.fit(ASIA, holes, na="em", em_draws=6, em_burn=1, **kw)
    assert da.max_abs_diff(again) == 0.0
    info = da.info["em"]
    assert info["augmentation"] == {"draws": 6, "burn": 1} and len(info["loglik_trace"]) == 7
    # the trees hold the average completed counts: every row counted once per node
    assert all(da.cpd(n).tree.total == pytest.approx(len(holes)) for n in da.nodes)
    # held-out log-likelihood per row (seeds fixed): augmentation uses the incomplete rows'
    # observed cells, available-case counting drops them
    # observed cells, available-case counting drops them (here available-case counting
    # loses 0.0107 nats a row to the complete rows' fit, augmentation gets 0.0054 back;
    # on the sample of asia_holes, where available-case counting loses only 0.0023,
    # augmentation is 0.001 behind it)
    full = bs.fit(ASIA, train, **kw).logpdf(test).mean()
    recovered = (da.logpdf(test).mean() - avail.logpdf(test).mean()) / (full - avail.logpdf(test).mean())
    assert recovered > 0.25, recovered
    assert np.isfinite(da.cpt("E", stat="sd")).all()
    # complete rows: the plain fit, exactly
    assert bs.fit(ASIA, train, na="em", **kw).max_abs_diff(bs.fit(ASIA, train, **kw)) == 0.0


def test_data_augmentation_with_hls_bayes_and_a_domain():
    truth = bs.fit(ASIA, bs.load_dataset("asia"), method="bayes", iss=1)
    df = truth.sample(300, random_state=2)
    holes = _holes(df, 0.2, 3)
    holes["site"] = pd.Categorical(np.where(np.arange(300) % 3 == 0, "north", "south"))
    hb = bs.fit("[T][E|T][X|E]", holes[["T", "E", "X"]], method="hls-bayes", na="em", em_draws=2, em_burn=0,
                iterations=200, random_state=1)
    assert np.isfinite(hb.logpdf(df[["T", "E", "X"]])).all() and len(hb.info["em"]["loglik_trace"]) == 2
    dom = bs.fit(ASIA, holes, method="hdp", domain="site", na="em", em_draws=2, em_burn=1, iterations=200,
                 random_state=1)
    assert set(dom.domains) == {"north", "south"}
    assert np.isfinite(dom.for_domain("north").logpdf(df)).all()


def test_em_trace_in_summary_and_repr(asia_holes):
    _, holes = asia_holes
    net = bs.fit(ASIA, holes, method="bayes", na="em")
    em = net.node_summary().attrs["em"]
    assert em["iterations"] == len(em["loglik_trace"]) > 2 and em["converged"]
    assert np.all(np.diff(em["loglik_trace"]) > -1e-9)  # bayes EM climbs (its prior is fixed)
    assert f"{em['iterations']} EM iterations" in repr(net)
    with pytest.warns(bs.errors.ConvergenceWarning):
        assert "not converged" in repr(bs.fit(ASIA, holes, method="bayes", na="em", em_max_iter=1))


def test_classifier_with_em():
    # BNClassifier(na="em"): the structure by pairwise deletion, the CPTs by EM on it
    df = bs.load_dataset("asia")
    X = _holes(df.drop(columns="E"), 0.15, 11)
    y = df["E"]
    clf = bs.BNClassifier(structure="tan", na="em").fit(X, y)
    pairwise = bs.BNClassifier(structure="tan", na="pairwise").fit(X, y)
    assert clf.dag_.arcs == pairwise.dag_.arcs
    by_hand = bs.fit(clf.dag_, X.assign(E=y), method="bayes", na="em")
    assert clf.network_.max_abs_diff(by_hand) < 1e-12 and clf.network_.info["em"]["iterations"] > 1
    # missing features are summed out at prediction (the fit did not make NA a level): with
    # every feature missing, the class's marginal (the class is the TAN's root)
    row = X.iloc[:1].copy()
    row.iloc[0, :] = np.nan
    assert clf.network_.parents("E") == []
    np.testing.assert_allclose(clf.predict_proba(row)[0], np.asarray(clf.network_.cpt("E")), rtol=1e-12)
    for structure in ("skdb", "eskdb"):
        with pytest.raises(HyperparameterError, match=f"structure='{structure}' does not take na=\"em\""):
            bs.BNClassifier(structure=structure, na="em").fit(X, y)
    assert bs.BNClassifier(structure="nb", na="available").fit(X, y).network_.info["na"] == "available"


def test_rows_with_more_missing_cells_than_the_kernel_takes():
    # a 70-node chain, one row with its first 65 cells missing: more than the compiled
    # E-step's 62, and 2^65 completions (their count overflowed int64 before); the NumPy
    # path's variable elimination takes the row, and its probability is the chain's marginal
    rng = np.random.default_rng(1)
    names = [f"V{i}" for i in range(70)]
    df = pd.DataFrame({v: pd.Categorical(rng.choice(["a", "b"], 200), categories=["a", "b"]) for v in names})
    ms = "".join(f"[{v}]" if i == 0 else f"[{v}|{names[i - 1]}]" for i, v in enumerate(names))
    holes = df.copy()
    holes.iloc[0, :65] = np.nan
    for na in ("em", "hard-em"):
        net = bs.fit(ms, holes, method="bayes", na=na, em_max_iter=3)
        assert all(np.isfinite(net.cpt(v)).all() for v in names)
    p = np.asarray(net.cpt("V0"), dtype=float)
    for v in names[1:66]:
        p = np.asarray(net.cpt(v), dtype=float) @ p  # cpt axes (child, parent)
    row = holes.iloc[:1]
    expect = np.log(p[row["V65"].cat.codes.iloc[0]])
    for i in range(66, 70):
        expect += np.log(net.cpt(names[i])[row[names[i]].cat.codes.iloc[0], row[names[i - 1]].cat.codes.iloc[0]])
    assert net.logpdf(row)[0] == pytest.approx(expect, rel=1e-12)


# ----------------------------------------------------------------------------- intervals after data augmentation
@pytest.mark.parametrize("method, hyper", [("hdp", {"iterations": 200}), ("hls-bayes", {"iterations": 300})])
def test_data_augmentation_gives_the_mixture_posterior(method, hyper, tmp_path):
    # A missing in 30% of the rows, completely at random, B independent of it: the missing
    # cells say nothing about A's table, so its posterior is the one of the observed 70%,
    # sqrt(1 / 0.7) = 1.21 times as wide as with every row; the equal mixture of the 20
    # blocks' posteriors gives 1.06-1.28 per entry (the blocks' means vary around each
    # other with 19 degrees of freedom), 1.14-1.20 on average
    rng = np.random.default_rng(0)
    n = 1000
    full = pd.DataFrame({"A": pd.Categorical(rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])),
                         "B": pd.Categorical(rng.choice(["x", "y"], n))})
    df = full.copy()
    df.loc[rng.random(n) < 0.3, "A"] = np.nan
    net = bs.fit("[A][B]", df, method=method, na="em", em_draws=20, random_state=0, **hyper)
    ref = bs.fit("[A][B]", full, method=method, random_state=0, **hyper)
    d = net._posterior_tables(4000, np.random.default_rng(1))["A"]
    ratio = d.std(axis=0) / ref._posterior_tables(4000, np.random.default_rng(1))["A"].std(axis=0)
    assert (ratio > 1.0).all() and 1.08 < ratio.mean() < 1.35, ratio
    # the draws are the posterior the estimate and its sd report
    np.testing.assert_allclose(d.mean(axis=0), net.cpt("A"), atol=0.004)
    np.testing.assert_allclose(d.std(axis=0), net.cpt("A", stat="sd"), rtol=0.1)
    # every route to the uncertainty works, and survives a native file
    q = net.query("A", {"B": "x"}, interval=0.9, draws=200, random_state=2)
    assert (q["lower"] < q["prob"]).all() and (q["prob"] < q["upper"]).all()
    assert len(net.sample_parameters(3, random_state=0)) == 3
    net.write(tmp_path / "em.pbn")
    back = bs.read_network(tmp_path / "em.pbn")
    np.testing.assert_array_equal(back._posterior_tables(5, np.random.default_rng(3))["A"],
                                  net._posterior_tables(5, np.random.default_rng(3))["A"])


def test_a_fit_without_recorded_states_says_to_record_them(asia_holes):
    # hdp's data augmentation with record_states=0 keeps no state to draw from: the
    # error says how to get one (record_states > 0), not to use the method in use
    _, holes = asia_holes
    net = bs.fit(ASIA, holes, method="hdp", na="em", em_draws=2, iterations=60, record_states=0, random_state=0)
    for call in (lambda: net.sample_parameters(2), lambda: net.query("L", {"S": "yes"}, interval=0.9)):
        with pytest.raises(StatisticUnavailableError, match=r"record_states=0\): refit with record_states > 0") as e:
            call()
        assert "use a Bayesian estimator" not in str(e.value)
