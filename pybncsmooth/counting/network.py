"""Counting every node of a network: one context tree per node, from one data
frame or from a stream of chunks.

Chunks are encoded one at a time; levels inferred from a chunk (strings,
integers) are united with those seen before and the trees recoded onto the
united, sorted level order, so that counting chunk by chunk yields exactly the
trees (and schema) of counting the concatenated data once.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..data.encode import DEFAULT_MAX_LEVELS, EncodedData, NAPolicy, encode
from ..data.schema import NA_LABEL, Schema
from ..errors import EmptyDataError
from ..structure.dag import DAG
from .context_tree import (
    _DENSE_MIN_CELLS,
    _DENSE_ROWS_FACTOR,
    ContextTree,
    _build_levels,
    code_matrix,
    count_tree,
    dense_leaves,
)

__all__ = ["count_network", "NetworkCounter"]


def _tree_variables(dag: DAG, node: str, prefix: Sequence[str]) -> list[str]:
    return list(prefix) + dag.parents(node)


def count_network(
    enc: EncodedData, dag: DAG, *, prefix: Sequence[str] = (), nodes: Sequence[str] | None = None
) -> dict[str, ContextTree]:
    """One context tree per node of ``dag`` from encoded data.

    ``prefix`` lists variables that split every tree before the node's own
    parents (the domain of a multi-domain fit).
    """
    schema = enc.schema
    node_list = list(nodes) if nodes is not None else dag.nodes
    variables = list(dict.fromkeys(v for n in node_list for v in [n, *_tree_variables(dag, n, prefix)]))
    col = {v: j for j, v in enumerate(variables)}
    M = code_matrix([enc[v] for v in variables])
    n = M.shape[0]
    trees = {}
    for node in node_list:
        pa = _tree_variables(dag, node, prefix)
        r = schema.cardinality(node)
        cards = schema.cardinalities(pa)
        Q = 1
        for c in cards:
            Q *= c
        if Q * r <= max(_DENSE_MIN_CELLS, _DENSE_ROWS_FACTOR * n):
            configs, counts = dense_leaves(M, col[node], np.array([col[p] for p in pa], dtype=np.int64), cards, r)
            trees[node] = ContextTree(node, tuple(pa), r, cards, _build_levels(configs, counts, len(pa), r))
        else:
            trees[node] = count_tree(node, pa, enc[node], [enc[p] for p in pa], r, cards)
    return trees


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
    prefix:
        Variables splitting every tree first (multi-domain fits).
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
    ) -> None:
        self.dag = dag
        self.prefix = tuple(prefix)
        self.variables = list(self.prefix) + [n for n in dag.nodes if n not in self.prefix]
        self.given = schema.subset([v for v in self.variables if v in schema]) if schema else Schema()
        self.na = na
        self.max_levels = max_levels
        self.na_label = na_label
        self.schema: Schema | None = None
        self.trees: dict[str, ContextTree] = {}
        self.n_rows = 0
        self.n_dropped = 0
        self.n_chunks = 0

    def add(self, df: pd.DataFrame) -> "NetworkCounter":
        """Count one chunk (a chunk with no rows is skipped)."""
        if isinstance(df, pd.DataFrame) and len(df) == 0 and df.shape[1] > 0:
            return self
        enc = encode(
            df,
            self.given,
            variables=self.variables,
            na=self.na,
            max_levels=self.max_levels,
            na_label=self.na_label,
        )
        trees = count_network(enc, self.dag, prefix=self.prefix)
        self.n_rows += enc.n_rows
        self.n_dropped += enc.n_dropped
        self.n_chunks += 1
        if self.schema is None:
            self.schema, self.trees = enc.schema, trees
            return self
        union = self.schema.union(enc.schema)
        old = self._recode_all(self.trees, self.schema, union)
        new = self._recode_all(trees, enc.schema, union)
        self.trees = {n: old[n].merge(new[n]) for n in old}
        self.schema = union
        return self

    def add_all(self, chunks: Iterable[pd.DataFrame]) -> "NetworkCounter":
        for c in chunks:
            self.add(c)
        return self

    def result(self) -> tuple[Schema, dict[str, ContextTree]]:
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
