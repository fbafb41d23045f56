"""The levels of many context trees stacked, for closed-form estimators that evaluate
every tree node with the same formula.

A network of a thousand nodes has a few thousand tree levels, most of a few rows:
evaluated one level (or one tree) at a time, the array calls' overhead costs more than
the arithmetic.  :func:`stack_levels` concatenates the count matrices of all levels of
all trees whose child has the same number of levels ``r`` into one ``(N, r)`` float
matrix, with each level's first row; a closed form evaluates the whole matrix at once
(the row sums are taken row by row, so every value is the one the per-tree evaluation
gives, bit for bit), and :func:`unstack` cuts the results back into each tree's levels.
"""

from __future__ import annotations

from typing import Iterator, Mapping, NamedTuple

import numpy as np

from ...counting.context_tree import ContextTree

__all__ = ["Stack", "stack_levels", "unstack", "per_row", "level_slices"]


class Stack(NamedTuple):
    """The trees (by name) whose child has ``r`` levels, their levels' counts stacked
    (``counts``, float64 ``(N, r)``) and where each tree's levels start (``bounds[k]``:
    the first row of each of tree ``k``'s levels, and the end of its last)."""

    r: int
    names: list[str]
    trees: list[ContextTree]
    counts: np.ndarray
    bounds: list[list[int]]


def stack_levels(trees: Mapping[str, ContextTree]) -> Iterator[Stack]:
    """The trees grouped by the child's number of levels, each group stacked."""
    groups: dict[int, list[str]] = {}
    for name, t in trees.items():
        groups.setdefault(t.child_card, []).append(name)
    for r, names in groups.items():
        mats, bounds, row = [], [], 0
        for name in names:
            b = [row]
            for lev in trees[name].levels:
                mats.append(lev.counts)
                row += len(lev.counts)
                b.append(row)
            bounds.append(b)
        counts = np.concatenate(mats).astype(np.float64, copy=False) if mats else np.zeros((0, r))
        yield Stack(r, names, [trees[n] for n in names], counts, bounds)


def per_row(stack: Stack, values: list[list[float]]) -> np.ndarray:
    """A column ``(N, 1)`` holding ``values[k][i]`` on the rows of level ``i`` of tree ``k``."""
    sizes = [b[i + 1] - b[i] for b in stack.bounds for i in range(len(b) - 1)]
    flat = [v for vs in values for v in vs]
    return np.repeat(np.asarray(flat, dtype=np.float64), sizes).reshape(-1, 1)


def unstack(stack: Stack, k: int, arr: np.ndarray, upto: int | None = None) -> tuple[np.ndarray, ...]:
    """Tree ``k``'s levels (the first ``upto``) of a stacked result ``arr``."""
    b = stack.bounds[k]
    n = len(b) - 1 if upto is None else upto
    return tuple(arr[b[i] : b[i + 1]] for i in range(n))


def level_slices(stack: Stack) -> list[list[slice]]:
    """Per tree, the rows of each of its levels in the stacked arrays (computed once: a
    stacked result is then cut into a tree's levels with one slice a level)."""
    return [[slice(b[i], b[i + 1]) for i in range(len(b) - 1)] for b in stack.bounds]
