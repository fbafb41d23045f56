"""The kernel-mixture priors of ``benchmarks/_kde_rule.py`` (``bench_domains.py --regret
--bound --rule kde``): a new domain's prior learned from the fitted domains' tables.
Checked on exact small cases: the limits of the kernels (a point mass at each fitted
table gives the Bayes rule over them; one component gives the conjugate answer), the
law of 20 rows' tables, and the bandwidths the two empirical-Bayes steps choose where
the answer is known."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import betaln

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import _kde_rule as kr  # noqa: E402

THETA = np.array([[0.2, 0.6, 0.7], [0.5, 0.3, 0.4], [0.8, 0.1, 0.2]])
S = np.array([[[4, 3], [2, 1]], [[0, 0], [5, 15]], [[10, 0], [0, 10]]])  # three tables of rows


def _point_bayes(n1: np.ndarray, n: np.ndarray, theta: np.ndarray) -> np.ndarray:
    lw = (n1[:, None] * np.log(theta[None]) + (n - n1)[:, None] * np.log1p(-theta[None])).sum(-1)
    w = np.exp(lw - lw.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    return w @ theta


def test_counts_of_a_table():
    n1, n = kr.counts(S)
    assert n1.tolist() == [[3, 3, 1], [20, 0, 15], [10, 0, 10]]
    assert n.tolist() == [[10, 7, 3], [20, 0, 20], [20, 10, 10]]


@pytest.mark.parametrize("kind,bw", [("beta", (1e9, 1e9)), ("shift", (1e-6, 1e-6))])
def test_a_sharp_kernel_is_the_bayes_rule_over_the_fitted_tables(kind, bw):
    n1, n = kr.counts(S)
    M = np.full(THETA.shape, 1e12)
    q, _ = kr.posterior(kr.Prior(kind, bw), n1, n, THETA, M)
    assert q == pytest.approx(_point_bayes(n1, n, THETA), abs=2e-5)


def test_one_component_is_the_conjugate_answer():
    n1, n = kr.counts(S)
    M = np.full((1, 3), 1e12)
    q, Z = kr.posterior(kr.Prior("beta", (4.0, 9.0)), n1, n, THETA[:1], M)
    m = np.array([4.0, 9.0, 9.0])
    assert q == pytest.approx((n1 + m * THETA[0]) / (n + m), rel=1e-9)
    a, b = m * THETA[0], m * (1 - THETA[0])
    assert Z == pytest.approx((betaln(n1 + a, n - n1 + b) - betaln(a, b)).sum(1), rel=1e-9)


def test_a_type_of_its_own_takes_rows_unlike_every_fitted_table():
    # 20 of 20 rows in g1, 19 of them positive: the copies can only pull P(y1 | g1)
    # toward the fitted tables (the likeliest copy has 0.4); the unusual type (s = 1
    # around the tables' mean) keeps the rows
    n1, n = np.array([[20.0, 0.0, 19.0]]), np.array([[20.0, 0.0, 20.0]])
    M = np.full(THETA.shape, 1e12)
    copies, _ = kr.posterior(kr.Prior("beta", (1e9, 1e9)), n1, n, THETA, M)
    own, _ = kr.posterior(kr.Prior("beta", (1e9, 1e9), 0.0, 0.5, "joint"), n1, n, THETA, M)
    assert copies[0] == pytest.approx(_point_bayes(n1, n, THETA)[0], abs=1e-6)
    assert copies[0, 2] == pytest.approx(0.394, abs=1e-3)
    c = THETA.mean(0)[2]
    assert own[0, 2] == pytest.approx((19 + c) / 21, abs=2e-3)


def test_twenty_rows_tables_are_the_multinomial_law():
    assert len(kr._TABLES) == 1771
    th = np.array([0.3, 0.6, 0.2])
    p = kr._multinomial(th)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    n1, n = kr.counts(kr._TABLES.reshape(-1, 2, 2))
    assert p @ n1[:, 0] == pytest.approx(20 * 0.3, rel=1e-12)  # rows in g1
    assert p @ n1[:, 2] == pytest.approx(20 * 0.3 * 0.2, rel=1e-12)  # positives in g1


def test_alike_fitted_domains_give_the_sharpest_kernel():
    theta = np.tile([0.4, 0.3, 0.5], (5, 1))
    M = np.full(theta.shape, 400.0)
    pr = kr.learn_ml("beta", theta, M, 0.0, 0.0, "node")
    assert pr.bw == (kr.GRID_ML["beta"][-1], kr.GRID_ML["beta"][-1])
    spread = np.array([[0.1, 0.2, 0.3], [0.5, 0.6, 0.7], [0.9, 0.1, 0.2], [0.3, 0.8, 0.9], [0.7, 0.4, 0.5]])
    assert kr.learn_ml("beta", spread, M, 0.0, 0.0, "node").bw[0] < 10


def test_moment_concentration():
    theta = np.array([[0.3, 0.5, 0.5], [0.5, 0.5, 0.5], [0.7, 0.5, 0.5]])
    s = kr.moment_s(theta)
    assert s[0] == pytest.approx(0.25 / 0.04 - 1, rel=1e-12)  # var (ddof 1) 0.04 around 0.5
    assert s[1] > 1e6  # no spread: as sharp as the floor of the variance allows
    assert kr.moment_s(theta[:1]).tolist() == [1.0, 1.0]  # one table shows no spread: the unusual type's s


def test_tied_weighs_joint_and_node_by_their_marginals():
    n1, n = kr.counts(S)
    M = np.full(THETA.shape, 400.0)
    out = {}
    for mode in ("joint", "node", "tied"):
        out[mode] = kr.posterior(kr.Prior("beta", (20.0, 5.0), 0.25, 0.25, mode), n1, n, THETA, M)
    (qj, Zj), (qn, Zn), (qt, Zt) = out["joint"], out["node"], out["tied"]
    wj = kr.TIED * np.exp(Zj) / (kr.TIED * np.exp(Zj) + (1 - kr.TIED) * np.exp(Zn))
    assert qt == pytest.approx(wj[:, None] * qj + (1 - wj[:, None]) * qn, rel=1e-10)
    assert Zt == pytest.approx(np.log(kr.TIED * np.exp(Zj) + (1 - kr.TIED) * np.exp(Zn)), rel=1e-10)
    assert not np.allclose(qj, qn, atol=1e-3)  # the two modes differ on these tables
