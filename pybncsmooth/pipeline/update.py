r"""New rows for a fitted network: :meth:`FittedNetwork.update`.

A fitted network keeps every count its estimator needs: one context tree per node
(counts are sums over rows, so trees of two parts of the data add up to the tree of
the whole: :meth:`~pybncsmooth.counting.ContextTree.merge`).  An update counts the new
rows in the network's own layout (:class:`~pybncsmooth.counting.network.NetworkCounter`
set up as the fit's: the same parents' order, domain split and missing values'
policy), adds them to the kept trees (the old counts first multiplied by ``decay``)
exactly as a fit reading the data in chunks adds a chunk, and runs the estimator on
the merged trees.  What a closed-form estimator computes from the merged trees is what
it computes from the trees of a fit on all the rows.

The rows of a domain label the network does not have are set aside while counting and
added afterwards by :meth:`FittedNetwork.adapt` (the updated population as their
prior).  Under ``na="em"`` the counts of the complete rows and the distinct patterns of
the incomplete ones (:class:`~pybncsmooth.model.FitState`) stand for the old rows, and
EM restarts from the current tables (:mod:`pybncsmooth.pipeline._em_update`).  A
network read from a file (tables only) is fitted on the new rows as ``bayes`` with its
tables as the prior (:mod:`pybncsmooth.pipeline.prior`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from ..counting.network import NetworkCounter
from ..data.levels import as_levels, level_codes
from ..data.mapreduce import reduce_chunks
from ..data.sources import DataSource, as_source
from ..errors import DataError, EmptyDataError, HyperparameterError, UnseenLevelError
from ..estimators.base import Estimator, make_estimator
from ..model.fit_state import FitState, register_updater
from ..model.cpd import DomainLastCPD, TableCPD, TreeCPD
from ..model.network import FittedNetwork
from ..options import Options
from .domains import DomainRole
from ._em_update import update_em
from .fitting import assemble_network, estimate_network, fit_network, weighted_source

__all__ = ["update_network", "fit_options"]


@register_updater
def update_network(net: FittedNetwork, rows: Any, options: Options) -> FittedNetwork:
    """See :meth:`FittedNetwork.update` (``options``: the call's, built at the ``update``
    entry point)."""
    if _tables_only(net):
        return _update_tables(net, rows, options)
    given = [n for n, v in (("prior_weight", options.prior_weight), ("prior_per", options.prior_per))
             if v is not None and (n != "prior_per" or v != "network")]
    if given:
        raise HyperparameterError(
            f"{given[0]} applies to a network read from a file (tables only), updated with its tables as the "
            "prior; this network keeps its counts (its fit's prior, if any, stays as it was)"
        )
    estimator = _estimator(net, options)
    if estimator.whole_counts and options.decay is not None and options.decay != 1:
        raise HyperparameterError(
            f"{estimator.name} needs whole counts (its sampler seats every count), and decay={options.decay!r} "
            "multiplies the old counts into fractions: update this network without decay, refit it on the recent "
            "rows, or fit with an estimator that takes fractional counts (e.g. hmd or bayes) to forget old rows"
        )
    fit_opts = fit_options(net, options)
    state = net.fit_state or FitState()
    if fit_opts.missing.em is not None and not state.has_em:
        raise DataError(
            f"this network was fitted with na={fit_opts.na!r} but keeps no record of the rows EM needs (a domain was "
            "added by adapt, or the file was written without it): refit it on all the rows"
        )
    source, fit_opts = weighted_source(rows, fit_opts)
    source = _named(_transformed(source, net), net)
    role = DomainRole.of(fit_opts, estimator)
    counter = _new_counter(net, role, fit_opts, state)
    new, fresh = _count_rows(source, counter, net, role, fit_opts)
    if new.n_rows == 0 and not fresh:
        raise EmptyDataError("update: the new rows are empty (no row is left to count)")
    out = net
    if new.n_rows:
        merged = merged_counts(net, new, options.decay)
        info = update_info(net, merged, new, options)
        if state.has_em:
            out = update_em(net, source, merged, estimator, fit_opts, info, options.decay,
                            (estimate_network, assemble_network))
        else:
            out = _reestimate(net, merged, estimator, fit_opts, info, state)
        out.estimator = estimator
        out.transformer = net.transformer
    return _adapt_fresh(out, fresh, fit_opts)


def fit_options(net: FittedNetwork, options: Options) -> Options:
    """The options of the fit that made ``net``, with the update's own (``weights``,
    ``chunksize``, the settings of the run) in place of the fit's."""
    own = {n: getattr(options, n) for n in ("weights", "chunksize", "random_state", "n_jobs", "progress")}
    base = net.options
    if net.domain is not None and base.domain != net.domain:
        base = base.replace(domain=net.domain)
    return base.replace(**own)


def _tables_only(net: FittedNetwork) -> bool:
    return all(isinstance(net.cpd(n), TableCPD) for n in net.nodes)


def _check_trees(net: FittedNetwork) -> None:
    for n in net.nodes:
        if not isinstance(net.cpd(n), (TreeCPD, DomainLastCPD)):
            raise DataError(
                f"update needs every node's context tree; node {n!r} has a {type(net.cpd(n)).__name__} (one domain "
                "of a multi-domain fit: update the whole network; tables read from a file: update a network "
                "whose every table is read from it)"
            )


def _estimator(net: FittedNetwork, options: Options) -> Estimator:
    """The network's estimator with the update's settings of the run."""
    _check_trees(net)
    if net.estimator is None:
        raise DataError(
            "update needs the estimator the network was fitted with, and this network does not name one (a file "
            "written by another version?): refit it"
        )
    run = {k: v for k, v in options.run_settings().items()}
    return net.estimator.with_settings(**run)


def _transformed(source: DataSource, net: FittedNetwork) -> DataSource:
    """The new rows with the network's discretiser applied (its cut points, fixed by
    the fit) to the nodes' columns of every chunk."""
    tr = net.transformer
    if tr is None:
        return source
    nodes = list(net.nodes)

    def chunks() -> Any:
        for df in source.chunks():
            cols = [n for n in nodes if n in df.columns]
            out = df.copy()
            out[cols] = tr.transform(df[cols])
            yield out

    return as_source(chunks)


def _named(source: DataSource, net: FittedNetwork) -> DataSource:
    """The new rows with every value of a node's or the domain's column written as the
    network's level it names, as queries and :meth:`FittedNetwork.adapt` name levels
    (:func:`~pybncsmooth.data.levels.as_levels`: the text ``'1'`` of a CSV is the integer
    level ``1``, the integer ``2016`` the domain ``'2016'``); a new value joins as its
    level would (``'3'`` beside integer levels as ``3``).  The domain column comes back
    as values whatever its type: its levels' order is the network's (a domain added by
    ``adapt`` comes last), not that of the rows' Categorical."""
    columns = [v for v in net.nodes if v in net.schema]
    if net.domain is not None:
        columns.append(net.domain)

    def chunks() -> Any:
        for df in source.chunks():
            out = None
            for v in columns:
                if v not in df.columns:
                    continue
                col = given = df[v]
                if v == net.domain and isinstance(col.dtype, pd.CategoricalDtype):
                    col = col.astype(object)
                what = f"the domain column {v!r}" if v == net.domain else f"node {v!r}"
                named = as_levels(col, tuple(net.schema[v]), what)
                if named is not given:
                    out = df.copy() if out is None else out
                    out[v] = named
            yield df if out is None else out

    return as_source(chunks)


def _new_counter(net: FittedNetwork, role: DomainRole, options: Options, state: FitState) -> NetworkCounter:
    """A counter set up as the fit's: the network's structure and domain split, its
    missing values' policy, the levels a network file fixed."""
    policy = options.missing
    given = net.schema.subset([v for v in state.given if v in net.schema]) if state.given else None
    return NetworkCounter(
        net.dag, schema=given, na="available" if policy.em is not None else policy.counting,
        max_levels=options.max_levels, na_label=policy.label, weights=options.weights, **role.counter_splits(),
    )


def _known(col: pd.Series, levels: list) -> np.ndarray:
    """Which values of a domain column name levels of ``levels`` (the one rule of
    :mod:`pybncsmooth.data.levels`)."""
    return level_codes(col.to_numpy(dtype=object), tuple(levels)) >= 0


def _count_chunk(counter: NetworkCounter, column: str | None, levels: list, df: pd.DataFrame) -> tuple:
    """The map step: the counts of the rows of known domains, and the rows of new
    domain labels (whole, to be adapted)."""
    if column is None or column not in df.columns:
        return counter.count(df), []
    known = _known(df[column], levels)
    fresh = [] if known.all() else [df[~known & df[column].notna().to_numpy()]]
    return counter.count(df[known | df[column].isna().to_numpy()]), fresh


def _merge_chunks(a: tuple, b: tuple) -> tuple:
    return a[0].merge(b[0]), a[1] + b[1]


def _count_rows(source: DataSource, counter: NetworkCounter, net: FittedNetwork, role: DomainRole,
                options: Options) -> tuple[NetworkCounter, dict]:
    """One pass over the new rows: their counter (rows of known domains) and the rows
    of each new domain label."""
    column = net.domain
    levels = net.domains if column is not None else []
    fn = functools.partial(_count_chunk, counter, column, levels)
    res = reduce_chunks(source, fn, _merge_chunks, progress=options.progress, desc="counting")
    if res is None:
        raise EmptyDataError("update: the new rows have no chunk")
    new, frames = res
    fresh: dict = {}
    if frames:
        rows = pd.concat(frames, ignore_index=True)
        for label, part in rows.groupby(column, sort=False, observed=True):
            fresh[label] = part.reset_index(drop=True)
    return new, fresh


def _old_counter(net: FittedNetwork, template: NetworkCounter, decay: float | None) -> NetworkCounter:
    """The kept trees as a counter (the old counts times ``decay``)."""
    old = template.empty_like()
    old.schema = net.schema
    factor = 1.0 if decay is None else float(decay)
    old.trees = {n: net.tree(n).scaled(factor) for n in net.nodes}
    old.n_rows = int(net.info.get("n_rows") or 0)
    old.n_dropped = int(net.info.get("n_dropped") or 0)
    old.domain_rows = dict(net.info.get("domain_rows") or {})
    # the rows adapt added are in the trees: the update estimates their domains as fitted ones
    for label, cnt in (net.info.get("adapted") or {}).items():
        old.n_rows += int(cnt)
        old.domain_rows[label] = old.domain_rows.get(label, 0) + int(cnt)
    return old


def merged_counts(net: FittedNetwork, new: NetworkCounter, decay: float | None) -> NetworkCounter:
    """The old trees (times ``decay``) and the new rows' merged, on the united levels."""
    return _old_counter(net, new, decay).merge(new)


def update_info(net: FittedNetwork, merged: NetworkCounter, new: NetworkCounter, options: Options) -> dict:
    """The fit report of an updated network: the rows counted so far and the updates."""
    keep = {k: v for k, v in net.info.items() if k not in ("method", "hyperparameters", "em", "updates", "adapted")}
    keep["n_rows"], keep["n_dropped"] = merged.n_rows, merged.n_dropped
    if net.domain is not None:
        keep["domain_rows"] = dict(merged.domain_rows)
    step = {"n_rows": new.n_rows, "decay": options.decay if options.decay is not None else 1.0}
    if step["decay"] != 1.0 or "n_effective" in net.info:  # the rows' weight decay ** age, as the nodes count them
        before = net.info.get("n_effective", merged.n_rows - new.n_rows)
        keep["n_effective"] = float(before) * step["decay"] + new.n_rows
    if options.weights is not None:
        step["weights"] = options.weights if isinstance(options.weights, str) else "per row"
    keep["updates"] = [*net.info.get("updates", []), step]
    rs = options.random_state
    keep["random_state"] = rs if isinstance(rs, (int, type(None))) else repr(rs)
    return keep


def _reestimate(net: FittedNetwork, merged: NetworkCounter, estimator: Estimator, fit_opts: Options, info: dict,
                state: FitState) -> FittedNetwork:
    """The estimator on the merged trees, warm-started from the network's estimates."""
    previous = {n: (net.tree(n), net.cpd(n).estimate) for n in net.nodes}
    out = estimate_network(net.dag, merged.schema, merged.trees, estimator.warm_started(previous), fit_opts, info=info)
    out.fit_state = FitState(given=state.given)
    return out


def _adapt_fresh(net: FittedNetwork, fresh: dict, options: Options) -> FittedNetwork:
    """The rows of each new domain label added as by :meth:`FittedNetwork.adapt`."""
    weights = options.weights if isinstance(options.weights, str) else None
    for label, rows in fresh.items():
        try:
            net = net.adapt(rows, label, **({"weights": weights} if weights is not None else {}))
        except UnseenLevelError as e:  # adapt's own advice (on_unseen=) is not an option of update
            col = net.domain
            shown = ", ".join(repr(v) for v in e.levels[:5])
            raise UnseenLevelError(
                e.column, e.levels, e.known,
                hint=f"the rows of the new domain {col}={label!r} are added by adapt, with the population as their "
                f"prior, and a new domain cannot add levels to the population: put rows with {e.column}={shown} in "
                f"a known domain's rows, or update with the other rows and adapt these with "
                f"net.adapt(rows, {label!r}, on_unseen='backoff') (their unseen cells left unobserved)",
            ) from None
    return net


def _update_tables(net: FittedNetwork, rows: Any, options: Options) -> FittedNetwork:
    """A network of tables only (read from a file): ``bayes`` on the new rows with its
    tables as the prior, of weight ``prior_weight``; its levels fix the rows'."""
    if options.prior_weight is None:
        raise HyperparameterError(
            "this network holds tables only (read from a file): update it with its tables as the prior of a "
            "stated weight, prior_weight= (the number of rows its tables are worth)"
        )
    if options.decay is not None:
        raise HyperparameterError(
            "decay multiplies the old counts of an update, and a network read from a file has none: its tables "
            "weigh prior_weight rows (give a smaller prior_weight to forget more)"
        )
    settings = {k: v for k, v in {"weights": options.weights, "chunksize": options.chunksize,
                                  "n_jobs": options.n_jobs, "progress": options.progress}.items() if v is not None}
    fit_opts = Options.build("fit", na=net.options.na or "error", prior=net, prior_weight=options.prior_weight,
                             prior_per=options.prior_per, **settings)
    estimator = make_estimator("bayes", options=fit_opts)
    return fit_network(net, rows, estimator, fit_opts)  # its structure, its levels fixed (as a network file's)
