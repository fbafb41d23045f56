"""Closed forms over every node of every tree at once, on the counting's flat arrays.

:class:`~pybncsmooth.counting.flat.FlatTrees` holds the counts of all trees of a
network, one row a tree node, ``r`` (the child's levels) cells a row, a row's cells
of count 0 unstored where it is a leaf (:class:`~pybncsmooth.counting.flat.RowCells`).
A closed-form estimator (``mle``, ``bayes``, ``mestimate``) is one formula per cell
whose inputs are the cell's count, its row's total and its level's constants:
evaluated here on the flat arrays in one pass, cell by cell with the operations the
per-tree evaluation uses (each row's total an exact integer sum; the cells of count 0
a row does not store once a row, from the count 0), so that every value is the
per-tree one, bit for bit.  :class:`FlatEstimates` then makes a tree's
:class:`~pybncsmooth.estimators.base.TreeEstimate` (views of the flat results) only
when something asks for it.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...counting.context_tree import ContextTree
from ...counting.flat import FlatTrees, RowCells
from ._kernels import cell_ratio
from ..base import TreeEstimate

__all__ = ["FlatEstimates", "FlatRows", "LazyCells", "stacked_sd", "deferred_args", "cellwise"]


class FlatRows:
    """Per row of ``flat`` (a tree node): the child's levels ``r`` and the row's total
    count (an exact integer sum); per block (a tree level) the number of rows."""

    def __init__(self, flat: FlatTrees) -> None:
        self.flat = flat
        self.block_r = flat.block_rcard()
        self.sizes, self.r, self.total = flat.sizes, flat.row_r, flat.row_total

    def per_row(self, per_block: np.ndarray) -> np.ndarray:
        """A per-block array spread over the blocks' rows."""
        return np.repeat(per_block, self.sizes)

    def ratio(self, add: np.ndarray | float, div: np.ndarray) -> RowCells:
        """Every cell's ``(count + add[row]) / div[row]`` (float64), in one compiled pass:
        the same numbers as the per-cell arrays' ``(counts + add) / div``, operation by
        operation, a row's unstored cells once a row."""
        add = np.broadcast_to(np.asarray(add, dtype=np.float64), self.r.shape)
        return RowCells(*cell_ratio(self.flat.nz_ptr, self.flat.nz_n, add, np.asarray(div, dtype=np.float64)))


class FlatEstimates:
    """The estimates of every tree of ``flat``, computed for all of them at once;
    ``make(j)`` builds tree ``j``'s :class:`TreeEstimate` from them when it is first
    asked for (:meth:`estimate`), then kept."""

    def __init__(self, flat: FlatTrees, make: Callable[[int], TreeEstimate]) -> None:
        self.flat = flat
        self._make = make
        self._done: list[TreeEstimate | None] = [None] * len(flat)

    def estimate(self, j: int) -> TreeEstimate:
        est = self._done[j]
        if est is None:
            est = self._done[j] = self._make(j)
        return est

    def tree(self, j: int) -> ContextTree:
        return self.flat.tree(j)

    def parent_cards(self, j: int) -> tuple[int, ...]:
        return self.flat.parent_cards(j)


def stacked_sd(p: np.ndarray, total: np.ndarray) -> np.ndarray:
    r"""Dirichlet sds :math:`\sqrt{p(1-p)/(\text{total}+1)}` cell by cell."""
    return np.sqrt(np.maximum(p * (1.0 - p), 0.0) / (total + 1.0))


def cellwise(flat: FlatTrees, fn: Callable[..., np.ndarray], cells: tuple[RowCells, ...],
             rows: tuple[np.ndarray, ...] = ()) -> RowCells:
    """``fn`` (element-wise) of per-cell arrays ``cells`` and per-row arrays ``rows``,
    cell by cell: on each row's unstored cells (once a row) and on each stored cell, a
    per-row array read at the cell's row; the per-cell arguments first."""
    at = flat.stored_row
    return RowCells(fn(*[c.base for c in cells], *rows), fn(*[c.stored for c in cells], *[a[at] for a in rows]))


class LazyCells:
    """A per-cell array (:class:`~pybncsmooth.counting.flat.RowCells`) computed by
    ``fn()`` when first needed (for every tree at once), then a tree's levels written
    out from it."""

    def __init__(self, flat: FlatTrees, fn: Callable[[], RowCells]) -> None:
        self.flat, self.fn = flat, fn
        self._cells: RowCells | None = None

    def cells(self) -> RowCells:
        if self._cells is None:
            self._cells = self.fn()
        return self._cells

    def levels(self, arg: tuple[int, int | None]) -> tuple[np.ndarray, ...]:
        """Tree ``arg[0]``'s levels (the first ``arg[1]``, when given)."""
        j, upto = arg
        out = self.flat.level_views(self.cells(), j)
        return out if upto is None else out[:upto]


def deferred_args(lazy: LazyCells, j: int, upto: int | None = None) -> tuple[Callable[[Any], Any], Any]:
    """The ``(function, argument)`` pair of a deferred field read from ``lazy``."""
    return lazy.levels, (j, upto)

