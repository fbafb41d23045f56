"""Issue 58: the exact bounds of ``benchmarks/_count_bound.py`` on what any rule that
sees only a new domain's rows can do on a two-node shape (``bench_domains.py --regret
--bound``).  Checked on a small world (three domains of 30 rows, 5 rows a draw, the
pooled fit ``bayes`` so that it runs in seconds): the hypergeometric probabilities of
the draws' tables against scipy, the held-out tables, the Bayes rule's optimality, the
minimax value as a saddle point, and the count of draws over a cap at its extremes and
against a brute force over answers."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_hypergeom

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import _count_bound as cb  # noqa: E402


def _world() -> pd.DataFrame:
    rows = []
    for d, (cells) in enumerate(([12, 8, 6, 4], [5, 5, 10, 10], [20, 2, 4, 4])):
        lab = np.repeat(np.arange(4), cells)
        rows.append(pd.DataFrame({"dom": f"d{d}", "G": np.where(lab >= 2, "g1", "g0"),
                                  "Y": np.where(lab % 2 == 1, "y1", "y0")}))
    df = pd.concat(rows, ignore_index=True)
    return df.assign(**{c: pd.Categorical(df[c]) for c in df})


@pytest.fixture(scope="module")
def cases() -> cb.Cases:
    return cb.Cases(_world(), "[G][Y|G]", "dom", "bayes", 5)


def test_draw_tables_are_the_hypergeometric_law():
    T = np.array([[12, 8], [6, 4]])
    tabs, p = cb.draw_tables(T, 5)
    assert len(tabs) == 55  # the 56 tables of 5 rows but all 5 in the cell of 4
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    for S, pr in zip(tabs, p):
        assert pr == pytest.approx(multivariate_hypergeom.pmf(S.ravel(), T.ravel(), 5), rel=1e-9)


def test_cases_hold_the_held_out_tables_and_the_reference(cases):
    assert cases.doms == ["d0", "d1", "d2"]
    assert np.array_equal(cases.T["d1"], [[5, 5], [10, 10]])
    for i in range(len(cases.t)):
        d = cases.doms[cases.d[i]]
        assert np.array_equal(cases.H[i] + cases.table[cases.t[i]], cases.T[d])
    # the reference is at least the separate fit's held-out log-likelihood per row
    sep = np.array([cb._separate(cases.table[t]) for t in cases.t])
    assert (cases.ref >= -cases.regret(np.arange(len(cases.t)), sep) + cases.ref - 1e-12).all()
    # per domain the draws' probabilities sum to 1
    assert np.bincount(cases.d, cases.p) == pytest.approx(np.ones(3), abs=1e-9)


def test_the_bayes_rule_minimises_the_expected_regret(cases):
    lam = np.array([0.2, 0.5, 0.3])
    rule = cases.bayes_rule(lam)
    best = lam @ cases.expected(rule)
    rng = np.random.default_rng(0)
    for _ in range(20):
        other = np.clip(rule + rng.normal(0, 0.02, rule.shape), 1e-3, 1 - 1e-3)
        assert lam @ cases.expected(other) > best


def test_the_minimax_value_is_a_saddle_point(cases):
    """The least favourable prior's Bayes risk (a lower bound on any rule's largest
    expected domain regret) equals its rule's largest expected domain regret (an upper
    bound): the value is the minimax."""
    V, lam, rule = cb.mean_bound(cases)
    assert lam.sum() == pytest.approx(1.0)
    assert lam @ cases.expected(rule) == pytest.approx(V, abs=2e-4)
    assert cases.expected(rule).max() == pytest.approx(V, abs=1e-12)


def test_the_least_number_of_draws_over_a_cap(cases):
    n, per = cb.over_bound(cases, cap=10.0, draws=8)
    assert n == 0.0 and (per == 0).all()
    n, per = cb.over_bound(cases, cap=-10.0, draws=8)
    assert n == pytest.approx(24.0) and per == pytest.approx(np.ones(3))
    # against a brute force over a grid of answers, table by table
    cap = 0.05
    n, per = cb.over_bound(cases, cap=cap, draws=1)
    grid = np.linspace(0.02, 0.98, 25)
    qs = np.array(list(itertools.product(grid, grid, grid)))
    lost = np.zeros(3)
    for i in range(cases.n_tables):
        idx = np.flatnonzero(cases.t == i)
        r = np.stack([cases.regret(np.full(len(qs), j), qs) for j in idx], axis=1)  # (grid, cases)
        mass = ((r > cap) * cases.p[idx][None]).sum(axis=1)
        best = int(np.argmin(mass))
        np.add.at(lost, cases.d[idx], (r[best] > cap) * cases.p[idx])
    assert n <= lost.sum() + 1e-12  # the exact search is never worse than the grid
    assert n == pytest.approx(lost.sum(), abs=0.02)
