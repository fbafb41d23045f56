"""Queries P(targets | evidence): exact answers against brute-force enumeration of the
joint distribution, the batch paths against single queries, MAP states, evaluation on
several parameter sets at once, credible intervals from posterior draws, and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.data.schema import Schema
from pybncsmooth.errors import (
    DataError,
    ImpossibleEvidenceError,
    StatisticUnavailableError,
    UnknownNodeError,
    UnseenDomainWarning,
    UnseenLevelError,
)
from pybncsmooth.model.query import batch as query_batch, engine as query_engine
from pybncsmooth.model.cpd import TableCPD
from pybncsmooth.model.query.engine import _query_tables
from pybncsmooth.model.query.evidence import frame_codes

from conftest import bnlearn_path

ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


# ---------------------------------------------------------------------------- helpers
def random_network(n_nodes: int, seed: int, max_parents: int = 3, zeros: bool = False) -> bs.FittedNetwork:
    """A random DAG over ``n_nodes`` nodes with 2-4 levels and Dirichlet(1) tables."""
    rng = np.random.default_rng(seed)
    names = [f"N{i}" for i in range(n_nodes)]
    cards = rng.integers(2, 5, n_nodes)
    parents = {}
    for i, v in enumerate(names):
        k = int(rng.integers(0, min(max_parents, i) + 1))
        parents[v] = [names[j] for j in sorted(rng.choice(i, k, replace=False))] if k else []
    schema = Schema({v: tuple(f"l{j}" for j in range(c)) for v, c in zip(names, cards)})
    cpds = {}
    for i, v in enumerate(names):
        pc = [int(cards[names.index(p)]) for p in parents[v]]
        t = rng.dirichlet(np.ones(cards[i]), size=int(np.prod(pc, dtype=int))).T
        if zeros:
            t[0] = 0.0
            t /= t.sum(axis=0)
        cpds[v] = TableCPD(v, parents[v], t.reshape(int(cards[i]), *pc))
    return bs.FittedNetwork(bs.DAG(parents, nodes=names), schema, cpds)


def joint(net: bs.FittedNetwork, tables: dict | None = None) -> np.ndarray:
    """The full joint distribution, axes in node order, from ``net.cpt`` (or ``tables``)."""
    nodes = net.nodes
    letters = "abcdefghijklmnopqrstuvwxyz"
    ops, specs = [], []
    for v in nodes:
        t = net.cpt(v) if tables is None else tables[v]
        ops.append(t)
        specs.append("".join(letters[nodes.index(u)] for u in [v, *net.parents(v)]))
    return np.einsum(",".join(specs) + "->" + letters[: len(nodes)], *ops)


def brute(net: bs.FittedNetwork, targets, evidence: dict, tables: dict | None = None) -> np.ndarray:
    """P(targets | evidence) by enumeration: axes in the order of ``targets``."""
    J = joint(net, tables)
    nodes = net.nodes
    idx = tuple(net.levels(v).index(evidence[v]) if v in evidence else slice(None) for v in nodes)
    sub = J[idx]
    rest = [v for v in nodes if v not in evidence]
    marg = sub.sum(axis=tuple(i for i, v in enumerate(rest) if v not in targets))
    kept = [v for v in rest if v in targets]
    marg = np.transpose(marg, [kept.index(t) for t in targets])
    return marg / marg.sum()


def dirichlet_draws(table: np.ndarray, D: int, rng, conc: float = 50.0) -> np.ndarray:
    """``D`` tables around ``table`` (axes node, *parents): each column Dirichlet(conc * p)."""
    r = table.shape[0]
    cols = table.reshape(r, -1).T
    out = np.stack([rng.dirichlet(conc * c + 1e-3, size=D) for c in cols], axis=1)  # (D, q, r)
    return np.moveaxis(out, 2, 1).reshape(D, *table.shape)


def random_evidence(net, rng, k: int, exclude=()) -> dict:
    row = net.sample(1, random_state=int(rng.integers(1 << 30))).iloc[0]
    pool = [v for v in net.nodes if v not in exclude]
    return {v: row[v] for v in rng.choice(pool, k, replace=False)}


@pytest.fixture(scope="module")
def asia_bif():
    return bs.read_network(bnlearn_path("asia.bif"))


@pytest.fixture(scope="module")
def small_fit():
    # 40 rows: many parent configurations unseen, filled by the estimator's back-off
    return bs.fit(ASIA, bs.load_dataset("asia").iloc[:40], method="mestimate", m=1)


# ---------------------------------------------------------------------------- exact answers
@pytest.mark.parametrize("which", ["asia_bif", "small_fit", "random9", "random10"])
def test_single_queries_equal_enumeration_of_the_joint(which, request):
    net = (
        request.getfixturevalue(which) if which in ("asia_bif", "small_fit") else random_network(int(which[6:]), 7)
    )
    rng = np.random.default_rng(3)
    for _ in range(40):
        k = int(rng.integers(1, 4))
        targets = [str(t) for t in rng.choice(net.nodes, k, replace=False)]
        ev = random_evidence(net, rng, int(rng.integers(0, 4)), exclude=targets)
        got = net.query(targets if k > 1 else targets[0], ev)
        want = brute(net, targets, ev)
        np.testing.assert_allclose(got.to_numpy(), want.ravel(), rtol=0, atol=1e-12)


def test_batches_equal_single_queries_on_merged_and_grouped_plans(monkeypatch):
    net = random_network(10, 11)
    rng = np.random.default_rng(5)
    target = "N4"
    others = [v for v in net.nodes if v != target]
    rows = []
    for _ in range(30):
        ev = random_evidence(net, rng, int(rng.integers(0, 5)), exclude=[target])
        rows.append({v: ev.get(v, None) for v in others})
    frame = pd.DataFrame(rows, index=[f"q{i}" for i in range(30)])
    want = np.array([brute(net, [target], {k: v for k, v in r.items() if pd.notna(v)}) for r in rows])
    merged = net.query(target, frame)  # many patterns, few rows: one plan, soft evidence
    assert list(merged.index) == list(frame.index)
    np.testing.assert_allclose(merged.to_numpy(), want, rtol=0, atol=1e-12)
    monkeypatch.setattr(query_batch, "_PATTERN_OVERHEAD", 0)  # one plan per pattern instead
    monkeypatch.setattr(query_batch, "_STEP_OVERHEAD", 0)
    np.testing.assert_allclose(net.query(target, frame).to_numpy(), want, rtol=0, atol=1e-12)
    monkeypatch.setattr(query_engine, "_CHUNK_CELLS", 1)  # one row at a time
    np.testing.assert_allclose(net.query(target, frame).to_numpy(), want, rtol=0, atol=1e-12)


def test_joint_targets_from_a_frame_are_indexed_by_joint_states(asia_bif):
    frame = pd.DataFrame({"S": ["yes", None, "no"], "X": ["yes", "no", None]}, index=[10, 20, 30])
    out = asia_bif.query(["L", "T"], frame)
    assert list(out.columns.names) == ["L", "T"] and list(out.index) == [10, 20, 30]
    for i, (_, r) in enumerate(frame.iterrows()):
        ev = {k: v for k, v in r.items() if pd.notna(v)}
        np.testing.assert_allclose(out.iloc[i].to_numpy(), brute(asia_bif, ["L", "T"], ev).ravel(), atol=1e-12)
    single = asia_bif.query(["L", "T"], {"S": "yes", "X": "yes"})
    assert single.name == "prob" and single.index.names == ["L", "T"]
    assert list(single.index) == [("no", "no"), ("no", "yes"), ("yes", "no"), ("yes", "yes")]


def test_result_types_read_naturally(asia_bif):
    s = asia_bif.query("L", {"S": "yes"})
    assert isinstance(s, pd.Series) and s.name == "prob"
    assert isinstance(s.index, pd.CategoricalIndex) and s.index.name == "L"
    assert list(s.index) == ["no", "yes"] and s.sum() == pytest.approx(1.0, abs=1e-15)
    prior = asia_bif.query("L")  # no evidence: the marginal
    np.testing.assert_allclose(prior.to_numpy(), brute(asia_bif, ["L"], {}), atol=1e-14)
    # a pandas Series works as a mapping, missing values leave a variable unobserved
    row = pd.Series({"S": "yes", "X": np.nan, "A": None})
    pd.testing.assert_series_equal(asia_bif.query("L", row), s)


def test_predict_proba_with_missing_cells_equals_the_previous_engine():
    from pybncsmooth.model.query.inference import log_posterior

    net = bs.fit(ASIA, bs.load_dataset("asia"), method="bayes", iss=2)
    rng = np.random.default_rng(8)
    data = bs.load_dataset("asia").iloc[:300].copy()
    for c in data.columns:
        data.loc[rng.random(len(data)) < 0.3, c] = np.nan
    post = net.predict_proba(data, "E")
    enc = net._encode(data, net.nodes, "error")
    codes = {v: enc[v].astype(np.int64) for v in net.nodes if v != "E"}
    lp = log_posterior(net, codes, "E")
    old = np.exp(lp - lp.max(axis=1, keepdims=True))
    old /= old.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(post.to_numpy(), old, rtol=0, atol=1e-12)
    # and the query of each row agrees with predict_proba
    ev = data.drop(columns="E")
    pd.testing.assert_frame_equal(net.query("E", ev), post, check_exact=False, rtol=0, atol=1e-12)


def test_large_tables_are_queried_through_the_cpds(monkeypatch, small_fit):
    rng = np.random.default_rng(4)
    cases = [(["E"], random_evidence(small_fit, rng, 3, exclude=["E"])) for _ in range(5)]
    want = [small_fit.query(t, ev).to_numpy() for t, ev in cases]
    net = bs.fit(ASIA, bs.load_dataset("asia").iloc[:40], method="mestimate", m=1)
    monkeypatch.setattr(query_engine, "QUERY_DENSE_CELLS", 0)  # no dense table: the CPDs' own queries
    assert all(query_engine.network_tables(net)[v] is None for v in net.nodes)
    for (t, ev), w in zip(cases, want):
        np.testing.assert_allclose(net.query(t, ev).to_numpy(), w, rtol=0, atol=1e-14)


def test_long_chains_do_not_underflow():
    # 400 binary nodes in a chain, every other one observed in its rare state:
    # P(evidence) is about 1e-600, far below the smallest double
    n = 400
    names = [f"C{i}" for i in range(n)]
    trans = np.array([[0.999, 0.002], [0.001, 0.998]])  # P(child | parent), columns sum to 1
    cpds = {names[0]: TableCPD(names[0], [], np.array([0.5, 0.5]))}
    for i in range(1, n):
        cpds[names[i]] = TableCPD(names[i], [names[i - 1]], trans)
    parents = {v: ([names[i - 1]] if i else []) for i, v in enumerate(names)}
    net = bs.FittedNetwork(bs.DAG(parents, nodes=names), Schema({v: ("a", "b") for v in names}), cpds)
    ev = {names[i]: ("b" if i % 4 == 1 else "a") for i in range(1, n, 2)}
    got = net.query("C200", ev).to_numpy()
    logT = np.log(trans)  # [child, parent]

    def mask(i: int) -> np.ndarray:
        m = np.zeros(2)
        if names[i] in ev:
            m[1 - ["a", "b"].index(ev[names[i]])] = -np.inf
        return m

    log_a = np.log([0.5, 0.5])  # forward: P(x_i, evidence up to i)
    for i in range(1, 201):
        log_a = np.logaddexp.reduce(log_a[None, :] + logT, axis=1) + mask(i)
    log_b = np.zeros(2)  # backward: P(evidence after i | x_i)
    for i in range(n - 1, 200, -1):
        log_b = np.logaddexp.reduce(logT + (mask(i) + log_b)[:, None], axis=0)
    lp = log_a + log_b
    assert np.logaddexp.reduce(lp) < -1000  # P(evidence) underflows a double
    np.testing.assert_allclose(got, np.exp(lp - np.logaddexp.reduce(lp)), rtol=1e-10)


# ---------------------------------------------------------------------------- plans
def test_plans_prune_barren_and_d_separated_nodes(asia_bif):
    plan = query_batch.plan_for(asia_bif, ("L",), ("S",))
    assert [f.node for f in plan.factors] == ["L"]  # S observed cuts L from every other factor
    plan = query_batch.plan_for(asia_bif, ("T",), ("X",))
    assert sorted(f.node for f in plan.factors) == ["A", "E", "L", "S", "T", "X"]  # D, B barren
    plan = query_batch.plan_for(asia_bif, ("T",), ("A", "S"))
    assert [f.node for f in plan.factors] == ["T"]
    assert query_batch.plan_for(asia_bif, ("T",), ("A", "S")) is plan  # cached by pattern


def test_a_factor_over_the_budget_is_refused_naming_the_option(asia_bif):
    # the fixed cell cap became the option max_factor_bytes (8 bytes a cell)
    with pytest.raises(bs.errors.FactorBudgetError,
                       match=r"factor of 4 cells \(32 bytes\) for the joint posterior of \['A', 'T'\], more than "
                             r"max_factor_bytes=16"):
        asia_bif.query(["A", "T"], max_factor_bytes=16)
    with pytest.raises(DataError, match=r"factor of 8 cells \(64 bytes\) for summing out '\w', more than "
                                        r"max_factor_bytes=32 .*method='approximate'"):
        asia_bif.query("D", {"X": "yes"}, max_factor_bytes=32)
    assert asia_bif.query("D", {"X": "yes"}, max_factor_bytes=64).sum() == pytest.approx(1.0)
    with pytest.raises(bs.errors.HyperparameterError, match="max_factor_bytes must be an integer >= 8"):
        asia_bif.query("D", max_factor_bytes=4)


def test_many_factors_in_one_product_are_folded():
    # naive Bayes with 60 observed features: the class's last product has 61 operands
    rng = np.random.default_rng(2)
    feats = [f"F{i}" for i in range(60)]
    X = pd.DataFrame({f: rng.choice(["a", "b", "c"], 300) for f in feats})
    y = pd.Series(rng.choice(["x", "y"], 300), name="Class")
    clf = bs.BNClassifier(structure="nb", method="bayes").fit(X, y)
    net = clf.network_
    want = net.predict_proba(X.iloc[:5], "Class").to_numpy()
    got = net.query("Class", X.iloc[:5]).to_numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(net.query("Class", X.iloc[0].to_dict()).to_numpy(), want[0], atol=1e-12)


# ---------------------------------------------------------------------------- MAP
def test_map_queries_are_the_argmax_of_the_joint_posterior():
    net = random_network(9, 21)
    rng = np.random.default_rng(6)
    rows, wanted = [], []
    for _ in range(20):
        targets = ["N2", "N5"]
        ev = random_evidence(net, rng, 3, exclude=targets)
        post = brute(net, targets, ev)
        i, j = np.unravel_index(np.argmax(post), post.shape)
        res = net.map_query(targets, ev)
        assert res.state == {"N2": net.levels("N2")[i], "N5": net.levels("N5")[j]}
        assert res.prob == pytest.approx(post[i, j], abs=1e-12)
        state, prob = res  # unpacks as a pair
        rows.append({v: ev.get(v) for v in net.nodes if v not in targets})
        wanted.append((net.levels("N2")[i], net.levels("N5")[j], post[i, j]))
    out = net.map_query(["N2", "N5"], pd.DataFrame(rows))
    assert list(out.columns) == ["N2", "N5", "prob"]
    assert isinstance(out["N2"].dtype, pd.CategoricalDtype)
    assert list(zip(out["N2"], out["N5"])) == [w[:2] for w in wanted]
    np.testing.assert_allclose(out["prob"].to_numpy(), [w[2] for w in wanted], atol=1e-12)


# ---------------------------------------------------------------------------- several parameter sets
def _bound(net, targets, ev):
    codes = {v: np.array([net.levels(v).index(x)]) for v, x in ev.items()}
    return query_batch.bind_rows(net, targets, codes, 1)[0][1]


def test_query_tables_on_copies_of_the_mean_tables_give_copies_of_the_answer(small_fit):
    ev = {"S": "yes", "X": "no", "D": "yes"}
    bound = _bound(small_fit, ("E", "B"), ev)
    tables = {v: np.repeat(small_fit.cpt(v)[None], 4, axis=0) for v in small_fit.nodes}
    out = _query_tables(bound, tables)
    assert out.shape == (4, 1, 2, 2)
    point = small_fit.query(["E", "B"], ev).to_numpy().reshape(2, 2)
    for d in range(4):
        np.testing.assert_allclose(out[d, 0], point, rtol=0, atol=1e-14)


def test_query_tables_on_different_tables_give_each_networks_answer():
    net = random_network(8, 31)
    rng = np.random.default_rng(9)
    D = 5
    tables = {}
    for v in net.nodes:
        shape = net.cpt(v).shape
        draws = rng.dirichlet(np.ones(shape[0]), size=(D, *shape[1:]))  # (D, *parents, r)
        tables[v] = np.moveaxis(draws, -1, 1)
    # several rows with different evidence, through a merged (soft evidence) plan
    evs = [random_evidence(net, rng, 2, exclude=["N6"]) for _ in range(4)]
    frame = pd.DataFrame([{v: e.get(v) for v in net.nodes if v != "N6"} for e in evs])
    codes, _ = frame_codes(net, frame, ("N6",))
    out = np.empty((D, len(evs), net.schema.cardinality("N6")))
    for rows, bound in query_batch.bind_rows(net, ("N6",), codes, len(evs)):
        out[:, slice(None) if rows is None else rows] = _query_tables(bound, tables)
    for d in range(D):
        tab_d = {v: tables[v][d] for v in net.nodes}
        for i, ev in enumerate(evs):
            np.testing.assert_allclose(out[d, i], brute(net, ["N6"], ev, tab_d), rtol=0, atol=1e-12)


def test_intervals_are_quantiles_of_the_answers_under_posterior_draws(small_fit):
    D = 200
    rng0 = np.random.default_rng(12)
    fixed = {v: dirichlet_draws(small_fit.cpt(v), D, rng0) for v in small_fit.nodes}
    calls = []

    def hook(n, rng):
        calls.append((n, rng))
        return fixed

    # (a method whose query intervals are offered: mestimate's draws do not cover queries)
    net = bs.fit(ASIA, bs.load_dataset("asia").iloc[:40], method="bayes", iss=1)
    net._posterior_tables = hook
    ev = {"S": "yes", "X": "yes"}
    out = net.query("L", ev, interval=0.8, draws=D, random_state=3)
    assert list(out.columns) == ["prob", "lower", "upper"] and out.index.name == "L"
    assert calls[0][0] == D and isinstance(calls[0][1], np.random.Generator)
    per_draw = np.array([brute(net, ["L"], ev, {v: fixed[v][d] for v in net.nodes}) for d in range(D)])
    np.testing.assert_allclose(out["lower"], np.quantile(per_draw, 0.1, axis=0), atol=1e-12)
    np.testing.assert_allclose(out["upper"], np.quantile(per_draw, 0.9, axis=0), atol=1e-12)
    np.testing.assert_allclose(out["prob"], net.query("L", ev).to_numpy(), atol=1e-14)
    frame = pd.DataFrame({"S": ["yes", "no"], "X": ["yes", None]})
    wide = net.query("L", frame, interval=0.8, draws=D)
    assert list(wide.columns.get_level_values(0).unique()) == ["prob", "lower", "upper"]
    np.testing.assert_allclose(wide["lower"].iloc[0], out["lower"], atol=1e-12)


def test_intervals_need_posterior_draws(asia_bif):
    with pytest.raises(StatisticUnavailableError, match="draws"):
        asia_bif.query("L", {"S": "yes"}, interval=0.9)
    with pytest.raises(ValueError, match="interval"):
        asia_bif.query("L", {"S": "yes"}, interval=1.5)


# ---------------------------------------------------------------------------- domains
@pytest.fixture(scope="module")
def domain_fit():
    df = bs.load_dataset("asia").iloc[:600].copy()
    df["site"] = pd.Categorical(np.resize(["s1", "s2", "s3"], len(df)))
    return bs.fit(ASIA, df, method="hmd", domain="site")


def test_domain_queries_use_the_domains_tables(domain_fit):
    ev = {"S": "yes", "D": "yes"}
    for d in ("s1", "s3"):
        sub = domain_fit.for_domain(d)
        np.testing.assert_allclose(
            domain_fit.query(["E", "B"], ev, domain=d).to_numpy(), brute(sub, ["E", "B"], ev).ravel(), atol=1e-12
        )
    with pytest.warns(UnseenDomainWarning, match="'s9'"):
        got = domain_fit.query("E", ev, domain="s9")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnseenDomainWarning)
        pop = domain_fit.for_domain("s9")
    np.testing.assert_allclose(got.to_numpy(), brute(pop, ["E"], ev), atol=1e-12)
    # no domain: the population's tables, with the warning; refused under on_unseen_domain="error"
    with pytest.warns(UnseenDomainWarning, match="no domain given"):
        np.testing.assert_allclose(domain_fit.query("E", ev).to_numpy(), brute(pop, ["E"], ev), atol=1e-12)
    np.testing.assert_allclose(domain_fit.for_domain(None).cpt("E"), pop.cpt("E"), atol=0)
    with pytest.raises(DataError, match="pass domain="):
        domain_fit.query("E", ev, on_unseen_domain="error")
    with pytest.raises(bs.errors.UnseenDomainError, match="'s9'"):
        domain_fit.query("E", ev, domain="s9", on_unseen_domain="error")
    with pytest.raises(DataError, match="domain of this multi-domain fit"):
        domain_fit.query("E", {"site": "s1"}, domain="s1")


def test_predict_proba_of_a_domain_fit_with_missing_cells(domain_fit):
    df = bs.load_dataset("asia").iloc[:30].copy()
    df["site"] = pd.Categorical(np.resize(["s2", "s1", "new"], len(df)))
    df.loc[df.index[::2], "D"] = np.nan
    df.loc[df.index[::3], "X"] = np.nan
    with pytest.warns(UnseenDomainWarning):
        post = domain_fit.predict_proba(df, "E")
    for i in range(len(df)):
        r = df.iloc[i]
        ev = {v: r[v] for v in domain_fit.nodes if v != "E" and pd.notna(r[v])}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnseenDomainWarning)
            sub = domain_fit.for_domain(r["site"])
        np.testing.assert_allclose(post.iloc[i].to_numpy(), brute(sub, ["E"], ev), atol=1e-12)


# ---------------------------------------------------------------------------- errors
def test_bad_evidence_gets_specific_errors(asia_bif):
    with pytest.raises(UnseenLevelError, match=r"'S' has level\(s\) 'maybe'"):
        asia_bif.query("L", {"S": "maybe"})
    with pytest.raises(UnseenLevelError, match=r"'X' has level\(s\) 'perhaps'"):
        asia_bif.query("L", pd.DataFrame({"X": ["yes", "perhaps"]}))
    with pytest.raises(UnknownNodeError, match="'Smoker'"):
        asia_bif.query("L", {"Smoker": "yes"})
    with pytest.raises(UnknownNodeError, match="'lung'"):
        asia_bif.query("lung", {"S": "yes"})
    with pytest.raises(DataError, match="'L' is both a query target and evidence"):
        asia_bif.query("L", {"L": "yes"})
    with pytest.raises(DataError, match="'L' is both a query target and a column"):
        asia_bif.query("L", pd.DataFrame({"L": ["yes"], "S": ["no"]}))
    with pytest.raises(DataError, match="must be one level"):
        asia_bif.query("L", {"S": ["yes", "no"]})
    with pytest.raises(DataError, match="domain= applies"):
        asia_bif.query("L", {"S": "yes"}, domain="x")
    with pytest.raises(DataError, match="non-empty list"):
        asia_bif.query([], {"S": "yes"})


def test_evidence_of_probability_zero_is_an_error_naming_it():
    net = random_network(5, 3, zeros=True)  # every table gives its first level probability 0
    with pytest.raises(ImpossibleEvidenceError, match="has probability zero"):
        net.query("N4", {"N0": "l0"})
    frame = pd.DataFrame({"N0": ["l1", "l0"]}, index=["ok", "bad"])
    with pytest.raises(ImpossibleEvidenceError, match=r"row\(s\) \['bad'\]"):
        net.query("N4", frame)
    assert np.isfinite(net.query("N4", frame.iloc[:1]).to_numpy()).all()


def test_integer_evidence_matches_levels_read_as_text():
    net = random_network(4, 8)
    relabel = bs.FittedNetwork(
        net.dag,
        Schema({v: tuple(str(i) for i in range(len(net.levels(v)))) for v in net.nodes}),
        {v: TableCPD(v, net.parents(v), net.cpt(v)) for v in net.nodes},
    )
    np.testing.assert_allclose(
        relabel.query("N3", {"N0": 1}).to_numpy(), relabel.query("N3", {"N0": "1"}).to_numpy(), atol=0
    )


def test_queries_equal_ratios_of_logpdf_marginals(small_fit):
    # P(t | e) = P(t, e) / P(e), both from logpdf with the other cells missing
    rng = np.random.default_rng(17)
    for _ in range(10):
        ev = random_evidence(small_fit, rng, 3, exclude=["B"])
        rows = pd.DataFrame([{**{v: np.nan for v in small_fit.nodes}, **ev, "B": b} for b in small_fit.levels("B")])
        rows = rows.astype({v: pd.CategoricalDtype(small_fit.levels(v)) for v in small_fit.nodes})
        joint_lp = small_fit.logpdf(rows)
        ev_lp = small_fit.logpdf(rows.iloc[:1].assign(B=np.nan).astype(rows.dtypes))
        np.testing.assert_allclose(
            small_fit.query("B", ev).to_numpy(), np.exp(joint_lp - ev_lp[0]), rtol=1e-11, atol=1e-13
        )


def test_query_intervals_cover_the_true_posterior():
    """On data sampled from a known network, the 90% interval of P(target = level |
    evidence) holds the true network's answer in about 90% of random queries (three
    evidence variables and the level from a row of the true network; 3 seeds x 40
    queries, BDeu and the hierarchical MD; bound [0.80, 0.97], about 3 binomial sds
    around 0.9 at 120 queries)."""
    from pathlib import Path

    def random_queries(ref, k, seed):  # three evidence variables and a level, from one true row
        rng = np.random.default_rng(seed)
        rows = ref.sample(k, random_state=int(rng.integers(2**31)))
        out = []
        for i in range(k):
            nodes = list(rng.permutation(ref.nodes))
            out.append((nodes[0], {v: rows.iloc[i][v] for v in nodes[1:4]}, rows.iloc[i][nodes[0]]))
        return out

    def covered(ref, net, queries, level, draws, seed):
        hits = []
        for target, ev, lev in queries:
            truth = float(ref.query(target, ev)[lev])
            q = net.query(target, ev, interval=level, draws=draws, random_state=seed)
            hits.append(q.loc[lev, "lower"] <= truth <= q.loc[lev, "upper"])
        return np.asarray(hits)

    ref = bs.read_network(Path(__file__).resolve().parent / "data" / "bnlearn" / "insurance.bif")
    for method in ("bayes", "hmd"):
        hits = []
        for seed in range(3):
            net = bs.fit(ref.dag, ref.sample(300, random_state=seed), method)
            hits.append(covered(ref, net, random_queries(ref, 40, 100 + seed), 0.9, 300, seed))
        rate = float(np.concatenate(hits).mean())
        assert 0.80 <= rate <= 0.97, (method, rate)
