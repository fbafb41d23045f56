r"""Posterior draws and predictive spreads of an HDP fit (Petitjean et al. 2018, Sec. 4).

Given a state of the collapsed sampler (every node's table counts, hence every
internal node's counts :math:`n_i` = the tables its children send up, and the
concentrations), the probability vectors of the tree are Dirichlet top-down:

.. math::
    \phi_{root} \sim \mathrm{Dir}(n_{root} + c_0 / r), \qquad
    \phi_i \mid \phi_{pa(i)} \sim \mathrm{Dir}(n_i + c_i\,\phi_{pa(i)}),

the leaves' :math:`n` being the data (the table counts are an augmentation of the
marginal likelihood of the counts given the parent, so they carry no information
about a node's own vector beyond its counts).  A draw of the posterior is a recorded
state followed by these Dirichlet draws; averaging the conditional moments over every
sweep gives the posterior mean and variance (:func:`~pybncsmooth.estimators.hdp._kernels._record_internal`).

A parent configuration absent from the tree is a fresh node below the deepest
existing one ``a``: :math:`\theta \sim \mathrm{Dir}(c_{l}\,\phi)` level after level
down to the leaves, with the concentration a fresh node at level ``l`` has (the
level's under level or single tying; under parent tying the ancestor's children's
for the first level; otherwise one drawn from the Gamma prior, as a group with no
data has).  Its variance follows from :math:`E[\theta_k^2 \mid \phi] = w E[\phi_k^2]
+ (1 - w) E[\phi_k]`, :math:`w = c / (c + 1)` per level
(:func:`~.posterior.predictive_sd`): the parent's variance plus the hierarchy's
spread, which a copy of the parent's sd leaves out.

**Back-off below a deeper node** (``backoff``, the default of a fit).  The sampled
concentrations say how far the *observed* leaves lie from their parents, and with
thousands of rows they are large: a fresh node is then drawn tight around its
ancestor.  The configurations a sample misses are those of rare parent values, whose
columns need not resemble the observed ones (insurance, 2000 rows: 0.79 of the unseen
configurations' entries covered; a 56-node network of up to 11 levels a node 0.76).
So a configuration absent below a node ``a`` of level ``i >= 1`` is drawn as
hierarchical MD's back-off draws it (:mod:`~pybncsmooth.estimators.hmd.backoff`, shared with ``hls-bayes``):
:math:`\theta \sim \mathrm{Dir}(t_i\,\phi_a)`, :math:`t_i` integrated over its posterior
given how the observed leaves' counts differ from the centre of their siblings' own
frequencies (:func:`~pybncsmooth.estimators.hmd.backoff.learn_backoff`) under the uniform prior on
:math:`1/(1 + t_i)`, and the node's distribution of columns :math:`\phi_a \sim
\mathrm{Dir}(1/r + \sum_{y \in a} e_y \theta_y)` around the state's leaf vectors
below it, each counting by its expected tables at :math:`t_i`
(:func:`~pybncsmooth.estimators.hmd.backoff.draw_below`; the sampler's own node vector counts the tables of
its large sampled concentration, so it is as tight as the observed leaves are alike);
its sd :math:`\mathrm{Var}\,\theta_k = w\,\mathrm{Var}\,\phi_k + (1 - w)\,m_k(1 - m_k)`,
:math:`w = E[t_i / (t_i + 1)]` (:func:`~pybncsmooth.estimators.hmd.backoff.centre_sd`).  Below the root (the
first parent's value never seen) the HDP's own fresh nodes stay.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...counting.context_tree import ContextTree
from ..hmd.backoff import draw_below
from ..posterior import (TreePosterior, _chunks, backoff_index, dirichlet, even_states, predictive_sd,
                        register_posterior)

__all__ = ["HDPPosterior", "unseen_weights", "hdp_unseen_sd"]

_TYINGS = ("level", "single", "parent", "none")


def _prior_weight(shape: float, rate: float, cap: float) -> float | None:
    """:math:`E[c/(c+1)]` under the Gamma(shape, rate) prior capped at ``cap`` (``None``
    for an improper prior), by Gauss-Laguerre-free quadrature on the gamma quantiles."""
    if shape <= 0 or rate <= 0:
        return None
    from scipy.stats import gamma

    u = (np.arange(2000) + 0.5) / 2000
    c = np.minimum(gamma.ppf(u, shape, scale=1.0 / rate), cap)
    return float(np.mean(c / (c + 1.0)))


def unseen_weights(conc: np.ndarray, tying: str, prior: tuple[float, float, float]) -> np.ndarray:
    r"""For each tree level ``a`` (``0 .. d``), :math:`W_a`, the posterior mean of
    :math:`\prod_{l=a+1}^{d} c_l / (c_l + 1)` over the fresh levels below a node of
    level ``a`` (``W_d = 1``), from the concentration draws ``conc`` (events x levels,
    the levels' mean concentration at each draw; column 0, the root, unused).  Exact
    for level and single tying; under parent tying the first fresh level takes its
    level's mean and deeper ones the prior's expectation, under no tying every fresh
    level the prior's (the level's mean when the prior is improper)."""
    conc = np.asarray(conc, dtype=np.float64)
    d = conc.shape[1] - 1 if conc.ndim == 2 and conc.shape[0] else 0
    W = np.ones(d + 1)
    if d == 0:
        return W
    w = conc / (conc + 1.0)  # events x levels
    pw = None if tying in ("level", "single") else _prior_weight(*prior)
    if tying in ("level", "single") or pw is None:
        for a in range(d):
            W[a] = float(np.mean(np.prod(w[:, a + 1 :], axis=1)))
        return W
    with np.errstate(invalid="ignore"):
        level_mean = np.where(np.isfinite(w).any(axis=0), np.nansum(w, axis=0) / np.maximum(
            np.isfinite(w).sum(axis=0), 1), pw)
    for a in range(d):
        first = level_mean[a + 1] if tying == "parent" else pw
        W[a] = first * pw ** (d - a - 1)
    return W


def hdp_unseen_sd(probs: tuple, sds: tuple, W: np.ndarray) -> tuple[np.ndarray, ...]:
    """The predictive sd of a configuration backing off to each node above the leaves."""
    return tuple(predictive_sd(p, s, W[i]) for i, (p, s) in enumerate(zip(probs[:-1], sds[:-1])))


@register_posterior
class HDPPosterior(TreePosterior):
    """Draws from recorded states of the HDP sampler (see the module docstring).

    ``state_n``: ``(S, inner, r)`` counts of the internal nodes (flat node order,
    root first) at each kept sweep; ``state_c``: ``(S, G)`` the concentrations;
    ``group``: every node's concentration group (root ``-1``); ``group_level``: each
    group's level; ``c_root``: the root's fixed concentration; ``prior``: the
    concentrations' Gamma (shape, rate) and cap, for fresh groups; ``backoff``: for
    levels ``1 .. depth - 1``, the posterior ``(log_t, weights)`` of the back-off
    concentration (:func:`~pybncsmooth.estimators.hmd.backoff.learn_backoff`; ``None``, as in networks saved
    before it: every unseen configuration the HDP's fresh nodes)."""

    kind = "hdp"

    def __init__(self, state_n: np.ndarray, state_c: np.ndarray, group: np.ndarray, group_level: np.ndarray,
                 c_root: float, tying: str, prior: tuple[float, float, float], base: np.ndarray | None = None,
                 backoff: list[tuple[np.ndarray, np.ndarray]] | None = None) -> None:
        self.state_n = state_n
        self.state_c = state_c
        self.group = np.asarray(group, dtype=np.int64)
        self.group_level = np.asarray(group_level, dtype=np.int64)
        self.c_root = float(c_root)
        self.tying = tying
        self.prior = tuple(float(v) for v in prior)
        #: the root's base measure (``None``: uniform; an expert network's P(x))
        self.base = None if base is None else np.asarray(base, dtype=np.float64)
        self.backoff = None if backoff is None else [(np.asarray(a, dtype=np.float64), np.asarray(w, dtype=np.float64))
                                                     for a, w in backoff]

    @property
    def n_states(self) -> int:
        return int(self.state_n.shape[0])

    def _level_conc(self, c: np.ndarray, level: int) -> np.ndarray:
        """``(k,)`` mean concentration of the groups of ``level`` in states ``c`` (k, G)."""
        sel = self.group_level == level
        if not sel.any():
            sel = np.ones(len(self.group_level), dtype=bool)
        return c[:, sel].mean(axis=1)

    def _fresh_conc(self, c: np.ndarray, level: int, first: bool, child_group: np.ndarray | None,
                    m: int, rng: np.random.Generator) -> np.ndarray:
        """``(k, m)`` concentrations of ``m`` fresh nodes at ``level``."""
        k = c.shape[0]
        if self.tying == "parent" and first and child_group is not None:
            return c[:, child_group]
        shape, rate, cap = self.prior
        if self.tying in ("level", "single") or shape <= 0 or rate <= 0:
            return np.broadcast_to(self._level_conc(c, level)[:, None], (k, m))
        return np.minimum(rng.gamma(shape, 1.0 / rate, size=(k, m)), cap)

    def _tree_draws(self, tree: ContextTree, idx: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
        """Every tree node's vector for the states ``idx``: per level ``(k, m_i, r)``."""
        r, d = tree.child_card, tree.depth
        sizes = tree.level_sizes()
        lstart = np.concatenate([[0], np.cumsum(sizes)])
        c = self.state_c[idx]
        root = self.c_root / r if self.base is None else self.c_root * self.base
        out = [dirichlet(self.state_n[idx, :1] + root, rng)]
        for i in range(1, d + 1):
            lo, hi = lstart[i], lstart[i + 1]
            ci = c[:, self.group[lo:hi]][:, :, None]
            n_i = tree.levels[d].counts[None] if i == d else self.state_n[idx, lo:hi]
            out.append(dirichlet(n_i + ci * out[i - 1][:, tree.levels[i].parent], rng))
        return out

    def draw(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        r, d = tree.child_card, tree.depth
        lvl, node = backoff_index(tree)
        Q = len(lvl)
        order = np.resize(rng.permutation(self.n_states), n)
        rng.shuffle(order)
        out = np.empty((n, Q, r))
        for lo, hi in _chunks(n, (tree.n_nodes + Q) * r):
            idx = order[lo:hi]
            phi = self._tree_draws(tree, idx, rng)
            seen = lvl == d
            out[lo:hi, seen] = phi[d][:, node[seen]]
            for a in range(d):
                rows = np.flatnonzero(lvl == a)
                if not len(rows):
                    continue
                if a > 0 and self.backoff is not None:  # Dir(t phi_a) around the leaves below the node
                    out[lo:hi, rows] = draw_below(tree, a, node[rows], self.backoff[a - 1], np.full(r, 1.0 / r),
                                                  phi[d], rng)
                else:
                    out[lo:hi, rows] = self._fresh(tree, phi[a][:, node[rows]], a, node[rows], idx, rng)
        return out

    def _fresh(self, tree: ContextTree, base: np.ndarray, a: int, anc: np.ndarray, idx: np.ndarray,
               rng: np.random.Generator) -> np.ndarray:
        """Draws of fresh nodes below level-``a`` nodes ``anc`` (vectors ``base``) down to
        the leaves' level."""
        c = self.state_c[idx]
        child_group = None
        if self.tying == "parent":
            first_child = tree.children_slices(a)[anc]
            child_group = self.group[np.cumsum([0, *tree.level_sizes()])[a + 1] + first_child]
        cur = base
        for level in range(a + 1, tree.depth + 1):
            cl = self._fresh_conc(c, level, level == a + 1, child_group, len(anc), rng)
            cur = dirichlet(cl[:, :, None] * cur, rng)
        return cur

    def thin(self, k: int) -> "HDPPosterior":
        keep = even_states(self.n_states, k)
        return HDPPosterior(self.state_n[keep], self.state_c[keep], self.group, self.group_level, self.c_root,
                            self.tying, self.prior, self.base, self.backoff)

    def to_arrays(self) -> dict[str, np.ndarray]:
        out = {"state_n": self.state_n, "state_c": self.state_c, "group": self.group,
               "group_level": self.group_level, "c_root": np.array(self.c_root), "tying": np.array(self.tying),
               "prior": np.array(self.prior)}
        if self.base is not None:
            out["base"] = self.base
        if self.backoff is not None:
            out["backoff_levels"] = np.array(len(self.backoff))
            for i, (log_t, w) in enumerate(self.backoff):
                out.update({f"backoff{i}_log_t": log_t, f"backoff{i}_weights": w})
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any]) -> "HDPPosterior":
        backoff = None
        if "backoff_levels" in arrays:
            backoff = [(arrays[f"backoff{i}_log_t"], arrays[f"backoff{i}_weights"])
                       for i in range(int(arrays["backoff_levels"]))]
        return cls(arrays["state_n"], arrays["state_c"], arrays["group"], arrays["group_level"],
                   float(arrays["c_root"]), str(arrays["tying"]), tuple(arrays["prior"]), arrays.get("base"), backoff)
