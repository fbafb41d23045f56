r"""M-branch smoothing (Ferri et al. 2003; Zhang 2020, Sec. 2.3.2, eqs. 17-18).

Every node of the context tree is an m-estimate toward its parent's smoothed estimate,
recursively from the root, which is smoothed toward the uniform distribution:

.. math:: \hat\theta_{v,k} = \frac{n_{v,k} + m_v\, \hat\theta_{pa(v),k}}{n_{v,\cdot} + m_v},
          \qquad \hat\theta_{pa(root),k} = 1/K  \quad (17)

with a weight that grows toward the root, set from the node's height ``h`` (1 at the
leaves, ``d`` at the root of a tree ``d`` levels deep), the training size ``N`` and a
user count ``M``:

.. math:: m_v = M\,(1 + \Delta_v \sqrt{N}), \qquad \Delta_v = 1 - 1/h_v  \quad (18)

(``M = 4`` as Ferri et al.).  An expert network (``fit(prior=P, prior_weight=w)``)
is the root's base measure: :math:`\hat\theta_{root} = (n + w P(x)) / (N + w)` in place
of the uniform distribution and :math:`m_{root}`.  Here the leaves are a CPT's parent configurations, ``N``
is the number of rows counted in the node's tree, and every node's estimate is kept, so
a configuration absent from the data is answered by its deepest ancestor (back-off).
Its uncertainty is a bootstrap over rows (:mod:`~pybncsmooth.estimators.bootstrap`).
"""

from __future__ import annotations

import math

import numpy as np

from ...counting.context_tree import ContextTree
from ...validation import Param
from ..base import Estimator, TreeEstimate, register_estimator

__all__ = ["MBranch"]


@register_estimator
class MBranch(Estimator):
    """M-branch smoothing (see the module documentation); ``M`` is the user count of
    eq. (18), 4 by default as Ferri, Flach & Hernandez-Orallo (2003)."""

    name = "mbranch"
    prior_role = "the root's base measure P(x), of weight w, in place of the uniform distribution and m_root"
    # beyond 1e10 (times sqrt(N)) the m-estimates overflow; there every node already equals
    # the uniform distribution
    params = (Param("M", "float", 4.0, "user count of m_v = M (1 + (1 - 1/h) sqrt(N))", high=1e10),)

    def weights(self, tree: ContextTree) -> list[float]:
        """:math:`m_v` of the nodes of each tree level (root first): eq. (18)."""
        depth = len(tree.levels)  # levels of the branch: the root's height
        N = float(tree.levels[0].counts.sum())
        out = []
        for i in range(depth):
            h = depth - i  # 1 at the leaves
            out.append(self.M * (1.0 + (1.0 - 1.0 / h) * math.sqrt(N)))
        return out

    def _root_base(self, tree: ContextTree, m: list[float]) -> np.ndarray:
        """The root's base measure: uniform, or the expert's :math:`P(x)` (its weight then
        replaces ``m[0]``, in place)."""
        prior = self.node_prior(tree)
        if prior is None:
            return np.full(tree.child_card, 1.0 / tree.child_card)
        m[0] = prior.weight  # the root smoothed toward the expert's P(x), with its weight
        return prior.marginal()

    def estimate(self, tree: ContextTree) -> TreeEstimate:
        r = tree.child_card
        m = self.weights(tree)
        probs = []
        base = self._root_base(tree, m).reshape(1, r)
        for i, lev in enumerate(tree.levels):
            if i > 0:
                base = probs[-1][lev.parent]
            n = lev.counts.astype(np.float64)
            tot = n.sum(axis=1, keepdims=True) + m[i]
            if m[i] > 0:
                p = (n + m[i] * base) / tot
            else:  # M = 0: frequencies, the parent's estimate where a node has no rows
                nt = n.sum(axis=1, keepdims=True)
                p = np.where(nt > 0, n / np.where(nt > 0, nt, 1.0), base)
            probs.append(p)
        return TreeEstimate(tuple(probs), "backoff", {"m": np.array(m)}, posterior=self.bootstrap())

    def batch_probs(self, tree: ContextTree, counts: list[np.ndarray]) -> list[np.ndarray]:
        """Eqs. (17)-(18) on every replicate at once (``N`` is the rows resampled, the
        same in every replicate; an empty node equals its parent's estimate)."""
        r = tree.child_card
        m = self.weights(tree)
        probs: list[np.ndarray] = []
        base = self._root_base(tree, m).reshape(1, 1, r)
        for i, n in enumerate(counts):
            if i > 0:
                base = probs[-1][:, tree.levels[i].parent]
            nt = n.sum(axis=2, keepdims=True)
            if m[i] > 0:
                probs.append((n + m[i] * base) / (nt + m[i]))
            else:
                probs.append(np.where(nt > 0, n / np.where(nt > 0, nt, 1.0), base))
        return probs
