"""A small network's counting from a plain frame, in one compiled call.

A frame whose node columns are all Categoricals without missing values (the frame a
user samples or reads with ``dtype="category"``) needs none of the general counting's
cases (levels inferred or fixed by a file, missing values, weights, a domain, sparse
tables, threads): :func:`count_plain` reads the codes as the encoding would, counts
them with :func:`~pybncsmooth.counting._plain_kernels.plain_trees` and gives the schema
and trees :func:`~pybncsmooth.counting.network.count_network` gives, array for array.
What depends on the structure and the levels' counts alone (each node's parents'
places, strides and cell offsets, the joint table's map onto each node's cells) is
computed once per DAG and cardinalities (:func:`_plan`) and kept.  Anything else
(a missing value, a column of text, a node without dense counts) returns ``None``: the
general counting's case.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
import pandas as pd

from ..data.encode import categorical_codes
from ..data.schema import Schema
from ..structure.dag import DAG
from ._plain_kernels import PACKED, plain_trees
from .context_tree import _DENSE_MIN_CELLS, _DENSE_ROWS_FACTOR
from .flat import FlatTrees, TreeMap

__all__ = ["count_plain"]

#: the most row reads (rows x (parents + 2 a node)) counted here: beyond, the general
#: counting runs threads (``_THREADED_WORK`` of :mod:`~pybncsmooth.counting.network`)
_PLAIN_WORK = 1 << 24
#: the most cells of a joint table counted whole (a map of ``nodes x cells`` kept; the
#: kernel numbers them as int16)
_JOINT_CELLS = 1 << 14
#: an empty joint map: counts per node
_NO_JOINT = np.zeros((0, 0), dtype=np.int64)


class _Plan(NamedTuple):
    """What the counting of a DAG with given cardinalities needs, computed once."""

    dag: DAG
    specs: list[tuple[str, tuple[str, ...]]]
    card: dict[str, int]
    arrays: tuple[np.ndarray, ...]  # cards, child, pa_ptr, pa_idx, pa_card, rcard, cell_off
    width: int
    max_cells: int
    passes: int
    fmap: np.ndarray  # (nodes, J): each joint cell's cell of each node; (0, 0) without
    index: dict[str, int]

    def fits(self, n: int) -> bool:
        """Whether ``n`` rows are counted here as the general counting would count them
        (every node's table dense) and in work where one thread is best."""
        return self.max_cells <= max(_DENSE_MIN_CELLS, _DENSE_ROWS_FACTOR * n) and n * self.passes <= _PLAIN_WORK

    def joint(self, n: int) -> np.ndarray:
        """The joint map when summing the joint table costs no more than a pass over ``n``
        rows, else the empty map (counts per node)."""
        return self.fmap if self.fmap.size and self.fmap.size <= n else _NO_JOINT


def count_plain(df: pd.DataFrame, dag: DAG) -> tuple[Schema, TreeMap] | None:
    """The schema and every node's tree of ``df`` (all of its rows) when every node is a
    Categorical column of at most 127 levels without a missing value and every node's
    table is counted dense: what :class:`~pybncsmooth.counting.network.NetworkCounter`
    gives without a prefix, a suffix, weights or given levels; else ``None``."""
    nodes = dag.nodes
    got = categorical_codes(df, nodes) if nodes else None
    if got is None:
        return None
    levels, codes = got
    n = codes[0].shape[0]
    cards = tuple(map(len, levels))
    plan = _plan(dag, cards) if n else None
    if plan is None or not plan.fits(n):
        return None
    cards_a, child, pa_ptr, pa_idx, pa_card, rcard, cell_off = plan.arrays
    buf = plain_trees(np.array(codes), cards_a, plan.joint(n), child, pa_ptr, pa_idx, pa_card, rcard, cell_off,
                      plan.width)
    if not buf.shape[0]:  # a missing value
        return None
    cut = buf[: PACKED + 1].tolist()
    parts = [buf[a:b] for a, b in zip(cut[:-1], cut[1:])]
    flat = FlatTrees(plan.specs, dict(plan.card), rcard.copy(), pa_ptr.copy(), pa_card.copy(), *parts)
    return Schema._checked(dict(zip(nodes, levels)), nodes), TreeMap(nodes, {}, flat, plan.index)


def _plan(dag: DAG, cards: tuple[int, ...]) -> _Plan | None:
    """The counting plan of ``dag`` whose nodes (in node order) have ``cards`` levels,
    made once (kept by the DAG's identity, which the plan holds, and the cardinalities);
    ``None`` when a node has no level."""
    key = (id(dag), cards)
    hit = _PLANS.get(key)
    if hit is not None and hit.dag is dag:
        return hit
    if min(cards) < 1:
        return None
    plan = _make_plan(dag, cards)
    if len(_PLANS) >= _PLANS_SIZE:
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


#: plans made (:func:`_plan`): (id of the DAG, cardinalities) -> plan
_PLANS: dict[tuple[int, tuple[int, ...]], _Plan] = {}
_PLANS_SIZE = 64


def _make_plan(dag: DAG, cards: tuple[int, ...]) -> _Plan:
    nodes = dag.nodes
    row = {v: i for i, v in enumerate(nodes)}
    card = dict(zip(nodes, cards))
    specs = [(v, tuple(dag.parents(v))) for v in nodes]
    parents = [p for _, pa in specs for p in pa]
    cells = [card[v] * int(np.prod([card[p] for p in pa], dtype=np.int64)) for v, pa in specs]
    pa_ptr = np.cumsum([0, *map(len, (pa for _, pa in specs))], dtype=np.int64)
    arrays = (
        np.array(cards, dtype=np.int64),
        np.array([row[v] for v in nodes], dtype=np.int64),
        pa_ptr,
        np.array([row[p] for p in parents], dtype=np.int64),
        np.array([card[p] for p in parents], dtype=np.int64),
        np.array(cards, dtype=np.int64),
        np.cumsum([0, *cells], dtype=np.int64),
    )
    order = dict.fromkeys(v for n, pa in specs for v in (n, *pa))  # the general counting's order of its card
    return _Plan(dag, specs, {v: card[v] for v in order}, arrays, int(np.diff(pa_ptr).max()), max(cells),
                 int(pa_ptr[-1]) + 2 * len(nodes), _joint_map(specs, row, cards), {v: j for j, v in enumerate(nodes)})


def _joint_map(specs: Sequence[tuple[str, tuple[str, ...]]], row: dict[str, int], cards: tuple[int, ...]
               ) -> np.ndarray:
    """``(nodes, J)``: each node's dense cell (first parent most significant, the child
    last) of each cell of the joint table of all variables (the first most significant);
    empty when the joint table has more than :data:`_JOINT_CELLS` cells."""
    J = int(np.prod(cards, dtype=np.int64))
    if J > _JOINT_CELLS:
        return _NO_JOINT
    g = np.arange(J, dtype=np.int64)
    strides = np.cumprod((1, *cards[:0:-1]), dtype=np.int64)[::-1]  # of each variable in the joint cell
    code = [(g // s) % c for s, c in zip(strides, cards)]
    out = np.empty((len(specs), J), dtype=np.int64)
    for j, (v, pa) in enumerate(specs):
        cell = np.zeros(J, dtype=np.int64)
        for p in (*pa, v):
            cell = cell * cards[row[p]] + code[row[p]]
        out[j] = cell
    return out
