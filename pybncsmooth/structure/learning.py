"""Classifier structures learned from data: naive Bayes, TAN and kDB.

Every structure comes back as a :class:`DAG` whose parent lists are the
branching order of each context tree: the class first, then the other parents
by decreasing conditional mutual information with the child given the class
(Petitjean et al. 2018, Sec. 3.3; Cooper et al. 2025, Sec. 3.1).  The node order is the class, then the
features in the data's column order.

* naive Bayes: the class is the only parent of every feature.
* TAN (Friedman, Geiger & Goldszmidt 1997): a maximum-weight spanning tree over
  the features, weighted by :math:`I(X_i; X_j \\mid C)` (Chow-Liu), directed away
  from the root (default: the first feature, as bnlearn's ``tree.bayes``).
* kDB (Sahami 1996; Zhang 2020, Sec. 3.1.3.3, Algorithm 3): features in decreasing
  :math:`I(X_i; C)`; each takes as parents the ``k`` earlier features with the
  largest :math:`I(X_i; X_j \\mid C)`.

Selective kDB is in :mod:`pybncsmooth.classifiers.skdb` (it needs the counts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..data.encode import DEFAULT_MAX_LEVELS
from ..data.sources import as_source
from ..errors import DataError, EmptyDataError, HyperparameterError, MissingColumnError
from ..options import NAPolicy, Options
from ..validation import check_int
from .dag import DAG
from .statistics import StructureStatistics, collect_statistics

__all__ = [
    "learn_structure",
    "structure_from_scores",
    "StructureInfo",
    "KINDS",
    "check_k",
    "sample_order",
    "resolve_features",
    "source_statistics",
    "structure_from_statistics",
]

KINDS = ("nb", "tan", "kdb", "skdb")


@dataclass
class StructureInfo:
    """What structure learning computed (for inspection and for SkDB).

    ``mi[f]`` is :math:`I(f; C)`; ``cmi`` the matrix of :math:`I(X_i; X_j \\mid C)` over
    ``features`` (when computed); ``order`` the features by decreasing MI (kDB);
    ``tree_arcs`` and ``tree_weight`` the TAN tree.
    """

    target: str
    features: list[str]
    kind: str
    mi: dict[str, float] = field(default_factory=dict)
    cmi: np.ndarray | None = None
    order: list[str] = field(default_factory=list)
    tree_arcs: list[tuple[str, str]] = field(default_factory=list)
    tree_weight: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def check_k(k: Any, n_features: int) -> int:
    """``k`` must be an integer with ``0 <= k <= n_features``."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise HyperparameterError(f"k must be an integer, not {k!r}")
    if k < 0:
        raise HyperparameterError(f"k must be >= 0, not {k}")
    if k > n_features:
        raise HyperparameterError(f"k = {k} is larger than the number of features (n_features = {n_features})")
    return int(k)


def resolve_features(columns: Sequence[str], target: str, features: Sequence[str] | None) -> list[str]:
    """The feature columns: given ones checked against ``columns``, or every column but the class."""
    cols = [str(c) for c in columns]
    if target not in cols:
        raise MissingColumnError(target, "class", cols)
    if features is None:
        features = [c for c in cols if c != target]
    else:
        features = [str(f) for f in features]
        for f in features:
            if f not in cols:
                raise MissingColumnError(f, "feature", cols)
        if target in features:
            raise DataError(f"the class {target!r} is also listed as a feature")
    if not features:
        raise DataError(f"there is no feature besides the class {target!r}")
    return list(features)


def source_statistics(
    data: Any,
    target: str,
    features: Sequence[str] | None,
    options: Options,
    *,
    pairs: bool = True,
) -> StructureStatistics:
    """One pass over any data source (frame, path, chunks, Dask DataFrame): the counts
    structure learning needs, checked (rows, two classes) and with relabellings warned.
    Read from ``options``: the missing values' policy for structure learning
    (:attr:`NAPolicy.structure`) and its label, ``max_levels``, ``chunksize``,
    ``progress``, and ``weights`` (a column of row weights: the counts are then sums of
    weights)."""
    source = as_source(data, chunksize=options.chunksize)
    cols = source.columns()
    if cols is None:
        raise EmptyDataError("the data has no chunk")
    weights = options.weights
    feats = resolve_features([c for c in cols if c != weights], target, features)
    policy = options.missing
    stats = StructureStatistics(target, feats, na=policy.structure, pairs=pairs, max_levels=options.max_levels,
                                weights=weights, na_label=policy.label)
    stats = collect_statistics(source, stats, progress=bool(options.progress))
    stats.check()
    stats.warn_relabellings(stacklevel=5)
    return stats


def structure_from_statistics(
    stats: StructureStatistics,
    kind: str,
    k: int | None = None,
    *,
    features: Sequence[str] | None = None,
    root: str | None = None,
    order: Sequence[str] | None = None,
    parent_rng: np.random.Generator | None = None,
) -> tuple[DAG, StructureInfo]:
    """:func:`structure_from_codes` from counts collected by :func:`source_statistics`
    (``features``: a subset of the collected ones, e.g. without single-valued ones)."""
    feats = list(stats.features if features is None else features)
    mi = stats.mi(feats) if kind == "kdb" else None
    need_cmi = kind == "tan" or (kind == "kdb" and k is not None and k > 0)
    cmi = stats.cmi(feats) if need_cmi else None
    return structure_from_scores(
        stats.target, feats, kind, k, root=root, order=order, parent_rng=parent_rng, mi=mi, cmi=cmi
    )


def maximum_spanning_tree(weights: np.ndarray) -> list[tuple[int, int]]:
    """Kruskal's algorithm; ties broken by the order of the pairs ``(i, j), i < j``."""
    p = weights.shape[0]
    iu, ju = np.triu_indices(p, k=1)
    order = np.argsort(-weights[iu, ju], kind="stable")
    parent = list(range(p))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    edges = []
    for e in order:
        a, b = int(iu[e]), int(ju[e])
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
            edges.append((a, b))
            if len(edges) == p - 1:
                break
    return edges


def _orient(edges: list[tuple[int, int]], p: int, root: int) -> list[tuple[int, int]]:
    """Direct an undirected tree away from ``root`` (breadth first)."""
    adj: dict[int, list[int]] = {i: [] for i in range(p)}
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    out, seen, queue = [], {root}, [root]
    while queue:
        a = queue.pop(0)
        for b in sorted(adj[a]):
            if b not in seen:
                seen.add(b)
                out.append((a, b))
                queue.append(b)
    return out


def learn_structure(
    data: Any,
    target: str,
    kind: str = "tan",
    k: int | None = None,
    *,
    features: Sequence[str] | None = None,
    root: str | None = None,
    na: str = "level",
    return_info: bool = False,
    max_levels: int = DEFAULT_MAX_LEVELS,
    chunksize: int | None = None,
    progress: bool | None = False,
) -> DAG | tuple[DAG, StructureInfo]:
    """Learn a classifier structure: ``kind="nb"``, ``"tan"`` or ``"kdb"`` (with ``k``).

    Parameters
    ----------
    data:
        Categorical data holding ``target`` and the features: a data frame, or any
        source :func:`pybncsmooth.fit` reads (a CSV/Parquet path, chunks, a Dask
        DataFrame), read once, in chunks (``chunksize``), in bounded memory: the
        structure needs only the counts of class, feature-class and
        feature-pair-class, merged over chunks.
    target:
        The class column.
    kind:
        ``"nb"``, ``"tan"`` or ``"kdb"``; for ``"skdb"`` use
        :func:`pybncsmooth.classifiers.skdb.learn_skdb` (it needs an estimator).
    k:
        Number of non-class parents for kDB (``0 <= k <= n_features``).
    features:
        Feature columns (default: every other column, in column order).
    root:
        Root of the TAN tree (default: the first feature, as bnlearn).
    na:
        ``"level"`` (missing is a level, Petitjean et al.'s (2018) protocol), ``"pairwise"``
        (each (C)MI on the rows where its variables are observed: bnlearn's TAN),
        ``"drop"`` (complete rows only) or ``"error"``.
    return_info:
        Also return a :class:`StructureInfo` (MI, CMI, tree weights).

    Returns
    -------
    DAG
        Nodes: the class, then the features; each feature's parents are the class
        first, then its other parents by decreasing CMI given the class.
    """
    if kind not in ("nb", "tan", "kdb"):
        if kind == "skdb":
            raise HyperparameterError(
                "selective kDB needs counts and an estimator: use pybncsmooth.classifiers.learn_skdb "
                "or BNClassifier(structure='skdb')"
            )
        raise HyperparameterError(f"kind must be one of 'nb', 'tan', 'kdb', not {kind!r}")
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer))):
        raise HyperparameterError(f"k must be an integer, not {k!r}")  # its range once the features are known
    if na not in NAPolicy.STRUCTURE:
        raise DataError(f"na must be one of {NAPolicy.STRUCTURE} for structure learning, not {na!r}")
    options = Options(na=na, max_levels=check_int("max_levels", max_levels, low=2), progress=progress,
                      chunksize=check_int("chunksize", chunksize, low=1, optional=True))
    stats = source_statistics(data, target, features, options, pairs=kind != "nb")
    dag, info = structure_from_statistics(stats, kind, k, root=root)
    info.extra["n_rows"] = stats.n_rows
    return (dag, info) if return_info else dag


def sample_order(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random order of ``range(len(weights))`` drawn without replacement with
    probabilities proportional to the (non-negative) weights, renormalised after each
    draw (Zhang 2020, Algorithm 12); once only zero weights remain, uniformly.

    Drawn in one pass by Efraimidis & Spirakis' keys (2006): sorting by
    :math:`u_i^{1/w_i}` (here :math:`\\log u_i / w_i`), largest first, has exactly the
    distribution of the successive draws; zero weights sort after every positive one,
    among themselves by a uniform key.
    """
    w = np.clip(np.asarray(weights, dtype=np.float64), 0.0, None)
    u = rng.random((2, len(w)))
    return np.lexsort((-u[1], -_order_keys(w, u[0]))).astype(np.int64)


def _order_keys(w: np.ndarray, u: np.ndarray) -> np.ndarray:
    """:func:`sample_order`'s keys :math:`\\log(1 - u_i) / w_i` of the clipped weights
    ``w`` (``-inf`` where ``w_i = 0``; ``1 - u_i > 0``: no division by zero)."""
    pos = w > 0
    return np.where(pos, np.log1p(-u) / np.where(pos, w, 1.0), -np.inf)


def _sampled_kdb_parents(order: Sequence[str], k: int, w: np.ndarray, pos: dict[str, int],
                         rng: np.random.Generator) -> list[list[str]]:
    """Every feature's parents by :func:`_kdb_parents` with ``rng`` (the ``i``-th of
    ``order`` the first ``k`` of its ``i`` earlier features in an order sampled by
    :func:`sample_order` on their CMI), all features in one sort: the same draws (one
    call of ``rng.random`` for all, the stream of one call per feature in turn) and
    the same orders (a stable sort by feature, then as :func:`sample_order`)."""
    p = len(order)
    out: list[list[str]] = [[]]
    if p < 2:
        return out[:p]
    lens = np.arange(1, p, dtype=np.int64)  # feature i has i earlier ones
    starts = np.concatenate(([0], np.cumsum(lens)[:-1]))  # where each feature's candidates start
    total = int(lens.sum())
    u = rng.random(2 * total)  # feature i's (2, i) draws in turn
    g = np.repeat(lens, lens)  # each candidate's feature
    t = np.arange(total, dtype=np.int64) - np.repeat(starts, lens)  # its place among the earlier features
    u0 = u[2 * np.repeat(starts, lens) + t]
    u1 = u[2 * np.repeat(starts, lens) + g + t]
    idx = np.array([pos[f] for f in order], dtype=np.int64)
    scores = np.clip(np.asarray(w[idx[g], idx[t]], dtype=np.float64), 0.0, None)
    ranked = t[np.lexsort((-u1, -_order_keys(scores, u0), g))]
    for i in range(1, p):
        out.append([order[j] for j in ranked[starts[i - 1] : starts[i - 1] + min(k, i)]])
    return out


def structure_from_scores(
    target: str,
    features: Sequence[str],
    kind: str,
    k: int | None = None,
    *,
    root: str | None = None,
    order: Sequence[str] | None = None,
    parent_rng: np.random.Generator | None = None,
    mi: dict[str, float] | None = None,
    cmi: np.ndarray | None = None,
) -> tuple[DAG, StructureInfo]:
    """The structure of :func:`learn_structure` from the scores it rests on: ``mi``
    (:math:`I(X_i; C)` per feature; kDB) and ``cmi`` (the matrix of
    :math:`I(X_i; X_j \\mid C)` over ``features``; TAN, kDB with ``k > 0``).

    For kDB, ``order`` replaces the features' order by decreasing MI with the class,
    and ``parent_rng`` replaces each feature's parents (the ``k`` earlier features of
    highest CMI, by decreasing CMI) by the first ``k`` of an order of the earlier
    features sampled with probabilities proportional to their CMI (the two
    stochasticities of ESKDB, Zhang 2020, Sec. 4.2.2-4.2.3)."""
    features = list(features)
    info = StructureInfo(target=target, features=features, kind=kind)
    parents: dict[str, list[str]] = {target: []}
    if kind == "nb":
        for f in features:
            parents[f] = [target]
    elif kind == "tan":
        if root is None:
            root = features[0]
        if root not in features:
            raise MissingColumnError(root, "TAN root (not a feature)", features)
        w = _need(cmi, "cmi", kind)
        info.cmi = w
        tree = _orient(maximum_spanning_tree(w), len(features), features.index(root))
        tree_parent = {features[b]: features[a] for a, b in tree}
        info.tree_arcs = [(features[a], features[b]) for a, b in tree]
        info.tree_weight = float(sum(w[a, b] for a, b in tree))
        info.extra["root"] = root
        for f in features:
            parents[f] = [target] + ([tree_parent[f]] if f in tree_parent else [])
    elif kind == "kdb":
        if k is None:
            raise HyperparameterError("kDB needs k (the number of non-class parents)")
        k = check_k(k, len(features))
        info.mi = dict(_need(mi, "mi", kind))
        pos = {f: i for i, f in enumerate(features)}
        if order is None:
            mi_vals = np.array([info.mi[f] for f in features])
            order = [features[i] for i in np.argsort(-mi_vals, kind="stable")]
        else:
            order = [str(f) for f in order]
            if sorted(order) != sorted(features):
                raise HyperparameterError("order must list every feature exactly once")
        info.order = list(order)
        w = _need(cmi, "cmi", kind) if k > 0 else None
        info.cmi = w
        if parent_rng is not None and k > 0 and w is not None:  # the draws of every feature at once
            for f, pa in zip(order, _sampled_kdb_parents(order, k, w, pos, parent_rng)):
                parents[f] = [target] + pa
        else:
            for i, f in enumerate(order):
                parents[f] = [target] + _kdb_parents(f, order[:i], k, w, pos, parent_rng)
    else:
        raise HyperparameterError(f"kind must be one of 'nb', 'tan', 'kdb', not {kind!r}")
    return DAG(parents, nodes=[target, *features]), info


def _need(score: Any, name: str, kind: str) -> Any:
    if score is None:
        raise HyperparameterError(f"a {kind} structure needs {name}")
    return score


def _kdb_parents(
    f: str,
    earlier: Sequence[str],
    k: int,
    w: np.ndarray | None,
    pos: dict[str, int],
    rng: np.random.Generator | None = None,
) -> list[str]:
    """The ``min(k, len(earlier))`` earlier features with the largest CMI with ``f``, by
    decreasing CMI; with ``rng``, the first of an order sampled proportionally to CMI."""
    if k == 0 or not earlier or w is None:
        return []
    scores = w[pos[f], [pos[e] for e in earlier]]  # one fancy index, not one element at a time
    ranked = sample_order(scores, rng) if rng is not None else np.argsort(-scores, kind="stable")
    return [earlier[i] for i in ranked[: min(k, len(earlier))]]
