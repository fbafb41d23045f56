"""Exact queries on wide networks: the factor budget (an option, named when it refuses),
the elimination order's search, and approximate answers with their Monte Carlo error."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import FactorBudgetError, HyperparameterError, ImpossibleEvidenceError
from pybncsmooth.model.query import elimination
from pybncsmooth.model.cpd import TableCPD
from conftest import BNLEARN

ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


def _graph(seed: int, n: int = 14, p: float = 0.3):
    """A random interaction graph with mixed cardinalities (seed 13: min-weight's order
    builds a factor of 8,000,000 cells where weighted min-fill's largest has 160,000)."""
    rng = random.Random(seed)
    names = [f"v{i}" for i in range(n)]
    adj = {v: set() for v in names}
    for i, j in itertools.combinations(range(n), 2):
        if rng.random() < p:
            adj[names[i]].add(names[j])
            adj[names[j]].add(names[i])
    return adj, {v: rng.choice([2, 3, 5, 10, 20]) for v in names}, names


def _brute_cost(adj, cards, order):
    g = {v: set(n) for v, n in adj.items()}
    cost = width = 0
    for v in order:
        nb = g.pop(v)
        w = cards[v] * int(np.prod([cards[u] for u in nb]))
        cost, width = cost + w, max(width, w)
        for a in nb:
            g[a] = (g[a] | nb) - {a, v}
    return cost, width


def test_order_cost_is_the_sum_and_max_of_the_merged_factors():
    adj, cards, names = _graph(55, n=7)
    for order in itertools.islice(itertools.permutations(names[1:]), 50):
        o = elimination.order_cost(adj, cards, order)
        assert (o.cost, o.width) == _brute_cost(adj, cards, order)


def test_the_search_finds_a_cheaper_order_that_fits_the_budget():
    adj, cards, names = _graph(13)
    greedy = elimination._greedy(adj, cards, names[1:], "weight", None)
    assert (greedy.cost, greedy.width) == (9105120, 8000000)
    chosen = elimination.choose_order(adj, cards, names[1:], budget=1_000_000)
    assert sorted(chosen) == sorted(names[1:])  # a permutation of the hidden variables
    assert chosen.width <= 1_000_000 and chosen.cost <= 448320  # weighted min-fill's, or better
    assert elimination.choose_order(adj, cards, names[1:], budget=1_000_000) == chosen  # seeded: the same plan
    # a cheap pattern keeps min-weight's order without a search
    small = {"a": {"b"}, "b": {"a"}}
    assert list(elimination.choose_order(small, {"a": 2, "b": 2}, ["a"], budget=10)) == ["a"]


def _random_network(seed: int, n: int = 9) -> bs.FittedNetwork:
    rng = np.random.default_rng(seed)
    names = [f"N{i}" for i in range(n)]
    cards = rng.integers(2, 4, n)
    parents = {v: sorted(rng.choice(names[:i], min(i, int(rng.integers(0, 4))), replace=False).tolist())
               for i, v in enumerate(names)}
    cpds = {}
    for i, v in enumerate(names):
        pc = [int(cards[names.index(p)]) for p in parents[v]]
        t = rng.dirichlet(np.ones(cards[i]), size=int(np.prod(pc, dtype=int))).T.reshape(int(cards[i]), *pc)
        cpds[v] = TableCPD(v, parents[v], t)
    schema = bs.Schema({v: tuple(f"s{j}" for j in range(c)) for v, c in zip(names, cards)})
    return bs.FittedNetwork(bs.DAG(parents, nodes=names), schema, cpds)


def _enumerate(net, target, evidence):
    """P(target | evidence) by summing the full joint."""
    nodes = net.nodes
    cards = [len(net.levels(v)) for v in nodes]
    joint = np.ones(cards)
    for v in nodes:
        axes = [nodes.index(v)] + [nodes.index(p) for p in net.parents(v)]
        t = net.cpt(v)
        shape = [1] * len(nodes)
        for a, c in zip(axes, t.shape):
            shape[a] = c
        order = np.argsort(axes)
        joint = joint * np.transpose(t, order).reshape(shape)
    for v, lev in evidence.items():
        idx = [slice(None)] * len(nodes)
        idx[nodes.index(v)] = slice(net.levels(v).index(lev), net.levels(v).index(lev) + 1)
        joint = joint[tuple(idx)]
    keep = nodes.index(target)
    p = joint.sum(axis=tuple(a for a in range(len(nodes)) if a != keep)).ravel()
    return p / p.sum()


@pytest.mark.parametrize("seed", range(6))
def test_searched_orders_give_exact_answers(seed, monkeypatch):
    monkeypatch.setattr(elimination, "_SEARCH_FROM", 0)  # search on every pattern, every restart
    monkeypatch.setattr(elimination, "_OP_CELLS", 0)
    net = _random_network(seed)
    rng = np.random.default_rng(seed)
    row = net.sample(1, random_state=seed).iloc[0]
    for _ in range(4):
        vs = [str(v) for v in rng.choice(net.nodes, 4, replace=False)]
        ev = {v: str(row[v]) for v in vs[1:]}
        np.testing.assert_allclose(net.query(vs[0], ev).to_numpy(), _enumerate(net, vs[0], ev), rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------- the budget as an option


def test_the_budget_set_at_fit_is_kept_and_named():
    df = bs.load_dataset("asia")
    net = bs.fit(ASIA, df, method="bayes", max_factor_bytes=16)
    assert net.options.max_factor_bytes == 16
    with pytest.raises(FactorBudgetError, match="more than max_factor_bytes=16"):
        net.query(["A", "T"])
    assert net.query(["A", "T"], max_factor_bytes=32).sum() == pytest.approx(1.0)  # a query's own budget wins
    with pytest.raises(FactorBudgetError, match="max_factor_bytes"):
        net.predict_proba(df.iloc[:3].astype(object).assign(L=None, T=None), "E")
    clf = bs.BNClassifier(structure="nb", method="bayes", max_factor_bytes=8).fit(df.drop(columns="L"), df["L"])
    assert clf.network_.options.max_factor_bytes == 8  # the classifier's network queries with its budget
    with pytest.raises(FactorBudgetError, match=r"raise max_factor_bytes \(an option of fit, BNClassifier and query\)"):
        clf.network_.query("L", {"X": "yes"})
    with pytest.raises(HyperparameterError, match="max_factor_bytes"):
        bs.fit(ASIA, df, method="bayes", max_factor_bytes=-1)


def test_the_default_budget_is_a_share_of_memory():
    from pybncsmooth.options import factor_budget

    assert factor_budget(1234) == 1234
    mem = bs.options._physical_memory()
    assert factor_budget(None) == (mem // 8 if mem else 2 << 30)


# ----------------------------------------------------------------------------- approximate answers


@pytest.fixture(scope="module")
def asia_bif():
    return bs.read_network(BNLEARN / "asia.bif")


def test_approximate_answers_are_calibrated(asia_bif):
    """Likelihood weighting's stated Monte Carlo error covers the exact answer as often
    as it says: 300 independent runs of 1,000 samples, the exact posterior inside
    +-1.96 se in 95% of them (binomial sd 1.3%: the window 0.90-0.99 is 4 sd wide)."""
    ev = {"X": "yes", "D": "yes"}
    exact = asia_bif.query("L", ev).to_numpy()
    z = []
    for seed in range(300):
        res = asia_bif.query("L", ev, method="approximate", samples=1000, random_state=seed)
        z.append((res["prob"].to_numpy() - exact) / res["se"].to_numpy())
        assert 0 < res.attrs["ess"] <= 1000
    z = np.array(z)
    inside = (np.abs(z) <= 1.96).mean(axis=0)
    assert np.all((0.90 <= inside) & (inside <= 0.99)), inside
    assert np.all(np.abs(z.mean(axis=0)) < 0.25)  # unbiased to within the runs' noise (se 0.06)


def test_approximate_queries_are_reproducible_and_checked(asia_bif):
    a = asia_bif.query(["L", "T"], {"X": "yes"}, method="approximate", samples=500, random_state=3)
    b = asia_bif.query(["L", "T"], {"X": "yes"}, method="approximate", samples=500, random_state=3)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["prob", "se"] and a["prob"].sum() == pytest.approx(1.0)
    frame = pd.DataFrame({"X": ["yes", "no"], "S": [None, "yes"]})
    out = asia_bif.query("L", frame, method="approximate", samples=500, random_state=1)
    assert out.shape == (2, 4) and out.attrs["ess"].shape == (2,)
    with pytest.raises(HyperparameterError, match="interval= needs method='exact'"):
        asia_bif.query("L", {"X": "yes"}, method="approximate", interval=0.9)
    with pytest.raises(HyperparameterError, match="method"):
        asia_bif.query("L", method="gibbs")
    mle = bs.fit(ASIA, bs.load_dataset("asia"), method="mle")
    with pytest.raises(ImpossibleEvidenceError, match="none of the 200 samples"):
        mle.query("L", {"T": "yes", "E": "no"}, method="approximate", samples=200, random_state=0)
