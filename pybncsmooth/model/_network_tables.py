"""The tables of a :class:`~pybncsmooth.FittedNetwork`: dense CPTs in bnlearn's layout,
their labelled frames with credible intervals, posterior draws of whole parameter sets,
and comparison of two networks' tables."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..data.schema import Schema
from ..errors import DataError, StatisticUnavailableError
from ..validation import check_draws, check_int, check_probability
from .cpd import DEFAULT_MAX_CELLS
from .draws import check_calibrated, entry_intervals, interval_kind

__all__ = ["TablesMixin"]


class TablesMixin:
    """CPTs, their frames and intervals, posterior draws (part of :class:`FittedNetwork`)."""

    def cpt(self, node: str, *, stat: str = "mean", max_cells: int = DEFAULT_MAX_CELLS) -> np.ndarray:
        """Dense CPT of ``node`` with axes ``(node, *parents)`` in level order (bnlearn's
        layout); a multi-domain fit adds the domain as the last axis, as bnlearn's ``hdir``.

        Parent configurations absent from the data are filled by the estimator's
        rule (back-off to the deepest observed ancestor, uniform for ``bayes``, the
        population-level CPT for domain-pooled ``hmd``).

        ``stat="sd"``: the standard deviation of every entry instead of the mean:
        the posterior sd (``hdp``, ``hmd``, ``hls-bayes`` and their multi-domain fits,
        ``bayes`` with an expert's prior; an unseen parent configuration's is the
        hierarchy's predictive spread around the node it backs off to), the binomial
        standard error for ``mle`` (an unseen configuration's :math:`\\sqrt{m(1-m)}`:
        the data say nothing about it), the implied Dirichlet posterior's for
        ``mestimate``.  ``bayes`` with its BDeu prior (whose exact posterior's
        intervals covered 0.44-0.79 of the truths of thin configurations:
        :class:`~pybncsmooth.estimators.closed.classical.BDeuPosterior`), ``hls``, ``hgs``,
        ``mbranch`` (whose only uncertainty, a bootstrap over rows, does not cover the
        truth: :mod:`pybncsmooth.estimators.bootstrap`), tables read from BIF/DSC/NET
        and multi-domain fits of the frequentist estimators raise
        :class:`~pybncsmooth.errors.StatisticUnavailableError` naming the method and why.
        """
        cpd = self.cpd(node)
        max_cells = check_int("max_cells", max_cells, low=0)
        if stat == "sd":
            if not cpd.has_sd:
                raise StatisticUnavailableError("standard deviation", self.method, node)
            check_calibrated(self, "standard deviation", [node])
        t = cpd.table(max_cells, stat)
        if self._prefix:
            k = len(self._prefix)
            t = np.moveaxis(t, list(range(1, 1 + k)), list(range(t.ndim - k, t.ndim)))
        return t

    def table_dims(self, node: str) -> list[str]:
        """The axes of :meth:`cpt`: the node, its parents, and the domain (multi-domain fits)."""
        return [node] + self.parents(node) + list(self._prefix)

    def cpt_frame(
        self,
        node: str,
        *,
        wide: bool = False,
        interval: float | None = None,
        draws: int = 1000,
        random_state: Any = 0,
        max_cells: int = DEFAULT_MAX_CELLS,
    ) -> pd.DataFrame:
        """The CPT of ``node`` as a labelled data frame.

        Tidy (default): one row per cell with columns ``node, *parents, "prob"``,
        the node varying fastest (as R's ``as.data.frame()`` of a ``bn.fit`` table).
        ``wide=True``: one row per parent configuration (a MultiIndex) and one
        column per level of ``node``.

        ``interval=0.95`` (tidy only) adds the columns ``sd``, ``lower`` and
        ``upper``: the standard deviation of each entry and its equal-tailed
        interval, a statement about the true value (a 90% interval covers it about
        90% of the time when the data come from the model, unseen parent
        configurations included: see :mod:`pybncsmooth.model.draws`), and says its
        kind in ``attrs["interval"]``.  ``"credible"`` for the Bayesian estimators:
        for ``bayes`` with an expert's prior and ``mestimate`` the exact Beta marginal
        of the Dirichlet posterior; for the
        hierarchical ones (``hdp``, ``hmd``, ``hls-bayes``, domain fits) quantiles of
        ``draws`` joint posterior draws seeded by ``random_state``.  Such posteriors
        can be very skewed (a level never observed along a configuration's path has
        most of its mass near 0), and then the mean can lie outside the
        equal-tailed interval.  ``"confidence"`` for ``mle``: Wilson score intervals,
        ``[0, 1]`` for a parent configuration without rows.  ``draws`` is at least
        ``2 / (1 - interval)`` (20 for a 90% interval: one draw beyond each end;
        :func:`~pybncsmooth.validation.check_draws`, the check of every entry point).
        ``bayes`` with its BDeu prior (its exact posterior hugs a thin configuration's
        frequencies: :class:`~pybncsmooth.estimators.closed.classical.BDeuPosterior`),
        ``hgs``, ``mbranch``, ``hls`` (a bootstrap over rows, which does not cover the truth:
        :mod:`pybncsmooth.estimators.bootstrap`) and tables read from a file raise
        :class:`~pybncsmooth.errors.StatisticUnavailableError`.
        """
        t = self.cpt(node, max_cells=max_cells)
        dims = self.table_dims(node)
        if interval is not None:
            if wide:
                raise ValueError("interval= needs the tidy layout (wide=False)")
            interval = check_probability("interval", interval)
            draws = check_draws(draws, interval)
            check_calibrated(self, "interval", [node])
            sd = self.cpt(node, stat="sd", max_cells=max_cells)
        if wide:
            m = np.moveaxis(t, 0, -1).reshape(-1, t.shape[0])
            if len(dims) > 1:
                idx = pd.MultiIndex.from_product(
                    [pd.CategoricalIndex(self.schema[d], categories=self.schema[d], name=d) for d in dims[1:]]
                )
            else:
                idx = pd.RangeIndex(1)
            cols = pd.CategoricalIndex(self.schema[node], categories=self.schema[node], name=node)
            return pd.DataFrame(m, index=idx, columns=cols)
        shape = t.shape
        grids = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
        data = {}
        for d, g in zip(dims, grids):
            codes = g.reshape(-1, order="F")
            data[d] = pd.Categorical.from_codes(codes, categories=list(self.schema[d]))
        data["prob"] = t.reshape(-1, order="F")
        if interval is not None:
            sdv = sd.reshape(-1, order="F")
            data["sd"] = sdv
            lo, hi = entry_intervals(self, node, t, sd, float(interval), draws, random_state)
            data["lower"], data["upper"] = lo.reshape(-1, order="F"), hi.reshape(-1, order="F")
        out = pd.DataFrame(data)
        if interval is not None:
            out.attrs.update(interval=interval_kind(self, node), level=float(interval))
        return out

    def max_abs_diff(self, other: Any) -> float:
        """Largest absolute difference between the CPT entries of two networks
        with the same nodes, parents and levels."""
        if not isinstance(other, TablesMixin):
            raise DataError(f"max_abs_diff compares two fitted networks, not one with a {type(other).__name__}")
        if self.nodes != other.nodes and sorted(self.nodes) != sorted(other.nodes):
            raise DataError("the networks have different nodes")
        worst = 0.0
        for n in self.nodes:
            a = self.cpt(n)
            b = _align_table(other, n, self.parents(n), self.schema)
            worst = max(worst, float(np.max(np.abs(a - b))))
        return worst

    def sample_parameters(self, n: int, random_state: Any = None) -> list[Any]:
        """``n`` networks whose CPTs are joint draws from the posterior of this fit's
        parameters (one draw of every node's table each; nodes independent, as the
        posterior factorises): exact Dirichlet draws for ``bayes``, the sampler's
        recorded states for ``hdp`` and ``hls-bayes``, the hyperparameters' posterior
        and the Dirichlet columns given them for ``hmd``; unseen parent
        configurations drawn from the hierarchy's predictive; for the estimators
        without a posterior (``mle``, ``mestimate``, ``hls``, ``hgs``, ``mbranch``)
        replicates of a bootstrap over rows.  Their tables are dense (the networks
        answer every query a network read from a file does).  Tables read from a file
        raise :class:`~pybncsmooth.errors.StatisticUnavailableError`.
        See :mod:`pybncsmooth.model.draws`."""
        from .draws import sample_parameters

        return sample_parameters(self, n, random_state)

    def _posterior_tables(self, n: int, rng: np.random.Generator, nodes: Sequence[str] | None = None
                          ) -> dict[str, np.ndarray]:
        """For each node (of ``nodes``: those), ``(n, *cpt(node).shape)`` joint posterior
        draws of its table (draw ``k`` of every node is one parameter set; columns sum
        to 1); see :func:`pybncsmooth.model.draws.posterior_tables`."""
        from .draws import posterior_tables

        return posterior_tables(self, n, rng, nodes)


def _align_table(net: Any, node: str, parents: Sequence[str], schema: Schema) -> np.ndarray:
    """``net``'s CPT of ``node`` with its axes and levels in the order of ``parents``/``schema``."""
    t = net.cpt(node)
    dims = net.table_dims(node)
    want = [node] + list(parents) + list(net._prefix)
    if sorted(dims) != sorted(want):
        raise DataError(f"node {node!r} has parents {dims[1:]} in one network and {want[1:]} in the other")
    t = np.transpose(t, [dims.index(w) for w in want])
    for ax, v in enumerate(want):
        a, b = list(net.schema[v]), list(schema[v])
        if a != b:
            if sorted(map(str, a)) != sorted(map(str, b)):
                raise DataError(f"variable {v!r} has different levels in the two networks")
            pos = {str(l): i for i, l in enumerate(a)}
            t = np.take(t, [pos[str(l)] for l in b], axis=ax)
    return t

