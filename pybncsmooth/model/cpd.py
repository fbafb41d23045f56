"""Conditional probability distributions of one node.

Two representations answer the same queries:

* :class:`TreeCPD`: a context tree with an estimate at every node (what the
  estimators produce).  Unseen parent configurations follow the estimate's
  ``unseen`` rule; a parent value that is not observed at query time (code
  ``-1``) stops the descent, so the deepest ancestor answers (back-off).
* :class:`TableCPD`: a dense table (what a BIF/DSC/NET file holds).  A parent
  value not observed at query time is averaged over uniformly.

Dense tables are laid out ``(node, parent_1, ..., parent_d)`` (bnlearn's layout).
Internally a flat "configuration-major" layout is used: row ``cfg`` of a
``(Q, r)`` matrix, ``cfg = ((p1 * c2 + p2) * c3 + p3) ...``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cached_property
from typing import Sequence

import numpy as np

from ..counting.context_tree import ContextTree, _mixed_radix
from ..errors import DenseTableTooLargeError
from ..estimators.base import TreeEstimate

__all__ = ["CPD", "TreeCPD", "TableCPD", "FixedPrefixCPD", "DEFAULT_MAX_CELLS", "QUERY_DENSE_CELLS"]

#: Largest dense table ``cpt()`` materialises unless told otherwise.
DEFAULT_MAX_CELLS = 50_000_000
#: Queries go through a cached dense table up to this many cells, else through the tree.
QUERY_DENSE_CELLS = 1 << 22


def _as_matrix(parent_codes: np.ndarray, d: int) -> np.ndarray:
    """Parent codes as an ``(n, d)`` array (a 1-d array is one column)."""
    P = np.asarray(parent_codes)
    if P.ndim == 1:
        P = P.reshape(-1, 1) if d == 1 else P.reshape(-1, d) if d else P.reshape(len(P), 0)
    if P.ndim != 2 or P.shape[1] != d:
        raise ValueError(f"expected parent codes of shape (n, {d}), got {P.shape}")
    return P


class CPD(ABC):
    """Common interface: ``node``, ``parents``, ``card``, ``parent_cards`` and queries."""

    node: str
    parents: tuple[str, ...]
    card: int
    parent_cards: tuple[int, ...]

    @property
    def n_configs(self) -> int:
        q = 1
        for c in self.parent_cards:
            q *= c
        return q

    @property
    def n_params(self) -> int:
        """Free parameters of the dense table: ``(r - 1) * q``."""
        return (self.card - 1) * self.n_configs

    @abstractmethod
    def _matrix(self, max_cells: int) -> np.ndarray:
        """The dense table as a configuration-major ``(q, r)`` matrix."""

    def table(self, max_cells: int = DEFAULT_MAX_CELLS) -> np.ndarray:
        """Dense table with axes ``(node, parent_1, ..., parent_d)``; columns sum to 1."""
        m = self._matrix(max_cells)
        return np.moveaxis(m.reshape(*self.parent_cards, self.card), -1, 0)

    @abstractmethod
    def probs(self, parent_codes: np.ndarray) -> np.ndarray:
        """``(n, r)`` probability vectors for ``(n, d)`` parent codes (``-1`` = not observed)."""

    def prob_of(self, x: np.ndarray, parent_codes: np.ndarray) -> np.ndarray:
        """``P(node = x_i | parents_i)`` for each row (``x`` must be observed)."""
        x = np.asarray(x, dtype=np.int64)
        P = _as_matrix(parent_codes, len(self.parents))
        if self.n_configs * self.card <= QUERY_DENSE_CELLS and (P.size == 0 or P.min() >= 0):
            flat = self._query_matrix().ravel()
            cfg = _mixed_radix([P[:, j] for j in range(P.shape[1])], self.parent_cards) if P.shape[1] else 0
            return flat[cfg * self.card + x]
        return self.probs(P)[np.arange(len(x)), x]

    def _query_matrix(self) -> np.ndarray:
        cached = self.__dict__.get("_qm")
        if cached is None:
            cached = self._matrix(QUERY_DENSE_CELLS)
            self.__dict__["_qm"] = cached
        return cached


class TreeCPD(CPD):
    """A context tree and its estimate (see module docstring)."""

    def __init__(self, tree: ContextTree, estimate: TreeEstimate) -> None:
        self.tree = tree
        self.estimate = estimate
        self.node = tree.child
        self.parents = tree.parents
        self.card = tree.child_card
        self.parent_cards = tree.parent_cards
        if len(estimate.probs) != len(tree.levels):
            raise ValueError("the estimate does not match the tree's levels")

    @cached_property
    def _flat_probs(self) -> tuple[np.ndarray, np.ndarray]:
        offsets = np.cumsum([0] + [len(p) for p in self.estimate.probs])
        return np.concatenate(self.estimate.probs, axis=0), offsets

    def probs(self, parent_codes: np.ndarray) -> np.ndarray:
        P = _as_matrix(parent_codes, len(self.parents))
        n = P.shape[0]
        known = P.min(axis=1) >= 0 if P.shape[1] else np.ones(n, dtype=bool)
        if self.n_configs * self.card <= QUERY_DENSE_CELLS and known.all():
            m = self._query_matrix()
            cfg = (
                _mixed_radix([P[:, j] for j in range(P.shape[1])], self.parent_cards)
                if P.shape[1]
                else np.zeros(n, dtype=np.int64)
            )
            return m[cfg]
        level, node, unseen = self.tree.find(P)
        flat, offsets = self._flat_probs
        out = flat[offsets[level] + node]
        if self.estimate.unseen == "uniform" and unseen.any():
            out[unseen] = 1.0 / self.card
        return out

    def _matrix(self, max_cells: int) -> np.ndarray:
        cells = self.n_configs * self.card
        if cells > max_cells:
            raise DenseTableTooLargeError(self.node, cells, max_cells)
        probs = self.estimate.probs
        uniform = self.estimate.unseen == "uniform"
        cur = probs[0].reshape(1, self.card).copy()
        cfg_idx = np.zeros(1, dtype=np.int64)
        for i in range(1, len(self.tree.levels)):
            c = self.parent_cards[i - 1]
            lev = self.tree.levels[i]
            if uniform:
                nxt = np.full((cur.shape[0] * c, self.card), 1.0 / self.card)
            else:
                nxt = np.repeat(cur, c, axis=0)
            idx = cfg_idx[lev.parent] * c + lev.value
            nxt[idx] = probs[i]
            cur, cfg_idx = nxt, idx
        return cur


class TableCPD(CPD):
    """A dense conditional probability table.

    Parameters
    ----------
    node, parents:
        Names; ``parents`` in the table's axis order.
    table:
        Array of shape ``(r, c_1, ..., c_d)``; every column (fixed parent
        configuration) must sum to 1 (checked to 1e-6).
    normalize:
        Divide every column by its sum (default); ``False`` keeps the values bit
        for bit (for tables that were saved already normalised).
    """

    def __init__(self, node: str, parents: Sequence[str], table: np.ndarray, *, normalize: bool = True) -> None:
        t = np.asarray(table, dtype=np.float64)
        self.node = node
        self.parents = tuple(parents)
        if t.ndim != len(self.parents) + 1:
            raise ValueError(
                f"table of {node!r} has {t.ndim} axes, expected {len(self.parents) + 1} (node and parents)"
            )
        if not np.all(np.isfinite(t)) or t.min() < 0:
            raise ValueError(f"table of {node!r} has negative or non-finite entries")
        s = t.sum(axis=0)
        if not np.allclose(s, 1.0, atol=1e-6, rtol=0):
            bad = np.unravel_index(np.argmax(np.abs(s - 1.0)), s.shape) if s.ndim else ()
            raise ValueError(
                f"a column of the table of {node!r} sums to {float(np.max(np.abs(s - 1)) + 1):.8g}, "
                f"not 1 (parent configuration {tuple(int(b) for b in bad)})"
            )
        self._table = t / s if normalize else t.copy()
        self.card = t.shape[0]
        self.parent_cards = tuple(int(c) for c in t.shape[1:])

    def _matrix(self, max_cells: int) -> np.ndarray:
        return np.moveaxis(self._table, 0, -1).reshape(self.n_configs, self.card)

    def table(self, max_cells: int = DEFAULT_MAX_CELLS) -> np.ndarray:
        return self._table.copy()

    def probs(self, parent_codes: np.ndarray) -> np.ndarray:
        P = _as_matrix(parent_codes, len(self.parents))
        n = P.shape[0]
        m = self._matrix(0)
        if P.shape[1] == 0:
            return np.repeat(m, n, axis=0)
        out = np.empty((n, self.card))
        unknown = P < 0
        patterns, inv = np.unique(unknown, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        for k, pat in enumerate(patterns):
            rows = np.flatnonzero(inv == k)
            if not pat.any():
                cfg = _mixed_radix([P[rows, j] for j in range(P.shape[1])], self.parent_cards)
                out[rows] = m[cfg]
                continue
            # average uniformly over the parents that are not observed
            axes = tuple(1 + j for j in np.flatnonzero(pat))
            marg = self._table.mean(axis=axes, keepdims=True)
            idx = [slice(None)] + [
                np.zeros(len(rows), dtype=np.int64) if pat[j] else P[rows, j] for j in range(P.shape[1])
            ]
            out[rows] = marg[tuple(idx)].T
        return out


class FixedPrefixCPD(CPD):
    """A CPD whose first ``k`` conditioning variables are fixed to given codes.

    Used for one domain of a multi-domain fit: the domain splits the context tree
    first, and fixing it keeps the pooled ancestors available for back-off.
    """

    def __init__(self, inner: CPD, prefix_codes: Sequence[int]) -> None:
        self.inner = inner
        self.prefix_codes = tuple(int(c) for c in prefix_codes)
        k = len(self.prefix_codes)
        self.node = inner.node
        self.parents = inner.parents[k:]
        self.card = inner.card
        self.parent_cards = inner.parent_cards[k:]

    def _with_prefix(self, P: np.ndarray) -> np.ndarray:
        P = _as_matrix(P, len(self.parents))
        pre = np.broadcast_to(np.asarray(self.prefix_codes, dtype=np.int64), (P.shape[0], len(self.prefix_codes)))
        return np.concatenate([pre, P.astype(np.int64)], axis=1)

    def probs(self, parent_codes: np.ndarray) -> np.ndarray:
        return self.inner.probs(self._with_prefix(parent_codes))

    def _matrix(self, max_cells: int) -> np.ndarray:
        if self.n_configs * self.card > max_cells:
            raise DenseTableTooLargeError(self.node, self.n_configs * self.card, max_cells)
        full = self.inner._matrix(self.inner.n_configs * self.card)
        q = self.n_configs
        start = 0
        for c, k in zip(self.prefix_codes, self.inner.parent_cards):
            start = start * k + c
        return full[start * q : (start + 1) * q]
