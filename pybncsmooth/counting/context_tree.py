"""The context tree: counts of a child variable along an ordered list of parents.

For a child ``X`` with ``r`` levels and ordered parents ``(P1, ..., Pd)`` the
context tree is a prefix tree whose level ``i`` branches on ``Pi``: the root
(level 0) holds the marginal counts ``n[x]``, a node at level ``i`` holds the
counts ``n[x | P1=p1, ..., Pi=pi]`` of the rows in its context, and its children
split them by ``P(i+1)``.  Only branches observed in the data are stored, so the
size is bounded by the number of distinct parent configurations seen, never by
the product of the parents' cardinalities.

Storage is level by level, as flat arrays (``TreeLevel``): for level ``i`` the
index of each node's parent at level ``i - 1``, the branch value (the code of
``Pi``), and the count matrix ``counts[node, x]``.  Nodes of a level are in
lexicographic order of their configurations, so ``key = parent * card(Pi) +
value`` is strictly increasing and lookups are binary searches.  Counts at an
internal node are the sums of its children's.

Trees are built without a Python loop over rows (mixed-radix codes and
``bincount``, or a sort when the configuration space is large), are independent
of the order of the rows, and are *mergeable*: counting chunks of a data set and
adding the trees gives exactly the tree of the whole data set.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, NamedTuple, Sequence

import numpy as np

from ..errors import DataError
from ._kernels import build_levels, dense_counts

__all__ = [
    "ContextTree",
    "TreeLevel",
    "count_tree",
    "aggregate_leaves",
    "weighted_leaves",
    "mixed_radix",
    "config_codes",
]

# Dense counting (one bincount over all cells) is used while the number of cells
# stays below max(_DENSE_MIN_CELLS, _DENSE_ROWS_FACTOR * n_rows).
_DENSE_MIN_CELLS = 1 << 16
_DENSE_ROWS_FACTOR = 4
_INT64_SAFE = 1 << 62


class TreeLevel(NamedTuple):
    """One level of a context tree (see the module docstring)."""

    parent: np.ndarray  #: int64, index of each node's parent in the level above (root: [-1])
    value: np.ndarray  #: int64, code of this level's parent variable on the branch (root: [-1])
    counts: np.ndarray  #: int64, shape (n_nodes, r): counts of the child's levels


@dataclass(frozen=True, eq=False)
class ContextTree:
    """Counts of ``child`` in every observed context of its ordered ``parents``.

    Build one with :func:`count_tree` (from codes) or :meth:`from_leaves`.

    Attributes
    ----------
    child, parents:
        Variable names; ``parents`` in branching order.
    child_card, parent_cards:
        Numbers of levels.
    levels:
        ``depth + 1`` :class:`TreeLevel` objects; ``levels[0]`` is the root.
    """

    child: str
    parents: tuple[str, ...]
    child_card: int
    parent_cards: tuple[int, ...]
    levels: tuple[TreeLevel, ...]

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_leaves(
        cls,
        child: str,
        parents: Sequence[str],
        child_card: int,
        parent_cards: Sequence[int],
        configs: np.ndarray,
        counts: np.ndarray,
    ) -> "ContextTree":
        """Build a tree from a leaf table.

        ``configs`` is an ``(m, d)`` array of parent codes and ``counts`` an ``(m, r)``
        array of child counts; rows may repeat and come in any order (they are
        summed and sorted).  Rows whose counts are all zero are dropped.
        """
        parents = tuple(parents)
        parent_cards = tuple(int(c) for c in parent_cards)
        d = len(parents)
        counts = np.asarray(counts)
        counts = counts.astype(count_dtype(counts)).reshape(-1, child_card)
        configs = np.asarray(configs, dtype=np.int64)
        if configs.size != counts.shape[0] * d:
            raise ValueError("configs and counts must have the same number of rows")
        configs = configs.reshape(counts.shape[0], d)
        configs, counts = _sum_duplicate_leaves(configs, counts)
        return cls(child, parents, int(child_card), parent_cards, _build_levels(configs, counts, d, child_card))

    @classmethod
    def _unchecked(cls, child: str, parents: tuple, child_card: int, parent_cards: tuple, levels: tuple
                   ) -> "ContextTree":
        """The tree of these fields as they are (a counting kernel's output: the types are
        right), without the frozen dataclass's constructor (a field set at a time costs
        more than the arrays of a small tree)."""
        out = object.__new__(cls)
        out.__dict__.update(child=child, parents=parents, child_card=child_card, parent_cards=parent_cards,
                            levels=levels)
        return out

    # ------------------------------------------------------------------ basic properties
    @property
    def depth(self) -> int:
        """Number of parents (levels below the root)."""
        return len(self.parents)

    @property
    def n_nodes(self) -> int:
        """Total number of tree nodes, root included."""
        return sum(len(l.value) for l in self.levels)

    @property
    def n_leaves(self) -> int:
        return len(self.levels[-1].value)

    @property
    def total(self) -> int | float:
        """Number of rows counted (the root's total; their summed weights when the
        counts are fractional)."""
        tot = self.levels[0].counts.sum()
        return float(tot) if self.fractional else int(tot)

    @property
    def fractional(self) -> bool:
        """Whether the counts are real numbers (weighted rows, expected counts of EM)
        rather than integers."""
        return self.levels[0].counts.dtype.kind == "f"

    @cached_property
    def keys(self) -> tuple[np.ndarray, ...]:
        """Per level, the sorted search keys ``parent * card + value`` (root: ``[0]``)."""
        out = [np.zeros(1, dtype=np.int64)]
        for i in range(1, len(self.levels)):
            lev = self.levels[i]
            out.append(lev.parent * self.parent_cards[i - 1] + lev.value)
        return tuple(out)

    def level_sizes(self) -> list[int]:
        return [len(l.value) for l in self.levels]

    def level_offsets(self) -> np.ndarray:
        """Where each level starts in the flat node order (levels concatenated), and the
        node count last: ``depth + 2`` int64 entries."""
        return np.concatenate([[0], np.cumsum(self.level_sizes())]).astype(np.int64)

    def node_configs(self, level: int) -> np.ndarray:
        """Parent codes of the nodes at ``level``: an ``(n_nodes, level)`` int64 array."""
        n = len(self.levels[level].value)
        out = np.empty((n, level), dtype=np.int64)
        idx = np.arange(n)
        for i in range(level, 0, -1):
            lev = self.levels[i]
            out[:, i - 1] = lev.value[idx]
            idx = lev.parent[idx]
        return out

    def leaf_table(self) -> tuple[np.ndarray, np.ndarray]:
        """``(configs, counts)`` of the leaves (see :meth:`from_leaves`)."""
        return self.node_configs(self.depth), self.levels[-1].counts

    def children_slices(self, level: int) -> np.ndarray:
        """For the nodes at ``level`` (< depth), ``start`` offsets of their children at
        ``level + 1``: node ``j``'s children are ``start[j]:start[j+1]`` (length n+1)."""
        child_parent = self.levels[level + 1].parent
        n = len(self.levels[level].value)
        return np.searchsorted(child_parent, np.arange(n + 1), side="left")

    # ------------------------------------------------------------------ algebra
    def truncate(self, depth: int) -> "ContextTree":
        """The tree of the same child with only its first ``depth`` parents: the levels
        above ``depth`` are already the counts of those contexts (no recount)."""
        if not 0 <= depth <= self.depth:
            raise ValueError(f"depth must be between 0 and {self.depth}, not {depth}")
        if depth == self.depth:
            return self
        return ContextTree(
            self.child, self.parents[:depth], self.child_card, self.parent_cards[:depth], self.levels[: depth + 1]
        )

    def with_leaf_counts(self, counts: np.ndarray) -> "ContextTree":
        """The same nodes with other leaf counts (``(n_leaves, r)``; rows may be all
        zero: such a leaf stays, unlike in :meth:`from_leaves`), every internal node's
        counts the sum of its children's."""
        counts = np.asarray(counts)
        r = self.child_card
        if counts.shape != (self.n_leaves, r):
            raise ValueError(f"expected leaf counts of shape {(self.n_leaves, r)}, got {counts.shape}")
        dt = count_dtype(counts)
        levels = [TreeLevel(self.levels[-1].parent, self.levels[-1].value, counts.astype(dt))]
        for i in range(self.depth, 0, -1):
            above = np.zeros((len(self.levels[i - 1].value), r), dtype=dt)
            np.add.at(above, self.levels[i].parent, levels[0].counts)
            levels.insert(0, TreeLevel(self.levels[i - 1].parent, self.levels[i - 1].value, above))
        return ContextTree(self.child, self.parents, r, self.parent_cards, tuple(levels))

    def scaled(self, factor: float) -> "ContextTree":
        """The same nodes with every count multiplied by ``factor`` (> 0; fractional
        counts, unless ``factor`` is 1): the old counts of an update with forgetting."""
        if factor == 1.0:
            return self
        if not factor > 0:
            raise ValueError(f"the factor must be positive, not {factor!r}")
        levels = tuple(TreeLevel(l.parent, l.value, l.counts * float(factor)) for l in self.levels)
        return ContextTree(self.child, self.parents, self.child_card, self.parent_cards, levels)

    def whole(self, who: str) -> "ContextTree":
        """This tree with integer counts: fractional counts that are whole numbers are
        converted; others raise :class:`DataError` naming ``who`` (an estimator whose
        sampler needs whole counts)."""
        if not self.fractional:
            return self
        for lev in self.levels:
            if not np.array_equal(lev.counts, np.round(lev.counts)):
                raise DataError(
                    f"{who} needs whole counts, and the counts of {self.child!r} are fractional (non-integer row "
                    "weights): use integer weights, or an estimator that takes fractional counts"
                )
        levels = tuple(TreeLevel(l.parent, l.value, np.round(l.counts).astype(np.int64)) for l in self.levels)
        return ContextTree(self.child, self.parents, self.child_card, self.parent_cards, levels)

    def _check_compatible(self, other: "ContextTree") -> None:
        if (self.child, self.parents, self.child_card, self.parent_cards) != (
            other.child,
            other.parents,
            other.child_card,
            other.parent_cards,
        ):
            raise DataError(
                f"cannot merge the context tree of {self.child!r} | {list(self.parents)} "
                f"with that of {other.child!r} | {list(other.parents)} (variables or levels differ)"
            )

    def merge(self, *others: "ContextTree") -> "ContextTree":
        """The tree of the union of the data sets (counts added, branches united)."""
        if len(others) == 1:
            self._check_compatible(others[0])
            inside = self._merge_inside(others[0])
            if inside is not None:
                return inside
        configs, counts = [self.leaf_table()[0]], [self.levels[-1].counts]
        for o in others:
            self._check_compatible(o)
            c, n = o.leaf_table()
            configs.append(c)
            counts.append(n)
        return ContextTree.from_leaves(
            self.child,
            self.parents,
            self.child_card,
            self.parent_cards,
            np.concatenate(configs),
            np.concatenate(counts),
        )

    def _merge_inside(self, other: "ContextTree") -> "ContextTree | None":
        """The merge when every node of ``other`` is a node of this tree (a few new rows
        added to many: an update): each level's counts added at their nodes' places, no
        sort; ``None`` when ``other`` has a branch this tree lacks."""
        dt = np.result_type(self.levels[0].counts.dtype, other.levels[0].counts.dtype)
        levels = [TreeLevel(self.levels[0].parent, self.levels[0].value, self.levels[0].counts + other.levels[0].counts)]
        here = np.zeros(1, dtype=np.int64)
        for i in range(1, self.depth + 1):
            lev, new = self.levels[i], other.levels[i]
            q = here[new.parent] * self.parent_cards[i - 1] + new.value
            keys = self.keys[i]
            pos = np.searchsorted(keys, q)
            if len(q) and (pos[-1] >= len(keys) or not np.array_equal(keys[np.minimum(pos, len(keys) - 1)], q)):
                return None
            counts = lev.counts.astype(dt, copy=True)
            counts[pos] += new.counts  # the nodes of a level are distinct: no repeated index
            levels.append(TreeLevel(lev.parent, lev.value, counts))
            here = pos
        return ContextTree(self.child, self.parents, self.child_card, self.parent_cards, tuple(levels))

    def __add__(self, other: "ContextTree") -> "ContextTree":
        return self.merge(other)

    def recode(
        self,
        child_map: np.ndarray | None,
        parent_maps: Sequence[np.ndarray | None],
        child_card: int,
        parent_cards: Sequence[int],
    ) -> "ContextTree":
        """The same counts under new level codes (``map[old_code] = new_code``).

        Used to put trees counted against different schemas (chunks whose inferred
        levels differ) onto one common schema.
        """
        cf, n = self.leaf_table()
        cf = cf.copy()
        for j, m in enumerate(parent_maps):
            if m is not None:
                cf[:, j] = np.asarray(m, dtype=np.int64)[cf[:, j]]
        if child_map is not None:
            new = np.zeros((n.shape[0], child_card), dtype=n.dtype)
            new[:, np.asarray(child_map, dtype=np.int64)] = n
            n = new
        return ContextTree.from_leaves(self.child, self.parents, child_card, parent_cards, cf, n)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContextTree):
            return NotImplemented
        if (self.child, self.parents, self.child_card, self.parent_cards) != (
            other.child,
            other.parents,
            other.child_card,
            other.parent_cards,
        ):
            return False
        return all(
            np.array_equal(a.parent, b.parent)
            and np.array_equal(a.value, b.value)
            and np.array_equal(a.counts, b.counts)
            for a, b in zip(self.levels, other.levels)
        )

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ queries
    def find(self, parent_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deepest tree node matching each row's parent configuration.

        Parameters
        ----------
        parent_codes:
            ``(n, d)`` integer codes of the parents (``-1`` = not observed).

        Returns
        -------
        level, node, unseen:
            For each row the level and index of the deepest existing node along
            its path, and whether the descent stopped because the configuration
            was never observed (as opposed to reaching a leaf or an unobserved
            parent value).
        """
        P = np.asarray(parent_codes)
        n = P.shape[0]
        node = np.zeros(n, dtype=np.int64)
        level = np.zeros(n, dtype=np.int64)
        alive = np.ones(n, dtype=bool)
        unseen = np.zeros(n, dtype=bool)
        for i in range(1, self.depth + 1):
            keys = self.keys[i]
            v = P[:, i - 1].astype(np.int64)
            known = v >= 0
            q = node * self.parent_cards[i - 1] + v
            pos = np.searchsorted(keys, q)
            pos_c = np.minimum(pos, max(len(keys) - 1, 0))
            hit = alive & known & (pos < len(keys))
            if len(keys):
                hit &= keys[pos_c] == q
            unseen |= alive & known & ~hit
            node = np.where(hit, pos_c, node)
            level = np.where(hit, i, level)
            alive = hit
            if not alive.any():
                break
        return level, node, unseen

    def __repr__(self) -> str:
        pa = ", ".join(self.parents) if self.parents else "-"
        sizes = "/".join(str(s) for s in self.level_sizes())
        return f"ContextTree({self.child} | {pa}; nodes per level {sizes}; n={self.total})"


# ---------------------------------------------------------------------------- counting


def count_tree(
    child: str,
    parents: Sequence[str],
    x: np.ndarray,
    parent_codes: np.ndarray | Sequence[np.ndarray],
    child_card: int,
    parent_cards: Sequence[int],
    *,
    complete: bool | None = None,
    weights: np.ndarray | None = None,
) -> ContextTree:
    """Count a context tree from code arrays.

    Parameters
    ----------
    x:
        ``(n,)`` codes of the child.
    parent_codes:
        ``(n, d)`` array (or a list of ``d`` arrays) of the parents' codes, in
        branching order.
    Rows where the child or a parent is ``-1`` (not observed) are skipped, as in
    bnlearn's available-case counting.  ``complete=True`` asserts that no code is
    ``-1`` (skips that check).  ``weights``: one non-negative number per row, the
    counts then being sums of weights (float64).
    """
    parents = tuple(parents)
    d = len(parents)
    x = np.asarray(x)
    if isinstance(parent_codes, np.ndarray) and parent_codes.ndim == 2:
        cols = [parent_codes[:, j] for j in range(parent_codes.shape[1])]
    else:
        cols = [np.asarray(c) for c in parent_codes]
    if len(cols) != d:
        raise ValueError(f"expected codes for {d} parents, got {len(cols)}")
    for name, c, k in zip((child, *parents), (x, *cols), (child_card, *parent_cards)):
        if c.size and c.max() >= k:
            raise ValueError(f"codes of {name!r} reach {int(c.max())}, beyond its {k} levels")
        if len(c) != len(x):
            raise ValueError(f"codes of {name!r} have {len(c)} rows, expected {len(x)}")
    if weights is not None:
        configs, counts = weighted_leaves(x, cols, child_card, weights, parent_cards)
    else:
        configs, counts = aggregate_leaves(x, cols, child_card, parent_cards, complete=complete)
    levels = _build_levels(configs, counts, d, child_card)
    return ContextTree(child, parents, int(child_card), tuple(int(c) for c in parent_cards), levels)


def aggregate_leaves(
    x: np.ndarray,
    cols: Sequence[np.ndarray],
    child_card: int,
    parent_cards: Sequence[int],
    *,
    complete: bool | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Leaf table (sorted unique parent configurations and child counts) of rows.

    Three vectorised strategies, chosen by the size of the configuration space
    ``Q = prod(parent_cards)``: one ``bincount`` over all ``Q * r`` cells when that
    is small; ``np.unique`` of mixed-radix codes when they fit in 64 bits; a
    lexicographic sort of the columns otherwise.
    """
    r = int(child_card)
    d = len(cols)
    cards = [int(c) for c in parent_cards]
    Q = 1
    for c in cards:
        Q *= c
    n = x.shape[0]
    if Q * r <= max(_DENSE_MIN_CELLS, _DENSE_ROWS_FACTOR * n):
        M = code_matrix([x, *cols])
        return dense_leaves(M, 0, np.arange(1, d + 1), cards, r)
    if complete is None:
        complete = (x.size == 0 or x.min() >= 0) and all(c.size == 0 or c.min() >= 0 for c in cols)
    if not complete:
        mask = x >= 0
        for c in cols:
            mask &= c >= 0
        x = x[mask]
        cols = [c[mask] for c in cols]
    n = x.shape[0]
    if n == 0:
        return np.zeros((0, d), dtype=np.int64), np.zeros((0, r), dtype=np.int64)
    if Q * r < _INT64_SAFE:
        cfg = mixed_radix(cols, cards)
        uniq, cnt = np.unique(cfg * r + x, return_counts=True)
        cfg_u, x_u = np.divmod(uniq, r)
        new = np.empty(len(cfg_u), dtype=bool)
        new[0] = True
        np.not_equal(cfg_u[1:], cfg_u[:-1], out=new[1:])
        leaf = np.cumsum(new) - 1
        counts = np.zeros((int(leaf[-1]) + 1, r), dtype=np.int64)
        counts[leaf, x_u] = cnt
        return _decode(cfg_u[new], cards), counts
    # configuration space beyond 64-bit codes: sort the columns themselves
    P = np.column_stack([c.astype(np.int64) for c in cols])
    return _sum_duplicate_leaves(P, _one_hot(x, r))


def weighted_leaves(
    x: np.ndarray,
    cols: Sequence[np.ndarray],
    child_card: int,
    weights: np.ndarray,
    parent_cards: Sequence[int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Leaf table of weighted rows: the counts are sums of the rows' weights (rows with a
    code ``-1`` or weight 0 left out).  With ``parent_cards`` and a small configuration
    space, one weighted ``bincount`` over the cells; otherwise a sort of the rows."""
    r = int(child_card)
    w = np.asarray(weights, dtype=np.float64)
    mask = (x >= 0) & (w > 0)
    for c in cols:
        mask &= c >= 0
    if parent_cards is not None:
        cards = [int(c) for c in parent_cards]
        Q = int(np.prod(cards, dtype=np.int64)) if cards else 1
        if Q * r <= max(_DENSE_MIN_CELLS, _DENSE_ROWS_FACTOR * len(x)):
            cfg = mixed_radix([c[mask] for c in cols], cards) if cols else np.zeros(int(mask.sum()), np.int64)
            cells = np.bincount(cfg * r + x[mask].astype(np.int64), weights=w[mask], minlength=Q * r)
            dense = cells.reshape(Q, r)
            observed = np.flatnonzero(dense.any(axis=1))
            if not cols:
                return np.zeros((1, 0), dtype=np.int64), dense
            return _decode(observed, cards), dense[observed]
    P = np.column_stack([c[mask].astype(np.int64) for c in cols]) if cols else np.zeros((int(mask.sum()), 0), np.int64)
    onehot = np.zeros((P.shape[0], r))
    onehot[np.arange(P.shape[0]), x[mask].astype(np.int64)] = w[mask]
    if P.shape[0] == 0:
        return np.zeros((0, len(cols)), dtype=np.int64), np.zeros((0, r))
    return _sum_duplicate_leaves(P, onehot)


def count_dtype(counts: np.ndarray) -> type:
    """float64 for fractional counts, int64 otherwise."""
    return np.float64 if np.asarray(counts).dtype.kind == "f" else np.int64


def code_matrix(cols: Sequence[np.ndarray]) -> np.ndarray:
    """Columns of codes as one Fortran-ordered matrix (a common small integer dtype)."""
    if not cols:
        return np.empty((0, 0), dtype=np.int8, order="F")
    dtype = np.result_type(*[c.dtype for c in cols], np.int8)
    return np.array(cols, dtype=dtype).T  # (V, n) rows stacked in one copy: (n, V), Fortran order


def dense_leaves(
    M: np.ndarray, child: int, pcols: np.ndarray, cards: Sequence[int], r: int
) -> tuple[np.ndarray, np.ndarray]:
    """Leaf table by dense counting of the columns ``child``/``pcols`` of ``M``."""
    Q = 1
    for c in cards:
        Q *= int(c)
    dense = dense_counts(M, child, np.asarray(pcols, dtype=np.int64), np.asarray(cards, dtype=np.int64), r, Q * r)
    dense = dense.reshape(Q, r)
    if len(cards) == 0:
        return np.zeros((1, 0), dtype=np.int64), dense
    observed = np.flatnonzero(dense.any(axis=1))
    return _decode(observed, cards), dense[observed]


def mixed_radix(cols: Sequence[np.ndarray], cards: Sequence[int]) -> np.ndarray:
    """Codes with the first parent most significant: ((p1*c2 + p2)*c3 + p3)..."""
    cfg = cols[0].astype(np.int64)  # always a fresh array: safe to update in place
    for c, k in zip(cols[1:], cards[1:]):
        cfg *= k
        cfg += c
    return cfg


def config_index(M: np.ndarray, cards: Sequence[int]) -> np.ndarray:
    """Configuration codes of the rows of ``M`` (one column per variable, first most
    significant, as :func:`mixed_radix`); zeros when ``M`` has no columns."""
    if M.shape[1] == 0:
        return np.zeros(M.shape[0], dtype=np.int64)
    return mixed_radix([M[:, j] for j in range(M.shape[1])], cards)


def config_codes(cfg: np.ndarray, cards: Sequence[int]) -> np.ndarray:
    """The parent codes ``(n, d)`` of mixed-radix configuration indices (the inverse of
    :func:`config_index`)."""
    return _decode(cfg, cards)


def _decode(cfg: np.ndarray, cards: Sequence[int]) -> np.ndarray:
    out = np.empty((len(cfg), len(cards)), dtype=np.int64)
    rest = cfg.astype(np.int64)
    for j in range(len(cards) - 1, -1, -1):
        rest, out[:, j] = np.divmod(rest, cards[j])
    return out


def _one_hot(x: np.ndarray, r: int) -> np.ndarray:
    out = np.zeros((len(x), r), dtype=np.int64)
    out[np.arange(len(x)), x.astype(np.int64)] = 1
    return out


def _sum_duplicate_leaves(configs: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort leaf rows lexicographically, sum duplicates, drop all-zero rows."""
    m, d = configs.shape
    if m == 0:
        return configs, counts
    if d == 0:
        tot = counts.sum(axis=0, keepdims=True)
        return np.zeros((1, 0), dtype=np.int64), tot
    order = np.lexsort(configs.T[::-1])
    cs = configs[order]
    ns = counts[order]
    new = np.empty(m, dtype=bool)
    new[0] = True
    np.any(cs[1:] != cs[:-1], axis=1, out=new[1:])
    starts = np.flatnonzero(new)
    cs = cs[starts]
    ns = np.add.reduceat(ns, starts, axis=0)
    keep = ns.any(axis=1)
    if not keep.all():
        cs, ns = cs[keep], ns[keep]
    return cs, ns


def _build_levels(configs: np.ndarray, counts: np.ndarray, d: int, r: int) -> tuple[TreeLevel, ...]:
    """Levels of the tree from sorted, unique leaf configurations."""
    m = configs.shape[0]
    dt = count_dtype(counts)
    root_counts = counts.sum(axis=0).reshape(1, r).astype(dt)
    minus1 = np.full(1, -1, dtype=np.int64)
    levels = [TreeLevel(minus1, minus1.copy(), root_counts)]
    if d == 0:
        return tuple(levels)
    if m == 0:
        empty = np.zeros(0, dtype=np.int64)
        for _ in range(d):
            levels.append(TreeLevel(empty, empty, np.zeros((0, r), dtype=dt)))
        return tuple(levels)
    sizes, parent, value, lcounts = build_levels(
        np.ascontiguousarray(configs, dtype=np.int64), np.ascontiguousarray(counts, dtype=dt)
    )
    off = 0
    for k in sizes.tolist():  # views of the flat arrays, a level each
        levels.append(TreeLevel(parent[off : off + k], value[off : off + k], lcounts[off : off + k]))
        off += k
    return tuple(levels)


def merge_trees(trees: Iterable[ContextTree]) -> ContextTree:
    """Sum a non-empty sequence of compatible trees."""
    trees = list(trees)
    if not trees:
        raise ValueError("no trees to merge")
    return trees[0].merge(*trees[1:]) if len(trees) > 1 else trees[0]
