r"""How much a domain's leaves pool toward the configuration above them: a Dirichlet
concentration by empirical Bayes.

A multi-domain context tree splits on the domain last, so the leaves below a parent
configuration ``y`` are that configuration's domains.  Given the pooled estimate
:math:`m_y` (the configuration over every domain), each domain's distribution is
modelled as :math:`\theta_{y,d} \sim \mathrm{Dir}(s\,m_y)` with one concentration ``s``
per node.  The evidence about ``s`` is the marginal (Dirichlet-multinomial) likelihood
of the domains' counts,

.. math::
    \ell(s) = \sum_{y,d} \Big[\log\Gamma(s) - \log\Gamma(s + n_{yd})
      + \sum_x \log\Gamma(s\,m_{yx} + n_{yxd}) - \log\Gamma(s\,m_{yx})\Big]

(Azzimonti et al.'s (2019) eq. 8 with the pooled mean held fixed; with the pooled
vector's own uncertainty, the nested model's exact evidence, :func:`nested_evidence`).
The fit keeps the posterior of ``log s`` on a grid under a flat prior
(:func:`concentration_posterior`, its grid holding the type-II maximum-likelihood
point, :func:`fit_concentration`), and a domain's estimate is the posterior mean
:math:`(n_{yxd} + s\,m_{yx}) / (n_{yd} + s)` averaged over it
(:func:`mixture_posterior`): near ``s = 0`` every domain keeps its own frequencies, as
``s`` grows the domains pool completely.  A domain added later
(``FittedNetwork.adapt``) gets a concentration of its own (:mod:`~pybncsmooth.estimators.domains.prior`).
"""

from __future__ import annotations

import numpy as np
from .._scipy import gammaln

from ._kernels import mixture_moments
from ._leaf_stats import LeafStats, leaf_stats
from ..posterior import dirichlet, effective_concentration, trapezoid_weights

__all__ = [
    "fit_concentration",
    "concentration_posterior",
    "nested_evidence",
    "dirichlet_posterior",
    "mixture_posterior",
    "shrink_weight",
    "concentration_info",
    "fixed_concentration",
    "S_MIN",
    "S_MAX",
]

#: points of the grid of log s the posterior of s is integrated on (plus the maximum)
GRID_POINTS = 41

#: bounds of the learned concentration: beyond them the estimates no longer change
#: (no pooling at all below ``S_MIN``, complete pooling above ``S_MAX``)
S_MIN = 1e-3
S_MAX = 1e7


def _groups_of(mean: np.ndarray, groups: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Each leaf's configuration and the configurations' vectors: ``groups`` and the
    rows of ``mean`` they pick, or (no groups) the distinct rows of ``mean``."""
    m = np.maximum(np.asarray(mean, dtype=np.float64), 1e-300)
    if groups is None:
        vec, g = np.unique(m, axis=0, return_inverse=True)
        return np.asarray(g, dtype=np.int64).reshape(-1), vec
    g = np.asarray(groups, dtype=np.int64)
    vec = np.ones((int(g.max()) + 1 if len(g) else 0, m.shape[1]))
    vec[g] = m
    return g, vec


def _informative(counts: np.ndarray, mean: np.ndarray, groups: np.ndarray | None = None
                 ) -> tuple[LeafStats, np.ndarray] | None:
    """The statistics of the leaves with two rows or more (a leaf with one row has the
    same likelihood for every ``s``) and the configurations' vectors, or ``None``."""
    g, vec = _groups_of(mean, groups)
    stats = leaf_stats(counts, g, informative=True)
    if not len(stats.total_value):
        return None
    return stats, vec


def _neg_marginal(log_s: float, stats: LeafStats, vec: np.ndarray) -> float:
    """Minus the Dirichlet-multinomial log-likelihood of the leaves around ``vec``."""
    s = np.exp(log_s)
    a = s * vec[stats.cell_group, stats.cell_level]
    val = stats.total_mult @ (gammaln(s) - gammaln(s + stats.total_value))
    val += stats.cell_mult @ (gammaln(a + stats.cell_value) - gammaln(a))
    return -float(val)


def fit_concentration(counts: np.ndarray, mean: np.ndarray, groups: np.ndarray | None = None) -> float:
    """The ``s`` maximising the marginal likelihood of ``counts`` (``(L, r)``, one row per
    domain leaf) around ``mean`` (``(L, r)``, the pooled distribution of each leaf's
    configuration, every entry > 0; ``groups``: the leaves' configurations, if known),
    bounded to ``[S_MIN, S_MAX]``.  Leaves whose domain has no row there carry no
    information; with no leaf holding two rows or more the likelihood is flat and
    ``S_MAX`` (complete pooling) is returned."""
    data = _informative(counts, mean, groups)
    if data is None:
        return S_MAX
    return _fit_stats(*data)


def _fit_stats(stats: LeafStats, vec: np.ndarray) -> float:
    from scipy.optimize import minimize_scalar  # imported when first used (a second to import)

    lo, hi = np.log(S_MIN), np.log(S_MAX)
    res = minimize_scalar(_neg_marginal, bounds=(lo, hi), args=(stats, vec), method="bounded",
                          options={"xatol": 1e-6})
    best = float(res.x)
    # the bounded search can stop short of an optimum at a bound: compare with the bounds
    cands = [(res.fun, np.exp(best)), (_neg_marginal(lo, stats, vec), S_MIN), (_neg_marginal(hi, stats, vec), S_MAX)]
    return float(min(cands)[1])


def dirichlet_posterior(counts: np.ndarray, mean: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and sd of each entry of :math:`\\mathrm{Dir}(s\\,m + n)`:
    :math:`p = (n + s m) / (N + s)`, :math:`\\sqrt{p (1 - p) / (N + s + 1)}`: the mixture
    of :func:`mixture_posterior` with all weight on ``s``."""
    return mixture_posterior(counts, mean, *fixed_concentration(s))


def concentration_posterior(
    counts: np.ndarray, mean: np.ndarray, prior: np.ndarray | None = None, groups: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    r"""The posterior of ``log s`` on a grid (flat prior on ``[log S_MIN, log S_MAX]``):
    ``(log_s, weights)``, the weights summing to 1 (trapezoidal rule; points of weight
    below 1e-12 dropped).  With no informative leaf: all weight on ``S_MAX``.

    The likelihood of ``s``: with ``prior`` (``(G, r)`` Dirichlet parameters of each
    configuration's pooled vector :math:`\theta_y`, ``groups`` the configuration of each
    leaf), the exact marginal likelihood of the nested model,
    :math:`\prod_y \int \mathrm{Dir}(\theta_y; \beta_y) \prod_d \mathrm{DM}(n_{yd}; s\,\theta_y)\,d\theta_y`
    (:func:`nested_evidence`); without, the Dirichlet-multinomial likelihood around the
    plug-in ``mean``, which counts each domain's rows twice (they made the mean) and so
    overstates the pooling when the domains differ."""
    if not (np.asarray(counts).sum(axis=1) >= 2).any():
        return np.array([np.log(S_MAX)]), np.array([1.0])
    ll = None
    if prior is not None:
        grid, ll = _nested_grid(leaf_stats(counts, groups), np.asarray(prior))
    if ll is None:
        data = _informative(counts, mean, groups)
        best = np.log(_fit_stats(*data))
        grid = np.unique(np.concatenate([np.linspace(np.log(S_MIN), np.log(S_MAX), GRID_POINTS), [best]]))
        ll = np.array([-_neg_marginal(g, *data) for g in grid])
    w = np.exp(ll - ll.max()) * trapezoid_weights(grid)
    w /= w.sum()
    keep = w > 1e-12
    return grid[keep], w[keep] / w[keep].sum()


#: particles per configuration and grid value of the nested evidence
NESTED_PARTICLES = 32


def _nested_grid(stats: LeafStats, prior: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The nested evidence on a coarse grid of ``log s`` (a decade apart), then on a fine
    one (step 0.25) within a decade of the best coarse value: ``(grid, log evidence)``
    (``None`` beyond the budget: the caller's grid and likelihood)."""
    lo, hi = np.log(S_MIN), np.log(S_MAX)
    coarse = np.arange(lo, hi + 1e-9, np.log(10.0))
    ll_c = _nested_stats(stats, prior, coarse)
    if ll_c is None:
        return np.linspace(lo, hi, GRID_POINTS), None
    best = coarse[int(np.argmax(ll_c))]
    fine = best + 0.25 * np.arange(-9, 10)
    fine = fine[(fine > lo) & (fine < hi) & ~np.isin(fine, coarse)]
    ll_f = _nested_stats(stats, prior, fine) if len(fine) else np.zeros(0)
    if ll_f is None:
        return coarse, ll_c
    grid = np.concatenate([coarse, fine])
    order = np.argsort(grid)
    return grid[order], np.concatenate([ll_c, ll_f])[order]
#: most log-gamma evaluations the nested evidence spends (beyond: the plug-in likelihood)
NESTED_BUDGET = 3e8


def _log_dirichlet(U: np.ndarray, a: np.ndarray) -> np.ndarray:
    return gammaln(a.sum(-1)) - gammaln(a).sum(-1) + ((a - 1.0) * np.log(U)).sum(-1)


def nested_evidence(counts: np.ndarray, groups: np.ndarray, prior: np.ndarray, grid: np.ndarray) -> np.ndarray | None:
    r"""Log marginal likelihood of every ``log s`` of ``grid`` under the nested model
    :math:`\theta_y \sim \mathrm{Dir}(\beta_y)`, :math:`\theta_{yd} \sim \mathrm{Dir}(s\,\theta_y)`,
    domain ``d``'s counts at ``y`` multinomial: per configuration, importance sampling
    of :math:`\theta_y` from :math:`\mathrm{Dir}(\beta_y + e/2)`, ``e`` the domains'
    counts scaled to their information about :math:`\theta_y`
    (:math:`n_{ydk} (s + 1) / (n_{yd} + s)`: a Dirichlet-multinomial sample of size
    ``n`` weighs like :math:`n (s + 1) / (n + s)` draws), weighted by
    :math:`\mathrm{Dir}(\theta; \beta_y) \prod_d \mathrm{DM}(n_{yd}; s\theta) / \text{proposal}`.
    Reproducible (fixed seed).  ``None`` when it would exceed :data:`NESTED_BUDGET`
    (computed from the leaves' statistics, :mod:`~pybncsmooth.estimators.domains._leaf_stats`: its cost grows with the
    distinct counts, not with the number of domains)."""
    return _nested_stats(leaf_stats(counts, groups), np.asarray(prior), np.asarray(grid, dtype=np.float64))


def _nested_stats(stats: LeafStats, prior: np.ndarray, grid: np.ndarray) -> np.ndarray | None:
    """:func:`nested_evidence` from the leaves' statistics."""
    M = NESTED_PARTICLES
    if stats.n_cells * M * len(grid) > NESTED_BUDGET:
        return None
    G, r = prior.shape
    gi, xi = stats.cell_group, stats.cell_level
    vals, mult = stats.cell_value[:, None], stats.cell_mult[:, None]
    groups_hit, starts = np.unique(gi, return_index=True)
    rng = np.random.default_rng(0)
    beta0 = np.maximum(prior, 1e-300)
    out = np.empty(len(grid))
    for i, ls in enumerate(grid):
        s = float(np.exp(ls))
        eff = np.zeros((G, r))
        np.add.at(eff, stats.gt_group, stats.gt_counts * ((s + 1.0) / (stats.gt_total + s))[:, None])
        beta = beta0 + 0.5 * eff
        U = dirichlet(np.broadcast_to(beta[:, None, :], (G, M, r)), rng)
        U = np.maximum(U, 1e-300)
        U /= U.sum(axis=2, keepdims=True)
        a = s * U[gi, :, xi]  # (distinct non-zero cells, M)
        ll = np.zeros((G, M))
        if len(gi):
            ll[groups_hit] = np.add.reduceat(mult * (gammaln(a + vals) - gammaln(a)), starts, axis=0)
        lw = ll + _log_dirichlet(U, beta0[:, None, :]) - _log_dirichlet(U, beta[:, None, :])
        top = lw.max(axis=1, keepdims=True)
        out[i] = float((top[:, 0] + np.log(np.exp(lw - top).mean(axis=1))).sum())
        out[i] += float(stats.total_mult @ (gammaln(s) - gammaln(s + stats.total_value)))
    return out


def mixture_posterior(
    counts: np.ndarray, mean: np.ndarray, log_s: np.ndarray, weights: np.ndarray, mean_sd: np.ndarray | None = None,
    mass: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Posterior mean and sd of each entry with ``s`` integrated out over
    ``(log_s, weights)``: the weighted means of :func:`dirichlet_posterior`, and the sd
    from the weighted second moments (law of total variance).  ``mean_sd``: the sd of
    the pooled vector ``mean`` itself, whose uncertainty then enters too: with
    :math:`a = n + s\,m`, :math:`A = N + s`,
    :math:`E[\theta^2] = (a^2 + s^2 v + a) / (A (A + 1))`, ``v`` its variance.
    ``mass``: per leaf, the mass :math:`A_y` the pooled vector is known with; ``s`` is then
    the nested model's :math:`s' = s A_y / (s + A_y + 1)` (:mod:`~pybncsmooth.estimators.domains.prior`)."""
    n = np.asarray(counts, dtype=np.float64)
    m = np.asarray(mean, dtype=np.float64)
    w = np.atleast_1d(np.asarray(weights, dtype=np.float64))
    sk = effective_concentration(np.atleast_1d(log_s), mass)  # (K, L) or (K, 1)
    v = np.zeros((0, n.shape[1])) if mean_sd is None else np.asarray(mean_sd, dtype=np.float64) ** 2
    p = np.empty(n.shape)
    second = np.empty(n.shape)
    # one pass over the leaves (numba): no (grid, leaves, levels) array, however many leaves
    mixture_moments(np.ascontiguousarray(n), np.ascontiguousarray(np.broadcast_to(m, n.shape)),
                    np.ascontiguousarray(sk, dtype=np.float64), w, np.ascontiguousarray(v), p, second)
    return p, np.sqrt(np.maximum(second - p * p, 0.0))


def shrink_weight(log_s: np.ndarray, weights: np.ndarray) -> float:
    r"""The posterior mean of :math:`s / (s + 1)`: how much of a pooled vector's own
    variance a fresh domain's vector :math:`\mathrm{Dir}(s\,\theta)` keeps (see
    :func:`~.posterior.predictive_sd`)."""
    s = np.exp(np.asarray(log_s, dtype=np.float64))
    return float(np.asarray(weights, dtype=np.float64) @ (s / (s + 1.0)))


def fixed_concentration(s: float) -> tuple[np.ndarray, np.ndarray]:
    """All weight on one concentration (``s = 0``: no pooling)."""
    return np.array([np.log(s) if s > 0 else -np.inf]), np.array([1.0])


def concentration_info(log_s: np.ndarray, weights: np.ndarray) -> dict:
    """What a fit keeps of the concentration's posterior: the grid and weights, and
    ``s_domain``, the posterior geometric mean (0 for no pooling)."""
    log_s, weights = np.asarray(log_s, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        center = float(np.exp(np.sum(weights * log_s))) if np.isfinite(log_s).all() else 0.0
    return {"s_domain": center, "s_domain_log": log_s, "s_domain_weights": weights}
