"""The context trees of many nodes as the counting leaves them: flat arrays.

The counting kernels (:func:`~pybncsmooth.counting._kernels.leaf_levels`) write every
level of every node's tree into flat arrays (the parent and branch value of each tree
node, a block a level, and the counts), and :class:`FlatTrees` keeps them as they are:
a closed-form estimator evaluates all of them in one pass, and a node's
:class:`~pybncsmooth.counting.context_tree.ContextTree` (its levels written out from
the arrays) is made only when something asks for it (:meth:`FlatTrees.tree`), then
kept.  A network of a thousand nodes then costs its fit no Python object per node.

The counts are held row by row compactly (:class:`RowCells`): a leaf stores its cells
that are not zero, a tree node above the leaves all its cells.  A child of 100 levels
seen a few times under each of its thousands of observed configurations then costs
its fit the cells it saw, not 100 a configuration; a per-cell result of an estimator
(a probability, an sd) is held the same way, the value of a row's unstored cells once
a row.

:class:`TreeMap` is the read-only mapping node -> tree a network's counting returns:
trees made on first read, from a :class:`FlatTrees` or given whole (nodes counted by a
sort of the rows).
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterator, Mapping, NamedTuple, Sequence

import numpy as np

from ._kernels import level_configs, spread_rows
from .context_tree import ContextTree, TreeLevel

__all__ = ["FlatTrees", "RowCells", "TreeMap"]


class RowCells(NamedTuple):
    """A per-cell array of a :class:`FlatTrees`, held as its counts are: every cell of
    row ``u`` is ``base[u]`` (``None``: 0) but the row's stored cells
    (``FlatTrees.nz_ptr[u]:nz_ptr[u + 1]``), which are ``stored[k]``."""

    base: np.ndarray | None
    stored: np.ndarray


class FlatTrees:
    """Every level of the context trees of ``specs`` (``(node, ordered parents)``), flat.

    Attributes
    ----------
    names, parents:
        Each tree's child and its parents (tuples), in ``specs``' order.
    rcard:
        Per tree: the child's number of levels (int64).
    blk_ptr:
        Tree ``j``'s levels are blocks ``blk_ptr[j]:blk_ptr[j + 1]`` (root first).
    row_ptr:
        Block ``b``'s tree nodes are rows ``row_ptr[b]:row_ptr[b + 1]`` of ``parent`` and
        ``value``.
    parent, value:
        The flat arrays (int64) of :class:`~pybncsmooth.counting.context_tree.TreeLevel`.
    sizes, row_r, row_total:
        Per block its number of rows; per row the child's levels and its total count.
    nz_ptr, nz_x, nz_n:
        Row ``u``'s stored cells are ``nz_ptr[u]:nz_ptr[u + 1]``: the child's level
        ``nz_x`` (increasing) and count ``nz_n`` of each; its other cells are zeros.  A
        leaf stores the cells that are not zero, a row above the leaves all ``r``.
    """

    def __init__(self, specs: Sequence[tuple[str, Sequence[str]]], card: Mapping[str, int], rcard: np.ndarray,
                 pa_ptr: np.ndarray, pa_card: np.ndarray, blk_ptr: np.ndarray, row_ptr: np.ndarray,
                 parent: np.ndarray, value: np.ndarray, sizes: np.ndarray, row_r: np.ndarray,
                 row_total: np.ndarray, nz_ptr: np.ndarray, nz_x: np.ndarray, nz_n: np.ndarray) -> None:
        self.names = [n for n, _ in specs]
        self.parents = [tuple(pa) for _, pa in specs]
        self.card = card
        self.rcard, self.pa_ptr, self.pa_card = rcard, pa_ptr, pa_card
        self.blk_ptr, self.row_ptr = blk_ptr, row_ptr
        self.parent, self.value = parent, value
        #: per block its rows; per row the child's levels and the row's total count
        self.sizes, self.row_r, self.row_total = sizes, row_r, row_total
        #: per row its stored cells; per stored cell the child's level and its count
        self.nz_ptr, self.nz_x, self.nz_n = nz_ptr, nz_x, nz_n
        self._trees: list[ContextTree | None] = [None] * len(self.names)
        self._lists: tuple[list, list] | None = None

    def __len__(self) -> int:
        return len(self.names)

    def parent_cards(self, j: int) -> tuple[int, ...]:
        """The parents' numbers of levels of tree ``j``."""
        return tuple(self.card[p] for p in self.parents[j])

    @property
    def depth(self) -> np.ndarray:
        """Per tree, the number of parents."""
        return np.diff(self.pa_ptr)

    def block_configs(self) -> np.ndarray:
        """Per block, the number of configurations of the parents above its level
        (``q_i``, the product of the first ``i`` parents' levels; 1 at a root)."""
        out = np.empty(int(self.blk_ptr[-1]), dtype=np.int64)
        level_configs(self.pa_ptr, self.pa_card, self.blk_ptr, out)
        return out

    def block_rcard(self) -> np.ndarray:
        """The child's number of levels, per block."""
        return np.repeat(self.rcard, self.depth + 1)

    @property
    def counts(self) -> RowCells:
        """The counts of every row (:class:`RowCells`)."""
        return RowCells(None, self.nz_n)

    @cached_property
    def stored_row(self) -> np.ndarray:
        """The row of each stored cell."""
        return np.repeat(np.arange(len(self.row_r), dtype=np.int64), np.diff(self.nz_ptr))

    def tree(self, j: int) -> ContextTree:
        """Tree ``j`` (made on first call, its levels written out from the flat arrays; then kept)."""
        t = self._trees[j]
        if t is None:
            t = self._trees[j] = self._make(j)
        return t

    def _make(self, j: int) -> ContextTree:
        counts = self.level_views(self.counts, j)
        blk, row = self._offsets()
        parent, value = self.parent, self.value
        levels = tuple(TreeLevel(parent[row[b] : row[b + 1]], value[row[b] : row[b + 1]], c)
                       for b, c in zip(range(blk[j], blk[j + 1]), counts))
        return ContextTree._unchecked(self.names[j], self.parents[j], int(self.rcard[j]), self.parent_cards(j), levels)

    def _offsets(self) -> tuple[list, list]:
        if self._lists is None:
            self._lists = (self.blk_ptr.tolist(), self.row_ptr.tolist())
        return self._lists

    def level_views(self, cells: RowCells, j: int) -> tuple[np.ndarray, ...]:
        """Tree ``j``'s levels of a per-cell array held as :attr:`counts` is, written out
        whole: ``(n_i, r)`` arrays (views of one new array), root first."""
        blk, row = self._offsets()
        b0, b1 = blk[j], blk[j + 1]
        lo, hi, r = row[b0], row[b1], int(self.rcard[j])
        kind = cells.stored.dtype
        base = np.zeros(hi - lo, dtype=kind) if cells.base is None else cells.base[lo:hi]
        out = np.empty((hi - lo) * r, dtype=kind)
        spread_rows(self.nz_ptr, self.nz_x, cells.stored, base, lo, hi, r, out)
        mat = out.reshape(-1, r)  # the levels' rows, one after another
        return tuple(mat[row[b] - lo : row[b + 1] - lo] for b in range(b0, b1))

    def trees(self) -> list[ContextTree]:
        """Every tree, in ``specs``' order."""
        return [self.tree(j) for j in range(len(self.names))]


class TreeMap(Mapping[str, ContextTree]):
    """Node -> :class:`~pybncsmooth.counting.context_tree.ContextTree`, each tree made
    when first read: ``eager`` holds the trees given whole, ``flat`` (with ``index``:
    node -> its tree in ``flat``) the others."""

    def __init__(self, names: Sequence[str], eager: Mapping[str, ContextTree], flat: FlatTrees | None = None,
                 index: Mapping[str, int] | None = None) -> None:
        self._names = list(names)
        self._eager = dict(eager)
        self.flat = flat
        self.index = dict(index or {})

    def __getitem__(self, node: str) -> ContextTree:
        t = self._eager.get(node)
        if t is not None:
            return t
        if node not in self.index:
            raise KeyError(node)
        return self.flat.tree(self.index[node])  # type: ignore[union-attr]

    def __contains__(self, node: object) -> bool:
        return node in self._eager or node in self.index

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def all_flat(self, nodes: Sequence[str]) -> bool:
        """Whether every one of ``nodes`` is a tree of :attr:`flat` (none given whole)."""
        return self.flat is not None and all(n in self.index for n in nodes)
