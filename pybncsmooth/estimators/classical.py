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
from .bootstrap import ProportionPosterior
from .posterior import DirichletPosterior, predictive_sd

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

    Uncertainty (frequentist): ``cpt_frame(interval=)`` gives each entry's Wilson score
    interval (statsmodels), ``stat="sd"`` the binomial standard error
    :math:`\sqrt{p(1-p)/n}`; a configuration without rows ``[0, 1]``; queries and
    ``sample_parameters`` draw bootstrap replicates over rows
    (:mod:`~pybncsmooth.estimators.bootstrap`).
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
        return TreeEstimate(tuple(probs), self.unseen, posterior=ProportionPosterior(self.name,
                            self.hyperparameters(), self.unseen, self))

    def batch_probs(self, tree: ContextTree, counts: list[np.ndarray]) -> list[np.ndarray]:
        """Relative frequencies of every replicate (empty nodes: see :meth:`Estimator.batch_probs`)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return [c / c.sum(axis=2, keepdims=True) for c in counts]

    def domain_concentration(
        self, counts: np.ndarray, mean: np.ndarray, prior: np.ndarray | None = None, groups: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """No pooling: ``s_D = 0``."""
        return fixed_concentration(0.0)

    def new_domain_prior(self, tree: ContextTree, pooled: TreeEstimate, prior: np.ndarray | None,
                         log_s: np.ndarray, weights: np.ndarray) -> dict:
        """Nothing: a domain's leaves never pool, whatever its rows."""
        return {}

    def domain_posterior(
        self, counts: np.ndarray, mean: np.ndarray, log_s: np.ndarray, weights: np.ndarray,
        mean_sd: np.ndarray | None = None, mass: np.ndarray | None = None,
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
    ``unseen="backoff"`` uses the ancestor's estimate instead.

    Uncertainty: the posterior of a configuration's vector is exactly
    :math:`\mathrm{Dir}(n(\cdot, \pi) + \alpha)`; its sds are
    :math:`\sqrt{p(1-p)/(n(\pi) + iss/q + 1)}` and ``sample_parameters`` draws from it
    (:class:`~pybncsmooth.estimators.posterior.DirichletPosterior`).  An unseen
    configuration has the prior :math:`\mathrm{Dir}(\alpha)` (``"uniform"``), or
    under ``"backoff"`` a prior of the same strength :math:`iss/q` centred on the
    ancestor's posterior, :math:`\mathrm{Dir}((iss/q)\,\phi)`.  These intervals are
    exact under the prior, and the prior is what they say: with ``iss = 1`` and many
    configurations every cell has a tiny pseudo-count, so a thin configuration's
    interval hugs its relative frequencies (a level not seen in 5 rows gets an
    interval near 0), and on data from real networks about half of the thin
    configurations' 90% intervals miss the truth (``benchmarks/bench_coverage.py``).
    That is the BDeu prior's doing, not an approximation; the hierarchical
    estimators (``hdp``, ``hmd``, ``hls-bayes``) learn how much configurations differ
    and cover.
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
        # an unseen configuration: the prior Dirichlet(alpha, ..., alpha) of the leaf level,
        # or (back-off) Dirichlet(r alpha phi) around the ancestor's posterior phi
        prior_sd = _dirichlet_sd(np.full((1, r), 1.0 / r), np.array([[r * alpha]]))
        w = r * alpha / (r * alpha + 1.0)
        unseen_sd = tuple(predictive_sd(p, sd, w) for p, sd in zip(probs[:-1], sds[:-1]))
        level_alpha = _level_alpha(self.iss, tree)
        post = DirichletPosterior(level_alpha, self.unseen == "backoff")
        return TreeEstimate(tuple(probs), self.unseen, sd=tuple(sds), fallback_sd=prior_sd, unseen_sd=unseen_sd,
                            posterior=post)


    def fresh_prior(self, tree: ContextTree, est: TreeEstimate) -> np.ndarray:
        r"""The BDeu prior of a configuration's vector, :math:`\mathrm{Dir}(iss / (r q))`."""
        return np.full((tree.n_leaves, tree.child_card), _level_alpha(self.iss, tree)[-1])


def _level_alpha(iss: float, tree: ContextTree) -> np.ndarray:
    """The BDeu cell pseudo-count of every tree level: :math:`iss / (r q_i)`."""
    return iss / (tree.child_card * np.cumprod([1, *tree.parent_cards]))


@register_estimator
class MEstimate(Estimator):
    r"""m-estimates with back-off (Petitjean et al. 2018, eq. 16 and Sec. 6.1).

    .. math:: \hat p(x \mid \pi) = \frac{n(x, \pi) + m / r}{n(\pi) + m}

    at every tree node.  A parent configuration with no data backs off to the
    deepest ancestor in the tree that has data (``counts(x4, x0, x3) = 0`` gives
    :math:`\hat p(x_4 \mid x_0)`), which the paper shows m-estimates need to be
    competitive.

    Uncertainty: a bootstrap over rows (:mod:`~pybncsmooth.estimators.bootstrap`):
    the m-estimate is a smoothing rule, not the mean of a posterior it states (where it
    backs off its value is the ancestor's estimate), so ``stat="sd"``, intervals and
    ``sample_parameters`` are the estimator's sampling variability: confidence, not
    credible, statements (``[0, 1]`` where a configuration has no rows);
    ``method="bayes"`` gives exact Dirichlet posteriors, the hierarchical estimators
    calibrated ones.
    """

    name = "mestimate"
    params = (Param("m", "float", 1.0, "pseudo-counts spread evenly over the child's levels"),)


    def estimate(self, tree: ContextTree) -> TreeEstimate:
        r = tree.child_card
        if self.m == 0 and tree.total == 0:
            raise DataError(f"node {tree.child!r} has no complete rows and m = 0")
        probs = []
        for lev in tree.levels:
            n = lev.counts.astype(np.float64)
            probs.append((n + self.m / r) / (n.sum(axis=1, keepdims=True) + self.m))
        return TreeEstimate(tuple(probs), "backoff", posterior=self.bootstrap())

    def batch_probs(self, tree: ContextTree, counts: list[np.ndarray]) -> list[np.ndarray]:
        """The m-estimates of every replicate (empty nodes: see :meth:`Estimator.batch_probs`)."""
        r = tree.child_card
        with np.errstate(invalid="ignore", divide="ignore"):
            return [(c + self.m / r) / (c.sum(axis=2, keepdims=True) + self.m) for c in counts]
