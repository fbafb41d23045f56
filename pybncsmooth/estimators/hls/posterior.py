r"""Posterior draws and predictive spreads of an HLS-IG fit (Cooper, Webb & Schmidt 2025,
Sec. 3.2).

The sampler keeps evenly spaced draws of every tree node's coefficients
:math:`\beta_v` and of the global variance :math:`\sigma^2` after burn-in.  A draw of
the table is one kept sweep: every node's path sum :math:`\eta_v = \eta_{pa(v)} +
\beta_v` and its softmax.  A parent configuration absent from the tree has
coefficients for the missing nodes that the data never touched, so their posterior
is their prior, :math:`N(0, \sigma^2)` each given the sweep's :math:`\sigma^2`: below
the deepest existing node ``a`` (level ``l``) of a depth-``d`` tree,
:math:`\eta = \eta_a + \varepsilon`, :math:`\varepsilon \sim N(0, (d - l)\sigma^2 I)`.
That predictive, not the node's own column, is what an unseen configuration's draws
and sd are; its mean stays the node's posterior mean (the back-off estimate) in
``cpt()``, and its sd (:func:`unseen_sd`) is the predictive's spread around its
own mean.

**Back-off below a deeper node** (``backoff``, the default of a fit).  The Gaussian
predictive has the spread of *all* the tree's coefficients, and the configurations a
sample misses are those of rare parent values, whose columns need not resemble their
observed siblings (hailfinder, 2000 rows: its 90% intervals covered 0.60-0.70 of the
unseen configurations' truths, each missing on the side of a level the rare value makes
nearly impossible: a logistic-normal spread of :math:`\sigma^2 \approx 0.2` cannot
reach a probability of 0.01 from a centre of 0.08).  So a configuration absent below a
node ``a`` of level ``i >= 1`` is drawn as hierarchical MD's back-off draws it
(:mod:`~pybncsmooth.estimators.hmd.backoff`, Azzimonti et al. 2019 with the concentration learned per
level): :math:`\theta \sim \mathrm{Dir}(t_i\,\phi_a)`, the node's distribution of
columns :math:`\phi_a \sim \mathrm{Dir}(1/r + \sum_{y \in a} e_y \theta_y)` around the
sweep's leaf columns below it, each counting by its expected tables at :math:`t_i`
(:func:`~pybncsmooth.estimators.hmd.backoff.draw_below`; around the node's own column, the softmax of its
path sum, the entries below a level-1 node of a three-parent table covered 0.92 but
those below a level-2 node 0.80, insurance at 2000 rows, against 0.78 and 0.99
around the leaves, 0.84 and 0.88 of all unseen entries), :math:`t_i` integrated over
its posterior given the observed leaves' counts around their level-``i`` nodes
(:func:`~pybncsmooth.estimators.hmd.backoff.backoff_concentration`, each leaf around the centre of its
siblings' own frequencies: :func:`learn_backoff`) under the uniform prior on
:math:`1/(1 + t_i)`: how much configurations differ from their ancestors, learned from
the tree, with the Dirichlet's tails toward the simplex's faces.  Its sd is
:math:`\mathrm{Var}\,\theta_k = w\,\mathrm{Var}\,\phi_k + (1 - w)\,m_k(1 - m_k)`,
:math:`w = E[t_i / (t_i + 1)]` (:func:`~pybncsmooth.estimators.hmd.backoff.centre_sd`).  Below the root
(no level-1 node: the first parent's value never seen) the model's own Gaussian
predictive stays: the root's column is fixed at the uniform distribution, no centre
the leaves could inform.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from .._scipy import expit

from ...counting.context_tree import ContextTree
from ..hmd.backoff import draw_below, learn_backoff
from ..posterior import TreePosterior, _chunks, backoff_index, dirichlet, even_states, register_posterior

__all__ = ["HLSPosterior", "softmax_columns", "unseen_sd", "learn_backoff"]

#: noise replicates per kept draw for an unseen configuration's sd (at most)
_REPLICATES = 16
#: most values an unseen sd's Monte Carlo handles at once
_MC_VALUES = 1 << 24


def softmax_columns(eta: np.ndarray, r: int) -> np.ndarray:
    r"""Probabilities ``(..., r)`` from the free predictors ``eta`` (``(..., K)``): a
    softmax over ``r`` values when ``K = r``; the logit of the second value when
    ``K = 1`` (two values), as the sampler's.

    Both forms are evaluated without overflow for any finite ``eta``: the softmax after
    subtracting each row's largest predictor, the two-value case as the logistic
    :math:`\sigma(\eta) = e^{-\log(1 + e^{-\eta})}` of each value (scipy's ``expit``),
    so that a small probability keeps its digits instead of being ``1 - p`` of its
    complement."""
    if eta.shape[-1] == 1:
        x = eta[..., 0]
        return np.stack([expit(-x), expit(x)], axis=-1)
    e = eta - eta.max(axis=-1, keepdims=True)
    x = np.exp(e)
    return x / x.sum(axis=-1, keepdims=True)


def _path_sums(B: np.ndarray, parent: np.ndarray, offsets: list[int]) -> np.ndarray:
    """``eta`` ``(k, n, K)`` from coefficients ``B`` (k, n, K) level by level (the rows
    of level ``i`` are ``offsets[i]:offsets[i+1]``; a virtual root at row 0 when
    ``offsets[0] = 1``)."""
    eta = np.zeros(B.shape)
    for i in range(len(offsets) - 1):
        lo, hi = offsets[i], offsets[i + 1]
        if lo > 0:  # row 0 (a tree's root, or a root's virtual parent) has no coefficient
            eta[:, lo:hi] = eta[:, parent[lo:hi]] + B[:, lo:hi]
    return eta


def unseen_sd(B: np.ndarray, var: np.ndarray, parent: np.ndarray, offsets: list[int], r: int,
              rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Per level above the leaves, the sd of a configuration that backs off to each node:
    Monte Carlo over the kept draws (``B`` (S, n, K), ``var`` (S,)) with replicates of
    the missing coefficients' noise."""
    S, n, K = B.shape
    d = len(offsets) - 2
    if d <= 0 or S == 0:
        return tuple(np.zeros((offsets[i + 1] - offsets[i], r)) for i in range(max(d, 0)))
    eta = _path_sums(B, parent, offsets)
    out = []
    for i in range(d):
        lo, hi = offsets[i], offsets[i + 1]
        m = hi - lo
        reps = int(max(1, min(_REPLICATES, _MC_VALUES // max(S * m * K, 1))))
        sd_noise = np.sqrt((d - i) * var)[:, None, None, None]
        e = eta[:, None, lo:hi] + sd_noise * rng.standard_normal((S, reps, m, K))
        p = softmax_columns(e, r).reshape(S * reps, m, r)
        out.append(p.std(axis=0))
    return tuple(out)


@register_posterior
class HLSPosterior(TreePosterior):
    """Draws of an HLS-IG table from the sampler's kept sweeps (see the module docstring).

    ``B``: ``(S, n, K)`` coefficients of the tree's flat nodes (level order, as
    :func:`~pybncsmooth.estimators.hls.estimator.flatten_tree`), ``var``: ``(S,)`` the tree's variance at each kept
    sweep, ``parent``/``offsets``: the flat layout, ``r``: the child's levels;
    ``backoff``: for levels ``1 .. depth - 1``, the posterior ``(log_t, weights)`` of the
    back-off concentration (:func:`learn_backoff`; ``None``, as in networks saved before
    it: every unseen configuration the Gaussian predictive)."""

    kind = "hls-bayes"

    def __init__(self, B: np.ndarray, var: np.ndarray, parent: np.ndarray, offsets: list[int], r: int,
                 backoff: list[tuple[np.ndarray, np.ndarray]] | None = None) -> None:
        self.B = B
        self.var = np.asarray(var, dtype=np.float64)
        self.parent = np.asarray(parent, dtype=np.int64)
        self.offsets = [int(o) for o in offsets]
        self.r = int(r)
        self.backoff = None if backoff is None else [(np.asarray(a, dtype=np.float64), np.asarray(w, dtype=np.float64))
                                                     for a, w in backoff]

    def draw(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        r, d = tree.child_card, tree.depth
        lvl, node = backoff_index(tree)
        Q = len(lvl)
        S, nn, K = self.B.shape
        order = np.resize(rng.permutation(S), n)
        rng.shuffle(order)
        out = np.empty((n, Q, r))
        for lo, hi in _chunks(n, (nn + Q) * K):
            idx = order[lo:hi]
            eta = _path_sums(self.B[idx], self.parent, self.offsets)
            for i in range(d + 1):
                rows = np.flatnonzero(lvl == i)
                if not len(rows):
                    continue
                if 0 < i < d and self.backoff is not None:  # Dir(t phi_a) around the leaves below the node
                    leaves = softmax_columns(eta[:, self.offsets[d]:self.offsets[d + 1]], r)
                    out[lo:hi, rows] = draw_below(tree, i, node[rows], self.backoff[i - 1], np.full(r, 1.0 / r),
                                                  leaves, rng)
                    continue
                e = eta[:, self.offsets[i] + node[rows]]
                if i < d:  # the missing coefficients' prior given the sweep
                    e = e + np.sqrt((d - i) * self.var[idx])[:, None, None] * rng.standard_normal(e.shape)
                out[lo:hi, rows] = softmax_columns(e, r)
        return out

    @property
    def n_states(self) -> int:
        return int(len(self.var))

    def thin(self, k: int) -> "HLSPosterior":
        keep = even_states(len(self.var), k)
        return HLSPosterior(self.B[keep], self.var[keep], self.parent, self.offsets, self.r, self.backoff)

    def to_arrays(self) -> dict[str, np.ndarray]:
        out = {"B": self.B, "var": self.var, "parent": self.parent, "offsets": np.asarray(self.offsets),
               "r": np.array(self.r)}
        if self.backoff is not None:
            out["backoff_levels"] = np.array(len(self.backoff))
            for i, (log_t, w) in enumerate(self.backoff):
                out.update({f"backoff{i}_log_t": log_t, f"backoff{i}_weights": w})
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any]) -> "HLSPosterior":
        backoff = None
        if "backoff_levels" in arrays:
            backoff = [(arrays[f"backoff{i}_log_t"], arrays[f"backoff{i}_weights"])
                       for i in range(int(arrays["backoff_levels"]))]
        return cls(arrays["B"], arrays["var"], arrays["parent"], list(arrays["offsets"]), int(arrays["r"]), backoff)
