r"""Expectation-maximisation over missing cells: ``na="em"`` (soft) and ``na="hard-em"``.

Start from the available-case fit (each node counted on the rows where it and its
parents are observed).  Then repeat:

* **E-step** (one pass over the data, chunk by chunk): a complete row counts once; an
  incomplete row is replaced by every completion of its missing cells ``x_M``, each
  weighted by its posterior under the current network,

  .. math:: w(x_M) = \frac{\prod_v P(x_v \mid x_{\pi_v})}{\sum_{x'_M} \prod_v P(x'_v \mid x'_{\pi_v})},

  enumerated exactly (rows sharing a missingness pattern batched; a row with more than
  ``MAX_COMPLETIONS`` completions contributes each node's family posterior from variable
  elimination instead), so that the context trees hold the *expected* counts
  (fractional).  ``hard-em`` (bnlearn's ``method = "hard-em"``) gives the most probable
  completion weight 1 instead (in a row with more than ``MAX_COMPLETIONS`` completions,
  each missing cell takes its own most probable value given the row's observed cells).
  The same pass adds up the observed-data log-likelihood :math:`\sum_i \log P(x_{O_i})`.
* **M-step**: the estimator on the expected counts (closed forms for mle / bayes /
  mestimate / mbranch, hmd's variational fit, hls's weighted likelihood, hgs).

It stops when the relative change of the observed-data log-likelihood falls below
``em_tol`` (default 1e-6) or after ``em_max_iter`` iterations (default 100; a
:class:`~pybncsmooth.errors.ConvergenceWarning` says so).  Soft EM never decreases the
observed-data likelihood of mle (Dempster, Laird and Rubin 1977); with a prior it climbs
the penalised likelihood.  ``hdp`` and ``hls-bayes``, whose samplers take whole counts,
run with ``hard-em``.  Complete data give exactly the plain fit.

Cost: every iteration enumerates the completions of every incomplete row in NumPy, so
rows with many missing cells dominate (their variable-elimination path runs one
elimination per node).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ..data.encode import EncodedData, encode
from ..data.mapreduce import reduce_chunks
from ..data.weights import chunk_weights
from ..errors import ConvergenceWarning, DataError, HyperparameterError
from ..counting.context_tree import ContextTree, config_codes, mixed_radix
from ..counting.network import count_specs
from ..estimators.base import Estimator
from ..model.inference import joint_posterior, pattern_groups
from ..model.network import FittedNetwork

__all__ = ["run_em", "EM_POLICIES", "MAX_COMPLETIONS"]

EM_POLICIES = ("em", "hard-em")
#: largest number of completions of one row's missing cells enumerated
MAX_COMPLETIONS = 1 << 16


def _expand(
    net: FittedNetwork, codes: dict[str, np.ndarray], rows: np.ndarray, free: list[str]
) -> tuple[dict[str, np.ndarray], int]:
    """Every completion of the variables ``free`` for ``rows``: the codes of ``codes``'s
    variables for the ``len(rows) * K`` completed rows (row-major), and ``K``."""
    cards = [net.schema.cardinality(v) for v in free]
    K = int(np.prod(cards, dtype=np.int64)) if cards else 1
    grid = np.indices(cards).reshape(len(cards), -1) if cards else np.zeros((0, 1), dtype=np.int64)
    out = {v: np.repeat(c[rows], K) for v, c in codes.items()}
    for j, v in enumerate(free):
        out[v] = np.tile(grid[j], len(rows))
    return out, K


def _log_joint(net: FittedNetwork, codes: dict[str, np.ndarray], n: int) -> np.ndarray:
    prefix = [v for v in codes if v not in net.nodes]
    total = np.zeros(n)
    with np.errstate(divide="ignore"):
        for v in net.nodes:
            cond = prefix + net.parents(v)
            P = np.column_stack([codes[u] for u in cond]) if cond else np.zeros((n, 0), dtype=np.int64)
            total += np.log(net.cpd(v).prob_of(codes[v].astype(np.int64), P.astype(np.int64)))
    return total


def _family_rows(
    net: FittedNetwork, spec_vars: list[str], sub: dict[str, np.ndarray], missing: set[str], w: np.ndarray
) -> tuple[float, dict[str, np.ndarray], np.ndarray]:
    """Rows too many to enumerate (their codes ``sub``, weights ``w``): the expected counts
    of one node's family (``spec_vars``) from the posterior of its missing variables
    (variable elimination): ``(log P(x_O) summed, pseudo-rows, weights)``."""
    fam_missing = [v for v in spec_vars if v in missing]
    logp, post = joint_posterior(net, sub, fam_missing)
    out, K = _expand(net, {v: sub[v] for v in spec_vars}, np.arange(len(w)), fam_missing)
    return float(w @ logp), out, (post.reshape(len(w), K) * w[:, None]).reshape(-1)


class _Expected:
    """Expected counts of every node's family, accumulated as weighted pseudo-rows come:
    a dense ``(configurations, levels)`` table per node where it is small (one weighted
    ``bincount`` per batch), the pseudo-rows themselves otherwise (a weighted tree at
    the end)."""

    DENSE_CELLS = 1 << 22

    def __init__(self, schema: Any, specs: list) -> None:
        self.schema = schema
        self.specs = specs
        self.dense: dict[str, np.ndarray] = {}
        self.rows: dict[str, list[tuple[dict, np.ndarray]]] = {}
        for nd, pa in specs:
            q = int(np.prod(schema.cardinalities(pa), dtype=np.int64)) if pa else 1
            if q * schema.cardinality(nd) <= self.DENSE_CELLS:
                self.dense[nd] = np.zeros(q * schema.cardinality(nd))
            else:
                self.rows[nd] = []

    def add(self, codes: dict[str, np.ndarray], w: np.ndarray, only: str | None = None) -> None:
        for nd, pa in self.specs:
            if only is not None and nd != only:
                continue
            if nd in self.dense:
                r = self.schema.cardinality(nd)
                cfg = mixed_radix([codes[p] for p in pa], self.schema.cardinalities(pa)) if pa else 0
                cells = cfg * r + codes[nd]
                self.dense[nd] += np.bincount(cells, weights=w, minlength=len(self.dense[nd]))
            else:
                self.rows[nd].append(({v: codes[v] for v in (nd, *pa)}, w))

    def trees(self) -> list[ContextTree]:
        out = []
        for nd, pa in self.specs:
            r = self.schema.cardinality(nd)
            cards = self.schema.cardinalities(pa)
            if nd in self.dense:
                table = self.dense[nd].reshape(-1, r)
                obs = np.flatnonzero(table.any(axis=1))
                configs = config_codes(obs, cards) if pa else np.zeros((len(obs), 0), dtype=np.int64)
                out.append(ContextTree.from_leaves(nd, pa, r, cards, configs, table[obs]))
                continue
            parts = self.rows[nd]
            allc = {v: np.concatenate([p[0][v] for p in parts]) for v in (nd, *pa)}
            w = np.concatenate([p[1] for p in parts])
            dummy = EncodedData(self.schema, allc, pd.RangeIndex(len(w)))
            out.append(count_specs(dummy, [(nd, pa)], weights=w)[0])
        return out


def _estep_chunk(
    net: FittedNetwork, specs: list, variables: list[str], weights: str | None, hard: bool, df: pd.DataFrame
) -> tuple:
    """Expected counts of one chunk: ``(trees, observed-data log-likelihood, rows)``."""
    if len(df) == 0:
        return (None, 0.0, 0)
    enc = encode(df, net.schema, variables=variables, na="available", on_unseen="error", empty_ok=True)
    n = enc.n_rows
    codes = {v: enc[v].astype(np.int64) for v in variables}
    w_row = chunk_weights(df, weights, variables, "available") if weights is not None else np.ones(n)
    nodes = list(net.nodes)
    miss = np.column_stack([codes[v] < 0 for v in nodes])
    complete = ~miss.any(axis=1)
    acc = _Expected(net.schema, specs)
    idx = np.flatnonzero(complete)
    loglik = 0.0
    if len(idx):
        sub = {v: c[idx] for v, c in codes.items()}
        acc.add(sub, w_row[idx])
        loglik = float(w_row[idx] @ _log_joint(net, sub, len(idx)))
    inc = np.flatnonzero(~complete)
    for grp in pattern_groups(miss[inc]):
        rows = inc[grp]
        missing = [v for v, b in zip(nodes, miss[rows[0]]) if b]
        K = int(np.prod([net.schema.cardinality(v) for v in missing], dtype=np.int64))
        if K > MAX_COMPLETIONS:
            sub = {v: c[rows] for v, c in codes.items()}
            if hard:  # each missing cell at its most probable value given the row
                imputed = dict(sub)
                for j, v in enumerate(missing):
                    logp, post = joint_posterior(net, sub, [v])
                    imputed[v] = np.argmax(post, axis=1).astype(np.int64)
                    if j == 0:
                        loglik += float(w_row[rows] @ logp)
                acc.add(imputed, w_row[rows])
                continue
            mset = set(missing)
            for nd, pa in specs:
                ll, rows_codes, wts = _family_rows(net, [nd, *pa], sub, mset, w_row[rows])
                acc.add(rows_codes, wts, only=nd)
            loglik += ll
            continue
        comp, K = _expand(net, codes, rows, missing)
        lj = _log_joint(net, comp, len(rows) * K).reshape(len(rows), K)
        top = lj.max(axis=1, keepdims=True)
        if not np.isfinite(top).all():
            bad = int(rows[int(np.argmin(np.isfinite(top[:, 0])))])
            raise DataError(
                f"row {enc.index[bad]!r}: its observed cells have probability 0 under the current network "
                f"({net.method or 'this estimator'} gives zero probabilities); EM needs an estimator with a "
                "prior (bayes, mestimate, hmd, ...)"
            )
        post = np.exp(lj - top)
        norm = post.sum(axis=1, keepdims=True)
        loglik += float(w_row[rows] @ (top[:, 0] + np.log(norm[:, 0])))
        post /= norm
        if hard:
            best = np.argmax(post, axis=1)
            post = np.zeros_like(post)
            post[np.arange(len(rows)), best] = 1.0
        acc.add(comp, (post * w_row[rows][:, None]).reshape(-1))
    trees = acc.trees()
    return (trees, loglik, n)


def _merge(a: tuple, b: tuple) -> tuple:
    if a[0] is None:
        return (b[0], a[1] + b[1], a[2] + b[2])
    if b[0] is None:
        return (a[0], a[1] + b[1], a[2] + b[2])
    return ([x.merge(y) for x, y in zip(a[0], b[0])], a[1] + b[1], a[2] + b[2])


def run_em(
    net: FittedNetwork,
    source: Any,
    trees: dict[str, ContextTree],
    estimator: Estimator,
    estimate: Any,
    *,
    hard: bool,
    weights: str | None = None,
    tol: float = 1e-6,
    max_iter: int = 100,
    progress: bool | None = False,
) -> FittedNetwork:
    """EM from the available-case fit ``net`` (see the module documentation).

    ``trees``: the available-case trees (their parent orders, domain included, are kept);
    ``estimate(trees) -> FittedNetwork`` runs the M-step."""
    if not hard and estimator.name in ("hdp", "hls-bayes"):
        raise HyperparameterError(
            f"na='em' gives fractional expected counts, and {estimator.name}'s sampler takes whole counts: use "
            "na='hard-em' (the most probable completion of each row)"
        )
    nodes = list(net.nodes)
    specs = [(n, t.parents) for n, t in trees.items()]
    variables = [v for v in net.schema if v in set(nodes) | {p for _, pa in specs for p in pa}]
    trace: list[float] = []
    converged = False
    for it in range(1, max_iter + 1):
        res = reduce_chunks(
            source,
            functools.partial(_estep_chunk, net, specs, variables, weights, hard),
            _merge,
            progress=progress,
            desc=f"EM iteration {it}",
        )
        new_trees, loglik, _ = res
        trace.append(loglik)
        net = estimate(dict(zip(trees, new_trees)))
        if len(trace) > 1 and abs(trace[-1] - trace[-2]) <= tol * abs(trace[-2]):
            converged = True
            break
        if hard and len(trace) > 1 and trace[-1] == trace[-2]:
            converged = True
            break
    if not converged:
        change = "one E-step"
        if len(trace) > 1:
            change = f"relative change {abs(trace[-1] - trace[-2]) / abs(trace[-2]):.2e}"
        warnings.warn(
            f"EM reached em_max_iter ({max_iter}) before the observed-data log-likelihood settled ({change}; "
            f"em_tol {tol:g})",
            ConvergenceWarning,
            stacklevel=4,
        )
    net.info["em"] = {"iterations": len(trace), "converged": converged, "loglik_trace": trace, "hard": hard}
    return net
