r"""Hierarchical linear smoothing, ridge variant (Cooper, Webb and Schmidt 2025).

Every node ``j`` of the context tree below the root carries a coefficient vector
:math:`\beta_j`; the linear predictor of a parent configuration is the sum of the
coefficients on its path (Sec. 3.1),

.. math:: \eta_{x_1 \dots x_p} = \sum_{i=1}^{p} \beta_{x_1 \dots x_i},

and its CPT column is :math:`\mathrm{softmax}(\eta)` (Sec. 3.2).  The coefficients
minimise the ridge-penalised negative log-likelihood of the **multinomial counts**
of the leaves (no row expansion),

.. math:: \sum_{\text{leaves}} \Big[ N \log \sum_x e^{\eta_x} - \sum_x n_x \eta_x \Big]
          + \frac{\tau}{2} \lVert B \rVert^2 ,

``tau = 1`` by default (the authors' scikit-learn ``C = 1``).  As the authors' fit:
the root's all-ones column is dropped (no intercept; a node without parents keeps
it, so its estimate is the ridge-shrunk marginal); with three or more child values
every value has a coefficient (symmetric softmax); a binary child has one (the
logit of its second value), whose penalty ``tau/2 beta^2`` equals the symmetric form's
``tau ||B||^2``.  Unlike the authors' code, child values that never occur are kept
in the fit (their coefficients are pushed down, as far as the penalty allows), so
every column is a proper distribution with a small, positive mass on them.

The design covers the **observed** branches only: an unobserved configuration's
own coefficient would be 0 at the optimum, so its predictor is the sum of its
observed ancestors' coefficients, which is what back-off to the deepest ancestor
gives.  The problem is solved to its optimum (``max |gradient| <= tol``, or the
gradient's rounding where the counts are so large that it exceeds ``tol``) by a
preconditioned Newton-CG whose gradient, Hessian-vector products and Hessian
diagonal cost O(tree nodes x values) (``_hls_kernels``).  With ``domain=`` the
domain is the first split, as for the other estimators: a domain's coefficient acts
as its own intercept and its configurations' coefficients are deviations from it,
all shrunk toward zero, so a domain with little data stays close to uniform-plus-
its-intercept rather than to the other domains' tables (``hmd`` pools domains).
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping

import numpy as np

from ...counting.context_tree import ContextTree
from ...errors import ConvergenceWarning
from ...validation import Param
from ._kernels import node_probs, ridge_newton
from ..base import Estimator, TreeEstimate, map_trees, register_estimator

__all__ = ["HLS", "flatten_tree"]


def flatten_tree(tree: ContextTree) -> tuple[np.ndarray, int, np.ndarray, list[int], bool]:
    """Level-order arrays of a tree for the kernels.

    Returns ``(parent, leaf0, leaf_counts, level_offsets, virtual_root)``:
    ``level_offsets[i]:level_offsets[i + 1]`` are the flat rows of tree level ``i``.  A
    tree without parents gets a virtual root (flat row 0) above its root (row 1), so
    that the root's own coefficient (an intercept) is fitted.
    """
    sizes = tree.level_sizes()
    if tree.depth == 0:
        parent = np.array([-1, 0], dtype=np.int64)
        return parent, 1, tree.levels[0].counts.astype(np.float64), [1, 2], True
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    parent = np.empty(int(offsets[-1]), dtype=np.int64)
    parent[0] = -1
    for i in range(1, len(tree.levels)):
        parent[offsets[i] : offsets[i + 1]] = offsets[i - 1] + tree.levels[i].parent
    leaves = tree.levels[-1].counts.astype(np.float64)
    return parent, int(offsets[-2]), leaves, [int(o) for o in offsets[:-1]] + [int(offsets[-1])], False


def split_levels(flat: np.ndarray, offsets: list[int]) -> tuple[np.ndarray, ...]:
    return tuple(np.ascontiguousarray(flat[offsets[i] : offsets[i + 1]]) for i in range(len(offsets) - 1))


def warn_unconverged(name: str, results: Mapping[str, TreeEstimate]) -> None:
    for node, est in results.items():
        if not est.info.get("converged", True):
            warnings.warn(
                f"{name}, node {node!r}: stopped after {est.info.get('iterations')} iterations "
                f"({est.info.get('convergence', 'not converged')})",
                ConvergenceWarning,
                stacklevel=3,
            )


@register_estimator
class HLS(Estimator):
    """Ridge HLS (HLS-NB of Cooper, Webb & Schmidt 2025, Sec. 3.1): penalised maximum
    likelihood on the tree design.  A fit stops when the largest gradient entry is at most
    ``tol``, or at most the rounding of the gradient where that is larger: 4.4e-16 times
    :math:`\\sum_l N_l (2 \\max_x |\\eta_{lx}| + \\log r)` (about 1e-9 at 1e5 rows; with
    large row weights the gradient cannot be computed more finely).  A fit that stops at
    ``max_iter`` is reported by a :class:`ConvergenceWarning` and in ``summary()``;
    ``n_jobs`` threads run over the nodes of a network."""

    name = "hls"
    params = (
        Param("tau", "float", 1.0, "ridge penalty weight: NLL + tau/2 ||B||^2", strict=True),
        Param("tol", "float", 1e-9, "stop when the largest gradient entry is at most tol", strict=True),
        Param("max_iter", "int", 100, "Newton iterations at most", low=1),
    )

    def fit_coefficients(self, tree: ContextTree) -> tuple[np.ndarray, dict[str, Any]]:
        """The optimal coefficients (level-order rows; the root's row is 0 unless the
        tree has no parents) and the solver's report."""
        parent, leaf0, counts, _, _ = flatten_tree(tree)
        r = tree.child_card
        K = r if r >= 3 else 1
        B = np.zeros((len(parent), K))
        f, gmax, it, conv = ridge_newton(parent, leaf0, counts, self.tau, K, B, self.tol, self.max_iter)
        info = {
            "objective": float(f),
            "max_gradient": float(gmax),
            "iterations": int(it),
            "converged": bool(conv),
        }
        if not conv:
            info["convergence"] = f"largest gradient entry {gmax:.3g} > tol {self.tol:.3g}"
        return B, info

    def _estimate_one(self, tree: ContextTree) -> TreeEstimate:
        B, info = self.fit_coefficients(tree)
        parent, _, _, offsets, _ = flatten_tree(tree)
        probs = node_probs(B, parent, tree.child_card)
        return TreeEstimate(split_levels(probs, offsets), "backoff", info, posterior=self.bootstrap())

    def estimate(self, tree: ContextTree) -> TreeEstimate:
        out = self._estimate_one(tree)
        warn_unconverged(self.name, {tree.child: out})
        return out

    def estimate_all(self, trees: Mapping[str, ContextTree], *, domain: str | None = None) -> dict[str, TreeEstimate]:
        """Fit every node's tree (independent problems, in threads)."""
        out = map_trees(self._estimate_one, trees, self.n_jobs)
        warn_unconverged(self.name, out)
        return out
