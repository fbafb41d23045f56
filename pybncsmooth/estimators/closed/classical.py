"""Classical estimators: maximum likelihood, BDeu posterior mean, m-estimates.

All three are closed forms evaluated at every node of the context tree, so that
a parent configuration never seen in the data can be answered from an ancestor.
"""

from __future__ import annotations

import numpy as np

import functools
from typing import Any, Mapping

from ...counting.context_tree import ContextTree
from ...counting.flat import FlatTrees, RowCells
from ...errors import DataError, StatisticUnavailableError
from ...validation import Param
from ..._jit import numba_loaded
from ._kernels import bayes_cells
from ._numpy import bayes_cells_numpy
from ..domains.pooling import fixed_concentration
from ._stacked import level_slices, per_row, stack_levels, unstack
from ..base import DeferredEstimate, Estimator, TreeEstimate, register_estimator
from ..bootstrap import CALIBRATED, ProportionPosterior
from .flat import FlatEstimates, FlatRows, LazyCells, cellwise, deferred_args, stacked_sd
from ..posterior import (DirichletPosterior, DirichletTablePosterior, backoff_index, predictive_sd,
                        register_posterior)
from ..prior import NodePrior

__all__ = ["MLE", "Bayes", "MEstimate", "BDeuPosterior"]

#: the most stored cells whose posterior means NumPy computes (:mod:`~pybncsmooth.estimators.closed._numpy`) while
#: the compiled kernels are not loaded: a few milliseconds, against numba's start
_NUMPY_CELLS = 1 << 18


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
    pools_domains = False


    def estimate(self, tree: ContextTree) -> TreeEstimate:
        return self.estimate_all({tree.child: tree})[tree.child]

    def estimate_all(self, trees: Mapping[str, ContextTree], *, domain: str | None = None) -> dict[str, TreeEstimate]:
        """Every tree at once (their levels stacked: the same numbers as one at a time)."""
        out = {}
        for st in stack_levels(trees):
            n = st.counts
            with np.errstate(invalid="ignore", divide="ignore"):  # a tree without rows is refused below
                p = n / n.sum(axis=1, keepdims=True)
            for k, (name, tree) in enumerate(zip(st.names, st.trees)):
                if not n[st.bounds[k][0]].any():
                    raise DataError(f"node {tree.child!r} has no complete rows to estimate it from")
                out[name] = TreeEstimate._closed_form(unstack(st, k, p), self.unseen, posterior=ProportionPosterior(
                    self.name, self.hyperparameters(), self.unseen, self))
        return {name: out[name] for name in trees}

    def estimate_flat(self, flat: FlatTrees) -> FlatEstimates | None:
        """:meth:`estimate_all` on the counting's flat arrays, every tree at once (``None``
        when a tree node has no rows: :meth:`estimate_all` names it)."""
        rows = FlatRows(flat)
        if (rows.total == 0).any():
            return None
        p = rows.ratio(0.0, rows.total)
        name, hyper, rule = self.name, self.hyperparameters(), self.unseen

        def make(j: int) -> TreeEstimate:
            return TreeEstimate._closed_form(flat.level_views(p, j), rule,
                                             posterior=ProportionPosterior(name, hyper, rule, self))

        return FlatEstimates(flat, make)

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
                         log_s: np.ndarray, weights: np.ndarray, leaves_est: tuple) -> dict:
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
    ancestor's posterior, :math:`\mathrm{Dir}((iss/q)\,\phi)`.  Its intervals would be
    exact under the prior, and the prior is what they would say: with ``iss = 1`` and
    many configurations every cell has a tiny pseudo-count, so a thin configuration's
    interval hugs its relative frequencies (a level not seen in 5 rows gets an
    interval near 0), and on data sampled from seven known networks 0.44-0.79 of the
    thin configurations' true entries fell inside their 90% intervals
    (``benchmarks/bench_coverage.py``).  That is the BDeu prior's doing, not an
    approximation, so its sds (``cpt(stat="sd")``) and CPT intervals are refused
    (:class:`BDeuPosterior`, naming the estimators whose intervals cover: the
    hierarchical ones learn how much configurations differ); ``sample_parameters``
    draws from it, and query intervals from those draws are given (random queries
    on alarm, insurance, win95pts and hailfinder: 0.86-0.97 covered).

    An expert network (``fit(prior=P, prior_weight=w)``,
    :mod:`~pybncsmooth.estimators.prior`) replaces BDeu's pseudo-counts (and ``iss``)
    with :math:`a(x, \pi) = w P(x, \pi)` (``prior_per="network"``, pyAgrum's
    ``useDirichletPrior``; a uniform ``P`` is BDeu with ``iss = w``) or
    :math:`w P(x \mid \pi)` (``"configuration"``), at every tree node the same with the
    node's context; a configuration without data then answers its prior mean
    :math:`P(x \mid \pi)` (``unseen="uniform"``) and the posteriors are
    :math:`\mathrm{Dir}(n + a)`, exact as above, with their sds and intervals (the
    user's own statement of belief, as strong as ``prior_weight`` says).
    """

    name = "bayes"
    params = (
        Param("iss", "float", 1.0, "imaginary sample size of the BDeu prior", strict=True),
        _unseen("uniform"),
    )
    prior_role = "Dirichlet pseudo-counts a(x, pi) of every parent configuration, in place of BDeu's"
    prior_replaces = ("iss",)

    def estimate(self, tree: ContextTree) -> TreeEstimate:
        prior = self.node_prior(tree)
        if prior is not None:
            return _bayes_with_prior(tree, prior, self.unseen)
        return self.estimate_all({tree.child: tree})[tree.child]

    def estimate_all(self, trees: Mapping[str, ContextTree], *, domain: str | None = None) -> dict[str, TreeEstimate]:
        """Every tree at once: all levels of all trees with the same ``r`` stacked, each
        row with its level's pseudo-count (the same numbers as one tree at a time); a
        node with an expert's prior by :func:`_bayes_with_prior`."""
        out = {n: self.estimate(t) for n, t in trees.items() if self.node_prior(t) is not None}
        for st in stack_levels({n: t for n, t in trees.items() if n not in out}):
            r = st.r
            alphas = [_level_alphas(self.iss, r, tuple(t.parent_cards)) for t in st.trees]
            alpha = per_row(st, alphas)
            n = st.counts
            tot = n.sum(axis=1, keepdims=True) + r * alpha
            p = (n + alpha) / tot
            sds = _StackSds(st._replace(trees=[], counts=None), alphas, p, tot)
            rule, backoff, make = self.unseen, self.unseen == "backoff", DeferredEstimate.deferred
            for name, a, cut in zip(st.names, alphas, level_slices(st)):
                out[name] = make(tuple([p[c] for c in cut]), rule, {
                    "sd": (sds.levels, cut), "unseen_sd": (sds.unseen_levels, cut),
                    "posterior": (_dirichlet_posterior, (a, backoff))}, fallback_sd=_prior_sd(r, r * a[-1]))
        return {name: out[name] for name in trees}

    def estimate_flat(self, flat: FlatTrees) -> FlatEstimates | None:
        """:meth:`estimate_all` on the counting's flat arrays, every tree at once: each
        cell's :math:`(n + \\alpha_i) / (n(\\pi) + r \\alpha_i)`, the sds when first read
        (``None`` with a prior network)."""
        if self.network_prior is not None:
            return None
        cells_of = bayes_cells if numba_loaded() or flat.nz_n.shape[0] > _NUMPY_CELLS else bayes_cells_numpy
        alpha_blk, tot, *cells = cells_of(float(self.iss), flat.rcard, flat.pa_ptr, flat.pa_card, flat.blk_ptr,
                                             flat.row_ptr, flat.nz_ptr, flat.nz_n, flat.row_total)
        p = RowCells(*cells)
        sd = LazyCells(flat, lambda: cellwise(flat, stacked_sd, (p,), (tot,)))
        unseen = LazyCells(flat, lambda: _flat_unseen_sd(flat, FlatRows(flat), alpha_blk, p, sd.cells()))
        iss, rule, backoff = self.iss, self.unseen, self.unseen == "backoff"

        def make(j: int) -> TreeEstimate:
            r = int(flat.rcard[j])
            a = _level_alphas(iss, r, flat.parent_cards(j))
            return DeferredEstimate.deferred(flat.level_views(p, j), rule, {
                "sd": deferred_args(sd, j), "unseen_sd": deferred_args(unseen, j, len(flat.parents[j])),
                "posterior": (_dirichlet_posterior, (a, backoff))}, fallback_sd=_prior_sd(r, r * a[-1]))

        return FlatEstimates(flat, make)

    def fresh_prior(self, tree: ContextTree, est: TreeEstimate) -> np.ndarray:
        r"""The BDeu prior of a configuration's vector, :math:`\mathrm{Dir}(iss / (r q))`
        (with a prior network, :math:`\mathrm{Dir}(a_y)`)."""
        prior = self.node_prior(tree)
        if prior is not None:
            return np.maximum(prior.tree_pseudo_counts(tree)[-1], 1e-300)
        return np.full((tree.n_leaves, tree.child_card), _level_alpha(self.iss, tree)[-1])


def _bayes_with_prior(tree: ContextTree, prior: NodePrior, unseen: str) -> TreeEstimate:
    r"""The posterior means :math:`(n_c(x) + a_c(x)) / (n_c + A_c)` at every tree node
    ``c`` with the prior network's pseudo-counts :math:`a_c`
    (:meth:`~pybncsmooth.estimators.prior.NodePrior.tree_pseudo_counts`) and their
    Dirichlet sds; an unseen configuration gets its prior mean :math:`P(x \mid \pi)`
    (``unseen="uniform"``: the prior's mean, here the expert's) or the ancestor's
    estimate (``"backoff"``)."""
    alpha = prior.tree_pseudo_counts(tree)
    probs, sds = [], []
    for lev, a in zip(tree.levels, alpha):
        n = lev.counts.astype(np.float64) + a
        tot = n.sum(axis=1, keepdims=True)
        p = n / tot
        probs.append(p)
        sds.append(_dirichlet_sd(p, tot))
    leaf = prior.level_table(tree.depth)
    strength = leaf.sum(axis=1, keepdims=True)
    if unseen == "uniform":
        fb = prior.conditional()
        return TreeEstimate(tuple(probs), "fallback", sd=tuple(sds), fallback=fb, fallback_sd=_dirichlet_sd(fb, strength),
                            posterior=DirichletTablePosterior(leaf))
    # back-off: Dir(A phi) around the ancestor, A the mean strength of the configurations below it
    q = leaf.shape[0]
    unseen_sd = []
    for i, (p, sd, a) in enumerate(zip(probs[:-1], sds[:-1], alpha[:-1])):
        q_i = int(np.prod(tree.parent_cards[:i], dtype=np.int64)) if i else 1
        A = a.sum(axis=1, keepdims=True) * q_i / q if prior.per == "network" else np.full((len(p), 1), prior.weight)
        unseen_sd.append(predictive_sd(p, sd, A / (A + 1.0)))
    return TreeEstimate(tuple(probs), "backoff", sd=tuple(sds), unseen_sd=tuple(unseen_sd),
                        posterior=DirichletTablePosterior(leaf, alpha))


def _mestimate_with_prior(tree: ContextTree, prior: NodePrior) -> TreeEstimate:
    r"""m-estimates with an expert's pseudo-counts :math:`a_c` at every tree node ``c``:
    :math:`(n_c(x) + a_c(x)) / (n_c + A_c)`, uniform where a node has neither rows nor
    prior mass (a back-off then answers from the ancestor); the uncertainty that of
    ``bayes`` with the same prior and the back-off (:func:`_bayes_with_prior`)."""
    r = tree.child_card
    est = _bayes_with_prior(tree, prior, "backoff")
    probs = []
    for lev, a in zip(tree.levels, prior.tree_pseudo_counts(tree)):
        c = lev.counts.astype(np.float64) + a
        tot = c.sum(axis=1, keepdims=True)
        probs.append(np.where(tot > 0, c / np.where(tot > 0, tot, 1.0), 1.0 / r))
    return TreeEstimate(tuple(probs), "backoff", sd=est.sd, unseen_sd=est.unseen_sd, posterior=est.posterior)


def _level_alpha(iss: float, tree: ContextTree) -> np.ndarray:
    """The BDeu cell pseudo-count of every tree level: :math:`iss / (r q_i)`."""
    return np.array(_level_alphas(iss, tree.child_card, tuple(tree.parent_cards)))


class _StackSds:
    r"""The Dirichlet sds of a stack's rows, :math:`\sqrt{p (1 - p) / (n + r\alpha + 1)}`, and
    those of a configuration absent below each node (an unseen configuration: the
    prior :math:`\mathrm{Dir}(\alpha, ..., \alpha)` of the leaf level, or (back-off)
    :math:`\mathrm{Dir}(r \alpha \phi)` around the ancestor's posterior
    :math:`\phi`), each computed for the whole stack when a tree's are first read."""

    def __init__(self, stack: Any, alphas: list[list[float]], p: np.ndarray, tot: np.ndarray) -> None:
        self.stack, self.alphas, self.p, self.tot = stack, alphas, p, tot
        self._sd: np.ndarray | None = None
        self._unseen: np.ndarray | None = None

    def sd(self) -> np.ndarray:
        if self._sd is None:
            self._sd = _dirichlet_sd(self.p, self.tot)
        return self._sd

    def levels(self, cut: list[slice]) -> tuple[np.ndarray, ...]:
        sd = self.sd()
        return tuple([sd[c] for c in cut])

    def unseen_levels(self, cut: list[slice]) -> tuple[np.ndarray, ...]:
        if self._unseen is None:
            r = self.stack.r
            w = per_row(self.stack, [[r * a[-1] / (r * a[-1] + 1.0)] * len(a) for a in self.alphas])
            self._unseen = predictive_sd(self.p, self.sd(), w)
        return tuple([self._unseen[c] for c in cut[:-1]])


def _flat_unseen_sd(flat: FlatTrees, rows: FlatRows, alpha_blk: np.ndarray, p: RowCells, sd: RowCells
                    ) -> RowCells:
    """:meth:`_StackSds.unseen_levels` cell by cell on flat arrays: each tree's weight
    :math:`r\\alpha / (r\\alpha + 1)` of its leaf level's pseudo-count on all its cells."""
    ra = flat.rcard * alpha_blk[flat.blk_ptr[1:] - 1]
    w = np.repeat(ra / (ra + 1.0), flat.depth + 1)
    return cellwise(flat, predictive_sd, (p, sd), (rows.per_row(w),))


def _dirichlet_posterior(arg: tuple[list[float], bool]) -> "BDeuPosterior":
    return BDeuPosterior(arg[0], arg[1])


#: why ``bayes`` with its BDeu prior gives no sd or interval (see :class:`BDeuPosterior`)
BDEU_UNCALIBRATED = (
    "its sds and intervals are those of the exact posterior of the BDeu prior, iss / (r q) of a row in every "
    "cell, so a configuration seen a few times gets an interval hugging its frequencies: on data sampled from "
    "seven known networks (benchmarks/bench_coverage.py, 200 and 2000 rows) its 90% intervals covered 0.44-0.79 "
    "of the true entries of configurations with 1-19 rows; calibrated sds and intervals: "
    + ", ".join(repr(m) for m in CALIBRATED)
    + " ('mestimate' is bayes' formula with m pseudo-counts a configuration; an expert's prior, "
    "fit(prior=...), gives bayes sds and intervals; sample_parameters still draws from the BDeu posterior)")


@register_posterior
class BDeuPosterior(DirichletPosterior):
    r"""``bayes``' posterior with its BDeu prior: exactly
    :class:`~pybncsmooth.estimators.posterior.DirichletPosterior`'s (every configuration
    :math:`\mathrm{Dir}(n_y + iss/(r q))`), drawn as it is (``sample_parameters``), but
    its sds and CPT intervals are refused (:data:`BDEU_UNCALIBRATED`).

    The posterior is exact *under the prior*, and the prior is what a thin
    configuration's interval says: a cell's pseudo-count :math:`iss/(r q)` is a small
    fraction of a row (insurance's ``Accident``, ``r = 4``, ``q = 24``, ``iss = 1``:
    :math:`\alpha = 1/96`), so after ``n`` rows the Beta marginal of a level seen ``k``
    times is :math:`\mathrm{Beta}(k + \alpha, n - k + (r - 1)\alpha)`, and a level not
    seen in five rows gets the 90% interval :math:`[10^{-126}, 0.0009]`
    (:math:`P(\theta < t) \approx t^{\alpha}`: nearly all its mass at 0), where
    ``mestimate``'s :math:`\mathrm{Dir}(n_y + 1/4)` gives :math:`[8 \cdot 10^{-7}, 0.20]`.
    Real tables are not that close to their samples' frequencies: measured on data
    sampled from known networks (``benchmarks/bench_coverage.py``; alarm, insurance,
    child, water, win95pts, andes, hailfinder; 200 and 2000 rows, two seeds), its 90%
    intervals covered 0.44-0.79 of the true entries of configurations with 1-19 rows
    and 0.60-0.89 of all seen ones, against the 0.85-0.95 the others keep.  No one
    ``iss`` repairs it: the pseudo-count a configuration, :math:`iss/q`, shrinks as a
    node's configurations multiply, so one ``iss`` gives the nodes of a network priors
    of very different strength.
    ``mestimate`` (``m`` pseudo-counts a configuration, :math:`\mathrm{Dir}(n_y + m/r)`)
    is the same formula with a prior that does cover, and the hierarchical estimators
    learn how far the configurations differ.  So ``stat="sd"`` and
    ``cpt_frame(interval=)`` raise
    :class:`~pybncsmooth.errors.StatisticUnavailableError` naming the estimators whose
    intervals are calibrated.  An expert's prior (``fit(prior=...)``) is
    :class:`~pybncsmooth.estimators.posterior.DirichletTablePosterior`'s, with its
    intervals: the user's own statement of belief, as strong as ``prior_weight`` says."""

    kind = "bdeu"
    #: sds and CPT intervals are refused (see the class docstring)
    calibrated = False
    #: query intervals (from its draws) are offered: random queries (a target, three
    #: evidence variables; ``benchmarks/bench_query_coverage.py``, four seeds of 60 queries)
    #: were covered 0.87 / 0.86 (alarm, 200 / 2000 rows), 0.87 / 0.94 (insurance), 0.87 /
    #: 0.95 (win95pts), 0.89 / 0.97 (hailfinder): a query sums over many configurations,
    #: mostly rich ones.  A query that is one thin configuration's entry (the node given
    #: all its parents) inherits that entry's miss
    query_calibrated = True

    def refusal(self, stat: str, node: str | None = None) -> StatisticUnavailableError:
        """The error a request for ``stat`` raises (:data:`BDEU_UNCALIBRATED`)."""
        return StatisticUnavailableError(stat, "bayes", node, reason=BDEU_UNCALIBRATED)


@register_posterior
class MEstimatePosterior(DirichletPosterior):
    r"""``mestimate``'s posterior (see :class:`MEstimate`): the Dirichlet posterior its
    pseudo-counts imply, :math:`\mathrm{Dir}(n_y + m/r)` at an observed configuration
    (``level_alpha``: ``m/r`` at every level), drawn for an unseen one as
    :class:`~pybncsmooth.estimators.posterior.DirichletPosterior`'s back-off,
    :math:`\mathrm{Dir}(m\,\phi)`; an unseen configuration's interval is ``[0, 1]``
    (that predictive, ``m = 1`` around the ancestor, puts a level the ancestor rarely
    takes near 0, which a rare parent value's column need not: on insurance at 2000
    rows it covered 0.64 of the unseen entries)."""

    kind = "mestimate"
    #: its draws give no query interval: on insurance at 200 rows (50 random queries a
    #: fit, seeds 0 and 1; ``benchmarks/bench_query_coverage.py``) their 90% intervals
    #: covered 0.72 of the true answers
    query_calibrated = False

    def __init__(self, level_alpha: np.ndarray, backoff: bool = True) -> None:
        super().__init__(level_alpha, True)

    def refusal(self, stat: str, node: str | None = None) -> StatisticUnavailableError:
        """The error a query interval raises (see :attr:`query_calibrated`)."""
        return StatisticUnavailableError(stat, "mestimate", node, reason=(
            "its posterior's draws covered 0.72 of the true answers of random queries on data sampled from a known "
            "network (insurance, 200 rows): its CPT intervals and sds are calibrated, its query intervals are not; "
            "calibrated query intervals: 'hdp', 'hmd'"))

    def entry_interval(self, tree: ContextTree, level: float, draws: int, rng: np.random.Generator
                       ) -> tuple[np.ndarray, np.ndarray]:
        r"""Equal-tailed ``level`` intervals of the dense table's entries (``(Q, r)``,
        configuration-major): the exact Beta marginals of :math:`\mathrm{Dir}(n_y + m/r)`,
        ``[0, 1]`` where no row was (``draws`` and ``rng`` unused: a closed form)."""
        from scipy.stats import beta

        lvl, node = backoff_index(tree)
        d, r = tree.depth, tree.child_card
        lo, hi = np.zeros((len(lvl), r)), np.ones((len(lvl), r))
        seen = lvl == d
        a = tree.levels[d].counts.astype(np.float64)[node[seen]] + self.level_alpha[d]
        b = a.sum(axis=1, keepdims=True) - a
        tail = (1.0 - level) / 2.0
        lo[seen], hi[seen] = beta.ppf(tail, a, b), beta.isf(tail, a, b)
        return lo, hi


def _mestimate_posterior(level_alpha: list[float]) -> MEstimatePosterior:
    return MEstimatePosterior(np.array(level_alpha))


def _vertex_sd(levels: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    r""":math:`\sqrt{p(1-p)}` around every node above the leaves: the sd of a
    configuration absent below it, whose interval is ``[0, 1]`` (the largest sd of a
    probability of mean ``p``)."""
    return tuple(np.sqrt(np.clip(p * (1.0 - p), 0.0, None)) for p in levels[:-1])


@functools.lru_cache(maxsize=4096)
def _level_alphas(iss: float, r: int, cards: tuple[int, ...]) -> list[float]:
    """:math:`iss / (r q_i)` for every level ``i`` (``q_i`` the product of the first
    ``i`` cardinalities), as Python floats."""
    out, q = [iss / r], 1
    for c in cards:
        q *= c
        out.append(iss / (r * q))
    return out


@functools.lru_cache(maxsize=1024)
def _prior_sd(r: int, total: float) -> np.ndarray:
    r"""The sds of the prior :math:`\mathrm{Dir}(total / r, ...)` of an unseen configuration
    (one row; shared: read only)."""
    out = _dirichlet_sd(np.full((1, r), 1.0 / r), np.array([[total]]))
    out.flags.writeable = False
    return out


@register_estimator
class MEstimate(Estimator):
    r"""m-estimates with back-off (Petitjean et al. 2018, eq. 16 and Sec. 6.1).

    .. math:: \hat p(x \mid \pi) = \frac{n(x, \pi) + m / r}{n(\pi) + m}

    at every tree node.  A parent configuration with no data backs off to the
    deepest ancestor in the tree that has data (``counts(x4, x0, x3) = 0`` gives
    :math:`\hat p(x_4 \mid x_0)`), which the paper shows m-estimates need to be
    competitive.

    Uncertainty: the Dirichlet posterior its own pseudo-counts imply.  The m-estimate
    is the posterior mean of the model in which every tree node's vector is an
    independent draw :math:`\theta_c \sim \mathrm{Dir}(m/r, \dots, m/r)`; given the
    counts, :math:`\theta_c \mid n \sim \mathrm{Dir}(n_c + m/r)`, so the sd of an entry
    is :math:`\sqrt{p(1-p)/(n_c + m + 1)}` and its interval the exact Beta marginal's
    quantiles (for a binary child and ``m = 1`` the Jeffreys interval of a proportion,
    Brown, Cai and DasGupta 2001, Sec. 4.1.2).  A configuration absent from the data has
    the interval ``[0, 1]`` and the sd :math:`\sqrt{p(1-p)}` around its back-off
    estimate ``p`` (the data say nothing about it); its draws (queries,
    ``sample_parameters``) are the prior of its own strength ``m`` centred on the
    deepest existing ancestor ``a``'s posterior, :math:`\theta_y \sim
    \mathrm{Dir}(m\,\phi)`, :math:`\phi \sim \mathrm{Dir}(n_a + m/r)`, whose mean is the
    back-off estimate (:class:`MEstimatePosterior`).  Measured on data sampled from
    known networks (``benchmarks/bench_coverage.py``, insurance, 200 and 2000 rows, two
    seeds), 90% intervals of configurations with rows cover 0.88-0.95; the bootstrap
    over rows this replaced covered 0.58 of all entries.  With ``m = 0`` the estimate is
    ``mle``'s and so are its intervals (Wilson).

    An expert network (``fit(prior=P, prior_weight=w)``) gives every tree node ``c``
    its prior probabilities :math:`P(x \mid c)` and weight, the pseudo-counts
    :math:`a_c(x)` of :mod:`~pybncsmooth.estimators.prior` in place of ``m / r`` (and
    ``m``): :math:`(n_c(x) + a_c(x)) / (n_c + A_c)`, :math:`A_c = w` with
    ``prior_per="configuration"`` (Cestnik's m-estimate with ``m = w`` and the expert's
    probabilities), :math:`w P(c)` with ``"network"``; the posterior is then
    :math:`\mathrm{Dir}(n_c + a_c)` (an unseen configuration :math:`\mathrm{Dir}(A_y\,\phi)`
    around its ancestor's, as ``bayes`` with the same prior).
    """

    name = "mestimate"
    params = (Param("m", "float", 1.0, "pseudo-counts spread evenly over the child's levels"),)
    prior_role = "every tree node's prior probabilities and weight: (n_c(x) + a_c(x)) / (n_c + A_c)"
    prior_replaces = ("m",)

    def estimate(self, tree: ContextTree) -> TreeEstimate:
        prior = self.node_prior(tree)
        if prior is not None:
            return _mestimate_with_prior(tree, prior)
        return self.estimate_all({tree.child: tree})[tree.child]

    def estimate_all(self, trees: Mapping[str, ContextTree], *, domain: str | None = None) -> dict[str, TreeEstimate]:
        """Every tree at once (their levels stacked: the same numbers as one at a time); a
        node with an expert's prior by :func:`_mestimate_with_prior`."""
        out = {n: self.estimate(t) for n, t in trees.items() if self.node_prior(t) is not None}
        for st in stack_levels({n: t for n, t in trees.items() if n not in out}):
            n = st.counts
            tot = n.sum(axis=1, keepdims=True) + self.m
            with np.errstate(invalid="ignore", divide="ignore"):  # m = 0 and a tree without rows: refused below
                p = (n + self.m / st.r) / tot
            sds = _StackSds(st._replace(trees=[], counts=None), [[self.m / st.r] * (len(b) - 1) for b in st.bounds],
                            p, tot) if self.m > 0 else None
            for k, (name, tree, cut) in enumerate(zip(st.names, st.trees, level_slices(st))):
                if self.m == 0 and not n[st.bounds[k][0]].any():
                    raise DataError(f"node {tree.child!r} has no complete rows and m = 0")
                levels = unstack(st, k, p)
                if sds is None:
                    out[name] = TreeEstimate._closed_form(levels, "backoff", posterior=self._proportions())
                    continue
                out[name] = DeferredEstimate.deferred(levels, "backoff", {
                    "sd": (sds.levels, cut), "unseen_sd": (_vertex_sd, levels),
                    "posterior": (_mestimate_posterior, [self.m / st.r] * len(levels))},
                    fallback_sd=_prior_sd(st.r, self.m))
        return {name: out[name] for name in trees}

    def domain_leaves(self, tree: ContextTree, pooled: TreeEstimate) -> TreeEstimate:
        """A multi-domain fit pools the domains as it did before the m-estimate had a
        posterior: from the pooled estimate's means alone (no fresh-configuration prior
        from its sds), and without a posterior (its uncertainty is not offered there, as
        for the other estimators without one)."""
        bare = TreeEstimate(pooled.probs, pooled.unseen, dict(pooled.info), fallback=pooled.fallback,
                            fallback_from=pooled.fallback_from)
        return super().domain_leaves(tree, bare)

    def _proportions(self) -> ProportionPosterior:
        """``m = 0``: the estimate is ``mle``'s, and so is its uncertainty (Wilson)."""
        return ProportionPosterior(self.name, self.hyperparameters(), "backoff", self)

    def estimate_flat(self, flat: FlatTrees) -> FlatEstimates | None:
        """:meth:`estimate_all` on the counting's flat arrays, every tree at once (``None``
        with a prior network, or with ``m = 0`` and a tree node without rows)."""
        if self.network_prior is not None:
            return None
        rows = FlatRows(flat)
        if self.m == 0:
            if (rows.total == 0).any():
                return None
            p = rows.ratio(0.0, rows.total)
            return FlatEstimates(flat, lambda j: TreeEstimate._closed_form(flat.level_views(p, j), "backoff",
                                                                           posterior=self._proportions()))
        m = self.m
        tot = rows.total + m
        p = rows.ratio(m / rows.r, tot)
        sd = LazyCells(flat, lambda: cellwise(flat, stacked_sd, (p,), (tot,)))

        def make(j: int) -> TreeEstimate:
            r = int(flat.rcard[j])
            levels = flat.level_views(p, j)
            return DeferredEstimate.deferred(levels, "backoff", {
                "sd": deferred_args(sd, j), "unseen_sd": (_vertex_sd, levels),
                "posterior": (_mestimate_posterior, [m / r] * len(levels))}, fallback_sd=_prior_sd(r, m))

        return FlatEstimates(flat, make)
