"""Classical estimators: maximum likelihood, BDeu posterior mean, m-estimates.

All three are closed forms evaluated at every node of the context tree, so that
a parent configuration never seen in the data can be answered from an ancestor.
"""

from __future__ import annotations

import numpy as np

from ..counting.context_tree import ContextTree
from ..errors import DataError
from ..validation import Param
from ._pooling import fixed_concentration
from .base import Estimator, TreeEstimate, register_estimator

__all__ = ["MLE", "Bayes", "MEstimate"]


def _unseen(default: str) -> Param:
    return Param(
        "unseen",
        "choice",
        default,
        "a parent configuration absent from the data: the deepest ancestor's estimate, or uniform",
        choices=("backoff", "uniform"),
    )


def _dirichlet_sd(p: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Marginal sd of each component of a Dirichlet with mean ``p`` and total ``total``:
    :math:`\\sqrt{p (1 - p) / (\\text{total} + 1)}`."""
    return np.sqrt(np.maximum(p * (1.0 - p), 0.0) / (total + 1.0))


@register_estimator
class MLE(Estimator):
    r"""Relative frequencies: :math:`\hat p(x \mid \pi) = n(x, \pi) / n(\pi)`.

    Computed at every tree node.  ``unseen="backoff"`` (default) answers a parent
    configuration that never occurs with the deepest ancestor's frequencies
    (bnlearn would return NA); ``"uniform"`` with ``1/r``.  On configurations
    that occur it equals bnlearn's ``bn.fit(method = "mle")``.
    """

    name = "mle"
    params = (_unseen("backoff"),)


    def estimate(self, tree: ContextTree) -> TreeEstimate:
        if tree.total == 0:
            raise DataError(f"node {tree.child!r} has no complete rows to estimate it from")
        probs = []
        for lev in tree.levels:
            n = lev.counts.astype(np.float64)
            probs.append(n / n.sum(axis=1, keepdims=True))
        return TreeEstimate(tuple(probs), self.unseen)

    def domain_concentration(self, counts: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """No pooling: ``s_D = 0``."""
        return fixed_concentration(0.0)

    def domain_posterior(
        self, counts: np.ndarray, mean: np.ndarray, log_s: np.ndarray, weights: np.ndarray
    ) -> tuple[np.ndarray, None]:
        """Maximum likelihood never pools: a domain's leaf is its own frequencies (a
        configuration the domain never saw backs off to the pooled one)."""
        n = np.asarray(counts, dtype=np.float64)
        return n / n.sum(axis=1, keepdims=True), None


@register_estimator
class Bayes(Estimator):
    r"""BDeu posterior mean, as bnlearn's ``bn.fit(method = "bayes", iss = )``.

    Every cell of the node's table gets the pseudo-count :math:`\alpha = iss / (r q)`,
    with ``r`` the child's levels and ``q`` the number of parent configurations
    (all of them, observed or not):

    .. math:: \hat p(x \mid \pi) = \frac{n(x, \pi) + iss/(r q)}{n(\pi) + iss/q}.

    At an internal tree node of depth ``i`` the same formula with
    :math:`q_i = \prod_{j \le i} |P_j|` is the BDeu estimate of the marginal table
    over the first ``i`` parents.  A configuration absent from the data has the
    prior mean, the uniform distribution (``unseen="uniform"``, bnlearn's answer);
    ``unseen="backoff"`` uses the ancestor's estimate instead.  Posterior standard
    deviations are the Dirichlet posterior's, :math:`\\sqrt{p(1-p)/(n(\\pi) + iss/q + 1)}`.
    """

    name = "bayes"
    params = (
        Param("iss", "float", 1.0, "imaginary sample size of the BDeu prior", strict=True),
        _unseen("uniform"),
    )


    def estimate(self, tree: ContextTree) -> TreeEstimate:
        r = tree.child_card
        probs, sds = [], []
        q = 1
        for i, lev in enumerate(tree.levels):
            if i > 0:
                q *= tree.parent_cards[i - 1]
            alpha = self.iss / (r * q)
            n = lev.counts.astype(np.float64)
            tot = n.sum(axis=1, keepdims=True) + r * alpha
            p = (n + alpha) / tot
            probs.append(p)
            sds.append(_dirichlet_sd(p, tot))
        # an unseen configuration: the prior Dirichlet(alpha, ..., alpha) of the leaf level
        prior_sd = _dirichlet_sd(np.full((1, r), 1.0 / r), np.array([[r * alpha]]))
        return TreeEstimate(tuple(probs), self.unseen, sd=tuple(sds), fallback_sd=prior_sd)


@register_estimator
class MEstimate(Estimator):
    r"""m-estimates with back-off (paper 000, eq. 16 and Sec. 6.1).

    .. math:: \hat p(x \mid \pi) = \frac{n(x, \pi) + m / r}{n(\pi) + m}

    at every tree node.  A parent configuration with no data backs off to the
    deepest ancestor in the tree that has data (``counts(x4, x0, x3) = 0`` gives
    :math:`\hat p(x_4 \mid x_0)`), which the paper shows m-estimates need to be
    competitive.  As the posterior mean of a Dirichlet(m/r, ..., m/r) prior, its
    standard deviations are :math:`\\sqrt{p(1-p)/(n(\\pi) + m + 1)}`.
    """

    name = "mestimate"
    params = (Param("m", "float", 1.0, "pseudo-counts spread evenly over the child's levels"),)


    def estimate(self, tree: ContextTree) -> TreeEstimate:
        r = tree.child_card
        if self.m == 0 and tree.total == 0:
            raise DataError(f"node {tree.child!r} has no complete rows and m = 0")
        probs, sds = [], []
        for lev in tree.levels:
            n = lev.counts.astype(np.float64)
            tot = n.sum(axis=1, keepdims=True) + self.m
            p = (n + self.m / r) / tot
            probs.append(p)
            sds.append(_dirichlet_sd(p, tot))
        return TreeEstimate(tuple(probs), "backoff", sd=tuple(sds))
