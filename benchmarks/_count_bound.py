"""What any rule that sees only a new domain's 20 rows can do on a two-node shape of
``bench_domains.py --regret`` (``[G][Y|G]``, binary nodes): exact bounds, no sampling.

A draw of ``k`` rows of domain ``d`` (``k`` of its rows without replacement, as
``draw_rows`` draws them) is, for this network, summed up completely by its 2x2 table
``S`` (rows by group and outcome): every estimate of the new domain's tables is a
function of ``S`` and of the population.  Its probability is the multivariate
hypergeometric

    P(S | d) = prod_{g,y} C(T_d[g, y], S[g, y]) / C(n_d, k),

``T_d`` the domain's table of all its rows, and its held-out rows are ``T_d - S``
exactly.  So for every domain and every possible ``S`` the regret of any answer
``q = (P(g1), P(y1 | g0), P(y1 | g1))`` is known in closed form,

    regret_d(S, q) = max(pooled_d(S), separate(S)) - loglik(T_d - S; q) / (n_d - k),

``pooled_d(S)`` the same estimator fitted on the other domains plus the rows of ``S``,
``separate(S)`` BDeu with iss 1 on them (both scored per held-out row).

A **count rule** answers the same table ``S`` the same way whichever domain was left
out (the populations of two leave-outs share four of their five domains; a rule that
told them apart would be naming the benchmark's domains by elimination).  Over every
such rule (not only monotone ones, and seeing the whole table, so also the group's
count when it sets the outcome's table):

* ``mean``: the least possible largest expected regret of a domain,
  ``V = min_q max_d E_{S | d} regret_d(S, q(S))``.  The regret is convex in ``q`` and
  the expectation linear in a prior ``lambda`` over the domains, so (minimax theorem)
  ``V = max_lambda sum_S min_q sum_d lambda_d P(S | d) regret_d(S, q)``; the inner
  minimum is closed form (the held-out frequencies pooled with weights
  ``lambda_d P(S | d)``), the outer a concave maximisation over the simplex.  The rule
  attaining it is the Bayes rule under the least favourable ``lambda``.
* ``over``: the least possible expected number of domain-draws over ``cap`` (0.05)
  among ``draws`` draws of every domain: per table, the answer that leaves the least
  probability mass over ``cap`` (every subset of the domains that can be kept within
  ``cap`` together is tried: a convex feasibility problem each).
* for given draws (the benchmark's): each draw's table, its probability under each
  domain, and the least worst regret over the domains that could have drawn it at
  least ``ratio`` times as likely as the likeliest one.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize

import pybncsmooth as bs

#: tables of probability below this under a domain are left out of its sums (their
#: total mass is reported: ``dropped``)
MIN_PROB = 1e-9


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def tables(df: pd.DataFrame, domain: str) -> dict[Any, np.ndarray]:
    """Each domain's 2x2 table of all its rows: ``[g, y]``, ``g1`` and ``y1`` second."""
    out = {}
    for d in df[domain].cat.categories:
        rows = df[df[domain] == d]
        out[d] = np.array([[int(((rows.G == g) & (rows.Y == y)).sum()) for y in ("y0", "y1")] for g in ("g0", "g1")])
    return out


def draw_tables(T: np.ndarray, k: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Every 2x2 table of ``k`` rows drawable from ``T`` and its hypergeometric
    probability (those above :data:`MIN_PROB`)."""
    n = int(T.sum())
    lz = _log_comb(n, k)
    out, p = [], []
    t = T.ravel()
    for a in range(min(k, t[0]) + 1):
        for b in range(min(k - a, t[1]) + 1):
            for c in range(min(k - a - b, t[2]) + 1):
                e = k - a - b - c
                if e > t[3]:
                    continue
                s = (a, b, c, e)
                lp = sum(_log_comb(int(t[i]), s[i]) for i in range(4)) - lz
                if lp > math.log(MIN_PROB):
                    out.append(np.array(s).reshape(2, 2))
                    p.append(math.exp(lp))
    return out, np.array(p)


def _loglik(H: np.ndarray, q: np.ndarray) -> float:
    """Log-likelihood per row of held-out table ``H`` under ``q = (P(g1), P(y1|g0), P(y1|g1))``."""
    q = np.clip(q, 1e-12, 1 - 1e-12)
    v = H[1].sum() * math.log(q[0]) + H[0].sum() * math.log1p(-q[0])
    for g in (0, 1):
        v += H[g, 1] * math.log(q[1 + g]) + H[g, 0] * math.log1p(-q[1 + g])
    return v / H.sum()


def _separate(S: np.ndarray) -> np.ndarray:
    """BDeu, iss 1, on the table ``S`` (the ``bayes`` fit of ``bench_domains.py``)."""
    n = S.sum(axis=1)
    return np.array([(n[1] + 0.5) / (S.sum() + 1.0), (S[0, 1] + 0.25) / (n[0] + 0.5), (S[1, 1] + 0.25) / (n[1] + 0.5)])


def _rows(S: np.ndarray) -> pd.DataFrame:
    g = np.repeat(["g0", "g0", "g1", "g1"], S.ravel())
    y = np.repeat(["y0", "y1", "y0", "y1"], S.ravel())
    return pd.DataFrame({"G": g, "Y": y})


def _pooled(ms: str, others: pd.DataFrame, S: np.ndarray, method: str) -> np.ndarray:
    data = pd.concat([others, _rows(S)], ignore_index=True)
    data = data.assign(G=pd.Categorical(data.G, ["g0", "g1"]), Y=pd.Categorical(data.Y, ["y0", "y1"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = bs.fit(ms, data, method=method, random_state=0)
    cg, cy = net.cpt("G"), net.cpt("Y")  # cpt('Y')[y, g]
    return np.array([cg[1], cy[1, 0], cy[1, 1]])


class Cases:
    """Every (domain, drawable table) of a shape with its probability, held-out table
    and reference log-likelihood (the better of pooled and separate)."""

    def __init__(self, df: pd.DataFrame, ms: str, domain: str, method: str, k: int) -> None:
        self.T = tables(df, domain)
        self.doms = list(self.T)
        self.k = k
        keys: dict[tuple, int] = {}
        rows = []
        self.dropped = {}
        for j, d in enumerate(self.doms):
            others = df[df[domain] != d].drop(columns=domain).assign(
                G=lambda x: x.G.astype(str), Y=lambda x: x.Y.astype(str))
            Ss, ps = draw_tables(self.T[d], k)
            self.dropped[d] = float(1.0 - ps.sum())
            for S, p in zip(Ss, ps):
                key = tuple(S.ravel())
                i = keys.setdefault(key, len(keys))
                H = self.T[d] - S
                ref = max(_loglik(H, _pooled(ms, others, S, method)), _loglik(H, _separate(S)))
                rows.append((i, j, p, H, ref))
        self.n_tables = len(keys)
        self.table = {i: np.array(key).reshape(2, 2) for key, i in keys.items()}
        self.index = keys
        self.t = np.array([r[0] for r in rows])
        self.d = np.array([r[1] for r in rows])
        self.p = np.array([r[2] for r in rows])
        self.H = np.array([r[3] for r in rows], dtype=np.float64)  # (C, 2, 2)
        self.ref = np.array([r[4] for r in rows])
        n = self.H.sum(axis=(1, 2))
        # held-out frequencies per row: f_g1, and f[g, y1], f[g] for the outcome's tables
        self.a = self.H[:, 1].sum(axis=1) / n
        self.fy = self.H[:, :, 1] / n[:, None]
        self.fg = self.H.sum(axis=2) / n[:, None]

    def regret(self, idx: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Regret of cases ``idx`` under answers ``q`` (``(len(idx), 3)``)."""
        q = np.clip(q, 1e-12, 1 - 1e-12)
        ll = self.a[idx] * np.log(q[:, 0]) + (1 - self.a[idx]) * np.log1p(-q[:, 0])
        for g in (0, 1):
            ll += self.fy[idx, g] * np.log(q[:, 1 + g]) + (self.fg[idx, g] - self.fy[idx, g]) * np.log1p(-q[:, 1 + g])
        return self.ref[idx] - ll

    def bayes_rule(self, lam: np.ndarray) -> np.ndarray:
        """``(tables, 3)``: the answer to every table minimising the expected regret
        under the prior ``lam`` over the domains (the weighted held-out frequencies)."""
        w = lam[self.d] * self.p
        W = np.bincount(self.t, w, self.n_tables)
        out = np.full((self.n_tables, 3), 0.5)
        ok = W > 0
        out[ok, 0] = np.bincount(self.t, w * self.a, self.n_tables)[ok] / W[ok]
        for g in (0, 1):
            num = np.bincount(self.t, w * self.fy[:, g], self.n_tables)
            den = np.bincount(self.t, w * self.fg[:, g], self.n_tables)
            good = den > 0
            out[good, 1 + g] = num[good] / den[good]
        return out

    def expected(self, rule: np.ndarray) -> np.ndarray:
        """Each domain's expected regret over its draws under ``rule`` (tables x 3)."""
        r = self.regret(np.arange(len(self.t)), rule[self.t])
        return np.bincount(self.d, self.p * r, len(self.doms)) / np.bincount(self.d, self.p, len(self.doms))


def mean_bound(c: Cases) -> tuple[float, np.ndarray, np.ndarray]:
    """``V = min_rule max_d E regret_d`` (see the module docstring), the least
    favourable prior over the domains and the rule attaining ``V``."""
    D = len(c.doms)

    def value(z: np.ndarray) -> float:
        lam = np.exp(z - z.max())
        lam /= lam.sum()
        return float(lam @ c.expected(c.bayes_rule(lam)))

    best = None
    for start in [np.zeros(D)] + [np.eye(D)[j] * 3 for j in range(D)]:
        fit = minimize(lambda z: -value(z), start, method="Nelder-Mead",
                       options=dict(maxiter=4000, xatol=1e-6, fatol=1e-9))
        if best is None or fit.fun < best.fun:
            best = fit
    lam = np.exp(best.x - best.x.max())
    lam /= lam.sum()
    rule = c.bayes_rule(lam)
    return float(c.expected(rule).max()), lam, rule


def _least_worst(c: Cases, idx: np.ndarray) -> tuple[float, np.ndarray]:
    """``min_q max_{i in idx} regret_i(q)`` and its ``q`` (convex: SLSQP on the epigraph)."""
    if len(idx) == 0:
        return -np.inf, np.full(3, 0.5)
    w = c.p[idx] / c.p[idx].max()
    q0 = np.array([np.average(c.a[idx], weights=w)] + [
        np.average(c.fy[idx, g], weights=w) / max(np.average(c.fg[idx, g], weights=w), 1e-12) for g in (0, 1)])
    q0 = np.clip(q0, 1e-3, 1 - 1e-3)
    x0 = np.r_[q0, c.regret(idx, np.tile(q0, (len(idx), 1))).max()]
    cons = [{"type": "ineq", "fun": lambda x: x[3] - c.regret(idx, np.tile(x[:3], (len(idx), 1)))}]
    fit = minimize(lambda x: x[3], x0, bounds=[(1e-6, 1 - 1e-6)] * 3 + [(None, None)], constraints=cons,
                   method="SLSQP", options=dict(maxiter=500, ftol=1e-12))
    q = fit.x[:3]
    return float(c.regret(idx, np.tile(q, (len(idx), 1))).max()), q


def over_bound(c: Cases, cap: float = 0.05, draws: int = 8) -> tuple[float, np.ndarray]:
    """The least possible expected number of domain-draws over ``cap`` among ``draws``
    draws of every domain, over every count rule, and per domain its probability of a
    draw over ``cap``: per table, the subsets of the domains that could draw it tried
    by decreasing probability mass, the first that one answer keeps within ``cap``
    kept (exact: every subset is tried until one is feasible)."""
    per = np.zeros(len(c.doms))
    for i in range(c.n_tables):
        idx = np.flatnonzero(c.t == i)
        best = np.c_[c.a[idx], c.fy[idx] / np.maximum(c.fg[idx], 1e-300)]  # each case's own held-out table
        lost = idx[c.regret(idx, best) > cap]  # beyond cap whatever the answer
        idx = np.setdiff1d(idx, lost)
        np.add.at(per, c.d[lost], c.p[lost])
        subsets = [np.array(sub) for r in range(len(idx), 0, -1) for sub in itertools.combinations(idx, r)]
        subsets.sort(key=lambda sub: -c.p[sub].sum())
        keep = np.zeros(0, dtype=np.int64)
        for sub in subsets:
            if _least_worst(c, sub)[0] <= cap:
                keep = sub
                break
        lost = np.setdiff1d(idx, keep)
        np.add.at(per, c.d[lost], c.p[lost])
    per /= np.bincount(c.d, c.p, len(c.doms))
    return float(draws * per.sum()), per


def draw_report(c: Cases, S: np.ndarray, ratio: float = 0.01) -> dict:
    """For one drawn table: each domain's probability of drawing it, and the least worst
    regret over the domains at least ``ratio`` times as likely as the likeliest."""
    i = c.index.get(tuple(np.asarray(S).ravel()))
    if i is None:
        return {}
    idx = np.flatnonzero(c.t == i)
    top = c.p[idx].max()
    keep = idx[c.p[idx] >= ratio * top]
    worst, q = _least_worst(c, keep)
    return dict(table=np.asarray(S).tolist(), p={c.doms[c.d[j]]: float(c.p[j]) for j in idx},
                considered=[c.doms[c.d[j]] for j in keep], least_worst=worst, answer=np.round(q, 3).tolist())


def adapt_regrets(c: Cases, df: pd.DataFrame, ms: str, domain: str, method: str) -> np.ndarray:
    """Every case's regret under ``adapt`` (the population fitted on the other domains
    with ``domain=``, adapted from the rows of the case's table): adapt's exact
    expected regret and probability of a draw over a cap, beside the bounds."""
    out = np.zeros(len(c.t))
    for j, d in enumerate(c.doms):
        others = df[df[domain] != d]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pop = bs.fit(ms, others, method=method, domain=domain, random_state=0)
            for i in np.flatnonzero(c.d == j):
                S = c.table[c.t[i]]
                rows = _rows(S).assign(G=lambda x: pd.Categorical(x.G, ["g0", "g1"]),
                                       Y=lambda x: pd.Categorical(x.Y, ["y0", "y1"]))
                net = pop.adapt(rows, d).for_domain(d)
                cg, cy = net.cpt("G"), net.cpt("Y")
                out[i] = c.regret(np.array([i]), np.array([[cg[1], cy[1, 0], cy[1, 1]]]))[0]
    return out
