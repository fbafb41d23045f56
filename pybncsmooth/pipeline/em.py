r"""Expectation-maximisation over missing cells: ``na="em"`` (soft) and ``na="hard-em"``.

Start from the available-case fit (each node counted on the rows where it and its
parents are observed).  Then repeat:

* **E-step** (one pass over the data, chunk by chunk; a data frame in memory is
  encoded once for all iterations): a complete row counts once; an incomplete row is
  replaced by every completion of its missing cells ``x_M``, each weighted by its
  posterior under the current network,

  .. math:: w(x_M) = \frac{\prod_v P(x_v \mid x_{\pi_v})}{\sum_{x'_M} \prod_v P(x'_v \mid x'_{\pi_v})},

  so that the context trees hold the *expected* counts (fractional).  The sum runs on
  a junction tree of the row's own missing cells, compiled
  (:mod:`pybncsmooth.pipeline._em_kernels`): its cliques link only missing variables
  that share a family, so the work follows the missing cells, not the network's
  treewidth.  Rows it leaves (a clique of more than ``MAX_COMPLETIONS`` completions,
  networks whose tables are too large to hold densely) go through NumPy: exhaustive
  enumeration, or variable elimination per family beyond ``MAX_COMPLETIONS``.
  ``hard-em`` (bnlearn's ``method = "hard-em"``) gives the most probable completion of
  the row weight 1 instead (max-product on the same tree; on the NumPy path beyond
  ``MAX_COMPLETIONS``, each missing cell takes its own most probable value given the
  row's observed cells).  The same pass adds up the observed-data log-likelihood
  :math:`\sum_i \log P(x_{O_i})`.
* **M-step**: the estimator on the expected counts (closed forms for mle / bayes /
  mestimate / mbranch, hmd's variational fit, hls's weighted likelihood, hgs).

It stops when the relative change of the observed-data log-likelihood falls below
``em_tol`` (default 1e-6) or after ``em_max_iter`` iterations (default 100; a
:class:`~pybncsmooth.errors.ConvergenceWarning` says so).  Soft EM never decreases the
observed-data likelihood of mle (Dempster, Laird and Rubin 1977); with a prior it climbs
the penalised likelihood.  ``hdp`` and ``hls-bayes``, whose samplers take whole counts,
run ``na="em"`` as data augmentation (:mod:`pybncsmooth.pipeline.augment`: completions
drawn on the same junction trees) and ``na="hard-em"`` as here.  Complete data give exactly the plain fit.

Cost: on insurance (27 nodes, 2,000 rows, 20% of cells missing) an E-step takes about
13 ms and soft EM with bayes 19 iterations, 0.35 s in all
(``python benchmarks/bench_em.py --methods bayes``, which times bnlearn's hard EM
beside it).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
import warnings
import zlib
from typing import Any

import numpy as np
import pandas as pd

from ..data.encode import EncodedData, encode
from ..data.mapreduce import reduce_chunks
from ..data.weights import chunk_weights
from ..errors import ConvergenceWarning, DataError
from ..counting.context_tree import ContextTree, config_codes, mixed_radix
from ..counting.network import count_specs
from ..model.query.inference import joint_posterior, pattern_groups
from ..model.network import FittedNetwork
from ._em_kernels import estep_rows

__all__ = ["run_em", "EM_POLICIES", "MAX_COMPLETIONS"]

EM_POLICIES = ("em", "hard-em")
#: largest number of completions of one component of a row's missing cells enumerated
MAX_COMPLETIONS = 1 << 16
#: a data frame in memory of at most this many cells is encoded once for all iterations
CACHE_CELLS = 1 << 26


def _expand(
    net: FittedNetwork, codes: dict[str, np.ndarray], rows: np.ndarray, free: list[str]
) -> tuple[dict[str, np.ndarray], int]:
    """Every completion of the variables ``free`` for ``rows``: the codes of ``codes``'s
    variables for the ``len(rows) * K`` completed rows (row-major), and ``K``."""
    cards = [net.schema.cardinality(v) for v in free]
    K = math.prod(cards)
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
    a dense ``(configurations, levels)`` table per node where it is small (one flat
    array for all of them: :meth:`layout`), the pseudo-rows themselves otherwise (a
    weighted tree at the end).  Parts of the data merge by :meth:`merge`."""

    DENSE_CELLS = 1 << 22

    def __init__(self, schema: Any, specs: list) -> None:
        self.schema = schema
        self.specs = specs
        self.offsets, total = self.layout(schema, specs)
        self.flat = np.zeros(total)
        self.rows: dict[str, list[tuple[dict, np.ndarray]]] = {nd: [] for nd, _ in specs if nd not in self.offsets}

    @classmethod
    def layout(cls, schema: Any, specs: list) -> tuple[dict[str, tuple[int, int]], int]:
        """``{node: (start, cells)}`` of the dense tables in the flat array, and its length."""
        offsets, total = {}, 0
        for nd, pa in specs:
            cells = math.prod(schema.cardinalities(pa)) * schema.cardinality(nd)  # Python ints: no overflow
            if cells <= cls.DENSE_CELLS:
                offsets[nd] = (total, cells)
                total += cells
        return offsets, total

    def dense(self, nd: str) -> np.ndarray:
        start, cells = self.offsets[nd]
        return self.flat[start : start + cells]

    def add(self, codes: dict[str, np.ndarray], w: np.ndarray, only: str | None = None) -> None:
        for nd, pa in self.specs:
            if only is not None and nd != only:
                continue
            if nd in self.offsets:
                r = self.schema.cardinality(nd)
                cfg = mixed_radix([codes[p] for p in pa], self.schema.cardinalities(pa)) if pa else 0
                cells = cfg * r + codes[nd]
                self.dense(nd)[:] += np.bincount(cells, weights=w, minlength=self.offsets[nd][1])
            else:
                self.rows[nd].append(({v: codes[v] for v in (nd, *pa)}, w))

    def merge(self, other: "_Expected") -> "_Expected":
        self.flat += other.flat
        for nd, parts in other.rows.items():
            self.rows[nd] += parts
        return self

    def trees(self) -> list[ContextTree]:
        out = []
        for nd, pa in self.specs:
            r = self.schema.cardinality(nd)
            cards = self.schema.cardinalities(pa)
            if nd in self.offsets:
                table = self.dense(nd).reshape(-1, r)
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


@dataclasses.dataclass(frozen=True)
class _Tables:
    """The current network as the compiled E-step reads it (:func:`estep_rows`): every
    family's variables (columns of the code matrix), strides into the flat table of
    probabilities and into the flat expected counts, and the tables' offsets."""

    probs: np.ndarray
    fam_ptr: np.ndarray
    fam_var: np.ndarray
    fam_sp: np.ndarray
    fam_sc: np.ndarray
    fam_op: np.ndarray
    fam_oc: np.ndarray
    is_node: np.ndarray
    cards: np.ndarray


def _strides(names: list[str], cards: list[int], r: int) -> dict[str, int]:
    """Cell strides of ``cfg * r + x`` (``cfg`` mixed-radix over ``names``, first most significant)."""
    out, step = {}, r
    for v, c in zip(reversed(names), reversed(cards)):
        out[v] = step
        step *= c
    return out


def _dense_tables(net: FittedNetwork, specs: list, variables: list[str]) -> _Tables | None:
    """:class:`_Tables` of ``net``, or None where a table is too large to hold densely."""
    schema = net.schema
    offsets, _ = _Expected.layout(schema, specs)
    col = {v: j for j, v in enumerate(variables)}
    tables, ptr, fv, sp, sc, op, oc = [], [0], [], [], [], [], []
    at = 0
    for nd, pa in specs:
        cpd = net.cpd(nd)
        cond = list(cpd.parents)
        if nd not in offsets or set(cond) != set(pa) or any(v not in col for v in cond):
            return None
        r = schema.cardinality(nd)
        tables.append(np.moveaxis(cpd.table(_Expected.DENSE_CELLS), 0, -1).reshape(-1))
        s_p = _strides(cond, list(cpd.parent_cards), r)
        s_c = _strides(list(pa), schema.cardinalities(pa), r)
        for v in (nd, *cond):
            fv.append(col[v])
            sp.append(s_p[v] if v != nd else 1)
            sc.append(s_c[v] if v != nd else 1)
        ptr.append(len(fv))
        op.append(at)
        oc.append(offsets[nd][0])
        at += len(tables[-1])
    i64 = functools.partial(np.asarray, dtype=np.int64)
    nodes = set(net.nodes)
    is_node = np.array([v in nodes for v in variables], dtype=np.bool_)
    return _Tables(np.concatenate(tables) if tables else np.zeros(0), i64(ptr), i64(fv), i64(sp), i64(sc), i64(op),
                   i64(oc), is_node, i64(schema.cardinalities(variables)))


@dataclasses.dataclass(frozen=True)
class _Part:
    """One chunk's rows as the E-step reads them: codes (``(n, V)``, ``-1`` missing, the
    columns in the order of ``variables``), row weights and the rows' labels."""

    X: np.ndarray
    w: np.ndarray
    index: pd.Index


def _prepare(schema: Any, variables: list[str], weights: str | None, df: pd.DataFrame) -> list[_Part]:
    if len(df) == 0:
        return []
    enc = encode(df, schema, variables=variables, na="available", on_unseen="error", empty_ok=True)
    X = np.column_stack([enc[v].astype(np.int64) for v in variables])
    w = chunk_weights(df, weights, variables, "available") if weights is not None else np.ones(enc.n_rows)
    return [_Part(X, w, enc.index)]


def _zero_probability(net: FittedNetwork, label: Any) -> DataError:
    return DataError(
        f"row {label!r}: its observed cells have probability 0 under the current network "
        f"({net.method or 'this estimator'} gives zero probabilities); EM needs an estimator with a "
        "prior (bayes, mestimate, hmd, ...)"
    )


def _estep_part(
    net: FittedNetwork, tables: _Tables | None, specs: list, variables: list[str], mode: int, seed: int, part: _Part
) -> tuple:
    """Expected counts of one part: ``(_Expected, observed-data log-likelihood, rows)``:
    the compiled pass (:func:`estep_rows`) where the tables allow, NumPy for the rows it
    leaves (and for all rows where they do not).  ``mode``: 0 expected counts, 1 the
    most probable completion of each row, 2 a completion drawn from its posterior
    (``seed`` and the part's content seed the draws)."""
    acc = _Expected(net.schema, specs)
    n = len(part.w)
    seed = int(np.random.SeedSequence([seed, zlib.crc32(part.X.tobytes()), n]).generate_state(1)[0])
    if tables is not None:  # (_dense_tables gives None unless every node's table is dense)
        t = tables
        deferred, loglik, bad = estep_rows(
            part.X, part.w, t.is_node, t.cards, t.fam_ptr, t.fam_var, t.fam_sp, t.fam_sc, t.fam_op, t.fam_oc, t.probs,
            acc.flat, mode, MAX_COMPLETIONS, seed,
        )
        if bad >= 0:
            raise _zero_probability(net, part.index[bad])
        rows = np.flatnonzero(deferred)
    else:
        loglik, rows = 0.0, np.arange(n)
    if len(rows):
        codes = {v: part.X[rows, j] for j, v in enumerate(variables)}
        rng = np.random.default_rng(seed)
        loglik += _estep_numpy(net, specs, codes, part.w[rows], part.index[rows], mode, rng, acc)
    return (acc, loglik, n)


def _pick(post: np.ndarray, mode: int, rng: np.random.Generator) -> np.ndarray:
    """One completion per row of the ``(n, K)`` posterior ``post``, as one-hot rows: the
    most probable (``mode`` 1; ties to the first) or a draw (``mode`` 2)."""
    if mode == 1:
        idx = np.argmax(post, axis=1)
    else:
        cum = np.cumsum(post, axis=1)
        idx = np.minimum((cum < rng.random(len(post))[:, None] * cum[:, -1:]).sum(axis=1), post.shape[1] - 1)
    out = np.zeros_like(post)
    out[np.arange(len(post)), idx] = 1.0
    return out


def _estep_numpy(
    net: FittedNetwork, specs: list, codes: dict[str, np.ndarray], w_row: np.ndarray, index: pd.Index, mode: int,
    rng: np.random.Generator, acc: _Expected,
) -> float:
    """The E-step of the rows ``codes`` in NumPy (added to ``acc``): every completion of a
    row's missing cells enumerated, or variable elimination per family where they are
    more than ``MAX_COMPLETIONS`` (there a completion is picked cell by cell: each cell
    at its most probable value given the row's observed cells (``mode`` 1), or drawn
    given them and the cells drawn before it (``mode`` 2)).  Returns their
    observed-data log-likelihood."""
    nodes = list(net.nodes)
    miss = np.column_stack([codes[v] < 0 for v in nodes])
    complete = ~miss.any(axis=1)
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
        K = math.prod(net.schema.cardinality(v) for v in missing)  # Python ints: 65 binary cells overflow int64
        if K > MAX_COMPLETIONS:
            sub = {v: c[rows] for v, c in codes.items()}
            if mode:
                imputed = dict(sub)
                for j, v in enumerate(missing):
                    logp, post = joint_posterior(net, imputed if mode == 2 else sub, [v])
                    imputed[v] = np.argmax(_pick(post, mode, rng), axis=1).astype(np.int64)
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
            raise _zero_probability(net, index[rows[int(np.argmin(np.isfinite(top[:, 0])))]])
        post = np.exp(lj - top)
        norm = post.sum(axis=1, keepdims=True)
        loglik += float(w_row[rows] @ (top[:, 0] + np.log(norm[:, 0])))
        post /= norm
        if mode:
            post = _pick(post, mode, rng)
        acc.add(comp, (post * w_row[rows][:, None]).reshape(-1))
    return loglik


def _estep_chunk(
    net: FittedNetwork, tables: _Tables | None, specs: list, variables: list[str], weights: str | None, mode: int,
    seed: int, df: pd.DataFrame,
) -> tuple:
    """Expected counts of one chunk read from the source: ``(_Expected | None, loglik, rows)``."""
    parts = _prepare(net.schema, variables, weights, df)
    if not parts:
        return (None, 0.0, 0)
    return _estep_part(net, tables, specs, variables, mode, seed, parts[0])


class EStep:
    """One pass of the E-step over a data source, for any current network: the specs
    (each node and its tree's parent order) and variables are fixed; a data frame in
    memory of at most ``CACHE_CELLS`` cells is encoded once, other sources are read
    (map-reduce) at every pass."""

    def __init__(self, source: Any, schema: Any, specs: list, variables: list[str], weights: str | None,
                 progress: bool | None) -> None:
        self.source, self.specs, self.variables = source, specs, variables
        self.weights, self.progress = weights, progress
        self.parts = None
        if source.kind == "frame" and len(source.data) * len(variables) <= CACHE_CELLS:
            self.parts = reduce_chunks(source, functools.partial(_prepare, schema, variables, weights), operator.add)

    def __call__(self, net: FittedNetwork, mode: int, seed: int = 0, desc: str = "E-step") -> tuple:
        """``(_Expected, observed-data log-likelihood)`` under ``net`` (``mode`` as
        :func:`_estep_part`)."""
        tables = _dense_tables(net, self.specs, self.variables)
        if self.parts is not None:
            res = functools.reduce(
                _merge, (_estep_part(net, tables, self.specs, self.variables, mode, seed, p) for p in self.parts),
                (None, 0.0, 0),
            )
        else:
            res = reduce_chunks(
                self.source,
                functools.partial(_estep_chunk, net, tables, self.specs, self.variables, self.weights, mode, seed),
                _merge,
                progress=self.progress,
                desc=desc,
            )
        if res is None or res[0] is None:
            raise DataError("EM found no rows to count")
        return res[0], res[1]


def _merge(a: tuple, b: tuple) -> tuple:
    if a[0] is None:
        return (b[0], a[1] + b[1], a[2] + b[2])
    if b[0] is None:
        return (a[0], a[1] + b[1], a[2] + b[2])
    return (a[0].merge(b[0]), a[1] + b[1], a[2] + b[2])


def run_em(
    net: FittedNetwork,
    estep: EStep,
    trees: dict[str, ContextTree],
    estimate: Any,
    *,
    hard: bool,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> FittedNetwork:
    """EM from the available-case fit ``net`` (see the module documentation).

    ``estep``: the E-step pass over the data; ``trees``: the available-case trees
    (their parent orders, domain included, are kept); ``estimate(trees) ->
    FittedNetwork`` runs the M-step."""
    trace: list[float] = []
    converged = False
    for it in range(1, max_iter + 1):
        acc, loglik = estep(net, 1 if hard else 0, desc=f"EM iteration {it}")
        new_trees = acc.trees()
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
