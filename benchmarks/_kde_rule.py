"""A new domain's prior learned from the fitted domains (a kernel mixture), scored exactly
on the two-node shapes of ``bench_domains.py --regret --bound --rule kde``.

On ``[G][Y|G]`` (binary nodes) a new domain is the vector
``theta = (P(g1), P(y1 | g0), P(y1 | g1))``; node ``G`` holds the first entry, node ``Y``
the other two.  The population fitted on the other domains keeps, for every fitted
domain ``d``, its table ``theta_d`` and the Dirichlet mass ``M_d`` its sd implies
(``s_atom_alpha``, what ``adapt`` copies).  The prior tried here, per left-out domain,
uses those five tables only (never the left-out domain's):

    theta ~ sum_d 1/D * prod_v [ (1 - a - b) K_v(theta_v | theta_dv)
                                + a Beta(s_v c_v) + b Beta(1 * c_v) ]     ("node")
    theta ~ (1 - a - b) sum_d 1/D prod_v K_v(theta_v | theta_dv)
            + a prod_v Beta(s_v c_v) + b prod_v Beta(c_v)                 ("joint")

or ``"tied"``: ``"joint"`` with prior probability 0.99, else ``"node"`` (as ``adapt`` ties
its choices across the nodes),

``c`` the fitted tables' mean, ``s_v`` the concentration whose Beta spread matches theirs
(moments), per configuration of a node independent Betas.  The choice of fitted
domain ``d`` ties the nodes (which group share goes with which outcome rate comes from
the fitted domains); the kernel ``K_v`` lets the new domain depart from ``d`` node by
node.  Three kernels:

* ``beta``: ``Beta(m'_v theta_dvc, m'_v (1 - theta_dvc))`` per configuration,
  ``m' = m M_d / (m + M_d + 1)`` (the fitted table's own uncertainty added);
* ``shift``: one logit shift per node, ``theta_vc = expit(logit theta_dvc + delta_v)``,
  ``delta_v ~ N(0, h_v^2)`` (1-D quadrature on 201 points of [-10, 10]);
* ``nn``: ``beta`` with a bandwidth of its own per fitted domain (adaptive kernel
  density): sd ``alpha_v`` times the distance from ``theta_dv`` to the nearest other
  fitted domain in node ``v``.

The answer to the new rows' table is the posterior mean (conjugate per component and
configuration; the shift by quadrature).  Hyperparameters, from the fitted domains alone:

* ``ml`` (empirical Bayes): the bandwidths ``(m_G, m_Y)`` (or ``h``) maximise the
  leave-one-fitted-domain-out marginal likelihood of each fitted domain's table (as
  ``theta_d M_d`` counts) under the prior built from the others (13-point log grids;
  the shares ``a``, ``b`` and the mode fixed per variant: :data:`VARIANTS`);
* ``regret``: bandwidths, ``(a, b)`` and the mode minimise the largest over the fitted
  domains ``e`` of the expected regret of 20 rows drawn from ``theta_e`` (all 1,771
  tables, multinomial) under the prior built from the others, against the better of
  their pooled table (count-weighted mean) and the separate fit: the benchmark's
  criterion, played among the fitted domains.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import betaln, expit, gammaln, logit, logsumexp

import pybncsmooth as bs

import _count_bound as cb

#: parameter -> node: P(g1) in G, P(y1 | g0) and P(y1 | g1) in Y
NODE = np.array([0, 1, 1])
DELTA = np.linspace(-10.0, 10.0, 201)
#: bandwidth grids: a kernel's mass m (beta), the shift's sd h (shift), alpha (nn)
GRID_ML = {"beta": np.logspace(0, 4, 13), "shift": np.logspace(-2, 1, 13), "nn": np.logspace(-1.5, 0.5, 13)}
GRID_REGRET = {"beta": np.logspace(0, 4, 9), "shift": np.logspace(-2, 1, 9),
               "nn": np.array([0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0])}
#: (centre type a, unusual type b) tried by ``regret``
SHARES = [(0.0, 0.0), (0.1, 0.0), (0.25, 0.0), (0.0, 0.1), (0.1, 0.1), (0.25, 0.1), (0.1, 0.25), (0.25, 0.25),
          (0.4, 0.1)]
K_ROWS = 20
#: mode ``"tied"``: the prior probability of ``"joint"`` (else ``"node"``), as adapt ties its choices
TIED = 0.99


@dataclass(frozen=True)
class Prior:
    """One kernel-mixture prior: kernel, bandwidth per node, shares of the centre type
    (``a``) and the unusual type (``b``), ``mode`` ``"node"``, ``"joint"`` or ``"tied"``
    (the two, ``"joint"`` with prior probability :data:`TIED`)."""

    kernel: str
    bw: tuple[float, float]
    a: float = 0.0
    b: float = 0.0
    mode: str = "node"


def fitted_tables(pop: bs.FittedNetwork) -> tuple[np.ndarray, np.ndarray]:
    """``(D, 3)`` tables and masses of the fitted domains a population keeps for adapt."""
    aG = np.asarray(pop.cpd("G").base.estimate.info["s_atom_alpha"])  # (D, 1, 2)
    aY = np.asarray(pop.cpd("Y").base.estimate.info["s_atom_alpha"])  # (D, 2, 2): [d, g, y]
    a1 = np.c_[aG[:, 0, 1], aY[:, 0, 1], aY[:, 1, 1]]
    M = np.c_[aG[:, 0].sum(1), aY[:, 0].sum(1), aY[:, 1].sum(1)]
    return a1 / M, M


def counts(S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(C, 3)`` successes and trials of the three parameters in 2x2 tables ``S``."""
    n1 = np.stack([S[:, 1].sum(1), S[:, 0, 1], S[:, 1, 1]], 1).astype(np.float64)
    n = np.stack([S.sum((1, 2)), S[:, 0].sum(1), S[:, 1].sum(1)], 1).astype(np.float64)
    return n1, n


def _logbb(n1, n, a, b):  # beta-binomial log marginal without the binomial coefficient
    return betaln(n1 + a, n - n1 + b) - betaln(a, b)


def _by_node(L: np.ndarray) -> np.ndarray:
    return np.stack([L[..., NODE == v].sum(-1) for v in (0, 1)], -1)


def _nn_mass(theta: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    D = len(theta)
    dist = np.zeros((D, 2))
    for v in (0, 1):
        k = NODE == v
        dd = np.abs(theta[:, None, k] - theta[None, :, k]).max(-1)
        np.fill_diagonal(dd, np.inf)
        dist[:, v] = dd.min(1)
    sd = (np.asarray(alpha)[None] * np.maximum(dist, 1e-3))[:, NODE]
    return np.maximum(theta * (1 - theta) / sd ** 2 - 1, 0.5)


def kernel(kind: str, n1: np.ndarray, n: np.ndarray, theta: np.ndarray, M: np.ndarray,
           bw: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Per table and fitted domain: the log marginal of each node's counts under the
    kernel around that domain ``(C, D, 2)`` and the posterior means ``(C, D, 3)``."""
    if kind in ("beta", "nn"):
        m = np.asarray(bw, float)[NODE][None] if kind == "beta" else _nn_mass(theta, bw)
        mk = m * M / (m + M + 1.0)
        a, b = mk * theta, mk * (1 - theta)
        L = _logbb(n1[:, None], n[:, None], a[None], b[None])
        return _by_node(L), (n1[:, None] + a[None]) / (n[:, None] + mk[None])
    h = np.asarray(bw, float)
    q = expit(logit(np.clip(theta, 1e-6, 1 - 1e-6))[:, :, None] + DELTA[None, None])  # (D, 3, G)
    ll = n1[:, None, :, None] * np.log(q)[None] + (n - n1)[:, None, :, None] * np.log1p(-q)[None]
    Lv, mean = [], np.empty(ll.shape[:3])
    for v in (0, 1):
        lp = -0.5 * (DELTA / h[v]) ** 2
        lv = ll[:, :, NODE == v].sum(2) + (lp - logsumexp(lp))
        Z = logsumexp(lv, -1)
        Lv.append(Z)
        post = np.exp(lv - Z[..., None])
        for k in np.flatnonzero(NODE == v):
            mean[:, :, k] = (post * q[None, :, k]).sum(-1)
    return np.stack(Lv, -1), mean


def moment_s(theta: np.ndarray) -> np.ndarray:
    """Per node the concentration whose Beta spread matches the fitted tables' (moments;
    one table shows no spread: 1, the unusual type's)."""
    if len(theta) < 2:
        return np.ones(2)
    c = theta.mean(0)
    s = c * (1 - c) / np.maximum(theta.var(0, ddof=1), 1e-9) - 1
    return np.array([max(s[NODE == v].mean(), 0.5) for v in (0, 1)])


def _typed(n1, n, c, s):
    sk = np.asarray(s, float)[NODE]
    a0, b0 = sk * c, sk * (1 - c)
    return _by_node(_logbb(n1, n, a0, b0)), (n1 + a0) / (n + sk)


def posterior(prior: Prior, n1: np.ndarray, n: np.ndarray, theta: np.ndarray,
              M: np.ndarray, parts: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(C, 3)`` posterior means and ``(C,)`` log marginals of tables ``(n1, n)``."""
    Lv, mean = parts if parts is not None else kernel(prior.kernel, n1, n, theta, M, prior.bw)
    if prior.mode == "tied":  # adapt's structure: all nodes as one ("joint") with prior TIED, else "node"
        qj, Zj = posterior(Prior(prior.kernel, prior.bw, prior.a, prior.b, "joint"), n1, n, theta, M, (Lv, mean))
        qn, Zn = posterior(Prior(prior.kernel, prior.bw, prior.a, prior.b, "node"), n1, n, theta, M, (Lv, mean))
        lj, ln = np.log(TIED) + Zj, np.log1p(-TIED) + Zn
        Z = np.logaddexp(lj, ln)
        wj = np.exp(lj - Z)[:, None]
        return wj * qj + (1 - wj) * qn, Z
    a, b, D = prior.a, prior.b, Lv.shape[1]
    c = theta.mean(0)
    Lc, mc = _typed(n1, n, c, moment_s(theta)) if a > 0 else (None, None)
    Lu, mu = _typed(n1, n, c, (1.0, 1.0)) if b > 0 else (None, None)
    lpi = -np.log(D)
    if prior.mode == "node":
        P = [np.log1p(-a - b) + Lv]
        means = [mean]
        for share, L, m in ((a, Lc, mc), (b, Lu, mu)):
            if share > 0:
                P.append(np.log(share) + np.broadcast_to(L[:, None], Lv.shape))
                means.append(np.broadcast_to(m[:, None], mean.shape))
        P = np.stack(P, 0)
        mix = logsumexp(P, 0)
        R = np.exp(P - mix)
        lw = lpi + mix.sum(-1)
        Z = logsumexp(lw, 1)
        w = np.exp(lw - Z[:, None])
        per = sum(R[i][..., NODE] * means[i] for i in range(len(means)))
        return np.einsum("cd,cdk->ck", w, per), Z
    cols, ms = [np.log1p(-a - b) + lpi + Lv.sum(-1)], [mean]
    for share, L, m in ((a, Lc, mc), (b, Lu, mu)):
        if share > 0:
            cols.append(np.log(share) + L.sum(-1)[:, None])
            ms.append(m[:, None])
    lw = np.concatenate(cols, 1)
    Z = logsumexp(lw, 1)
    w = np.exp(lw - Z[:, None])
    allm = np.concatenate([np.broadcast_to(x, (len(lw),) + x.shape[1:]) for x in ms], 1)
    return np.einsum("cd,cdk->ck", w, allm), Z


# ---------------------------------------------------------------- hyperparameters from the fitted domains

_TABLES = np.array([(a, b, c, K_ROWS - a - b - c) for a in range(K_ROWS + 1) for b in range(K_ROWS + 1 - a)
                    for c in range(K_ROWS + 1 - a - b)])
_N1, _NN = counts(_TABLES.reshape(-1, 2, 2))
_SEP = np.stack([cb._separate(S) for S in _TABLES.reshape(-1, 2, 2)])


def _multinomial(th: np.ndarray) -> np.ndarray:
    g, y0, y1 = th
    p = np.clip([(1 - g) * (1 - y0), (1 - g) * y0, g * (1 - y1), g * y1], 1e-300, 1)
    return np.exp(gammaln(K_ROWS + 1) - gammaln(_TABLES + 1).sum(1) + (_TABLES * np.log(p)).sum(1))


def _xent(q: np.ndarray, th: np.ndarray) -> np.ndarray:
    """Expected log-likelihood of a row drawn from ``th`` under answers ``q``."""
    q = np.clip(q, 1e-12, 1 - 1e-12)
    g, y0, y1 = th
    return (g * np.log(q[:, 0]) + (1 - g) * np.log1p(-q[:, 0])
            + (1 - g) * (y0 * np.log(q[:, 1]) + (1 - y0) * np.log1p(-q[:, 1]))
            + g * (y1 * np.log(q[:, 2]) + (1 - y1) * np.log1p(-q[:, 2])))


def learn_ml(kind: str, theta: np.ndarray, M: np.ndarray, a: float, b: float, mode: str) -> Prior:
    """``ml``: the bandwidths maximising the leave-one-fitted-domain-out marginal
    likelihood of the fitted domains' tables (``theta_e M_e`` as counts)."""
    D = len(theta)
    best = (-np.inf, None)
    for bw in itertools.product(GRID_ML[kind], GRID_ML[kind]):
        pr = Prior(kind, bw, a, b, mode)
        tot = 0.0
        for e in range(D):
            keep = np.arange(D) != e
            tot += posterior(pr, (theta[e] * M[e])[None], M[e][None], theta[keep], M[keep])[1][0]
        if tot > best[0]:
            best = (tot, pr)
    return best[1]


def learn_regret(kind: str, theta: np.ndarray, M: np.ndarray) -> tuple[Prior, float]:
    """``regret``: the prior (bandwidths, shares, mode) whose largest expected regret over
    the fitted domains, each left out in turn and drawn 20 rows from, is least."""
    D = len(theta)
    grid = GRID_REGRET[kind]
    pre = []
    for e in range(D):
        keep = np.arange(D) != e
        th, Mk = theta[keep], M[keep]
        per = {h: kernel(kind, _N1, _NN, th, Mk, (h, h)) for h in grid}
        pool = (th * Mk).sum(0) / Mk.sum(0)
        ref = np.maximum(_xent(np.tile(pool, (len(_N1), 1)), theta[e]), _xent(_SEP, theta[e]))
        pre.append((th, Mk, per, _multinomial(theta[e]), ref, theta[e]))
    best = (np.inf, None)
    for hg, hy in itertools.product(grid, grid):
        for (a, b), mode in itertools.product(SHARES, ("node", "joint")):
            if a == b == 0 and mode == "joint":
                continue
            pr = Prior(kind, (hg, hy), a, b, mode)
            worst = -np.inf
            for th, Mk, per, w, ref, te in pre:
                Lv = np.stack([per[hg][0][..., 0], per[hy][0][..., 1]], -1)
                mean = np.concatenate([per[hg][1][..., :1], per[hy][1][..., 1:]], -1)
                q = posterior(pr, _N1, _NN, th, Mk, (Lv, mean))[0]
                worst = max(worst, float(w @ (ref - _xent(q, te))))
                if worst >= best[0]:
                    break
            if worst < best[0]:
                best = (worst, pr)
    if best[1] is None:
        raise ValueError(f"no prior of the {kind!r} family has a finite regret among these {D} fitted domains")
    return best[1], best[0]


#: the variants of ``--rule kde``: name -> (kernel, how the hyperparameters are set, a, b, mode)
VARIANTS = {
    "beta-ml": ("beta", "ml", 0.0, 0.0, "node"),
    "beta-ml, unusual 0.2 joint": ("beta", "ml", 0.0, 0.2, "joint"),
    "shift-ml, unusual 0.2 joint": ("shift", "ml", 0.0, 0.2, "joint"),
    "beta-ml, centre 1/4 unusual 1/4 node": ("beta", "ml", 0.25, 0.25, "node"),
    "beta-ml, centre 1/4 unusual 1/4 tied": ("beta", "ml", 0.25, 0.25, "tied"),
    "nn-ml, centre 1/4 unusual 1/4 node": ("nn", "ml", 0.25, 0.25, "node"),
    "beta-regret": ("beta", "regret", None, None, None),
    "shift-regret": ("shift", "regret", None, None, None),
    "nn-regret": ("nn", "regret", None, None, None),
}


def kde_regrets(c: cb.Cases, df: pd.DataFrame, ms: str, domain: str, method: str,
                variants: list[str] | None = None) -> dict[str, tuple[np.ndarray, dict]]:
    """Every case's regret under each variant, and per left-out domain the prior chosen
    from the five fitted domains' tables (the population fitted without the left-out
    domain, as ``adapt_regrets`` fits it)."""
    fitted = {}
    for d in c.doms:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pop = bs.fit(ms, df[df[domain] != d], method=method, domain=domain, random_state=0)
        fitted[d] = fitted_tables(pop)
    out = {}
    for name in variants or list(VARIANTS):
        kind, how, a, b, mode = VARIANTS[name]
        r = np.zeros(len(c.t))
        chosen = {}
        for j, d in enumerate(c.doms):
            theta, M = fitted[d]
            if how == "ml":
                pr, note = learn_ml(kind, theta, M, a, b, mode), None
            else:
                pr, note = learn_regret(kind, theta, M)
            chosen[d] = (pr, note)
            idx = np.flatnonzero(c.d == j)
            n1, n = counts(np.array([c.table[t] for t in c.t[idx]]))
            r[idx] = c.regret(idx, posterior(pr, n1, n, theta, M)[0])
        out[name] = (r, chosen)
    return out


def summary(c: cb.Cases, r: np.ndarray, cap: float = 0.05, draws: int = 8) -> dict[str, Any]:
    """Per domain the expected regret and the probability of a draw over ``cap``."""
    D = len(c.doms)
    tot = np.bincount(c.d, c.p, D)
    E = np.bincount(c.d, c.p * r, D) / tot
    P = np.bincount(c.d, c.p * (r > cap), D) / tot
    return dict(E=E, P=P, largest_E=float(E.max()), largest_P=float(P.max()), over=float(draws * P.sum()))
