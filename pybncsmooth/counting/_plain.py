"""A small network's counting from a plain frame, in one compiled call.

A frame whose node columns are all Categoricals without missing values (the frame a
user samples or reads with ``dtype="category"``) needs none of the general counting's
cases (levels inferred or fixed by a file, missing values, weights, a domain, sparse
tables, threads): :func:`count_plain` reads the codes as the encoding would, counts
them with :func:`~pybncsmooth.counting._plain_kernels.plain_trees` and gives the schema
and trees :func:`~pybncsmooth.counting.network.count_network` gives, array for array.
What depends on the structure and the levels' counts alone (each node's parents'
places and cell offsets, the groups of nodes counted from one small joint table and
each joint cell's place in each node's cells) is computed once per structure and
cardinalities (:func:`_plan`, kept by the structure's content, not the DAG object).
Anything else (a missing value, a column of text, a node without dense counts)
returns ``None``: the general counting's case.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..data.encode import categorical_codes
from ..data.schema import Schema
from ..structure.dag import DAG
from .._jit import numba_loaded
from ._plain_kernels import PACKED, plain_trees
from ._plain_numpy import plain_trees_numpy
from .context_tree import _DENSE_MIN_CELLS, _DENSE_ROWS_FACTOR
from .flat import FlatTrees, TreeMap

__all__ = ["count_plain"]

#: the most row reads (rows x (parents + 2 a node)) counted here: beyond, the general
#: counting runs threads (``_THREADED_WORK`` of :mod:`~pybncsmooth.counting.network`)
_PLAIN_WORK = 1 << 24
#: the most row reads counted in NumPy (:mod:`._plain_numpy`) while no compiled kernel
#: is loaded (a fresh process), every time: a few milliseconds
_NUMPY_SMALL = 1 << 22
#: the most row reads counted in NumPy once in a process before the kernels load (a
#: script's one large fit): a few tenths of a second of NumPy at most, against one to
#: several seconds of numba's start and the general counting's kernels' first loads; a
#: second large count loads the kernels, several times faster from then on
_NUMPY_WORK = 1 << 27
#: whether a count above :data:`_NUMPY_SMALL` was made in NumPy in this process
_LARGE_DONE = [False]
#: the most cells of a group's joint table (:func:`_groups`): summing it into each node's
#: cells then costs a few hundred additions a node, far less than a pass over the rows
_GROUP_CELLS = 256


@dataclass
class _Plan:
    """What the counting of a structure with given cardinalities needs, computed once
    (the compiled kernel's groups when it first counts with them)."""

    specs: list[tuple[str, tuple[str, ...]]]
    card: dict[str, int]
    cards: np.ndarray  # per variable (row of the codes), its levels
    arrays: tuple[np.ndarray, ...]  # rcard, pa_ptr, pa_card, cell_off
    max_cells: int
    passes: int
    families: list[list[int]]  # per node, the rows of its family in the codes (the child last)
    index: dict[str, int]

    @functools.cached_property
    def _grouping(self) -> tuple[list[tuple[list[int], list[int]]], list[int]]:
        return _groups(self.families, tuple(self.cards.tolist()))

    @functools.cached_property
    def grouped(self) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """(the groups, the other nodes) as the kernel reads them."""
        groups, alone = self._grouping
        cards = tuple(self.cards.tolist())
        return _group_arrays(groups, self.families, cards), _solo(alone, self.families, cards)

    @functools.cached_property
    def per_node(self) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """(no group, every node counted by itself)."""
        cards = tuple(self.cards.tolist())
        return _group_arrays([], self.families, cards), _solo(range(len(self.families)), self.families, cards)

    @functools.cached_property
    def group_work(self) -> int:
        """The additions summing the groups' tables into the nodes' cells."""
        cards = tuple(self.cards.tolist())
        return sum(len(members) * _size(g, cards) for g, members in self._grouping[0])

    def fits(self, n: int) -> bool:
        """Whether ``n`` rows are counted here as the general counting would count them
        (every node's table dense) and in work where one thread is best."""
        return self.dense(n) and n * self.passes <= _PLAIN_WORK

    def dense(self, n: int) -> bool:
        """Whether the general counting counts every node's table of ``n`` rows dense."""
        return self.max_cells <= max(_DENSE_MIN_CELLS, _DENSE_ROWS_FACTOR * n)

    def numpy(self, n: int) -> bool:
        """Whether ``n`` rows are counted in NumPy: no compiled kernel is loaded yet (its
        first load costs more than NumPy's counting) and the work is at most
        :data:`_NUMPY_SMALL`, or at most :data:`_NUMPY_WORK` in the process's first large
        count.  (The same integers either way: only the time depends on the path.)"""
        return _numpy_work(n * self.passes) and self.dense(n)

    def counting(self, n: int) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """The groups when summing their tables costs no more than a pass over ``n`` rows,
        else none (every node counted by itself)."""
        return self.grouped if self.group_work <= n else self.per_node


def _numpy_work(work: int) -> bool:
    """Whether ``work`` row reads are counted in NumPy (:meth:`_Plan.numpy`), the
    tables' sizes aside."""
    return (work <= _NUMPY_SMALL or (work <= _NUMPY_WORK and not _LARGE_DONE[0])) and not numba_loaded()


def count_plain(df: pd.DataFrame, dag: DAG) -> tuple[Schema, TreeMap] | None:
    """The schema and every node's tree of ``df`` (all of its rows) when every node is a
    Categorical column of at most 127 levels without a missing value and every node's
    table is counted dense: what :class:`~pybncsmooth.counting.network.NetworkCounter`
    gives without a prefix, a suffix, weights or given levels; else ``None``."""
    nodes = dag.nodes
    work = len(df) * (sum(len(dag.parents(v)) for v in nodes) + 2 * len(nodes))  # (as the plan's passes)
    if work > _PLAIN_WORK and not _numpy_work(work):  # the general counting's (threads), no plan made
        return None
    got = categorical_codes(df, nodes) if nodes else None
    if got is None:
        return None
    levels, codes = got
    n = codes[0].shape[0]
    cards = tuple(map(len, levels))
    plan = _plan(dag, cards) if n else None
    if plan is None or not (plan.numpy(n) or plan.fits(n)):
        return None
    rcard, pa_ptr, pa_card, cell_off = plan.arrays
    if plan.numpy(n):  # the same integers, without numba's start
        _LARGE_DONE[0] |= n * plan.passes > _NUMPY_SMALL
        buf = plain_trees_numpy(np.array(codes), rcard, pa_ptr, pa_card, cell_off, plan.families)
    else:
        buf = plain_trees(np.array(codes), plan.cards, *plan.counting(n), rcard, pa_ptr, pa_card, cell_off)
    if not buf.shape[0]:  # a missing value
        return None
    cut = buf[: PACKED + 1].tolist()
    parts = [buf[a:b] for a, b in zip(cut[:-1], cut[1:])]
    flat = FlatTrees(plan.specs, dict(plan.card), rcard.copy(), pa_ptr.copy(), pa_card.copy(), *parts)
    return Schema._checked(dict(zip(nodes, levels)), nodes), TreeMap(nodes, {}, flat, plan.index)


def _plan(dag: DAG, cards: tuple[int, ...]) -> _Plan | None:
    """The counting plan of ``dag`` whose nodes (in node order) have ``cards`` levels,
    made once per structure and cardinalities: kept by the structure's content (each
    node with its parents in order, the nodes in order) and the cardinalities, never
    by the DAG object, so a structure read again (a model string, a formula, a copy)
    finds the plan an equal one made; ``None`` when a node has no level."""
    specs = tuple((v, tuple(dag.parents(v))) for v in dag.nodes)
    key = (specs, cards)
    hit = _PLANS.get(key)
    if hit is not None:
        return hit
    if min(cards) < 1:
        return None
    plan = _make_plan(specs, cards)
    if len(_PLANS) >= _PLANS_SIZE:
        _PLANS.pop(next(iter(_PLANS)))  # the oldest plan
    _PLANS[key] = plan
    return plan


#: plans made (:func:`_plan`): (each node with its parents, cardinalities) -> plan
_PLANS: dict[tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple[int, ...]], _Plan] = {}
_PLANS_SIZE = 64


def _make_plan(specs: tuple[tuple[str, tuple[str, ...]], ...], cards: tuple[int, ...]) -> _Plan:
    """The plan of :func:`_plan` (every array as the general counting's ``_flat_trees``
    makes it for these nodes, the codes' rows in node order), in time linear in the
    structure's size."""
    nodes = [v for v, _ in specs]
    row = {v: i for i, v in enumerate(nodes)}
    card = dict(zip(nodes, cards))
    families = [[row[p] for p in pa] + [row[v]] for v, pa in specs]  # rows of the codes, the child last
    cells = [_size(f, cards) for f in families]
    pa_ptr = np.cumsum([0, *(len(f) - 1 for f in families)], dtype=np.int64)
    arrays = (np.array(cards, dtype=np.int64), pa_ptr, np.array([cards[x] for f in families for x in f[:-1]],
              dtype=np.int64), np.cumsum([0, *cells], dtype=np.int64))
    order = dict.fromkeys(v for n, pa in specs for v in (n, *pa))  # the general counting's order of its card
    return _Plan(list(specs), {v: card[v] for v in order}, arrays[0].copy(), arrays,
                 max(cells), int(pa_ptr[-1]) + 2 * len(nodes), families, {v: j for j, v in enumerate(nodes)})


def _size(variables: Iterable[int], cards: Sequence[int]) -> int:
    return math.prod(cards[x] for x in variables)


#: the groups a node may join beside those holding one of its variables: the last ones opened
_OPEN_GROUPS = 4
#: the groups holding a variable that a node holding it may join: the last ones it joined
_GROUPS_PER_VARIABLE = 4


def _groups(families: list[list[int]], cards: tuple[int, ...]) -> tuple[list[tuple[list[int], list[int]]], list[int]]:
    """Nodes grouped so that each group's variables (the union of its nodes' families)
    have a joint table of at most :data:`_GROUP_CELLS` cells: each node, in node order,
    joins the group whose table then grows least among the few it may join (the last
    :data:`_GROUPS_PER_VARIABLE` groups holding each of its variables and the last
    :data:`_OPEN_GROUPS` groups opened: a bounded number, so the grouping takes time
    linear in the structure's size), a new group when none stays small enough;
    ``(groups as (sorted variables, nodes), the nodes of no group)`` (a family of more
    cells than that).  Which groups form changes the work, never a count."""
    groups: list[tuple[list[int], list[int]]] = []
    sizes: list[int] = []
    holding: dict[int, list[int]] = {}  # variable -> the last groups holding it
    alone = []
    for j, fam in enumerate(families):
        if _size(fam, cards) > _GROUP_CELLS:
            alone.append(j)
            continue
        own = set(fam)
        candidates = dict.fromkeys([*(g for x in fam for g in holding.get(x, ())),
                                    *range(max(0, len(groups) - _OPEN_GROUPS), len(groups))])
        best, size = None, _GROUP_CELLS + 1
        for g in candidates:
            have = groups[g][0]
            s = sizes[g] * _size(own.difference(have), cards)
            if s < size:
                best, size = g, s
        if best is None:
            best, size = len(groups), _size(own, cards)
            groups.append(([], []))
            sizes.append(size)
        variables, members = groups[best]
        added = own.difference(variables)
        if added:
            variables[:] = sorted(added.union(variables))
            sizes[best] = size
            for x in added:
                held = holding.setdefault(x, [])
                held.append(best)
                if len(held) > _GROUPS_PER_VARIABLE:
                    del held[0]
        members.append(j)
    return groups, alone


def _group_arrays(groups: list[tuple[list[int], list[int]]], families: list[list[int]], cards: tuple[int, ...]
                  ) -> tuple[np.ndarray, ...]:
    """``(g_ptr, g_vars, g_cells, m_ptr, m_node, f_ptr, fmap)`` as
    :func:`~pybncsmooth.counting._plain_kernels._group_counts` reads them: ``fmap`` holds,
    for each node of a group and each cell of the group's joint table (mixed radix over
    its variables, the first most significant), the node's dense cell (first parent most
    significant, the child last)."""
    maps = []
    for variables, members in groups:
        size = _size(variables, cards)
        strides = np.cumprod([1, *(cards[x] for x in variables[:0:-1])], dtype=np.int64)[::-1]
        code = {x: (np.arange(size, dtype=np.int64) // s) % cards[x] for x, s in zip(variables, strides)}
        for j in members:
            cell = np.zeros(size, dtype=np.int64)
            for x in families[j]:
                cell = cell * cards[x] + code[x]
            maps.append(cell)
    lengths = [len(m) for m in maps]
    return (np.cumsum([0, *(len(v) for v, _ in groups)], dtype=np.int64),
            np.array([x for v, _ in groups for x in v], dtype=np.int64),
            np.array([_size(v, cards) for v, _ in groups], dtype=np.int64),
            np.cumsum([0, *(len(m) for _, m in groups)], dtype=np.int64),
            np.array([j for _, m in groups for j in m], dtype=np.int64),
            np.cumsum([0, *lengths], dtype=np.int64),
            np.concatenate(maps) if maps else np.zeros(0, dtype=np.int64))


def _solo(nodes: Sequence[int], families: list[list[int]], cards: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """``(node, child, pa_ptr, pa_idx, pa_card, rcard)`` of ``nodes`` counted one by one
    (:func:`~pybncsmooth.counting._plain_kernels._solo_counts`)."""
    nodes = list(nodes)
    fams = [families[j] for j in nodes]
    return (np.array(nodes, dtype=np.int64), np.array([f[-1] for f in fams], dtype=np.int64),
            np.cumsum([0, *(len(f) - 1 for f in fams)], dtype=np.int64),
            np.array([x for f in fams for x in f[:-1]], dtype=np.int64),
            np.array([cards[x] for f in fams for x in f[:-1]], dtype=np.int64),
            np.array([cards[f[-1]] for f in fams], dtype=np.int64))
