"""Counting every node of a network: one context tree per node, from one data
frame or from a stream of chunks.

Chunks are encoded one at a time; levels inferred from a chunk (strings,
integers) are united with those seen before and the trees recoded onto the
united, sorted level order, so that counting chunk by chunk yields exactly the
trees (and schema) of counting the concatenated data once.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..data.encode import DEFAULT_MAX_LEVELS, EncodedData, NAPolicy, column_labels, encode
from ..data.mapreduce import reduce_chunks
from ..data.schema import NA_LABEL, Schema
from ..data.weights import chunk_weights, encoded_chunk
from ..errors import (
    DataError, DuplicateColumnError, EmptyDataError, MissingColumnError, UndeclaredLevelError, UnseenLevelError,
)
from ..structure.dag import DAG
from ..validation import n_workers, parallel_map
from ._kernels import leaf_levels, network_leaves, sparse_leaves
from ._plain import count_plain
from .context_tree import _DENSE_MIN_CELLS, _DENSE_ROWS_FACTOR, ContextTree, code_matrix, count_tree
from .flat import FlatTrees, TreeMap

__all__ = ["count_network", "count_specs", "count_specs_source", "spec_variables", "NetworkCounter", "count_source"]


def _tree_variables(dag: DAG, node: str, prefix: Sequence[str], suffix: Sequence[str] = ()) -> list[str]:
    return list(prefix) + dag.parents(node) + list(suffix)


def count_network(
    enc: EncodedData,
    dag: DAG,
    *,
    prefix: Sequence[str] = (),
    suffix: Sequence[str] = (),
    nodes: Sequence[str] | None = None,
    weights: np.ndarray | None = None,
    n_jobs: int | None = None,
) -> TreeMap:
    """One context tree per node of ``dag`` from encoded data (a mapping node -> tree,
    each tree made when first read: :class:`~pybncsmooth.counting.flat.TreeMap`).

    ``prefix`` lists variables that split every tree before the node's own
    parents, ``suffix`` variables that split it after them (the domain of a
    multi-domain fit: first in bnlearn's ``hdir`` layout, last by default).
    """
    node_list = list(nodes) if nodes is not None else dag.nodes
    if prefix or suffix:
        specs = [(n, tuple(_tree_variables(dag, n, prefix, suffix))) for n in node_list]
    else:
        specs = [(n, tuple(dag.parents(n))) for n in node_list]
    eager, flat, dense = _count_parts(enc, specs, weights, n_jobs)
    index = {node_list[k]: i for i, k in enumerate(dense)}
    return TreeMap(node_list, {n: t for n, t in zip(node_list, eager) if t is not None}, flat, index)


def count_specs(
    enc: EncodedData, specs: Sequence[tuple[str, Sequence[str]]], *, weights: np.ndarray | None = None,
    n_jobs: int | None = None,
) -> list[ContextTree]:
    """The context tree of each ``(node, ordered parents)`` of ``specs`` from encoded data
    (``weights``: one per row, fractional counts; ``n_jobs``: threads of the dense
    counting, default all cores)."""
    trees, flat, dense = _count_parts(enc, specs, weights, n_jobs)
    for i, k in enumerate(dense):
        trees[k] = flat.tree(i)  # type: ignore[union-attr]
    return trees  # type: ignore[return-value]


def _count_parts(enc: EncodedData, specs: Sequence[tuple[str, Sequence[str]]], weights: np.ndarray | None,
                 n_jobs: int | None) -> tuple[list[ContextTree | None], FlatTrees | None, list[int]]:
    """The trees of ``specs``: those counted by a sort of the rows (or weighted) whole,
    ``None`` at the places ``dense`` lists, whose trees the :class:`FlatTrees` holds in
    that order."""
    schema = enc.schema
    if weights is not None:
        return [
            count_tree(n, list(pa), enc[n], [enc[p] for p in pa], schema.cardinality(n), schema.cardinalities(pa),
                       weights=weights)
            for n, pa in specs
        ], None, []
    limit = max(_DENSE_MIN_CELLS, _DENSE_ROWS_FACTOR * enc.n_rows)
    dense: list[int] = []
    sparse: list[int] = []
    cells: list[int] = []
    trees: list[ContextTree | None] = []
    card = {v: len(lev) for v, lev in schema.levels.items()}
    for k, (node, pa) in enumerate(specs):
        try:
            q = 1
            for p in pa:
                q *= card[p]
            c = q * card[node]
        except KeyError:  # an unknown variable: the schema names it
            c = q = math.prod(schema.cardinalities((node, *pa)))
        if 0 < c <= limit:
            dense.append(k)  # (a variable without levels: no cells, counted by the sort)
            cells.append(c)
            trees.append(None)
        elif 0 < c and q <= limit:  # a dense table much larger than the rows, few configurations
            sparse.append(k)
            trees.append(None)
        else:  # a configuration space much larger than the data: a sort of the rows
            trees.append(count_tree(node, list(pa), enc[node], [enc[p] for p in pa], card[node],
                                    schema.cardinalities(pa)))
    flat_nodes = dense + sparse
    flat = _flat_trees(enc, [specs[k] for k in flat_nodes], cells, n_jobs) if flat_nodes else None
    return trees, flat, flat_nodes


#: counting passes (rows x columns read) below which the dense counting runs in one thread
_THREADED_WORK = 1 << 24
#: nodes of fewer cells than this have their rows' cell indices computed as int32
_INT32_CELLS = 2**31 - 1


def _balanced(pa_ptr: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """Consecutive ranges of nodes of about equal work (a pass over the rows per parent,
    two more per node)."""
    work = np.cumsum(np.diff(pa_ptr) + 2)
    cuts = np.searchsorted(work, work[-1] * np.arange(1, parts) / parts, side="right")
    bounds = [0, *sorted(set(int(c) for c in cuts) - {0, len(work)}), len(work)]
    return list(zip(bounds[:-1], bounds[1:]))


def _offsets(sizes: list[int]) -> np.ndarray:
    """``[0, s0, s0 + s1, ...]`` as int64."""
    return np.array(list(itertools.accumulate(sizes, initial=0)), dtype=np.int64)


def _code_matrix(enc: EncodedData, variables: list[str], col: dict[str, int]) -> tuple[np.ndarray, dict[str, int]]:
    """The codes of ``variables`` as one ``(n, V)`` Fortran-ordered matrix and each
    variable's column in it: the encoding's own matrix of codes when it holds them all
    (no copy; its columns), else the columns stacked in the order ``col`` gives them."""
    if enc.stacked is not None:
        names, rows = enc.stacked
        where = {v: j for j, v in enumerate(names)}
        if all(v in where for v in variables):
            return rows.T, where
    return code_matrix([enc[v] for v in variables]), col


def _flat_trees(enc: EncodedData, specs: Sequence[tuple[str, Sequence[str]]], cells: list[int],
                n_jobs: int | None = None) -> FlatTrees:
    """The trees of ``specs``, all in one :class:`FlatTrees`: the first ``len(cells)`` by
    dense counting (``cells[k]``: the cells of spec ``k``'s family;
    :func:`~pybncsmooth.counting._kernels.network_leaves`), the others (a dense table far
    larger than the rows) by :func:`~pybncsmooth.counting._kernels.sparse_leaves`, in
    work proportional to the rows; each gives the observed configurations (leaves) and
    their cells that are not zero, every tree's levels then from its leaves
    (:func:`~pybncsmooth.counting._kernels.leaf_levels`).  One code matrix for all."""
    variables = list(dict.fromkeys([v for n, pa in specs for v in (n, *pa)]))
    col = {v: j for j, v in enumerate(variables)}
    levels = enc.schema.levels
    card = {v: len(levels[v]) for v in variables}
    M, col = _code_matrix(enc, variables, col)
    rcard = np.array([card[n] for n, _ in specs], dtype=np.int64)
    pa_ptr = _offsets([len(pa) for _, pa in specs])
    pa_idx = np.array([col[p] for _, pa in specs for p in pa], dtype=np.int64)
    pa_card = np.array([card[p] for _, pa in specs for p in pa], dtype=np.int64)
    child = np.array([col[n] for n, _ in specs], dtype=np.int64)
    missing = any(enc[v].size and enc[v].min() < 0 for v in variables if v not in enc.complete)
    nd = len(cells)
    width = int(np.diff(pa_ptr).max())  # the most parents of a node: the stride of the leaves' codes
    parts = []
    if nd:
        parts += _dense_leaves(M, child[:nd], pa_ptr[: nd + 1], pa_idx, pa_card, rcard[:nd], cells, missing, width,
                               n_jobs)
    if nd < len(specs):
        parts.append(sparse_leaves(M, child[nd:], pa_ptr[nd:], pa_idx, pa_card, rcard[nd:], missing, width))
    leaves = functools.reduce(_joined, parts)
    return FlatTrees(specs, card, rcard, pa_ptr, pa_card, *leaf_levels(*leaves, rcard, pa_ptr, pa_card))


def _dense_leaves(M: np.ndarray, child: np.ndarray, pa_ptr: np.ndarray, pa_idx: np.ndarray, pa_card: np.ndarray,
                  rcard: np.ndarray, cells: list[int], missing: bool, width: int, n_jobs: int | None) -> list[tuple]:
    """The leaves of the nodes ``child`` counted densely (node ``j`` has ``cells[j]``
    cells), in up to ``n_jobs`` threads (default: all cores), each a range of nodes (the
    counts do not depend on it): one :func:`network_leaves` result a range, in order."""
    idx_type = np.int32 if max(cells) < _INT32_CELLS else np.int64  # a cell index (and the spare cell) fits

    def count(part: tuple[int, int]) -> tuple:  # nodes j0..j1
        j0, j1 = part
        return network_leaves(M, child[j0:j1], pa_ptr[j0 : j1 + 1], pa_idx, pa_card, rcard[j0:j1], missing, width,
                              np.empty(M.shape[0], dtype=idx_type))

    work = M.shape[0] * (int(pa_ptr[-1] - pa_ptr[0]) + 2 * len(child))
    jobs = 1 if work < _THREADED_WORK else n_workers(n_jobs, len(child))  # threads cost more than small work
    if jobs == 1:
        return [count((0, len(child)))]
    return list(parallel_map(count, _balanced(pa_ptr, jobs), jobs))


def _joined(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """Two ``(leaf_ptr, leaf_codes, nz_ptr, nz_x, nz_n)`` of consecutive nodes as one."""
    return (np.concatenate([a[0], b[0][1:] + a[0][-1]]), np.concatenate([a[1], b[1]]),
            np.concatenate([a[2], b[2][1:] + a[2][-1]]), np.concatenate([a[3], b[3]]), np.concatenate([a[4], b[4]]))


def _count_specs_chunk(
    schema: Schema, specs: list, variables: list, na: str, weights: str | None, na_label: str, memo: dict | None,
    df: pd.DataFrame,
) -> tuple:
    if len(df) == 0:
        return (0, None)
    enc, w = encoded_chunk(memo, df, schema, variables, na, na_label, weights)
    if enc.n_rows == 0:  # every row incomplete under na="drop": other chunks may not be
        return (0, None)
    return (enc.n_rows, count_specs(enc, specs, weights=w))


def _merge_spec_counts(a: tuple, b: tuple) -> tuple:
    if a[1] is None:
        return (a[0] + b[0], b[1])
    if b[1] is None:
        return (a[0] + b[0], a[1])
    return (a[0] + b[0], [x.merge(y) for x, y in zip(a[1], b[1])])


def spec_variables(schema: Schema, specs: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """The variables of ``specs`` (each node and its parents), in the schema's order."""
    used = {x for n, pa in specs for x in (n, *pa)}
    return [v for v in schema if v in used]


def count_specs_source(
    source: Any,
    schema: Schema,
    specs: Sequence[tuple[str, Sequence[str]]],
    *,
    na: str = "level",
    progress: bool | None = False,
    weights: str | None = None,
    na_label: str = NA_LABEL,
    memo: dict | None = None,
) -> tuple[int, list[ContextTree]]:
    """The trees of ``specs`` over every chunk of a data source whose levels are all
    in ``schema`` (learned by an earlier pass): ``(rows counted, trees)``.  One pass,
    map-reduce (Dask: on the workers).  ``weights``: a column of row weights; ``na`` and
    ``na_label`` as :func:`~pybncsmooth.data.encode.encode` takes them.  ``memo``: a
    fit's memo keeping the last chunk's codes for a later pass
    (:func:`~pybncsmooth.data.weights.encoded_chunk`)."""

    specs = [(n, tuple(pa)) for n, pa in specs]
    variables = spec_variables(schema, specs)
    res = reduce_chunks(
        source,
        functools.partial(_count_specs_chunk, schema, specs, variables, na, weights, na_label, memo),
        _merge_spec_counts,
        progress=progress,
        desc="counting",
    )
    if res is None or res[1] is None:
        raise EmptyDataError("the data has no rows (every chunk was empty)")
    return res


class NetworkCounter:
    """Accumulates the context trees of a network over data chunks.

    Parameters
    ----------
    dag:
        The structure; every node and parent must be a column of each chunk.
    schema:
        Known levels (e.g. from a BIF file); the others are inferred.
    na, max_levels, na_label:
        As in :func:`pybncsmooth.data.encode`.
    prefix, suffix:
        Variables splitting every tree before / after the node's parents (the
        domain of a multi-domain fit).  Their rows per level are kept in
        ``domain_rows``.
    weights:
        A column of every chunk holding each row's weight (a finite number >= 0):
        the counts are then sums of weights (fractional).
    n_jobs:
        Threads counting the nodes of a chunk (default: all cores; the counts do not
        depend on it).
    """

    def __init__(
        self,
        dag: DAG,
        *,
        schema: Schema | None = None,
        na: NAPolicy = "error",
        max_levels: int = DEFAULT_MAX_LEVELS,
        na_label: str = NA_LABEL,
        prefix: Sequence[str] = (),
        suffix: Sequence[str] = (),
        weights: str | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.dag = dag
        self.n_jobs = n_jobs
        self.weights = weights
        self.prefix = tuple(prefix)
        self.suffix = tuple(suffix)
        self.split_vars = self.prefix + self.suffix
        self.variables = list(self.split_vars) + [n for n in dag.nodes if n not in self.split_vars]
        self.given = schema.subset([v for v in self.variables if v in schema]) if schema else _NO_SCHEMA
        self.na = na
        self.max_levels = max_levels
        self.na_label = na_label
        #: a frame of complete Categoricals is counted by :func:`count_plain` (nothing else to do)
        self._plain = not self.split_vars and weights is None and not self.given.levels
        self._reset()

    def _reset(self) -> None:
        """No counts yet."""
        self.schema: Schema | None = None
        self.trees: dict[str, ContextTree] = {}
        self.n_rows = 0
        self.n_dropped = 0
        self.n_chunks = 0
        self.domain_rows: dict = {}
        #: missing cells of each variable that has some (before the missing-value policy)
        self.n_missing: dict[str, int] = {}

    def empty_like(self) -> "NetworkCounter":
        """A counter with this one's set-up and no counts."""
        return self._empty()

    def _empty(self) -> "NetworkCounter":
        out = object.__new__(NetworkCounter)  # this one's (checked, immutable) set-up, shared
        out.__dict__.update(self.__dict__)
        out._reset()  # (every count attribute is _reset's: none is shared)
        return out

    def add(self, df: pd.DataFrame) -> "NetworkCounter":
        """Count one chunk (a chunk with no rows is skipped)."""
        return self.merge(self.count(df))

    def count(self, df: pd.DataFrame) -> "NetworkCounter":
        """A new counter holding the counts of ``df`` alone (the map step)."""
        out = self._empty()
        counted = count_plain(df, self.dag) if self._plain and isinstance(df, pd.DataFrame) else None
        if counted is not None:
            out.schema, out.trees = counted
            out.n_rows, out.n_chunks = len(df.index), 1
            return out
        labels = set(map(str, column_labels(df)))  # integer column labels name nodes by their text
        _check_columns(df, self.dag, self.split_vars, labels)
        if self.weights is not None and self.weights not in df.columns:
            raise MissingColumnError(self.weights, "weights", [str(c) for c in df.columns])
        if isinstance(df, pd.DataFrame) and len(df.index) == 0 and len(df.columns) > 0:
            return out
        for v in self.split_vars:  # a row without its domain belongs to no domain, whatever na says
            miss = df[v].isna().to_numpy()
            if miss.any():
                first = df.index[int(np.argmax(miss))]
                raise DataError(
                    f"the domain column {v!r} has {int(miss.sum())} missing value(s) (first at row {first!r}): every "
                    "row needs its domain; drop those rows or give them a domain level of their own"
                )
        if len(labels) < len(df.columns):  # two columns of one name (or text): encode's check, before the look-ups
            raise DuplicateColumnError(str(df.columns[df.columns.astype(str).duplicated()][0]))
        try:
            enc = encode(
                df,
                self.given,
                variables=self.variables,
                na=self.na,
                max_levels=self.max_levels,
                na_label=self.na_label,
                empty_ok=True,
                domains=self.split_vars,  # a domain column is not a node: max_levels does not limit it
            )
        except UnseenLevelError as e:  # levels fixed by a network file
            declared = self.given[e.column] if e.column in self.given else ()
            raise UndeclaredLevelError(e.column, e.levels, declared) from None
        out.n_missing = dict(enc.n_missing)  # missing cells per variable, before the policy
        if enc.n_rows == 0:  # every row of this chunk is incomplete; other chunks may not be
            out.n_dropped = enc.n_dropped
            return out
        w = chunk_weights(df, self.weights, self.variables, self.na) if self.weights is not None else None
        out.schema, out.trees = enc.schema, count_network(
            enc, self.dag, prefix=self.prefix, suffix=self.suffix, weights=w, n_jobs=self.n_jobs
        )
        out.n_rows, out.n_dropped, out.n_chunks = enc.n_rows, enc.n_dropped, 1
        for v in self.split_vars:  # rows per domain level before missing values are handled
            for level, cnt in df[v].value_counts(dropna=True).items():
                out.domain_rows[level] = out.domain_rows.get(level, 0) + int(cnt)
        return out

    def merge(self, other: "NetworkCounter") -> "NetworkCounter":
        """Add another counter's counts to this one (the reduce step): the schemas are
        united and both sets of trees recoded onto the union first."""
        self.n_rows += other.n_rows
        self.n_dropped += other.n_dropped
        self.n_chunks += other.n_chunks
        for level, cnt in other.domain_rows.items():
            self.domain_rows[level] = self.domain_rows.get(level, 0) + cnt
        for v, cnt in other.n_missing.items():
            self.n_missing[v] = self.n_missing.get(v, 0) + cnt
        if other.schema is None:
            return self
        if self.schema is None:
            self.schema, self.trees = other.schema, other.trees
            return self
        union = self.schema.union(other.schema)
        old = self._recode_all(self.trees, self.schema, union)
        new = self._recode_all(other.trees, other.schema, union)
        self.trees = {n: old[n].merge(new[n]) for n in old}
        self.schema = union
        return self

    def result(self) -> tuple[Schema, dict[str, ContextTree]]:
        if self.n_rows == 0 and self.n_dropped:
            raise EmptyDataError(
                f'no complete rows are left after na="drop" (every one of the {self.n_dropped} rows has a '
                "missing value)"
            )
        if self.schema is None or self.n_rows == 0:
            raise EmptyDataError("the data has no rows (every chunk was empty)")
        return self.schema, self.trees

    def _recode_all(self, trees: dict[str, ContextTree], src: Schema, dst: Schema) -> dict[str, ContextTree]:
        maps: dict[str, np.ndarray | None] = {}
        for v in self.variables:
            a, b = src[v], dst[v]
            if a == b:
                maps[v] = None
            else:
                pos = {lev: i for i, lev in enumerate(b)}
                maps[v] = np.array([pos[lev] for lev in a], dtype=np.int64)
        if all(m is None for m in maps.values()):
            return trees
        out = {}
        for node, t in trees.items():
            pa = t.parents
            if maps[node] is None and all(maps[p] is None for p in pa):
                out[node] = t
                continue
            out[node] = t.recode(maps[node], [maps[p] for p in pa], dst.cardinality(node), dst.cardinalities(pa))
        return out


#: the schema of a counter given no levels (immutable: shared)
_NO_SCHEMA = Schema()


def _check_columns(df: Any, dag: DAG, prefix: Sequence[str], cols: set[str]) -> None:
    """A missing column gets an error saying what it is (node, parent of ..., domain);
    ``cols``: the frame's column labels as text."""
    if not isinstance(df, pd.DataFrame):
        return
    for v in prefix:
        if v not in cols:
            raise MissingColumnError(v, "domain", [str(c) for c in df.columns])
    if cols.issuperset(dag.nodes):
        return
    for n in dag.nodes:
        if n not in cols:
            ch = dag.children(n)
            role = f"node (a parent of {ch[0]!r})" if ch else "node"
            raise MissingColumnError(n, role, [str(c) for c in df.columns])


def _count_chunk(counter: NetworkCounter, df: pd.DataFrame) -> NetworkCounter:
    return counter.count(df)


def _merge_counters(a: NetworkCounter, b: NetworkCounter) -> NetworkCounter:
    return a.merge(b)


def count_source(source: Any, counter: NetworkCounter, *, progress: bool | None = False) -> NetworkCounter:
    """Count every chunk of a :class:`~pybncsmooth.data.sources.DataSource` into a
    copy of ``counter``'s set-up: map-reduce, on Dask's workers for a Dask DataFrame."""

    res = reduce_chunks(
        source, functools.partial(_count_chunk, counter), _merge_counters, progress=progress, desc="counting"
    )
    if res is None:
        raise EmptyDataError("the data has no chunk")
    return res
