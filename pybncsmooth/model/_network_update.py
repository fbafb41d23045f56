r"""New rows for a fitted network without a refit (part of :class:`FittedNetwork`):
:meth:`UpdateMixin.update`, and what a fit keeps for it (:class:`FitState`).

The update itself runs in the fit pipeline (:mod:`pybncsmooth.pipeline.update`), which
the model layer may not import: the pipeline registers it when it is imported
(:func:`~pybncsmooth.model.fit_state.register_updater`), as the interop modules register
their file formats."""

from __future__ import annotations

from typing import Any

from ..options import Options
from .fit_state import FitState, updater

__all__ = ["UpdateMixin"]

class UpdateMixin:
    """``update`` (part of :class:`FittedNetwork`)."""

    #: what the fit kept for :meth:`update` (``None``: a network without EM state, fixed levels)
    fit_state: FitState | None = None

    def update(self, rows: Any, weights: Any = None, decay: float | None = None, **options: Any) -> Any:
        r"""This network after the rows ``rows``, without a refit: a new network (this one
        is unchanged).

        The new rows are counted into context trees of the network's own layout (its
        parents' order, the domain split) and added to the trees the network keeps, the
        old counts first multiplied by ``decay``; the estimator then runs on the merged
        trees.  The old rows are never read again: the cost is counting the new rows
        plus the estimator's own per-table work.

        * Closed forms (``mle``, ``bayes``, ``mestimate``, and ``hmd``, ``hls``, ``hgs``,
          ``mbranch``, deterministic given their counts): ``update(A)`` then
          ``update(B)`` is the fit on all the rows, to rounding.
        * Samplers (``hdp``, ``hls-bayes``) start from the state the fit kept (a warm
          start) and run the estimator's ``update_iterations`` sweeps.
        * ``decay`` (``0 < decay <= 1``): the old counts are multiplied by it before the
          new rows are added, :math:`n \leftarrow \text{decay}\cdot n_{old} + n_{new}`:
          after ``k`` updates a row of age ``a`` weighs :math:`\text{decay}^a`, exactly
          the fit with those row weights.  Counts become fractional: samplers that need
          whole counts (``hdp``, ``hls-bayes``) refuse ``decay``.  The network's report
          then gives the effective rows, :math:`\sum_{rows} \text{decay}^{a}`, as
          ``info["n_effective"]`` (what its nodes count; ``n_rows``: the rows read).
        * ``weights``: a column of ``rows`` or one number per row, as in
          :func:`pybncsmooth.fit`.
        * Multi-domain fits: a row updates its own domain and the population; rows of a
          domain label the network does not have are added as by :meth:`adapt` (the
          population as their prior, unchanged by them).  A domain added by
          :meth:`adapt` is estimated with the others by the update (its rows join
          ``n_rows`` and ``domain_rows``).
        * ``na="em"``: the fit kept its complete rows' counts and its incomplete rows'
          distinct patterns (:class:`FitState`); EM restarts from the current tables
          over both and the new rows.
        * A network read from a file holds tables only: it is updated as ``bayes`` with
          its tables as the prior, of weight ``prior_weight`` (required: the rows its
          tables are worth; ``prior_per`` as in :func:`pybncsmooth.fit`).

        ``rows``: a data frame, a CSV/Parquet path, chunks or a Dask DataFrame, as
        :func:`pybncsmooth.fit` reads them.  Their values name the network's levels
        and domains as queries and :meth:`adapt` name them
        (:mod:`pybncsmooth.data.levels`: the text ``'1'`` of a CSV is the integer level
        ``1``); a level first met in them joins the variable's levels (as when a fit
        reads chunks; the text of an integer beside integer levels as that integer),
        unless a network file fixed them.  Options (the ``update`` entry point of
        :mod:`pybncsmooth.options`): ``weights``, ``decay``, ``chunksize``, ``random_state``, ``n_jobs``,
        ``progress``, ``prior_weight`` and ``prior_per``; every other setting is the
        fit's.
        """
        opts = Options.build("update", weights=weights, decay=decay, **options)
        return updater()(self, rows, opts)
