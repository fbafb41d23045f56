"""The short cuts of one query on a small network against the planned elimination: the
whole joint of a tiny network, and the zero check summed in the query's own plan."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import FactorBudgetError, ImpossibleEvidenceError
from pybncsmooth.model.query import joint as query_joint, zeros as query_zeros
from pybncsmooth.model.cpd import TableCPD
from pybncsmooth.model.query.batch import budget_of, posterior_rows

from conftest import bnlearn_path
from test_query import brute, random_evidence, random_network


def _copy(net: bs.FittedNetwork) -> bs.FittedNetwork:
    """The same network as a new object (no cached joint, plans or tables)."""
    cpds = {v: TableCPD(v, net.parents(v), net.cpt(v)) for v in net.nodes}
    return bs.FittedNetwork(net.dag, net.schema, cpds)


def _with_zeros(net: bs.FittedNetwork, seed: int) -> bs.FittedNetwork:
    """``net`` with a zero in about half of its distributions (at a random level): zeros
    that depend on the parents' values, so that evidence can be impossible only through a
    part of the network the query does not need."""
    rng = np.random.default_rng(seed)
    cpds = {}
    for v in net.nodes:
        t = net.cpt(v).copy()
        cols = t.reshape(t.shape[0], -1)
        for q in range(cols.shape[1]):
            if rng.random() < 0.5:
                cols[rng.integers(t.shape[0]), q] = 0.0
        cols /= cols.sum(axis=0)
        cpds[v] = TableCPD(v, net.parents(v), cols.reshape(t.shape))
    return bs.FittedNetwork(net.dag, net.schema, cpds)


def _answer(net, targets, ev):
    try:
        return net.query(targets, ev).to_numpy()
    except ImpossibleEvidenceError:
        return None


def _queries(net, seed: int, n: int):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k = int(rng.integers(1, 3))
        targets = [str(t) for t in rng.choice(net.nodes, k, replace=False)]
        pool = [v for v in net.nodes if v not in targets]
        ev = {str(v): str(rng.choice(net.levels(v))) for v in rng.choice(pool, int(rng.integers(0, 5)), replace=False)}
        yield (targets if k > 1 else targets[0]), ev


@pytest.mark.parametrize("seed, zeros", [(1, False), (2, True), (3, True)])
def test_the_joint_answers_as_the_elimination_does(seed, zeros, monkeypatch):
    # random evidence (impossible evidence included where tables have zeros): the same
    # answers to 1e-12, and the same queries refused
    net = random_network(8, seed)
    net = _with_zeros(net, seed) if zeros else net
    planned = _copy(net)
    assert query_joint.joint_table(net) is not None
    monkeypatch.setattr(query_joint, "JOINT_CELLS", 0)
    assert query_joint.joint_table(planned) is None
    refused = 0
    for targets, ev in _queries(net, seed, 60):
        monkeypatch.setattr(query_joint, "JOINT_CELLS", 1 << 18)
        got = _answer(net, targets, ev)
        monkeypatch.setattr(query_joint, "JOINT_CELLS", 0)
        want = _answer(planned, targets, ev)
        assert (got is None) == (want is None), (targets, ev)
        if got is None:
            refused += 1
            continue
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
        t = [targets] if isinstance(targets, str) else targets
        np.testing.assert_allclose(got, brute(net, t, ev).ravel(), rtol=0, atol=1e-12)
    assert (refused > 0) == zeros


def test_the_joint_is_built_once_and_only_where_it_is_exact(monkeypatch):
    asia = bs.read_network(bnlearn_path("asia.bif"))
    asia.query("L", {"S": "yes"})
    j, axes = asia.__dict__["_query_joint"]
    assert j.shape == (2,) * 8 and sorted(axes) == sorted(asia.nodes) and j.sum() == pytest.approx(1.0, abs=1e-12)
    asia.query("B", {"X": "no"})
    assert asia.__dict__["_query_joint"][0] is j
    # a table whose products could underflow: no joint, the planned elimination answers
    net = random_network(6, 4)
    t = net.cpt("N0").copy()
    t[0], t[1:] = 1e-290, t[1:] / t[1:].sum(axis=0)
    cpds = {v: TableCPD(v, net.parents(v), t if v == "N0" else net.cpt(v)) for v in net.nodes}
    tiny = bs.FittedNetwork(net.dag, net.schema, cpds)
    tiny.__dict__["_query_joint"] = None  # (built lazily: check the rule itself)
    assert query_joint._build(tiny) is None
    assert query_joint._build(_copy(net)) is not None
    # the factor budget bounds the joint too: under it, the plan (and its refusal) stands
    with pytest.raises(FactorBudgetError, match="max_factor_bytes=32"):
        _copy(asia).query("D", {"X": "yes"}, max_factor_bytes=32)


@pytest.mark.parametrize("seed", [5, 6])
def test_zero_parts_summed_in_the_plan_refuse_what_the_second_plan_refused(seed, monkeypatch):
    # networks too wide for their joint, tables with zeros: evidence whose zero lies in a
    # part d-separated from the target is refused by the query's own plan as by the check's
    monkeypatch.setattr(query_joint, "JOINT_CELLS", 0)
    net = _with_zeros(random_network(12, seed, max_parents=2), seed)
    budget = budget_of(net)
    rng = np.random.default_rng(seed)
    summed = agree = 0
    for _ in range(120):
        target = str(rng.choice(net.nodes))
        ev = {v: int(rng.integers(len(net.levels(v)))) for v in rng.choice(
            [v for v in net.nodes if v != target], int(rng.integers(1, 5)), replace=False)}
        ev = {v: ev[v] for v in net.nodes if v in ev}
        codes = {v: np.array([c]) for v, c in ev.items()}
        post, done = query_zeros.posterior_and_parts(net, (target,), ev, budget)
        bad_new = np.isnan(post).any() or bool(np.any(query_zeros.impossible_rows(net, codes, 1, (target,), done)))
        plain = posterior_rows(net, (target,), codes, 1, budget)
        bad_old = np.isnan(plain).any() or bool(np.any(query_zeros.impossible_rows(net, codes, 1, (target,))))
        assert bad_new == bad_old, (target, ev)
        if not bad_new:
            np.testing.assert_allclose(post, plain, rtol=0, atol=1e-12)
        summed += done
        agree += bad_new
    assert summed > 0 and agree > 0  # both kinds of case were met


@pytest.mark.parametrize("levels", [("yes", "no"), ("<7.5", ">=7.5", "a b"), (1, 2, 10), (1.5, 2.0), (True, False),
                                    ("1978", 1979)])
def test_the_states_dtype_is_the_one_pandas_infers(levels):
    from pybncsmooth.model.query.answer import levels_dtype

    got, want = levels_dtype(levels), pd.CategoricalDtype(list(levels))
    assert got == want and hash(got) == hash(want) and got.ordered is False
    assert got.categories.equals(want.categories) and got.categories.dtype == want.categories.dtype


@pytest.mark.parametrize("name", ["asia.bif", "alarm.bif", "insurance.bif"])
def test_the_states_index_sliced_from_the_networks_levels_is_the_public_one(name):
    """Each target's index (its categories sliced from one index of every level of the
    network) is the index pandas' public constructor makes, one target or two."""
    net = bs.read_network(bnlearn_path(name))
    for node in net.nodes:
        levels = list(net.levels(node))
        got = net.query(node).index
        want = pd.CategoricalIndex(levels, categories=levels, name=node)
        pd.testing.assert_index_equal(got, want, exact=True)
        assert got.dtype == pd.CategoricalDtype(levels) and got.categories.dtype == want.categories.dtype
    a, b = net.nodes[-1], net.nodes[0]
    two = net.query([a, b]).index
    want = pd.MultiIndex.from_product([pd.CategoricalIndex(net.levels(v), categories=net.levels(v), name=v)
                                       for v in (a, b)])
    pd.testing.assert_index_equal(two, want, exact=True)


def test_the_states_index_of_a_network_with_levels_not_text():
    """Levels that are not all text (integers here) keep their own dtype."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 3, 200), "b": rng.choice(["x", "y"], 200)})
    net = bs.fit(bs.DAG.from_modelstring("[a][b|a]"), df, method="mle")
    for node in ("a", "b"):
        levels = list(net.levels(node))
        pd.testing.assert_index_equal(net.query(node).index,
                                      pd.CategoricalIndex(levels, categories=levels, name=node), exact=True)
    assert net.query("a").index.categories.dtype == np.int64
