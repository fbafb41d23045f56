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
``cpt()``, and its sd (:func:`unseen_moments`) is the predictive's spread around its
own mean.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit

from ..counting.context_tree import ContextTree
from .posterior import TreePosterior, _chunks, backoff_index, even_states, register_posterior

__all__ = ["HLSPosterior", "softmax_columns", "unseen_sd"]

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
    :func:`~.hls.flatten_tree`), ``var``: ``(S,)`` the tree's variance at each kept
    sweep, ``parent``/``offsets``: the flat layout, ``r``: the child's levels."""

    kind = "hls-bayes"

    def __init__(self, B: np.ndarray, var: np.ndarray, parent: np.ndarray, offsets: list[int], r: int) -> None:
        self.B = B
        self.var = np.asarray(var, dtype=np.float64)
        self.parent = np.asarray(parent, dtype=np.int64)
        self.offsets = [int(o) for o in offsets]
        self.r = int(r)

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
            e = np.empty((hi - lo, Q, K))
            for i in range(d + 1):
                rows = np.flatnonzero(lvl == i)
                if not len(rows):
                    continue
                e[:, rows] = eta[:, self.offsets[i] + node[rows]]
                if i < d:  # the missing nodes' coefficients: their prior given the sweep's variance
                    sd = np.sqrt((d - i) * self.var[idx])[:, None, None]
                    e[:, rows] += sd * rng.standard_normal((hi - lo, len(rows), K))
            out[lo:hi] = softmax_columns(e, r)
        return out

    @property
    def n_states(self) -> int:
        return int(len(self.var))

    def thin(self, k: int) -> "HLSPosterior":
        keep = even_states(len(self.var), k)
        return HLSPosterior(self.B[keep], self.var[keep], self.parent, self.offsets, self.r)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"B": self.B, "var": self.var, "parent": self.parent, "offsets": np.asarray(self.offsets),
                "r": np.array(self.r)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any]) -> "HLSPosterior":
        return cls(arrays["B"], arrays["var"], arrays["parent"], list(arrays["offsets"]), int(arrays["r"]))
