"""Shares of a query's posterior variance by node (first-order Sobol indices,
:mod:`pybncsmooth.model.query.variance`): a closed form on two nodes, the properties a
share has, and the query's summary."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.iolib.summary import Summary

import pybncsmooth as bs
from pybncsmooth.errors import DataError


def _two_nodes() -> tuple[pd.DataFrame, bs.FittedNetwork]:
    df = pd.DataFrame({"A": pd.Categorical(list("aab") * 4 + list("cc")),
                       "B": pd.Categorical(list("xyyxxyxyyyxxyx"))})
    return df, bs.fit(["A ~ 1", "B ~ A"], df, method="bayes", iss=3)


def test_shares_match_the_closed_form_on_two_dirichlet_nodes():
    # q = P(B = x) = sum_a thA(a) thB(x | a), the tables independent Dirichlets (bayes):
    # Var E[q | thA] = m' Cov(thA) m, Var E[q | thB] = sum_a pA(a)^2 Var thB(x | a), and
    # Var q from the moments; 20000 draws put the estimates within 3 Monte Carlo sds
    df, net = _two_nodes()
    nA = df.A.value_counts().reindex(["a", "b", "c"]).to_numpy()
    aA = nA + 3 / 3
    pA = aA / aA.sum()
    cov = (np.diag(pA) - np.outer(pA, pA)) / (aA.sum() + 1)
    nB = pd.crosstab(df.A, df.B).reindex(["a", "b", "c"]).to_numpy()  # (A, B)
    aB = nB + 3 / 6
    m = aB[:, 0] / aB.sum(axis=1)
    v = m * (1 - m) / (aB.sum(axis=1) + 1)
    second = (cov + np.outer(pA, pA)) * (np.outer(m, m) + np.diag(v))
    var_q = second.sum() - (pA @ m) ** 2
    exact = {"A": m @ cov @ m / var_q, "B": (pA**2 * v).sum() / var_q}
    s = net.variance_shares("B", draws=20000, random_state=0)
    se = s.attrs["se"]
    for node, value in exact.items():
        assert abs(s.loc[node, "x"] - value) < 3 * se.loc[node, "x"] + 1e-3, (node, s.loc[node, "x"], value)
    assert exact["A"] > 0.05 and exact["B"] > 0.5  # both matter: the test can fail either way
    assert s.attrs["variance"]["x"] == pytest.approx(var_q, rel=0.05)
    np.testing.assert_allclose(s["x"], s["y"], atol=1e-12)  # q and 1 - q: one decomposition


def test_shares_lie_in_0_1_and_sum_to_at_most_1_with_evidence():
    asia = bs.load_dataset("asia").iloc[:400]
    net = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", asia, method="hmd")
    s = net.variance_shares("L", {"X": "yes", "D": "yes"}, draws=2000, random_state=1)
    assert ((s >= 0) & (s <= 1)).all().all()
    total_se = np.sqrt((s.attrs["se"] ** 2).sum())
    assert (s.sum() <= 1 + 3 * total_se).all()
    assert s.loc["L"].min() > 0.2  # its own table matters
    # a node the elimination never uses has no share: not a row
    assert "A" not in net.variance_shares("S", {"L": "yes"}, draws=200, random_state=1).index
    again = net.variance_shares("L", {"X": "yes", "D": "yes"}, draws=2000, random_state=1)
    assert s.equals(again)
    with pytest.raises(DataError, match="one query"):
        net.variance_shares("L", pd.DataFrame({"X": ["yes"]}))


def test_query_summary_shows_the_answer_and_the_shares():
    _, net = _two_nodes()
    summ = net.query_summary("B", {"A": "a"}, alpha=0.1, random_state=0)
    assert isinstance(summ, Summary)
    text = summ.as_text()
    q = net.query("B", {"A": "a"}, interval=0.9, draws=4000, random_state=0)  # query_summary's default draws
    assert f"{q.loc['x', 'upper']:.4f}" in text and "P(B | A=a)" in text and "share" in text
    assert "Parent configurations of B" in text and "A=a" in text
