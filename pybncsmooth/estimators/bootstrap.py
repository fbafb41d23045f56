r"""Frequentist uncertainty for the estimators without a posterior: a bootstrap over rows
(``mestimate``, ``hgs``, ``mbranch``, ``hls``) and proportion intervals (``mle``).

**The bootstrap** (Efron and Tibshirani 1993, Ch. 6 and 13).  A replicate is the
estimator applied to ``N`` rows drawn with replacement from the ``N`` rows of the
training data.  A node's estimate depends on the rows only through its context tree's
leaf counts, so a replicate is drawn directly as counts: the leaves' counts
:math:`\mathrm{Mult}(N, n / N)` over all their cells, which is exactly the count table of
a resample of the rows (fractional counts, from row weights or EM's expected counts,
have no rows to resample: their cells are drawn :math:`\mathrm{Gamma}(n, 1)` and scaled
to the same total, the Bayesian bootstrap of Rubin (1981) aggregated by cell).  The
closed-form estimators (``mle``, ``mestimate``, ``mbranch``) evaluate all replicates at
once on the stacked counts (:meth:`~.base.Estimator.batch_probs`); the others refit each
replicate (``hgs``'s weights and ``hls``'s coefficients are learned again, as a
bootstrap of the estimator must).  A context the resample misses is answered as the
estimator answers a configuration absent from the data (back-off to the deepest
ancestor the resample has, or its ``unseen`` rule).  The likelihood of complete data
factorises over the nodes, so the nodes' estimates are asymptotically independent and
each node is resampled on its own; a draw of a whole parameter set (queries,
``sample_parameters``) takes one replicate of every node.

Replicates are drawn when they are asked for (``draws`` of ``cpt_frame`` and ``query``,
``n`` of ``sample_parameters``), from the request's ``random_state``; ``stat="sd"`` is
the sd of :data:`SD_REPLICATES` replicates seeded by the node's name (the same numbers
at every call).  Equal-tailed intervals of an entry are the percentile intervals of its
replicates.

**Where no row was.**  A bootstrap says nothing about a parent configuration the data
never reached: every resample backs it off the same way, and the replicates' spread
would be its ancestor's.  Its interval is therefore ``[0, 1]`` and its sd
:math:`\sqrt{m(1 - m)}` (``m`` the back-off estimate: the largest sd of a probability
with that mean, a vector that may be any vertex of the simplex): the data's honest
statement.  Draws keep the estimator's back-off (a query's bootstrap interval is one of
the estimator's answer).

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
import zlib
from typing import Any, ClassVar

import numpy as np

from ..counting.context_tree import ContextTree
from ..errors import ConvergenceWarning
from .posterior import TreePosterior, _chunks, backoff_index, register_posterior

__all__ = ["BootstrapPosterior", "ProportionPosterior", "resample_leaves", "level_counts", "fill_empty",
           "SD_REPLICATES"]

#: replicates behind ``stat="sd"`` of a bootstrap
SD_REPLICATES = 200
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

    def level_sds(self, tree: ContextTree) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """Every node's sd over :data:`SD_REPLICATES` replicates (seeded by the node's
        name), and, above the leaves, an absent configuration's :math:`\\sqrt{m(1-m)}`
        around the node's own estimate ``m`` (the replicates' mean here)."""
        rng = np.random.default_rng([zlib.crc32(tree.child.encode()), SD_REPLICATES])
        reps = self.replicates(tree, SD_REPLICATES, rng)
        sds = tuple(np.ascontiguousarray(x.std(axis=0)) for x in reps)
        unseen = tuple(np.sqrt(np.clip(x.mean(axis=0) * (1 - x.mean(axis=0)), 0.0, None)) for x in reps[:-1])
        return sds, unseen

    def entry_interval(self, tree: ContextTree, level: float, draws: int, rng: np.random.Generator
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Equal-tailed ``level`` intervals of the dense table's entries (``(Q, r)`` each,
        configuration-major): percentiles of ``draws`` replicates, ``[0, 1]`` where no row
        was (see the module docstring)."""
        tail = (1.0 - level) / 2.0
        lo, hi = np.quantile(self.draw(tree, max(draws, 2), rng), [tail, 1.0 - tail], axis=0)
        return _nothing_seen(tree, lo, hi)

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


def _nothing_seen(tree: ContextTree, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``[0, 1]`` for the configurations absent from ``tree`` (rows of the dense table)."""
    absent = backoff_index(tree)[0] < tree.depth
    lo[absent], hi[absent] = 0.0, 1.0
    return lo, hi
