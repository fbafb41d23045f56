r"""The posterior of a hierarchical Multinomial-Dirichlet CPT (Azzimonti, Corani &
Zaffalon 2019, Sec. 2.2-3.1), its concentration ``s`` learned.

The model of one CPT with columns :math:`y` (observed parent configurations):

.. math::
    \frac{1}{1 + s} \sim \text{uniform on } (0, 1) \text{ (s within } [S_{min}, S_{max}]), \qquad
    u \sim \mathrm{Dir}(\alpha_0), \qquad
    \theta_y \mid s, u \sim \mathrm{Dir}(s\,u), \qquad
    n_y \mid \theta_y \sim \mathrm{Mult}(\theta_y).

The paper fixes ``s`` (to :math:`|X|`); it says how alike the columns are, and a
wrong value is what breaks calibration: on networks whose columns are nearly
deterministic (most real ones) ``s = |X|`` claims they resemble each other, and an
unseen configuration's interval (the predictive :math:`\mathrm{Dir}(s u)`) covers
about half the time whatever the inference.  Here ``s`` is integrated out on a grid of
:math:`\log s` under the uniform prior on the intra-class correlation :math:`1/(1 + s)`
(:func:`~pybncsmooth.estimators.hmd.backoff.log_icc_prior`: a flat prior on :math:`\log s` lets the posterior
run to complete pooling wherever a few rows a configuration cannot rule it out): for each
grid value the variational fit of the paper (Sec. 3.1) proposes an importance sampler of
``u`` whose mean weight estimates :math:`p(D \mid s)`, and the grid's weights are those
estimates times the prior and the trapezoidal widths (:func:`learn_s`).

Given ``(s, u)`` a column's posterior is exactly :math:`\mathrm{Dir}(n_y + s u)`, so
(:func:`mixture_moments`)

.. math::
    E[\theta_{xy}] = \sum_k w_k \frac{n_{xy} + s_k \kappa_{kx}}{n_y + s_k}, \quad
    E[\theta_{xy}^2] = \sum_k w_k
      \frac{(n_{xy} + s_k\kappa_{kx})^2 + s_k^2 V_{kx} + n_{xy} + s_k\kappa_{kx}}{(n_y + s_k)(n_y + s_k + 1)},

:math:`V_{kx} = \kappa_{kx}(1 - \kappa_{kx}) / (\tau_k + 1)` the variance of
:math:`u_x` under ``q`` (eq. 9 of the paper, with ``s`` integrated); an unseen
configuration (``n = 0``) below the tree's root gets the predictive
:math:`\mathrm{Dir}(s u)` mixed over :math:`(s, u)`, one below a deeper node of the
context tree the spread around that node (:mod:`~pybncsmooth.estimators.hmd.backoff`).  :class:`HMDPosterior`
draws ``k``, then :math:`u \sim q`, then every column from its Dirichlet.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from .._scipy import gammaln

from ...counting.context_tree import ContextTree, config_index
from ._kernels import vi_converge
from .backoff import draw_below, log_icc_prior
from ..posterior import TreePosterior, _chunks, backoff_index, dirichlet, register_posterior, trapezoid_weights

__all__ = ["SPosterior", "learn_s", "fixed_s", "mixture_moments", "HMDPosterior", "JointHMDPosterior", "S_MIN",
           "S_MAX"]

#: bounds of the prior of ``s`` (beyond them the estimates no longer change)
S_MIN = 1e-3
S_MAX = 1e7
#: the coarse grid's step in log s, and the fine grid's around the bound's maximum
_COARSE = math.log(10.0)
_FINE = 0.25
#: grid points whose log evidence is this far below the best carry no weight
_DROP = 30.0
#: coarse values whose log evidence is within this of the best get fine grid points around them
_FINE_DROP = 12.0


class SPosterior:
    """The posterior of ``(s, u)`` as weighted particles: grid values ``s`` (K,), and for
    each ``u`` particles ``u`` (K, M, r) with weights ``weights`` (K, M) summing to 1 over
    all of them (the grid's posterior times the importance weights within a grid
    value).  A fixed ``s`` with its variational ``q(u)`` is one grid value whose
    particles stand for ``q`` (``tau``, ``kappa`` kept: see :func:`fixed_s`)."""

    def __init__(self, s: np.ndarray, u: np.ndarray, weights: np.ndarray, iterations: int = 0,
                 converged: bool = True, q: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.s = np.asarray(s, dtype=np.float64)
        self.u = np.asarray(u, dtype=np.float64)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.iterations = int(iterations)
        self.converged = bool(converged)
        #: for a variational posterior: ``(kappa (K, r), tau (K,))`` of ``q(u) = Dir(tau kappa)``
        self.q = q

    @property
    def s_weights(self) -> np.ndarray:
        return self.weights.sum(axis=1)

    @property
    def kappa_mean(self) -> np.ndarray:
        """:math:`E[u]`."""
        if self.q is not None:
            return self.s_weights @ self.q[0]
        return np.einsum("km,kmr->r", self.weights, self.u)

    @property
    def s_center(self) -> float:
        """The posterior geometric mean of ``s`` (the value itself when fixed)."""
        if len(self.s) == 1:
            return float(self.s[0])
        return float(np.exp(self.s_weights @ np.log(self.s)))


def _vi(N: np.ndarray, s: float, a0: np.ndarray, k0: np.ndarray, tol: float, max_iter: int) -> tuple:
    """``(kappa, tau, iterations, converged)`` of the variational fit at ``s``."""
    flags = np.zeros(1, dtype=np.int64)
    _, kappa, tau, it, conv = vi_converge(N, a0, float(s), k0, float(tol), int(max_iter), np.empty(0), flags)
    return kappa, float(tau), it, conv


def _log_lik(N_rows: np.ndarray, N_vals: np.ndarray, col_tot: np.ndarray, s: float, U: np.ndarray) -> np.ndarray:
    r""":math:`\log p(D \mid s, u)` of every particle ``U`` (M, r): the columns'
    Dirichlet-multinomial likelihoods, over the non-zero counts only."""
    a = s * U[:, N_rows]
    ll = (gammaln(a + N_vals) - gammaln(a)).sum(axis=1)
    return ll + float((gammaln(s) - gammaln(s + col_tot)).sum())


def _log_dir(U: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Log density of ``Dir(alpha)`` at the rows of ``U``."""
    with np.errstate(divide="ignore"):
        logu = np.log(U)
    return gammaln(alpha.sum()) - gammaln(alpha).sum() + ((alpha - 1.0) * logu).sum(axis=1)


def _grid_point(data: tuple, s: float, a0: np.ndarray, k: np.ndarray, tau: float, M: int,
                rng: np.random.Generator) -> tuple[float, np.ndarray, np.ndarray]:
    r"""Importance sampling at one ``s``: particles from the widened variational
    ``Dir(tau kappa / 2)`` (a floor of ``r`` on its total), weighted by
    :math:`p(D \mid s, u)\,\mathrm{Dir}(u; \alpha_0) / \mathrm{proposal}`: the log of the
    estimate of :math:`p(D \mid s)`, the particles and their normalised weights."""
    r = len(k)
    beta = np.maximum(k * max(tau / 2.0, r), 1e-8)
    U = dirichlet(np.broadcast_to(beta, (M, r)), rng)
    U = np.maximum(U, 1e-300)
    U /= U.sum(axis=1, keepdims=True)
    lw = _log_lik(*data, s, U) + _log_dir(U, a0) - _log_dir(U, beta)
    top = lw.max()
    w = np.exp(lw - top)
    return float(top + np.log(w.mean())), U, w / w.sum()


def learn_s(N: np.ndarray, alpha0: np.ndarray, tol: float, max_iter: int, particles: int = 128) -> SPosterior:
    r"""The posterior of ``(s, u)`` for the count matrix ``N`` (states x columns), ``s``
    on a grid of :math:`\log s` (the uniform prior on :math:`1/(1 + s)`, ``s`` within
    ``[S_MIN, S_MAX]``): a coarse grid a decade
    apart, then a fine one (step 0.25) over the decades around the coarse values whose log
    evidence is within 12 of the best.  At
    each coarse value the variational fit (warm started from its neighbour's, at most 200
    iterations: it only proposes; a fine value takes its nearest coarse value's) gives
    an importance sampler of ``u`` whose mean weight estimates :math:`p(D \mid s)` (the
    variational bound is no substitute: its gap grows with ``s`` and would pull ``s``
    down).  Weights: the estimates times the prior and the trapezoidal
    widths.  Reproducible (a fixed seed: the estimator is deterministic)."""
    N = np.ascontiguousarray(N, dtype=np.float64)
    a0 = np.ascontiguousarray(alpha0, dtype=np.float64)
    rows, cols = np.nonzero(N)
    data = (rows, N[rows, cols], N.sum(axis=0))
    lo, hi = math.log(S_MIN), math.log(S_MAX)
    k_start = N.sum(axis=1) + a0
    k_start /= k_start.sum()
    pts: dict[float, tuple] = {}
    fits: dict[float, tuple] = {}
    its = 0
    # the coarse grid, outwards from the paper's s = |X|, each fit warm started by the last
    coarse = np.arange(lo, hi + 1e-9, _COARSE)
    start = math.log(N.shape[0])
    for side in (coarse[coarse <= start][::-1], coarse[coarse > start]):
        k = k_start
        for p in side:
            kappa, tau, it, _ = _vi(N, math.exp(p), a0, k, tol, min(max_iter, 200))
            its += it
            fits[p] = (kappa, tau)
            own = np.random.default_rng([1, int(round((p - lo) / _COARSE))])
            pts[p] = _grid_point(data, math.exp(p), a0, kappa, tau, particles // 2, own)
            k = kappa
    # the fine grid over the coarse cells within _FINE_DROP of the best (a region that moves
    # with the counts only where its weight is negligible, so the estimates are a smooth
    # function of the counts: EM's M-step needs that), its proposals the nearest coarse
    # value's fit, each point's particles from a stream of its own
    top = max(v[0] for v in pts.values())
    near_best = [p for p in coarse if pts[p][0] >= top - _FINE_DROP]
    fine = np.arange(min(near_best) - _COARSE, max(near_best) + _COARSE + 1e-9, _FINE)
    for p in fine[(fine >= lo) & (fine <= hi)]:
        p = float(p)
        if p not in pts:
            near = coarse[int(np.argmin(np.abs(coarse - p)))]
            own = np.random.default_rng([0, int(round((p - lo) / _FINE))])
            pts[p] = _grid_point(data, math.exp(p), a0, *fits[near], particles, own)
    grid = np.array(sorted(pts))
    ll = np.array([pts[p][0] for p in grid]) + log_icc_prior(grid)
    w = np.where(ll >= ll.max() - _DROP, np.exp(ll - ll.max()) * trapezoid_weights(grid), 0.0)
    w /= w.sum()
    keep = np.flatnonzero(w > 1e-12)
    M = max(len(pts[grid[i]][1]) for i in keep)
    U = np.zeros((len(keep), M, N.shape[0]))
    W = np.zeros((len(keep), M))
    for j, i in enumerate(keep):
        u_i, w_i = pts[grid[i]][1], pts[grid[i]][2]
        U[j, : len(u_i)], W[j, : len(u_i)] = u_i, w[i] * w_i
        U[j, len(u_i):] = u_i[0]
    return SPosterior(np.exp(grid[keep]), U, W / W.sum(), its, True)


def fixed_s(s: float, kappa: np.ndarray, tau: float, iterations: int = 0, converged: bool = True) -> SPosterior:
    r"""All weight on one ``s`` (a fixed concentration) with the variational
    :math:`q(u) = \mathrm{Dir}(\tau\kappa)` of the paper's fit (its moments used in
    closed form, eq. 9; draws from ``q``)."""
    kappa = np.asarray(kappa, dtype=np.float64)
    return SPosterior(np.array([s]), kappa[None, None, :], np.ones((1, 1)), iterations, converged,
                      q=(kappa[None, :], np.array([float(tau)])))


def mixture_moments(n: np.ndarray, post: SPosterior) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and sd of the entries of columns with counts ``n`` (m, r) (see the
    module docstring); a row of zeros is an unseen configuration's predictive."""
    n = np.asarray(n, dtype=np.float64)
    nt = n.sum(axis=1)
    r = n.shape[1]
    mean = np.zeros(n.shape)
    second = np.zeros(n.shape)
    for k, s in enumerate(post.s):
        A = (nt + s)[:, None]
        if post.q is not None:  # closed form over q(u) = Dir(tau kappa)
            kap, tau = post.q[0][k], post.q[1][k]
            a = n + s * kap
            V = kap * (1.0 - kap) / (tau + 1.0)
            wk = post.weights[k].sum()
            mean += wk * a / A
            second += wk * (a * a + s * s * V + a) / (A * (A + 1.0))
            continue
        wk = post.weights[k]
        sel = wk > 0
        a = n[None] + s * post.u[k, sel][:, None, :]  # (M, m, r)
        mean += np.tensordot(wk[sel], a / A[None], axes=1)
        second += np.tensordot(wk[sel], a * (a + 1.0) / (A * (A + 1.0))[None], axes=1)
    del r
    return mean, np.sqrt(np.maximum(second - mean * mean, 0.0))


@register_posterior
class HMDPosterior(TreePosterior):
    r"""Draws of a hierarchical MD CPT: ``(s, u)`` from the grid posterior of ``s`` and
    ``q(u | s)``, then every observed parent configuration's column
    :math:`\mathrm{Dir}(n_y + s u)`.  A configuration absent from the tree below its
    root: :math:`\mathrm{Dir}(s u)`; below a deeper node ``a`` of level ``i``
    (``backoff[i - 1]``: the grid ``log t`` and weights of the level's concentration):
    :math:`\mathrm{Dir}(t\,\phi_a)`, :math:`\phi_a \sim \mathrm{Dir}(s u + \sum_{y \in a} \theta_y)`
    around the leaves below it (:mod:`~pybncsmooth.estimators.hmd.backoff`).  Without ``backoff`` (networks
    saved before it) every unseen
    configuration is :math:`\mathrm{Dir}(s u)`."""

    kind = "hmd"

    def __init__(self, post: SPosterior, backoff: list[tuple[np.ndarray, np.ndarray]] | None = None,
                 alpha0: np.ndarray | None = None) -> None:
        self.post = post
        self.backoff = list(backoff) if backoff is not None else None
        self.alpha0 = None if alpha0 is None else np.asarray(alpha0, dtype=np.float64)

    def _su(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``(n, r)`` draws of :math:`s u`."""
        p = self.post
        flat = p.weights.ravel()
        pick = rng.choice(flat.size, size=n, p=flat / flat.sum())
        comp, part = np.divmod(pick, p.weights.shape[1])
        if p.q is not None:  # the variational q(u | s) of a fixed s
            u = dirichlet(p.q[1][comp, None] * p.q[0][comp], rng)
        else:
            u = p.u[comp, part]
        return p.s[comp, None] * u

    def draw(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        r, d = tree.child_card, tree.depth
        lvl, node = backoff_index(tree)
        Q = len(lvl)
        seen = lvl == d
        leaves = tree.levels[d].counts.astype(np.float64)
        su = self._su(n, rng)
        out = np.empty((n, Q, r))
        backoff = self.backoff is not None and d > 1
        for lo, hi in _chunks(n, (Q + tree.n_nodes) * r):
            th = dirichlet(su[lo:hi, None, :] + leaves[None], rng)  # every observed leaf
            out[lo:hi, seen] = th[:, node[seen]]
            flat = np.flatnonzero(~seen & ((lvl == 0) | (not backoff)))
            if len(flat):
                out[lo:hi, flat] = dirichlet(np.broadcast_to(su[lo:hi, None, :], (hi - lo, len(flat), r)), rng)
            for i in range(1, d) if backoff else ():
                rows = np.flatnonzero(lvl == i)
                if len(rows):
                    out[lo:hi, rows] = self._below(tree, i, node[rows], su[lo:hi], th, rng)
        return out

    def _below(self, tree: ContextTree, level: int, anc: np.ndarray, su: np.ndarray, th: np.ndarray,
               rng: np.random.Generator) -> np.ndarray:
        r"""``(k, len(anc), r)`` draws of configurations absent below the level-``level``
        nodes ``anc``: :math:`\mathrm{Dir}(t\,\phi_a)`, :math:`\phi_a` drawn around the
        leaves' draws ``th`` below the node."""
        return draw_below(tree, level, anc, self.backoff[level - 1], self.alpha0, th, rng)

    def to_arrays(self) -> dict[str, np.ndarray]:
        p = self.post
        out = {"s": p.s, "u": p.u, "weights": p.weights}
        if p.q is not None:
            out.update(q_kappa=p.q[0], q_tau=p.q[1])
        for i, (log_t, w) in enumerate(self.backoff or ()):
            out.update({f"backoff{i}_log_t": log_t, f"backoff{i}_weights": w})
        if self.backoff is not None:
            out.update(backoff_levels=np.array(len(self.backoff)), alpha0=self.alpha0)
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any]) -> "HMDPosterior":
        q = (arrays["q_kappa"], arrays["q_tau"]) if "q_kappa" in arrays else None
        backoff = None
        if "backoff_levels" in arrays:
            backoff = [(arrays[f"backoff{i}_log_t"], arrays[f"backoff{i}_weights"])
                       for i in range(int(arrays["backoff_levels"]))]
        return cls(SPosterior(arrays["s"], arrays["u"], arrays["weights"], q=q), backoff, arrays.get("alpha0"))


@register_posterior
class JointHMDPosterior(TreePosterior):
    r"""Draws of a domain-pooled joint model (Azzimonti, Corani & Zaffalon 2019, Sec. 5;
    bnlearn's ``hdir``): the joint cells :math:`(x, \pi)` of every domain ``j`` have
    :math:`\theta_j \sim \mathrm{Dir}(s\,u)`, ``u`` from the variational
    :math:`q(u) = \mathrm{Dir}(\tau\kappa)` over the ``r q`` cells and ``s`` fixed.  A
    domain's CPT column is its joint vector normalised within the configuration, and
    the normalised sub-vector of a Dirichlet is Dirichlet: given ``u``,
    :math:`\theta_{\cdot \mid \pi, j} \sim \mathrm{Dir}(s\,u_{\cdot\pi} + n_{\cdot \pi j})`
    exactly, an unseen domain or configuration with ``n = 0``.  The population's CPT
    is ``u`` normalised within each configuration.  The tree splits on the domain
    first: draws are laid out domain slowest."""

    kind = "hmd-joint"

    def __init__(self, s: float, kappa: np.ndarray, tau: float, r: int) -> None:
        self.s = float(s)
        self.kappa = np.asarray(kappa, dtype=np.float64)
        self.tau = float(tau)
        self.r = int(r)

    def _u(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``(n, q, r)`` draws of ``u`` by configuration."""
        u = dirichlet(np.broadcast_to(np.maximum(self.tau * self.kappa, 1e-300), (n, len(self.kappa))), rng)
        return u.reshape(n, -1, self.r)

    def draw(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.draw_joint(tree, n, rng)[0]

    def draw_joint(self, tree: ContextTree, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The draws (``(n, J * q, r)``, the domain slowest) and the population's CPT
        columns they go with (``(n, q, r)``)."""
        r, J = tree.child_card, tree.parent_cards[0]
        u = self._u(n, rng)
        q = u.shape[1]
        configs, counts = tree.leaf_table()
        cnt = np.zeros((J * q, r))
        if len(counts):
            cnt[config_index(configs, tree.parent_cards)] = counts
        out = np.empty((n, J * q, r))
        for lo, hi in _chunks(n, J * q * r):
            out[lo:hi] = dirichlet(np.tile(self.s * u[lo:hi], (1, J, 1)) + cnt[None], rng)
        return out, u / u.sum(axis=2, keepdims=True)

    def draw_new_domain(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        """A domain unseen in training: every configuration :math:`\\mathrm{Dir}(s\\,u_{\\cdot\\pi})`."""
        return dirichlet(self.s * self._u(n, rng), rng)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"s": np.array(self.s), "kappa": self.kappa, "tau": np.array(self.tau), "r": np.array(self.r)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any]) -> "JointHMDPosterior":
        return cls(float(arrays["s"]), arrays["kappa"], float(arrays["tau"]), int(arrays["r"]))
