"""Queries of a :class:`~pybncsmooth.FittedNetwork`: P(targets | evidence), MAP states
and forward sampling."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError
from ..validation import check_int, check_random_state
from .query.queries import map_query as _map_query
from .query.queries import query as _query

__all__ = ["QueriesMixin"]


class QueriesMixin:
    """``query``, ``map_query``, ``sample`` (part of :class:`FittedNetwork`)."""

    def query(
        self,
        targets: str | Sequence[str],
        evidence: Mapping[str, Any] | pd.DataFrame | None = None,
        *,
        interval: float | None = None,
        draws: int = 1000,
        random_state: Any = None,
        domain: Any = None,
        on_unseen_domain: str | None = None,
        method: str = "exact",
        samples: int = 20_000,
        max_factor_bytes: int | None = None,
    ) -> pd.Series | pd.DataFrame:
        r"""Exact posterior :math:`P(X_T \mid x_E)` of one target or the joint of several.

        .. math:: P(x_T \mid x_E) \propto \sum_{x_H} \prod_v P(x_v \mid x_{\pi_v}),

        the hidden variables :math:`H` summed out by variable elimination (Koller and
        Friedman 2009, Ch. 9) after pruning the nodes that cannot matter (barren nodes,
        and those d-separated from the targets by the evidence); the plan is compiled
        once per pattern of targets and evidence variables and cached on the network.
        The tables are the posterior means :meth:`cpt` shows (unseen parent
        configurations filled by the estimator's back-off).  See
        :mod:`pybncsmooth.model.query.queries`.

        Parameters
        ----------
        targets:
            A node, or a list of nodes for their joint posterior.
        evidence:
            ``{variable: level}`` (a missing value leaves the variable unobserved;
            a value names a level by the package's one rule,
            :mod:`pybncsmooth.data.levels`: ``1978`` names ``'1978'``, ``'3'`` names
            ``3``; a value that is not a level raises
            :class:`~pybncsmooth.errors.UnseenLevelError`; a network fitted with
            ``discretize=`` takes numbers and its bin labels), or a data frame with one
            query per row, its columns nodes (NaN: unobserved in that row).  ``None``:
            no evidence.  Evidence d-separated from the targets does not change the
            answer, but evidence of probability zero is refused wherever its zero lies.
        interval:
            Add the equal-tailed credible interval of each probability at this level
            (e.g. ``0.9``), from ``draws`` parameter sets drawn from the posterior of
            the CPTs given the training data (``random_state`` makes it
            reproducible); for the estimators without a posterior (``mle``,
            ``mestimate``, ``hls``, ``hgs``, ``mbranch``) ``draws`` replicates of a
            bootstrap over rows, a percentile bootstrap interval
            (``attrs["interval"]`` says which).  Tables read from a file raise
            :class:`~pybncsmooth.errors.StatisticUnavailableError`.
        domain:
            Multi-domain fits: the domain to query (named as :meth:`for_domain`
            names it).  No domain (``None``) and a label
            unseen in training are answered by the population-level tables, with an
            :class:`~pybncsmooth.errors.UnseenDomainWarning`; ``on_unseen_domain="error"``
            (default: the fit's option) refuses them.
        method:
            ``"exact"`` (default): variable elimination, every factor within
            ``max_factor_bytes``; a query that would need a larger factor raises
            :class:`~pybncsmooth.errors.FactorBudgetError` naming the option.
            ``"approximate"``: likelihood weighting from ``samples`` weighted samples
            (``random_state`` makes it reproducible; see
            :mod:`pybncsmooth.model.query.approximate`), answered whatever the network's
            width, with its Monte Carlo error.
        max_factor_bytes:
            The memory budget of one factor, in bytes (default: the fit's option
            ``max_factor_bytes``, by default an eighth of physical memory).

        Returns
        -------
        One target and a mapping: a Series named ``"prob"`` indexed by the target's
        levels (a ``CategoricalIndex`` named after it); several targets: indexed by
        their joint states (a ``MultiIndex``).  With ``interval=``: a frame with
        columns ``prob``, ``lower``, ``upper`` on that index.  A frame of evidence: a
        frame with one row per query (the evidence's index) and one column per
        level or joint state; with ``interval=``, columns ``(stat, state)``.
        ``method="approximate"``: a frame with columns ``prob`` (the estimate) and
        ``se`` (its Monte Carlo standard error) on the states (a frame of evidence:
        columns ``(stat, state)``), the effective sample size in ``attrs["ess"]``.

        Evidence with probability zero raises
        :class:`~pybncsmooth.errors.ImpossibleEvidenceError` (naming the rows).
        """
        return _query(self, targets, evidence, interval=interval, draws=draws, random_state=random_state,
                      domain=domain, on_unseen_domain=on_unseen_domain, method=method, samples=samples,
                      max_factor_bytes=max_factor_bytes)

    def variance_shares(
        self,
        targets: str | Sequence[str],
        evidence: Mapping[str, Any] | None = None,
        *,
        draws: int = 4000,
        random_state: Any = None,
        domain: Any = None,
        on_unseen_domain: str | None = None,
    ) -> pd.DataFrame:
        r"""What drives the uncertainty of a query: the share of the posterior variance of
        :math:`P(x_T \mid x_E)` owed to each node's CPT, the first-order Sobol index
        :math:`\mathrm{Var}(E[q \mid \theta_v]) / \mathrm{Var}(q)` (Sobol 2001), estimated
        by pick-freeze from two sets of ``draws`` posterior draws (Saltelli et al. 2010):
        see :mod:`pybncsmooth.model.query.variance`.  More data on a node with a large
        share sharpens the answer most.

        ``targets``, ``evidence`` (a mapping: one query), ``domain`` as in :meth:`query`.
        Returns a frame: one row per node the query's elimination uses (the others have
        no share), one column per state of the targets, shares in ``[0, 1]``; ``attrs``:
        ``se`` (their Monte Carlo standard errors, the jackknife's over groups of the
        draws: the shares spread across seeds as these say), ``variance`` (of each
        state's probability), ``unexplained`` (``1 -`` the sum: interactions between
        tables; Monte Carlo error can take it below 0), ``unexplained_se`` (its Monte
        Carlo standard error), ``answer`` and ``draws``.  The default 4,000 draws put
        the error of a share near 0.5 at about 0.02 on asia's queries.  The estimators without a posterior share their
        bootstrap's variance (:meth:`query` with ``interval=``)."""
        from .query.variance import variance_shares

        return variance_shares(self, targets, evidence, draws=draws, random_state=random_state, domain=domain,
                               on_unseen_domain=on_unseen_domain)

    def query_summary(
        self,
        targets: str | Sequence[str],
        evidence: Mapping[str, Any] | None = None,
        *,
        alpha: float = 0.1,
        draws: int = 4000,
        random_state: Any = None,
        domain: Any = None,
    ) -> Any:
        """A query as a statsmodels ``Summary``: its answer with the ``1 - alpha``
        interval (:meth:`query`), the shares of its variance by node
        (:meth:`variance_shares`), and, for the node with the largest share, its parent
        configurations by the query's posterior weight on them, with their training
        rows (where more rows would sharpen the answer).  The evidence and ``domain``
        are read as :meth:`query` reads them (a multi-domain fit without ``domain=``:
        the population's tables, with its warning); the shares and the unexplained
        share come with their Monte Carlo standard errors ("mc se")."""
        from .query.summary import query_summary

        return query_summary(self, targets, evidence, alpha=alpha, draws=draws, random_state=random_state,
                             domain=domain)

    def map_query(
        self,
        targets: str | Sequence[str],
        evidence: Mapping[str, Any] | pd.DataFrame | None = None,
        *,
        domain: Any = None,
        on_unseen_domain: str | None = None,
        max_factor_bytes: int | None = None,
    ) -> Any:
        r"""The most probable joint state of ``targets`` given ``evidence``:
        :math:`\hat x_T = \arg\max_{x_T} P(x_T \mid x_E)`, the other hidden variables
        summed out (marginal MAP, Koller and Friedman 2009, Sec. 13.1; pgmpy's
        ``VariableElimination.map_query`` answers the same question).  Ties go to the
        first joint state in level order.

        ``evidence``, ``domain``, ``on_unseen_domain`` and ``max_factor_bytes`` as in
        :meth:`query`.  Returns, for a mapping, a
        :class:`~pybncsmooth.model.query.queries.MapResult` ``(state, prob)``: ``state`` a dict
        ``{target: level}``, ``prob`` its posterior probability; for a frame of
        evidence, a frame with one row per query, a Categorical column per target and
        the column ``prob``.
        """
        return _map_query(self, targets, evidence, domain=domain, on_unseen_domain=on_unseen_domain,
                          max_factor_bytes=max_factor_bytes)

    def sample(self, n: int, random_state: Any = None, *, domain: Any = None) -> pd.DataFrame:
        """Draw ``n`` rows by forward (ancestral) sampling in topological order.

        ``random_state`` (an int, a ``numpy.random.Generator`` or ``None``) makes the
        draw reproducible.  Multi-domain networks need ``domain=`` (a level, named as
        :meth:`for_domain` names it: 1978 is the domain ``'1978'`` of text labels).
        Columns are pandas Categoricals in node order.
        """
        n = check_int("n", n, low=0)
        check_random_state(random_state)
        if self.domain is not None:
            if domain is None:
                raise DataError("pass domain= (a level of the domain variable) to sample a multi-domain network")
            return self.for_domain(domain).sample(n, random_state)
        rng = np.random.default_rng(random_state)
        codes: dict[str, np.ndarray] = {}
        for node in self.dag.topological_order():
            pa = self.parents(node)
            P = np.empty((n, len(pa)), dtype=np.int64)
            for j, p in enumerate(pa):
                P[:, j] = codes[p]
            probs = self._cpds[node].probs(P)
            cum = np.cumsum(probs, axis=1)
            u = rng.random(n) * cum[:, -1]
            x = (cum < u[:, None]).sum(axis=1)
            codes[node] = np.minimum(x, probs.shape[1] - 1)
        return pd.DataFrame(
            {v: pd.Categorical.from_codes(codes[v], categories=list(self.schema[v])) for v in self.nodes}
        )
