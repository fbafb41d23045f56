r"""Frequentist uncertainty for the estimators without a posterior: a bootstrap over rows
(``hgs``, ``mbranch``, ``hls``; ``mle``'s draws) and proportion intervals (``mle``).

**The bootstrap** (Efron and Tibshirani 1993, Ch. 6 and 13).  A replicate is the
estimator applied to ``N`` rows drawn with replacement from the ``N`` rows of the
training data.  A node's estimate depends on the rows only through its context tree's
leaf counts, so a replicate is drawn directly as counts: the leaves' counts
:math:`\mathrm{Mult}(N, n / N)` over all their cells, which is exactly the count table of
a resample of the rows (fractional counts, from row weights or EM's expected counts,
have no rows to resample: their cells are drawn :math:`\mathrm{Gamma}(n, 1)` and scaled
to the same total, the Bayesian bootstrap of Rubin (1981) aggregated by cell).  The
closed-form estimators (``mle``, ``mbranch``) evaluate all replicates at
once on the stacked counts (:meth:`~.base.Estimator.batch_probs`); the others refit each
replicate (``hgs``'s weights and ``hls``'s coefficients are learned again, as a
bootstrap of the estimator must).  A context the resample misses is answered as the
estimator answers a configuration absent from the data (back-off to the deepest
ancestor the resample has, or its ``unseen`` rule).  The likelihood of complete data
factorises over the nodes, so the nodes' estimates are asymptotically independent and
each node is resampled on its own; a draw of a whole parameter set
(``sample_parameters``) takes one replicate of every node.

**No intervals from it.**  The replicates are the estimator's sampling variability, a
statement about the estimator and not about the truth: a smoothed estimate is biased
toward its back-off, and a level without rows in its configuration cannot move in any
replicate.  Measured against known networks (``benchmarks/bench_coverage.py``,
insurance, 2000 rows) its 90% percentile intervals covered 0.58 (``mestimate``), 0.61
(``hgs``), 0.69 (``mbranch``) and 0.52 (``hls``) of the true entries, 0.33-0.46 in
configurations of 1-19 rows; the Dirichlet posterior their pseudo-counts imply (the
back-off estimate as a known centre) covered 0.60-0.79 there for ``hgs``, ``mbranch``
and ``hls`` (0.90-0.92 for ``mestimate``, which now reports it).  So ``stat="sd"``,
``cpt_frame(interval=)`` and query intervals of these estimators raise
:class:`~pybncsmooth.errors.StatisticUnavailableError` naming the estimators whose
intervals are calibrated (:data:`UNCALIBRATED`); ``sample_parameters`` still draws
the replicates (what the draws are: ``draw_kind``).

**mle**: the interval of an entry with rows is the Wilson score interval of its
proportion (statsmodels' ``proportion_confint(method="wilson")``; Wilson 1927, Brown,
Cai and DasGupta 2001): per entry, as every other interval the package reports (the
multinomial intervals of Goodman (1965) or Sison and Glaz (1995) are simultaneous over
a configuration's levels, wider per entry, and so over-cover a statement about one
entry); it keeps its level near nominal down to a few rows and never leaves
``[0, 1]``, where the Wald interval collapses at proportions 0 and 1.  Its sd is the
binomial standard error :math:`\sqrt{p(1 - p)/n}`.  Draws (queries) are the bootstrap's.
"""

from __future__ import annotations

import json
import warnings
from typing import Any, ClassVar

import numpy as np

from ..counting.context_tree import ContextTree
from ..errors import ConvergenceWarning, StatisticUnavailableError
from .posterior import TreePosterior, _chunks, backoff_index, register_posterior

__all__ = ["BootstrapPosterior", "ProportionPosterior", "resample_leaves", "level_counts", "fill_empty",
           "UNCALIBRATED", "CALIBRATED"]

#: the estimators whose sds and intervals are calibrated against known networks (``bayes``
#: with its BDeu prior is not: :class:`~pybncsmooth.estimators.closed.classical.BDeuPosterior`)
CALIBRATED = ("hdp", "hmd", "hls-bayes", "mestimate", "mle")
#: why a bootstrap gives no sd or interval (see the module docstring)
UNCALIBRATED = ("its only uncertainty is a bootstrap over rows, a statement about the estimator and not about the "
                "truth: on data sampled from known networks its 90% intervals covered 0.52-0.69 of the true "
                "entries; calibrated sds and intervals: " + ", ".join(repr(m) for m in CALIBRATED)
                + " (sample_parameters still draws the bootstrap's replicates)")
#: ``make_estimator``, set by the estimators' registry (which lies above this module)
ESTIMATOR_FACTORY: list[Any] = []


def resample_leaves(counts: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, L, r)`` bootstrap replicates of the leaf counts ``(L, r)`` (see the module
    docstring: multinomial for whole counts, cell-wise gamma for fractional ones)."""
    c = np.asarray(counts)
    total = float(c.sum())
    if c.dtype.kind in "iu" or np.array_equal(c, np.round(c)):
        flat = rng.multinomial(int(round(total)), c.ravel() / total, size=n)
        return flat.reshape(n, *c.shape).astype(np.float64)
    g = rng.standard_gamma(np.broadcast_to(c, (n, *c.shape)).astype(np.float64))
    g *= total / np.maximum(g.sum(axis=(1, 2), keepdims=True), 1e-300)
    return g


def level_counts(tree: ContextTree, leaves: np.ndarray) -> list[np.ndarray]:
    """Every level's counts ``(k, m_i, r)`` from stacked leaf counts ``(k, L, r)``: each
    node the sum of its children (a tree's levels list the children of a node together)."""
    out = [leaves]
    for i in range(tree.depth - 1, -1, -1):
        starts = tree.children_slices(i)[:-1]
        out.insert(0, np.add.reduceat(out[0], starts, axis=1))
    return out


def fill_empty(tree: ContextTree, probs: list[np.ndarray], counts: list[np.ndarray], unseen: str) -> list[np.ndarray]:
    """Replicates' probabilities with every node the resample left empty answered as the
    estimator answers an absent configuration: the parent's value (back-off), top-down,
    or ``1/r`` under the ``"uniform"`` rule."""
    r = tree.child_card
    for i in range(1, len(probs)):
        empty = counts[i].sum(axis=2) <= 0
        if empty.any():
            if unseen == "uniform":
                probs[i][empty] = 1.0 / r
            else:
                parent = np.broadcast_to(tree.levels[i].parent, empty.shape)
                rows = np.nonzero(empty)
                probs[i][rows] = probs[i - 1][rows[0], parent[rows]]
    return probs


def _prefix_codes(tree: ContextTree, level: int) -> np.ndarray:
    """The full parent codes of the nodes of ``level``, ``-1`` below it (for ``find``)."""
    cfg = tree.node_configs(level)
    out = np.full((len(cfg), tree.depth), -1, dtype=np.int64)
    out[:, :level] = cfg
    return out


@register_posterior
class BootstrapPosterior(TreePosterior):
    """Bootstrap replicates of one node's estimate (see the module docstring), drawn on
    request: ``method`` and ``params`` rebuild the estimator, ``unseen`` is its rule for
    an absent configuration."""

    kind = "bootstrap"
    interval_kind: ClassVar[str] = "bootstrap"
    #: what a draw is (queries' intervals)
    draw_kind: ClassVar[str] = "bootstrap"

    def __init__(self, method: str, params: dict[str, Any], unseen: str = "backoff", estimator: Any = None) -> None:
        self.method = str(method)
        self.params = dict(params)
        self.unseen = str(unseen)
        self._estimator = estimator

    def estimator(self) -> Any:
        """The estimator the replicates are fitted with (rebuilt by the registry's
        factory for a posterior read from a file)."""
        if self._estimator is None:
            self._estimator = ESTIMATOR_FACTORY[0](self.method, **self.params)
        return self._estimator

    def use_estimator(self, estimator: Any) -> None:
        """Fit the replicates with ``estimator`` (a network read back from a file gives its
        estimator with the prior it carries, which the method and hyperparameters lack)."""
        self._estimator = estimator

    def replicates(self, tree: ContextTree, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """Per tree level, ``(n, m_i, r)``: the estimate of every node of ``tree`` in ``n``
        replicates."""
        est = self.estimator()
        leaves = resample_leaves(tree.levels[-1].counts, n, rng)
        counts = level_counts(tree, leaves)
        batch = est.batch_probs(tree, counts)
        if batch is not None:
            return fill_empty(tree, batch, counts, self.unseen)
        return self._refit(est, tree, leaves)

    def _refit(self, est: Any, tree: ContextTree, leaves: np.ndarray) -> list[np.ndarray]:
        """Replicates of an estimator without a closed form: each one fitted anew on the
        tree of its resampled counts; every original node then takes the replicate's
        answer for its context."""
        configs = tree.leaf_table()[0]
        prefixes = [_prefix_codes(tree, i) for i in range(tree.depth + 1)]
        out = [np.empty((len(leaves), len(lev.value), tree.child_card)) for lev in tree.levels]
        for b, c in enumerate(leaves):
            keep = c.sum(axis=1) > 0
            t = ContextTree.from_leaves(tree.child, tree.parents, tree.child_card, tree.parent_cards,
                                        configs[keep], c[keep])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                fit = est.estimate(t)
            for i, codes in enumerate(prefixes):
                level, node, unseen = t.find(codes)
                vals = np.concatenate(fit.probs)[np.cumsum([0, *t.level_sizes()])[level] + node]
                if self.unseen == "uniform":
                    vals[unseen] = 1.0 / tree.child_card
                out[i][b] = vals
        return out

    def draw(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        lvl, node = backoff_index(tree)
        r, d = tree.child_card, tree.depth
        out = np.empty((n, len(lvl), r))
        uniform = (lvl < d) if self.unseen == "uniform" else np.zeros(len(lvl), dtype=bool)
        for lo, hi in _chunks(n, (len(lvl) + tree.n_nodes) * r):
            reps = self.replicates(tree, hi - lo, rng)
            for i in np.unique(lvl):
                rows = np.flatnonzero(lvl == i)
                out[lo:hi, rows] = reps[i][:, node[rows]]
            out[lo:hi, uniform] = 1.0 / r
        return out

    #: whether sds and intervals, and query intervals, are offered (see the module docstring)
    calibrated: ClassVar[bool] = False
    query_calibrated: ClassVar[bool] = False

    def refusal(self, stat: str, node: str | None = None) -> StatisticUnavailableError:
        """The error a request for ``stat`` raises (see :data:`UNCALIBRATED`)."""
        return StatisticUnavailableError(stat, self.method, node, reason=UNCALIBRATED)

    def level_sds(self, tree: ContextTree) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """Refused: see :data:`UNCALIBRATED`."""
        raise self.refusal("standard deviation", tree.child)

    def entry_interval(self, tree: ContextTree, level: float, draws: int, rng: np.random.Generator
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Refused: see :data:`UNCALIBRATED`."""
        raise self.refusal("interval", tree.child)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"method": np.array(self.method), "params": np.array(json.dumps(self.params, default=str)),
                "unseen": np.array(self.unseen)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "BootstrapPosterior":
        return cls(str(arrays["method"]), json.loads(str(arrays["params"])), str(arrays["unseen"]))


@register_posterior
class ProportionPosterior(BootstrapPosterior):
    """``mle``: Wilson score intervals and binomial standard errors of the entries,
    bootstrap draws (see the module docstring)."""

    kind = "proportion"
    interval_kind: ClassVar[str] = "confidence"
    calibrated: ClassVar[bool] = True
    query_calibrated: ClassVar[bool] = True

    def level_sds(self, tree: ContextTree) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """:math:`\\sqrt{p(1-p)/n}` at every node; :math:`\\sqrt{p(1-p)}` for an absent
        configuration below a node."""
        sds, unseen = [], []
        for lev in tree.levels:
            c = lev.counts.astype(np.float64)
            n = c.sum(axis=1, keepdims=True)
            p = c / np.where(n > 0, n, 1.0)
            sds.append(np.sqrt(p * (1 - p) / np.where(n > 0, n, 1.0)))
            unseen.append(np.sqrt(p * (1 - p)))
        return tuple(sds), tuple(unseen[:-1])

    def entry_interval(self, tree: ContextTree, level: float, draws: int, rng: np.random.Generator
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Wilson score intervals (statsmodels) of the observed configurations' entries;
        ``[0, 1]`` elsewhere (``draws`` and ``rng`` unused: a closed form)."""
        from statsmodels.stats.proportion import proportion_confint

        lvl, node = backoff_index(tree)
        d = tree.depth
        lo, hi = np.zeros((len(lvl), tree.child_card)), np.ones((len(lvl), tree.child_card))
        seen = lvl == d
        c = tree.levels[d].counts.astype(np.float64)[node[seen]]
        n = np.broadcast_to(c.sum(axis=1, keepdims=True), c.shape)
        a, b = proportion_confint(c, n, alpha=1.0 - level, method="wilson")
        lo[seen], hi[seen] = np.clip(a, 0.0, 1.0), np.clip(b, 0.0, 1.0)
        return lo, hi
