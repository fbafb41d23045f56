r"""Where a hierarchical MD table backs off: the nodes of the context tree above its leaves.

The model of Azzimonti, Corani & Zaffalon (2019) is flat: the observed parent
configurations' columns are exchangeable draws :math:`\theta_y \sim \mathrm{Dir}(s\,u)`,
so under it a configuration never seen is one more draw, :math:`\mathrm{Dir}(s\,u)`,
whatever its parents' values.  On real networks the columns are not exchangeable in
that way: configurations that share their first parents are alike (a child that follows
one of its parents is the extreme case), and the configurations a sample misses are those
of rare parent values, whose columns the observed ones need not resemble.  So a
configuration absent below the deepest existing node ``a`` of the tree (level ``i >= 1``,
its first ``i`` parents) is drawn around that node, by the paper's model applied below
it: the node has its own distribution of columns :math:`\phi_a` with the paper's prior
scaled to one column, :math:`\phi_a \sim \mathrm{Dir}(\alpha_0 / |X|)`, and the leaves
below it are draws :math:`\theta_y \sim \mathrm{Dir}(t_i\,\phi_a)`.  Given the leaves,

.. math::
    \phi_a \mid \theta \approx \mathrm{Dir}\Big(\frac{\alpha_0}{|X|}
        + \sum_{y \in a} e_y\,\theta_y\Big), \qquad
    e_y = t_i\,\big(\psi(t_i + N_y) - \psi(t_i)\big),

each leaf counting as the draws from :math:`\phi_a` its :math:`N_y` rows stand for: the
expected number of tables of a Chinese restaurant of concentration :math:`t_i` (Teh et
al. 2006, Sec. 5; the table counts through which the hierarchical Dirichlet process
passes a leaf up to its parent): about one when the leaves are near-vertices (a frequent
configuration then says no more than a rare one about an unseen sibling), about
:math:`N_y` when they equal their node.  An unseen configuration below ``a`` is
:math:`\mathrm{Dir}(t_i\,\phi_a)` with :math:`\phi_a` drawn from that posterior (the
leaves' own posterior draws in place of :math:`\theta_y`).  :math:`t_i`, how much the
leaves differ from their level-``i`` node, is learned from the observed leaves: at every
value of a grid of :math:`\log t_i`, the Dirichlet-multinomial likelihood of each leaf's
counts around its node's centre *without that leaf* (:func:`backoff_concentration`).
At the root (``i = 0``) the node is ``u`` itself and the model's own predictive
:math:`\mathrm{Dir}(s\,u)` answers, as in the paper.

Concentrations (``s`` of the leaves, ``t_i`` here) get the uniform prior on the
intra-class correlation :math:`\rho = 1 / (1 + s)` (the correlation of two rows of one
configuration; :func:`log_icc_prior`): where the data cannot tell how alike the columns
are (a few rows a configuration), a flat prior on :math:`\log s` over a wide range puts
nearly all the posterior on large ``s`` (complete pooling), whose likelihood is flat
there, and an unseen configuration's interval shrinks to the pooled vector's; the
uniform prior on :math:`\rho` is proper and keeps the spread the data have not ruled out
(the improper-posterior problem of a flat prior on the log concentration, Gelman et al.
2013, Sec. 5.3).
"""

from __future__ import annotations

import numpy as np
from .._scipy import digamma, gammaln

from ...counting.context_tree import ContextTree
from ._backoff_kernels import backoff_loglik, backoff_loglik_levels
from ..domains.pooling import shrink_weight
from ..posterior import dirichlet, predictive_sd, trapezoid_weights

__all__ = ["log_icc_prior", "backoff_concentration", "node_centres", "leaf_sums", "expected_tables", "ancestors_at",
           "learn_backoff", "draw_below", "centre_sd", "GRID"]

#: the grid of log t: 1e-3 .. 1e7, a quarter of a decade apart
GRID = np.linspace(np.log(1e-3), np.log(1e7), 41)


def log_icc_prior(log_s: np.ndarray) -> np.ndarray:
    r"""Log density, in :math:`\log s`, of the uniform prior on :math:`\rho = 1/(1 + s)`:
    :math:`\log s - 2 \log(1 + s)` (its median is ``s = 1``)."""
    log_s = np.asarray(log_s, dtype=np.float64)
    return log_s - 2.0 * np.logaddexp(0.0, log_s)


#: the prior and the trapezoidal weights on GRID, computed once
_GRID_PRIOR = log_icc_prior(GRID)
_GRID_WIDTHS = trapezoid_weights(GRID)


def ancestors_at(tree: ContextTree, level: int) -> np.ndarray:
    """For every leaf of ``tree``, the index of its ancestor among the nodes of ``level``."""
    idx = np.arange(tree.n_leaves)
    for i in range(tree.depth, level, -1):
        idx = tree.levels[i].parent[idx]
    return idx


def _dm_loglik(n: np.ndarray, m: np.ndarray, t: float) -> float:
    """Dirichlet-multinomial log likelihood of the rows ``n`` (L, r) around the means
    ``m`` at concentration ``t`` (the terms of the non-zero counts only)."""
    li, xi = np.nonzero(n)
    a = t * np.maximum(m[li, xi], 1e-300)
    tot = n.sum(axis=1)
    return float((gammaln(t) - gammaln(t + tot)).sum() + (gammaln(a + n[li, xi]) - gammaln(a)).sum())


def leaf_sums(tree: ContextTree, level: int, values: np.ndarray) -> np.ndarray:
    """``(..., m, r)``: ``values`` (``(..., n_leaves, r)``) summed over the leaves below each
    node of ``level`` (the leaves below a node are consecutive)."""
    anc = ancestors_at(tree, level)
    starts = np.searchsorted(anc, np.arange(len(tree.levels[level].value)))
    return np.add.reduceat(values, starts, axis=-2)


def expected_tables(t: np.ndarray, rows: np.ndarray) -> np.ndarray:
    r"""How many draws from its node a leaf of ``rows`` rows stands for, at concentration
    ``t``: the expected number of tables of a Chinese restaurant with ``rows`` customers,
    :math:`t\,(\psi(t + N) - \psi(t))` (Teh et al. 2006, Sec. 5): about one when ``t``
    is small (the leaf is one vertex-like draw), about ``N`` when it is large (the leaf
    is its node)."""
    t = np.asarray(t, dtype=np.float64)[..., None]
    return t * (digamma(t + rows) - digamma(t))


def node_centres(tree: ContextTree, level: int, leaf_means: np.ndarray, prior: np.ndarray, t: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean and sd of every level-``level`` node's :math:`\phi_a` (see the module
    docstring): :math:`\mathrm{Dir}(\beta + \sum_{y \in a} e_y \hat\theta_y)`, the leaves'
    means ``leaf_means`` weighted by their :func:`expected_tables` at ``t``, ``prior`` the
    node's own :math:`\beta = \alpha_0 / |X|`."""
    starts = np.searchsorted(ancestors_at(tree, level), np.arange(len(tree.levels[level].value)))
    return _centres(starts, tree.levels[-1].counts.sum(axis=1), leaf_means, prior, t)


def _centres(starts: np.ndarray, rows: np.ndarray, leaf_means: np.ndarray, prior: np.ndarray, t: float
             ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`node_centres` from the first leaf of every node of the level (``starts``)
    and the leaves' rows."""
    e = expected_tables(t, rows)
    a = np.add.reduceat(e[..., None] * leaf_means, starts, axis=-2) + prior
    tot = a.sum(axis=1, keepdims=True)
    m = a / tot
    return m, np.sqrt(np.maximum(m * (1.0 - m), 0.0) / (tot + 1.0))


def _level_starts(tree: ContextTree) -> list[np.ndarray]:
    """For levels ``1 .. depth - 1``, the first leaf below each node (the leaves' ancestors
    found in one walk up the tree)."""
    out = []
    idx = np.arange(tree.n_leaves)
    for i in range(tree.depth, 1, -1):
        idx = tree.levels[i].parent[idx]
        out.append(np.searchsorted(idx, np.arange(len(tree.levels[i - 1].value))))
    return out[::-1]


def backoff_concentration(tree: ContextTree, level: int, leaf_means: np.ndarray, prior: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
    r"""The posterior of :math:`\log t` (``level``'s concentration, see the module
    docstring) on :data:`GRID`, ``(log_t, weights)``: at every ``t`` of the grid, the
    leaves' counts around their nodes' centres without them (the other leaves' means
    ``leaf_means`` weighted by their :func:`expected_tables` at that ``t``, and
    ``prior``, a node's own :math:`\beta`).  Leaves with fewer than two rows say nothing
    about ``t`` (a single row has the same likelihood for every ``t``); with none, the
    prior."""
    leaves = tree.levels[-1].counts.astype(np.float64)
    rows = leaves.sum(axis=1)
    ll = np.zeros(len(GRID))
    if (rows >= 2).any():  # the compiled form of the loop over GRID of _dm_loglik (see _backoff_kernels)
        ll = backoff_loglik(leaves, rows, ancestors_at(tree, level), len(tree.levels[level].value),
                            np.ascontiguousarray(leaf_means, dtype=np.float64),
                            np.ascontiguousarray(prior, dtype=np.float64), GRID)
    return _grid_posterior(ll)


def _grid_posterior(ll: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The posterior of :math:`\log t` on :data:`GRID` from the log likelihoods ``ll``
    there: the prior :func:`log_icc_prior`, the trapezoidal weights, the points of
    weight above 1e-12 kept."""
    lw = ll + _GRID_PRIOR
    w = np.exp(lw - lw.max()) * _GRID_WIDTHS
    w /= w.sum()
    sel = w > 1e-12
    return GRID[sel], w[sel] / w[sel].sum()


def learn_backoff(tree: ContextTree) -> list[tuple[np.ndarray, np.ndarray]]:
    r"""For every level ``1 .. depth - 1``, the posterior ``(log_t, weights)`` of the
    back-off concentration of a configuration absent below a node of that level (see
    the module docstring), from the leaves' counts; a node's own prior a uniform column
    of total 1.  The siblings that form a leaf's centre without it enter by their own
    frequencies, :math:`(n_y + 1/r) / (N_y + 1)`, not by the fit's posterior means:
    those are shrunk toward the node's column, which the held-out leaf's rows helped
    make, so a centre of them leans toward that leaf and makes the leaves look closer
    to their nodes than they are (``hls-bayes`` on hailfinder at 2000 rows, ``t`` at PlainsFcst's
    deepest inner level 21 with the means, 11 as ``hmd`` learns it, and the unseen
    configurations' coverage 0.78 against 0.90)."""
    r = tree.child_card
    n = tree.levels[-1].counts.astype(np.float64)
    own = (n + 1.0 / r) / (n.sum(axis=1, keepdims=True) + 1.0)
    if tree.depth < 2:
        return []
    # every level's backoff_concentration in one compiled call (the expected tables shared)
    anc = np.empty((tree.depth - 1, tree.n_leaves), dtype=np.int64)
    idx = np.arange(tree.n_leaves)
    for i in range(tree.depth, 1, -1):  # ancestors_at for every level, bottom up
        idx = tree.levels[i].parent[idx]
        anc[i - 2] = idx
    n_nodes = np.array([len(tree.levels[i].value) for i in range(1, tree.depth)], dtype=np.int64)
    ll = backoff_loglik_levels(n, n.sum(axis=1), anc, n_nodes, own, np.full(r, 1.0 / r), GRID)
    return [_grid_posterior(row) for row in ll]


def draw_below(tree: ContextTree, level: int, anc: np.ndarray, backoff: tuple[np.ndarray, np.ndarray],
               prior: np.ndarray, leaf_draws: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r"""``(k, len(anc), r)`` draws of configurations absent below the level-``level``
    nodes ``anc`` (see the module docstring): :math:`\mathrm{Dir}(t\,\phi_a)`, ``t`` from
    its posterior ``backoff`` (``(log_t, weights)``) per draw, :math:`\phi_a \sim
    \mathrm{Dir}(\beta + \sum_{y \in a} e_y\,\theta_y)` around the leaves' draws
    ``leaf_draws`` (``(k, n_leaves, r)``) below the node, ``prior`` its :math:`\beta`."""
    used, inv = np.unique(anc, return_inverse=True)
    log_t, w = backoff
    t = np.exp(log_t[rng.choice(len(w), size=len(leaf_draws), p=w)])
    e = expected_tables(t, tree.levels[-1].counts.sum(axis=1))  # (k, leaves)
    phi = dirichlet(prior + leaf_sums(tree, level, e[..., None] * leaf_draws)[:, used], rng)
    return dirichlet(t[:, None, None] * phi[:, inv.reshape(-1)], rng)


def centre_sd(tree: ContextTree, leaf_means: np.ndarray, prior: np.ndarray,
              backoff: list[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    r"""The sd of a configuration absent below each node of levels ``1 .. depth - 1``
    as :func:`draw_below` draws it: :math:`\mathrm{Dir}(t\,\phi_a)` around the centre
    :func:`node_centres` gives at the posterior mean of :math:`\log t`, mixed over ``t``
    (:func:`~.posterior.predictive_sd`)."""
    out = []
    rows = tree.levels[-1].counts.sum(axis=1)
    starts = _level_starts(tree)
    for i, (log_t, w) in enumerate(backoff, start=1):  # node_centres at each level
        p, sd = _centres(starts[i - 1], rows, leaf_means, prior, float(np.exp(w @ log_t)))
        out.append(predictive_sd(p, sd, shrink_weight(log_t, w)))
    return out
