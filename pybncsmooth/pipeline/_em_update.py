r"""EM over missing cells for an update (``na="em"`` / ``"hard-em"``): what a fit keeps of
its rows and how an update runs EM again without them.

The E-step's expected counts of a node's family are a sum over rows: a *complete* row
(every variable of the fit observed) adds its own cells, whatever the tables; an
incomplete row adds the posterior of its completions under the current tables.  So an
EM fit keeps (:class:`~pybncsmooth.model.fit_state.FitState`):

* the context trees of its complete rows (one per node, the fit's layout);
* its incomplete rows compressed to their distinct patterns of codes (``-1`` a missing
  cell) with the summed weights of the rows of each pattern: at most as many as the
  incomplete rows, usually far fewer.

An update adds the new rows' complete trees and patterns (the old ones first multiplied
by ``decay``; on levels the new rows add, the old codes mapped), and EM restarts from
the current tables (from the available-case fit of the merged counts where the levels
changed): each E-step runs over the patterns only, the complete rows' counts added as
they are.  With the same stopping rule it converges to the fixed point a refit on all
the rows converges to (its starting point differs, so the two agree to the tolerance
of EM, not to rounding).  Data augmentation (``hdp``, ``hls-bayes``) draws every
incomplete row's completion: a pattern of whole weight ``w`` is ``w`` rows, each drawn.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from ..counting.context_tree import ContextTree
from ..counting.network import NetworkCounter, count_specs, spec_variables
from ..data.encode import EncodedData
from ..data.mapreduce import reduce_chunks
from ..data.schema import Schema
from ..data.sources import DataSource
from ..estimators.base import Estimator
from ..model.fit_state import FitState
from ..model.network import FittedNetwork
from ..options import Options
from .augment import run_augmentation
from .em import EStep, _dense_tables, _estep_part, _Part, _prepare, run_em

__all__ = ["em_state", "update_em"]


def _part_state(schema: Schema, specs: list, variables: list[str], weighted: bool, part: _Part) -> tuple:
    """One part's complete rows' trees and its incomplete rows' distinct patterns."""
    complete = (part.X >= 0).all(axis=1)
    rows = np.flatnonzero(complete)
    enc = EncodedData(schema, {v: part.X[rows, j] for j, v in enumerate(variables)}, pd.RangeIndex(len(rows)))
    trees = count_specs(enc, specs, weights=part.w[rows] if weighted else None)
    pats, pw = _distinct(part.X[~complete], part.w[~complete])
    return trees, pats, pw


def _distinct(X: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``X`` and their summed weights."""
    if not len(X):
        return X.reshape(0, X.shape[1]).astype(np.int64), np.zeros(0)
    uniq, inv = np.unique(X, axis=0, return_inverse=True)
    return uniq.astype(np.int64), np.bincount(inv.reshape(-1), weights=w, minlength=len(uniq))


def _merge_states(a: tuple | None, b: tuple | None) -> tuple | None:
    if a is None or b is None:
        return a if b is None else b
    return ([x.merge(y) for x, y in zip(a[0], b[0])], np.concatenate([a[1], b[1]]), np.concatenate([a[2], b[2]]))


def _chunk_state(schema: Schema, specs: list, variables: list[str], weights: str | None, df: pd.DataFrame) -> Any:
    parts = _prepare(schema, variables, weights, df)
    return _part_state(schema, specs, variables, weights is not None, parts[0]) if parts else None


def rows_state(source: DataSource, schema: Schema, specs: list, variables: list[str], weights: str | None,
               progress: bool | None, parts: list | None = None) -> tuple[dict, np.ndarray, np.ndarray]:
    """The complete rows' trees (by node) and the incomplete rows' distinct patterns with
    their weights, over a data source (or its parts encoded already)."""
    if parts is not None:
        res = functools.reduce(_merge_states, (_part_state(schema, specs, variables, weights is not None, p)
                                               for p in parts), None)
    else:
        res = reduce_chunks(source, functools.partial(_chunk_state, schema, specs, variables, weights),
                            _merge_states, progress=progress, desc="rows kept for updates")
    if res is None:
        empty = [ContextTree.from_leaves(n, pa, schema.cardinality(n), schema.cardinalities(pa),
                                         np.zeros((0, len(pa)), np.int64), np.zeros((0, schema.cardinality(n))))
                 for n, pa in specs]
        return {n: t for (n, _), t in zip(specs, empty)}, np.zeros((0, len(variables)), np.int64), np.zeros(0)
    pats, pw = _distinct(res[1], res[2])
    return {n: t for (n, _), t in zip(specs, res[0])}, pats, pw


def em_state(estep: EStep, schema: Schema, specs: list, given: tuple[str, ...]) -> FitState:
    """What an EM fit keeps for updates (see the module documentation)."""
    complete, pats, pw = rows_state(estep.source, schema, specs, estep.variables, estep.weights, estep.progress,
                                    estep.parts)
    return FitState(given=given, complete=complete, patterns=pats, pattern_weights=pw,
                    pattern_variables=tuple(estep.variables))


class _Counts:
    """The E-step's result as :func:`run_em` reads it: the expected counts of the
    patterns (``acc``, or none) added to the complete rows' trees."""

    def __init__(self, complete: list[ContextTree], acc: Any) -> None:
        self.complete, self.acc = complete, acc

    def trees(self) -> list[ContextTree]:
        if self.acc is None:
            return list(self.complete)
        return [c.merge(e) for c, e in zip(self.complete, self.acc.trees())]


class _StateEStep:
    """The E-step of an update: over the kept and new patterns only."""

    def __init__(self, specs: list, variables: list[str], complete: dict, patterns: np.ndarray,
                 weights: np.ndarray) -> None:
        self.specs, self.variables = specs, variables
        self.complete = [complete[n] for n, _ in specs]
        self.part = _Part(patterns, weights, pd.RangeIndex(len(weights)))

    def __call__(self, net: FittedNetwork, mode: int, seed: int = 0, desc: str = "E-step") -> tuple:
        ll = _complete_loglik(net, self.complete)
        if not len(self.part.w):
            return _Counts(self.complete, None), ll
        part = self.part if mode != 2 else _rows_of(self.part)
        tables = _dense_tables(net, self.specs, self.variables)
        acc, loglik, _ = _estep_part(net, tables, self.specs, self.variables, mode, seed, part)
        return _Counts(self.complete, acc), ll + loglik


def _rows_of(part: _Part) -> _Part:
    """Patterns of whole weight as that many rows of weight 1 (each drawn on its own)."""
    w = part.w
    whole = np.round(w)
    if not np.allclose(w, whole):
        return part
    reps = whole.astype(np.int64)
    return _Part(np.repeat(part.X, reps, axis=0), np.ones(int(reps.sum())), pd.RangeIndex(int(reps.sum())))


def _complete_loglik(net: FittedNetwork, trees: list[ContextTree]) -> float:
    """The complete rows' log-likelihood under ``net``: :math:`\\sum n(x, c) \\log P(x \\mid c)`."""
    total = 0.0
    for t in trees:
        configs, counts = t.leaf_table()
        if not len(counts):
            continue
        cpd = net.cpd(t.child)
        probs = getattr(cpd, "inner", cpd).probs(configs)
        with np.errstate(divide="ignore", invalid="ignore"):
            total += float(np.where(counts > 0, counts * np.log(probs), 0.0).sum())
    return total


def _recoded_state(state: FitState, old: Schema, new: Schema, decay: float) -> tuple[dict, np.ndarray, np.ndarray]:
    """The kept complete trees and patterns on the united levels ``new``, times ``decay``."""
    maps = {}
    for v in state.pattern_variables:
        a, b = old[v], new[v]
        maps[v] = None if a == b else np.array([b.index(x) for x in a], dtype=np.int64)
    complete = {}
    for n, t in state.complete.items():
        if maps.get(n) is not None or any(maps.get(p) is not None for p in t.parents):
            t = t.recode(maps.get(n), [maps.get(p) for p in t.parents], new.cardinality(n), new.cardinalities(t.parents))
        complete[n] = t.scaled(decay)
    pats = state.patterns.copy()
    for j, v in enumerate(state.pattern_variables):
        if maps[v] is not None:
            col = pats[:, j]
            pats[:, j] = np.where(col >= 0, maps[v][np.maximum(col, 0)], -1)
    return complete, pats, state.pattern_weights * decay


def update_em(net: FittedNetwork, source: DataSource, merged: NetworkCounter, estimator: Estimator,
              fit_opts: Options, info: dict, decay: float | None, fitters: tuple[Any, Any]) -> FittedNetwork:
    """EM (or data augmentation) again after new rows, from the state the fit kept (see
    the module documentation); ``merged``: the available-case counts, old and new (the
    old times ``decay``); ``fitters``: the pipeline's ``estimate_network`` and
    ``assemble_network``."""
    estimate_network, assemble_network = fitters

    state = net.fit_state
    schema = merged.schema
    specs = [(n, tuple(net.tree(n).parents)) for n in net.nodes]
    variables = spec_variables(schema, specs)
    old_c, old_p, old_w = _recoded_state(state, net.schema, schema, 1.0 if decay is None else float(decay))
    source.require_passes(2, "an update under na='em'")
    new_c, new_p, new_w = rows_state(source, schema, specs, variables, fit_opts.weights, fit_opts.progress)
    complete = {n: old_c[n].merge(new_c[n]) for n, _ in specs}
    pats, pw = _distinct(np.concatenate([old_p, new_p]), np.concatenate([old_w, new_w]))
    kept = FitState(given=state.given, complete=complete, patterns=pats, pattern_weights=pw,
                    pattern_variables=tuple(variables))
    prev = {n: (net.tree(n), net.cpd(n).estimate) for n in net.nodes}
    est = estimator.warm_started(prev)
    if not len(pw):  # no incomplete row, old or new: the estimator on the complete rows
        out = estimate_network(net.dag, schema, complete, est, fit_opts, info=info)
        out.info["em"] = {"iterations": 0, "converged": True, "loglik_trace": [], "hard": fit_opts.na == "hard-em"}
        out.fit_state = kept
        return out
    estep = _StateEStep(specs, variables, complete, pats, pw)
    start = net if schema == net.schema else estimate_network(net.dag, schema, merged.trees, est, fit_opts, info=info)
    fit = functools.partial(estimate_network, net.dag, schema, estimator=est, options=fit_opts, info=info)
    if fit_opts.missing.treatment(estimator) == "augmentation":
        assemble = functools.partial(assemble_network, net.dag, schema, estimator=est, options=fit_opts, info=info)
        out = run_augmentation(start, estep, merged.trees, est, fit, assemble, draws=fit_opts.em_draws,
                               burn=fit_opts.em_burn, progress=fit_opts.progress)
    else:
        out = run_em(start, estep, merged.trees, fit, hard=fit_opts.missing.em == "hard", tol=fit_opts.em_tol,
                     max_iter=fit_opts.em_max_iter)
    out.fit_state = kept
    return out
