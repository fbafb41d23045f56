"""Selective kDB (Martinez et al. 2016; Zhang 2020, Sec. 3.1.3.4, Algorithm 5).

A full kDB-``k`` is learned and counted once.  Its context trees already hold
every sub-model: the tree of attribute ``X`` branches on the class and then on
its parents by decreasing CMI, so the estimate of ``X`` with only its first
``k'`` parents is the one at depth ``1 + k'``.  One pass over the training rows
then scores every sub-model ``(k', l)`` -- at most ``k'`` parents, the ``l``
attributes with the highest mutual information with the class -- by
leave-one-out cross-validation, *incrementally*: each row's own counts are
subtracted from the nodes on its path (no refit).  The pair with the lowest
leave-one-out loss (RMSE by default) is kept.

Leave-one-out probabilities use m-estimates with back-off (Petitjean et al. 2018, Sec. 6.1),
whose dependence on one row is closed-form; the selected structure is then
fitted with any estimator.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..counting.network import count_specs_source
from ..data.mapreduce import reduce_chunks
from ..data.sources import as_source
from ..data.weights import encoded_chunk as encoded_with_weights
from ..errors import HyperparameterError
from ..structure.dag import DAG
from ..structure.learning import StructureInfo, check_k, source_statistics, structure_from_statistics
from ..structure.statistics import StructureStatistics
from ..options import NAPolicy, Options
from ..validation import check_int, parallel_map
from ._loo import (loo_attribute_losses, loo_attribute_losses_by_class, loo_attribute_losses_by_key,
                   loo_attribute_probs, loo_dense_maps)

__all__ = ["learn_skdb", "learn_skdb_members", "SkdbSelection"]

_LOSSES = ("rmse", "log_loss", "zero_one")


@dataclass
class SkdbSelection:
    """The outcome of the selection.

    ``loss[k', l - 1]`` is the leave-one-out loss of the sub-model with at most
    ``k'`` extra parents and the first ``l`` attributes of ``order``.
    """

    k: int
    n_attributes: int
    order: list[str]
    loss: np.ndarray
    loss_name: str


def _check_options(loss: str, policy: NAPolicy, m: float) -> None:
    if loss not in _LOSSES:
        raise HyperparameterError(f"loss must be one of {_LOSSES}, not {loss!r}")
    if policy.name in NAPolicy.PAIRWISE:
        raise HyperparameterError(
            f'selective kDB (and ESKDB) does not take na="{policy.name}" (its leave-one-out selection counts '
            'complete rows): use na="level" or na="drop", or na="em" with nb, tan or kdb'
        )
    if not np.isfinite(m) or m < 0:
        raise HyperparameterError(f"m must be non-negative, not {m!r}")


def learn_skdb(
    data: Any,
    target: str,
    k: int,
    *,
    features: Sequence[str] | None = None,
    na: str = "level",
    m: float = 1.0,
    loss: str = "rmse",
    return_info: bool = False,
    order: Sequence[str] | None = None,
    parent_rng: np.random.Generator | None = None,
    chunksize: int | None = None,
    progress: bool | None = False,
) -> DAG | tuple[DAG, StructureInfo]:
    """Selective kDB structure: ``k* <= k`` and the attribute prefix chosen by
    incremental leave-one-out cross-validation.

    Parameters
    ----------
    data:
        A data frame or any data source :func:`pybncsmooth.fit` reads (a CSV/Parquet
        path, chunks, a Dask DataFrame): three passes, see :func:`learn_skdb_members`
        (a data frame is a source of one chunk).
    k:
        Largest number of non-class parents (``0 <= k <= n_features``).
    na:
        Missing values, as in :func:`~pybncsmooth.structure.learning.learn_structure`
        (``"pairwise"`` is not available here; use ``"level"`` or ``"drop"``).
    m:
        m of the leave-one-out m-estimates.
    loss:
        ``"rmse"`` (over all classes, as Petitjean et al. 2018), ``"log_loss"`` or ``"zero_one"``.
    order, parent_rng:
        As :func:`~pybncsmooth.structure.learning.structure_from_scores`: a given
        attribute order (the selection keeps a prefix of it) and sampled parent orders.
    chunksize, progress:
        Rows per chunk of a file; progress bars over chunks.

    Returns
    -------
    DAG
        The class, and the selected attributes each with the class and its first
        ``k*`` kDB parents.  With ``return_info`` also a :class:`StructureInfo`
        whose ``extra["selection"]`` is a :class:`SkdbSelection`.
    """
    options = Options(na=NAPolicy(na).name, progress=progress,
                      chunksize=check_int("chunksize", chunksize, low=1, optional=True))
    return learn_skdb_members(
        data, target, k, [(order, parent_rng)], options, features=features, m=m, loss=loss, return_info=return_info,
    )[0]


def _loo_sums(
    codes: Any,
    y: np.ndarray,
    trees: dict,
    full: DAG,
    order: Sequence[str],
    k: int,
    m: float,
    kind: int,
    ny: np.ndarray,
    n: float,
    w: np.ndarray | None = None,
    tables: dict | None = None,
) -> np.ndarray:
    """Sums over the rows of ``codes`` (one chunk) of each sub-model's leave-one-out loss:
    ``out[k', l - 1]`` for at most ``k'`` parents and the first ``l`` attributes of
    ``order``.  ``trees`` hold the counts of all ``n`` rows (this chunk's included),
    ``ny`` the class counts of all rows: each row's own counts are taken out.  With row
    weights ``w``, row ``i``'s loss counts ``w_i`` times and ``min(w_i, 1)`` is taken out
    (integer weights: exactly the repeated rows).  ``tables``: a memo of the trees'
    flat tables (:func:`_memo_tables`) shared by the members of one chunk."""
    K = len(ny)
    nc = len(y)
    losses = np.zeros((k + 1, len(order)))
    if nc == 0:
        return losses
    wt = np.ones(nc) if w is None else np.asarray(w, dtype=np.float64)
    d = np.minimum(wt, 1.0)
    prior = _loo_prior(ny, y, d, n, m)
    post = np.repeat(prior[None, :, :], k + 1, axis=0)  # linear space, renormalised after each attribute
    for li, f in enumerate(order):
        pa = full.parents(f)
        P = np.zeros((nc, len(pa)), dtype=np.int64)
        for j, p in enumerate(pa[1:], start=1):
            P[:, j] = codes[p]
        _attribute_step_losses(trees[f], np.asarray(codes[f], dtype=np.int64), P, y, K, m, d, post, kind, wt,
                               losses[:, li], tables=_memo_tables(tables, (f, tuple(pa)), trees[f], m))
    return losses


def _loo_prior(ny: np.ndarray, y: np.ndarray, d: np.ndarray, n: float, m: float) -> np.ndarray:
    """Each row's leave-one-out class prior: the m-estimate of the class counts ``ny``
    with the row's own ``d`` taken out (uniform when nothing is left)."""
    K = len(ny)
    den = n - d + m
    return np.where(
        (den > 0)[:, None],
        (ny[None, :] - np.eye(K)[y] * d[:, None] + m / K) / np.where(den > 0, den, 1.0)[:, None],
        1.0 / K,
    )


def _attribute_step(
    tree: Any, x: np.ndarray, P: np.ndarray, y: np.ndarray, K: int, m: float, d: np.ndarray, post: np.ndarray
) -> None:
    """Multiply every sub-model's leave-one-out posterior ``post`` by the attribute's
    m-estimate given each row's parents (its own counts taken out): the compiled
    :func:`loo_attribute_probs` on the tree's flat tables."""
    loo_attribute_probs(x, P, y, K, *_attribute_tables(tree, m), float(m), d, post)


def _attribute_step_losses(
    tree: Any, x: np.ndarray, P: np.ndarray, y: np.ndarray, K: int, m: float, d: np.ndarray, post: np.ndarray,
    kind: int, wt: np.ndarray, out_col: np.ndarray, tables: tuple | None = None,
) -> None:
    """:func:`_attribute_step` then :func:`loo_normalize_losses` into ``out_col``, in one
    compiled pass over the rows (:func:`loo_attribute_losses`: the same numbers);
    ``tables``: the tree's :func:`_attribute_tables` if already made.  Two kernels give
    the same numbers with less work where they apply: every row taking out the same
    ``d`` and at most half as many paths (:func:`_path_keys`) as rows,
    :func:`loo_attribute_losses_by_key` (each path's estimates made once); else with
    many classes and a small enough table, :func:`loo_attribute_losses_by_class`."""
    if tables is None:
        tables = _attribute_tables(tree, m)
    n = len(x)
    kernel = loo_attribute_losses
    if n and x.min() >= 0:  # a value's code indexes the kernels' tables
        if _path_keys(tables, K) <= n // 2 and (d == d[0]).all():
            kernel = loo_attribute_losses_by_key
        elif K >= _BY_CLASS_MIN_CLASSES and 0 < _by_class_table_size(tables, K) <= n * K * post.shape[0] // 2:
            kernel = loo_attribute_losses_by_class
    kernel(x, P, y, K, *tables, float(m), d, post, kind, wt, out_col)


def _path_keys(tables: tuple, K: int) -> int:
    """The keys of :func:`~pybncsmooth.classifiers._loo.loo_attribute_losses_by_key` on
    a tree's :func:`_attribute_tables`: ``K r S``, ``S`` the product of the non-class
    parents' cardinalities."""
    r, cards = tables[0], tables[1]
    return int(K) * int(r) * int(np.prod(cards[1:], dtype=np.float64))


#: the fewest classes from which :func:`loo_attribute_losses_by_class` is taken: with
#: fewer, a row's vector of the other classes' estimates is too short to gain (dna's 3
#: classes: 5% slower; shuttle's 7: 15% faster, letter's 26: 25-40%)
_BY_CLASS_MIN_CLASSES = 5


def _by_class_table_size(tables: tuple, K: int, levels: int | None = None) -> int:
    """The doubles of :func:`~pybncsmooth.classifiers._loo.loo_attribute_losses_by_class`'s
    table on a tree's :func:`_attribute_tables`, ``r K \\sum_j stride_j`` over its levels
    ``j >= 1`` (``stride_j``: the product of the non-class parents' cardinalities above
    level ``j``); 0 when a level has no dense map or the first parent is not the class.
    ``levels``: the first levels only (:func:`~pybncsmooth.classifiers._loo.loo_level_posterior_by_class`'s
    table)."""
    r, cards, _, _, _, dense_offsets = tables[:6]
    depth = len(dense_offsets) - 1 if levels is None else min(levels, len(dense_offsets) - 1)
    if depth < 1 or (dense_offsets[1 : depth + 1] < 0).any() or cards[0] != K:
        return 0
    strides = np.cumprod(np.concatenate(([1], cards[1:depth])))
    return int(r) * K * int(strides.sum())


def _memo_tables(memo: dict | None, key: tuple, tree: Any, m: float) -> tuple:
    """The tree's :func:`_attribute_tables` from ``memo`` (``None``: none), made and kept
    there when absent.  ``key``: the node and its ordered full-kDB parents, which fix
    the tree within one fit (members that share a node's parents share its tree); a
    memo lives for one chunk's pass and one ``m``.  Two threads may both make an
    absent entry: the same tables."""
    if memo is None:
        return _attribute_tables(tree, m)
    out = memo.get(key)
    if out is None:
        out = memo[key] = _attribute_tables(tree, m)
    return out


def _attribute_tables(tree: Any, m: float) -> tuple:
    """The tree's flat tables the leave-one-out kernels read: ``r``, the parents'
    cardinalities, search keys, level offsets, dense maps and their offsets, counts,
    totals and the full-data m-estimates."""
    levels = tree.levels
    offsets = np.cumsum([0] + [len(lev.value) for lev in levels]).astype(np.int64)
    counts = np.concatenate([lev.counts for lev in levels], axis=0).astype(np.float64)
    totals = counts.sum(axis=1)
    r = tree.child_card
    if m > 0 or totals.min() > 0:
        probtab = (counts + m / r) / (totals[:, None] + m)
    else:  # m = 0 with an empty node: only the root can be empty
        probtab = np.where(totals[:, None] > 0, counts / np.maximum(totals, 1)[:, None], 1.0 / r)
    cards = np.asarray(tree.parent_cards, dtype=np.int64)
    if len(levels) > 1:  # _dense_node_maps in one compiled pass
        parent = np.concatenate([lev.parent for lev in levels[1:]]).astype(np.int64, copy=False)
        value = np.concatenate([lev.value for lev in levels[1:]]).astype(np.int64, copy=False)
        dense, dense_offsets = loo_dense_maps(parent, value, offsets, cards, _DENSE_MAP_LIMIT)
    else:
        dense, dense_offsets = _dense_node_maps(tree)
    # the search keys only where a level has no dense map (the kernel reads them nowhere else)
    keys = np.concatenate(tree.keys).astype(np.int64) if (dense_offsets[1:] < 0).any() else np.zeros(1, np.int64)
    return (r, cards, keys, offsets, dense, dense_offsets, counts, totals, probtab)


def _select(
    sums: np.ndarray,
    n: int,
    loss: str,
    k: int,
    full: DAG,
    info: StructureInfo,
    trees: dict,
    schema: Any,
    features: Sequence[str],
    target: str,
    return_info: bool,
) -> DAG | tuple[DAG, StructureInfo]:
    """The sub-model of lowest leave-one-out loss (ties: fewer attributes, then fewer parents)."""
    losses = np.sqrt(sums / n) if loss == "rmse" else sums / n
    order = info.order
    best = np.min(losses)
    tol = 1e-12 * max(1.0, abs(best))
    cand = [(li, kk) for kk in range(k + 1) for li in range(len(order)) if losses[kk, li] <= best + tol]
    li, kk = min(cand)
    chosen = order[: li + 1]
    parents = {target: []}
    for f in chosen:
        parents[f] = full.parents(f)[: 1 + kk]
    nodes = [target] + [f for f in features if f in chosen]
    dag = DAG(parents, nodes=nodes)
    if not return_info:
        return dag
    info.kind = "skdb"
    info.extra["selection"] = SkdbSelection(kk, li + 1, list(order), losses, loss)
    info.extra["full_kdb"] = full
    info.extra["trees"] = trees  # the full kDB's counts: the selected trees are their first levels
    info.extra["schema"] = schema
    info.extra["n_rows"] = n
    return dag, info


def _loo_chunk(
    n_jobs: int | None,
    schema: Any,
    variables: list,
    policy: NAPolicy,
    target: str,
    members: list,
    k: int,
    m: float,
    kind: int,
    ny: np.ndarray,
    n: float,
    weights: str | None,
    memo: dict | None,
    df: pd.DataFrame,
    sum_out: bool = False,
) -> list[np.ndarray]:
    if len(df) == 0:
        return [np.zeros((k + 1, len(info.order))) for _, info, _ in members]
    # a chunk with no complete row under na="drop" adds zeros (_loo_sums of no rows)
    enc, y, w = encoded_chunk(memo, df, schema, variables, policy, target, weights)
    tables: dict = {} if memo is None else memo  # a tree two members share, flattened once
    if sum_out:  # ESKDB's members sum a query's missing cells out: so do their losses
        holes = missing_cells(df, variables[1:])
        col = {v: j for j, v in enumerate(variables[1:])}
        return parallel_map(
            lambda mem: _loo_sums_summed_out(enc, y, mem[2], mem[0], mem[1].order, k, m, kind, ny, n, w, tables,
                                             holes[:, [col[f] for f in mem[1].order]]), members, n_jobs
        )
    return parallel_map(
        lambda mem: _loo_sums(enc, y, mem[2], mem[0], mem[1].order, k, m, kind, ny, n, w, tables), members, n_jobs
    )


def encoded_chunk(memo: dict | None, df: pd.DataFrame, schema: Any, variables: list, policy: NAPolicy, target: str,
                  weights: str | None) -> tuple:
    """The chunk's codes as the leave-one-out passes read them: ``(codes, classes,
    row weights or None)``, through the fit's ``memo``
    (:func:`~pybncsmooth.data.weights.encoded_chunk`: a data frame encoded once for the
    counting, selection and tempering passes)."""
    enc, w = encoded_with_weights(memo, df, schema, variables, policy.counting, policy.label, weights)
    return enc, enc[target].astype(np.int64), w


def _add_lists(a: list, b: list) -> list:
    return [x + y for x, y in zip(a, b)]


def learn_skdb_members(
    data: Any,
    target: str,
    k: int,
    members: Sequence[tuple[Sequence[str] | None, np.random.Generator | None]],
    options: Options,
    *,
    features: Sequence[str] | None = None,
    m: float = 1.0,
    loss: str = "rmse",
    return_info: bool = False,
    stats: StructureStatistics | None = None,
    n_jobs: int | None = 1,
    tables: dict | None = None,
) -> list:
    """Selective kDB from any data source (a data frame, a CSV/Parquet path, chunks, a
    Dask DataFrame) in three passes over the data, for one or several members at once
    (each ``(order, parent_rng)`` as :func:`learn_skdb`'s; the members of an ESKDB
    ensemble): (1) the counts MI and CMI need (skipped when ``stats`` are given), (2)
    the context trees of every member's full kDB (a tree shared by members counted
    once), (3) the leave-one-out losses of every member's sub-models, summed chunk by
    chunk, the members' sums in up to ``n_jobs`` threads.  Memory: the trees and one
    chunk.  The result does not depend on how the data are cut into chunks.  Read from
    ``options``: the missing values' policy, ``chunksize``, ``progress`` and ``weights``
    (a column of row weights: counts, statistics and losses weighted; integer weights
    equal repeated rows).  ``tables``: a memo of the trees' flat tables
    (:func:`_memo_tables`) to fill and keep beyond the pass (ESKDB's tempering reads
    the same trees with the same ``m``); ``None``: one memo per chunk, dropped after it."""
    policy = options.missing
    _check_options(loss, policy, m)
    weights, progress = options.weights, options.progress
    source = as_source(data, chunksize=options.chunksize)
    source.require_passes(3 if stats is None else 2, "selective kDB")
    if stats is None:
        feats0 = list(features) if features is not None else None
        stats = source_statistics(source, target, feats0, options, pairs=k != 0)
    feats = list(features) if features is not None else list(stats.features)
    k = check_k(k, len(feats))
    fulls = [
        structure_from_statistics(stats, "kdb", k, features=feats, order=order, parent_rng=g) for order, g in members
    ]
    specs = list(dict.fromkeys((v, tuple(full.parents(v))) for full, _ in fulls for v in full.nodes))
    schema = stats.schema.subset([target, *feats])
    n, trees = count_specs_source(source, schema, specs, na=policy.counting, progress=progress, weights=weights,
                                  na_label=policy.label, memo=tables)
    by_spec = dict(zip(specs, trees))
    member_trees = [{v: by_spec[(v, tuple(full.parents(v)))] for v in full.nodes} for full, _ in fulls]
    ny = by_spec[(target, ())].levels[0].counts[0].astype(np.float64)
    if weights is not None:
        n = float(ny.sum())  # the rows' summed weights
    kind = _LOSSES.index(loss)
    packed = [(full, info, tr) for (full, info), tr in zip(fulls, member_trees)]
    variables = [target, *feats]
    sums = reduce_chunks(
        source,
        functools.partial(_loo_chunk, n_jobs, schema, variables, policy, target, packed, k, m, kind, ny, n, weights,
                          tables, sum_out=sums_out_missing(options)),
        _add_lists,
        progress=progress,
        desc="leave-one-out",
    )
    return [
        _select(s, n, loss, k, full, info, tr, schema, feats, target, return_info)
        for s, (full, info, tr) in zip(sums, packed)
    ]


_DENSE_MAP_LIMIT = 1 << 22


def _dense_node_maps(tree) -> tuple[np.ndarray, np.ndarray]:
    """Per tree level, an array from mixed-radix configuration code to node index
    (-1: not in the tree), where the level's configuration space is small enough."""
    maps = []
    offs = np.full(tree.depth + 1, -1, dtype=np.int64)
    start = 0
    q = 1
    code = np.zeros(1, dtype=np.int64)  # the root's
    for j in range(1, tree.depth + 1):
        card = tree.parent_cards[j - 1]
        q *= card
        if q > _DENSE_MAP_LIMIT:
            break
        lev = tree.levels[j]
        code = code[lev.parent] * card + lev.value  # a node's code from its parent's
        arr = np.full(q, -1, dtype=np.int64)
        arr[code] = np.arange(len(code))
        maps.append(arr)
        offs[j] = start
        start += q
    dense = np.concatenate(maps) if maps else np.zeros(1, dtype=np.int64)
    return dense, offs


#: the most entries a row's table over its missing cells still in use may hold when
#: they are summed out of the leave-one-out posteriors (above it: the row is read
#: with the missing level, as without summing out)
SUM_OUT_LIMIT = 1 << 12  # 4096


def sums_out_missing(options: Options) -> bool:
    """Whether ESKDB's leave-one-out passes (selection and tempering) sum a row's
    missing cells out, as its members answer queries (``sum_out_missing``, ESKDB under
    ``na="level"``)."""
    return bool(options.structure == "eskdb" and options.missing.name == "level"
                and getattr(options, "sum_out_missing", False))


def missing_cells(df: pd.DataFrame, features: Sequence[str]) -> np.ndarray:
    """``(rows, features)``: which cells of ``df`` are missing (``NaN``/``None``)."""
    return df[list(features)].isna().to_numpy() if len(features) else np.zeros((len(df), 0), dtype=bool)


def _flat_tables(names: Sequence[str], full: DAG, trees: dict, m: float, tables: dict | None) -> tuple:
    """The context trees of the attributes ``names`` (in that order) flattened one after
    the other for :func:`~._loo.loo_summed_out_posteriors`: positions of each one's
    full-kDB parents, their number, the trees' depths and ``r``, then each table of
    :func:`_attribute_tables` concatenated with where each attribute's part starts."""
    L = len(names)
    pos = {f: j for j, f in enumerate(names)}
    tabs = [_memo_tables(tables, (f, tuple(full.parents(f))), trees[f], m) for f in names]
    pars = [[pos[p] for p in full.parents(f)[1:]] for f in names]
    npar = np.array([len(p) for p in pars], dtype=np.int64)
    fpar = np.full((L, max(1, int(npar.max(initial=0)))), -1, dtype=np.int64)
    for t, p in enumerate(pars):
        fpar[t, : len(p)] = p
    r = np.array([int(t[0]) for t in tabs], dtype=np.int64)
    depth = np.array([len(t[3]) - 2 for t in tabs], dtype=np.int64)

    def flat(j: int, ravel: bool = False) -> tuple[np.ndarray, np.ndarray]:
        parts = [np.ascontiguousarray(t[j]).ravel() if ravel else np.asarray(t[j]) for t in tabs]
        off = np.cumsum([0] + [len(x) for x in parts[:-1]]).astype(np.int64)
        return np.concatenate(parts), off

    cards, cards_off = flat(1)
    keys, keys_off = flat(2)
    offs, offs_off = flat(3)
    dense, dense_base = flat(4)
    doffs, doffs_off = flat(5)
    counts, counts_off = flat(6, ravel=True)
    totals, nodes_off = flat(7)
    probtab, _ = flat(8, ravel=True)
    return (fpar, npar, depth, r, cards.astype(np.int64), cards_off, keys.astype(np.int64), keys_off,
            offs.astype(np.int64), offs_off, dense.astype(np.int64), dense_base, doffs.astype(np.int64), doffs_off,
            counts.astype(np.float64), counts_off, totals.astype(np.float64), nodes_off, probtab.astype(np.float64))


def loo_summed_out(
    codes: Any, rows: np.ndarray, y: np.ndarray, d: np.ndarray, prior: np.ndarray, order: Sequence[str],
    n_attributes: int, full: DAG, trees: dict, ks: Sequence[int], m: float, missing: np.ndarray,
    tables: dict | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""The leave-one-out class posteriors of the rows ``rows`` of ``codes`` with their
    missing cells summed out, for every number of extra parents ``k'`` of ``ks`` and
    attribute prefix ``l <= n_attributes`` of ``order``: ``(out, ok)``, ``out[j, a, l - 1]``
    the posterior of row ``rows[j]`` (``ok[j]`` false: its table over its missing cells
    would exceed :data:`SUM_OUT_LIMIT`, and ``out[j]`` is not set).

    A member fitted under ``na="level"`` answers a query by summing its missing cells
    out over all their levels (the missing level included,
    :func:`~pybncsmooth.classifiers.classifier._summing_out`).  Here the same on the
    leave-one-out m-estimates (the row's own counts out of the nodes on its path, as
    :func:`~._loo.loo_attribute_probs` takes them out; a completion off that path reads
    the full data's estimates, :func:`~._loo.loo_summed_out_posteriors`):

    .. math::

        \hat p_{-i}(c \mid x_O) \propto \hat p_{-i}(c) \sum_{x_H}
            \prod_{j \le l} \hat p_{-i}(x_j \mid c, \pi^{k'}_j),

    ``O`` the row's observed attributes, ``H`` its missing ones, by variable elimination
    along ``order`` (:func:`~._loo.loo_summed_out_posteriors`).  ``y``, ``d``, ``prior``:
    every row's class, what it takes out of the counts and its leave-one-out class prior
    (:func:`_loo_prior`); ``missing[i, j]``: whether attribute ``order[j]`` is missing in
    row ``i``; ``tables``: a memo of the trees' flat tables (:func:`_memo_tables`)."""
    from ._loo import loo_summed_out_posteriors

    names = list(order[: int(n_attributes)])
    rows = np.asarray(rows, dtype=np.int64)
    K = prior.shape[1]
    out = np.zeros((len(rows), len(ks), len(names), K))
    ok = np.zeros(len(rows), dtype=np.bool_)
    if len(rows) == 0:
        return out, ok
    x = np.stack([np.asarray(codes[f], dtype=np.int64)[rows] for f in names], axis=1)
    miss = np.ascontiguousarray(missing[rows][:, : len(names)], dtype=np.bool_)
    loo_summed_out_posteriors(x, miss, np.asarray(y, dtype=np.int64)[rows], np.asarray(d, dtype=np.float64)[rows],
                              np.ascontiguousarray(prior[rows]), np.asarray(ks, dtype=np.int64),
                              *_flat_tables(names, full, trees, m, tables), float(m), SUM_OUT_LIMIT, out, ok)
    return out, ok


def loo_summed_out_row(
    codes: Any, i: int, y: int, d: float, prior: np.ndarray, order: Sequence[str], n_attributes: int,
    full: DAG, trees: dict, ks: Sequence[int], m: float, missing: np.ndarray, tables: dict | None = None,
) -> np.ndarray | None:
    """Row ``i``'s posteriors of :func:`loo_summed_out` (``missing``: the row's cells,
    columns in ``order``; ``None``: its table would exceed :data:`SUM_OUT_LIMIT`)."""
    n = len(np.asarray(codes[order[0]]))
    yy = np.zeros(n, dtype=np.int64)
    yy[i] = y
    dd = np.ones(n)
    dd[i] = d
    pp = np.zeros((n, len(prior)))
    pp[i] = prior
    mm = np.zeros((n, len(missing)), dtype=bool)
    mm[i] = missing
    out, ok = loo_summed_out(codes, np.array([i]), yy, dd, pp, order, n_attributes, full, trees, ks, m, mm, tables)
    return out[0] if ok[0] else None


def _row_losses(post: np.ndarray, y: int, kind: int) -> np.ndarray:
    """The loss of the class posteriors ``post[..., c]`` of a row of class ``y``, as
    :func:`~._loo.loo_normalize_losses` scores them (``kind``: 0 squared error over all
    classes, 1 log loss, 2 0-1 loss, ties to the first class)."""
    if kind == 0:
        onehot = np.zeros(post.shape[-1])
        onehot[y] = 1.0
        return ((post - onehot) ** 2).sum(axis=-1)
    if kind == 1:
        return -np.log(np.maximum(post[..., y], 1e-300))
    return (np.argmax(post, axis=-1) != y).astype(np.float64)


def _loo_sums_summed_out(
    codes: Any, y: np.ndarray, trees: dict, full: DAG, order: Sequence[str], k: int, m: float, kind: int,
    ny: np.ndarray, n: float, w: np.ndarray | None, tables: dict | None, missing: np.ndarray,
) -> np.ndarray:
    """:func:`_loo_sums` with each row's missing cells summed out of its leave-one-out
    posteriors (:func:`loo_summed_out_row`; ``missing``: the chunk's missing cells,
    columns in ``order``): the complete rows by :func:`_loo_sums`, each incomplete row by
    itself (a row whose table would exceed :data:`SUM_OUT_LIMIT`: by :func:`_loo_sums`,
    the missing level read)."""
    holes = missing.any(axis=1)
    if not holes.any():
        return _loo_sums(codes, y, trees, full, order, k, m, kind, ny, n, w, tables)
    wt = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
    d = np.minimum(wt, 1.0)
    prior = _loo_prior(ny, y, d, n, m)
    losses = np.zeros((k + 1, len(order)))
    level = ~holes
    rows = np.flatnonzero(holes)
    post, ok = loo_summed_out(codes, rows, y, d, prior, order, len(order), full, trees, range(k + 1), m, missing,
                              tables)
    level[rows[~ok]] = True
    for j in np.flatnonzero(ok):
        losses += wt[rows[j]] * _row_losses(post[j], int(y[rows[j]]), kind)
    if level.any():
        rows = np.flatnonzero(level)
        sub = {v: np.asarray(codes[v])[rows] for v in order}
        losses += _loo_sums(sub, y[rows], trees, full, order, k, m, kind, ny, n, None if w is None else wt[rows],
                            tables)
    return losses
