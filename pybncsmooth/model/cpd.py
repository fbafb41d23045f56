"""Conditional probability distributions of one node.

Two representations answer the same queries:

* :class:`TreeCPD`: a context tree with an estimate at every node (what the
  estimators produce).  Unseen parent configurations follow the estimate's
  ``unseen`` rule; a parent value that is not observed at query time (code
  ``-1``) stops the descent, so the deepest ancestor answers (back-off), unless
  the estimate has a fallback table that the known codes index (a domain-pooled
  fit answers an unknown domain with the population-level CPT).
* :class:`TableCPD`: a dense table (what a BIF/DSC/NET file holds).  A parent
  value not observed at query time is averaged over uniformly.

Dense tables are laid out ``(node, parent_1, ..., parent_d)`` (bnlearn's layout).
Internally a flat "configuration-major" layout is used: row ``cfg`` of a
``(Q, r)`` matrix, ``cfg = ((p1 * c2 + p2) * c3 + p3) ...``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from ..counting.context_tree import ContextTree, config_index
from ..errors import DenseTableTooLargeError, HyperparameterError, StatisticUnavailableError
from ..estimators.base import TreeEstimate
from .domains.overlay import merged_tree

__all__ = ["CPD", "TreeCPD", "LazyTreeCPD", "TableCPD", "FixedPrefixCPD", "DomainLastCPD", "DEFAULT_MAX_CELLS", "QUERY_DENSE_CELLS"]

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

    def _sd_matrix(self, max_cells: int) -> np.ndarray:
        """Posterior standard deviations in the layout of :meth:`_matrix`."""
        raise StatisticUnavailableError("standard deviation", None, self.node)

    @property
    def has_sd(self) -> bool:
        """Whether :meth:`table` can give ``stat="sd"``."""
        return False

    def table(self, max_cells: int = DEFAULT_MAX_CELLS, stat: str = "mean") -> np.ndarray:
        """Dense table with axes ``(node, parent_1, ..., parent_d)``; columns sum to 1.

        ``stat="sd"`` gives the posterior standard deviation of every entry instead
        (estimators that quantify uncertainty only).
        """
        if stat == "mean":
            m = self._matrix(max_cells)
        elif stat == "sd":
            m = self._sd_matrix(max_cells)
        else:
            raise HyperparameterError(f"stat must be 'mean' or 'sd', not {stat!r}")
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
            return flat[config_index(P, self.parent_cards) * self.card + x]
        return self.probs(P)[np.arange(len(x)), x]

    def _query_matrix(self) -> np.ndarray:
        cached = self.__dict__.get("_qm")
        if cached is None:
            cached = self._matrix(QUERY_DENSE_CELLS)
            self.__dict__["_qm"] = cached
        return cached


class TreeCPD(CPD):
    """A context tree and its estimate (see module docstring)."""

    def __init__(self, tree: ContextTree, estimate: TreeEstimate, *, domain_last: bool = False) -> None:
        self.tree = tree
        self.estimate = estimate
        #: the tree's last split is a domain: a configuration with no rows in a domain
        #: backs off to the configuration pooled over the domains, whatever ``unseen`` says
        self.domain_last = bool(domain_last)
        self.node = tree.child
        self.parents = tree.parents
        self.card = tree.child_card
        self.parent_cards = tree.parent_cards
        if len(estimate.probs) != len(tree.levels):
            raise ValueError("the estimate does not match the tree's levels")

    def _flat(self, stat: str) -> tuple[np.ndarray, np.ndarray]:
        """The per-level arrays of ``stat`` stacked, with level offsets (cached: queries
        index them).  ``stat``: "mean", "sd", or "unseen_sd" (what a configuration that
        backs off to a node gets: the estimate's ``unseen_sd`` above the leaves where it
        gives them, else the nodes' own sds)."""
        key = "_flat_" + stat
        cached = self.__dict__.get(key)
        if cached is None:
            levels = self._levels(stat)
            cached = (np.concatenate(levels, axis=0), np.cumsum([0] + [len(p) for p in levels]))
            self.__dict__[key] = cached
        return cached

    def _sd_parts(self) -> tuple[tuple[np.ndarray, ...] | None, tuple[np.ndarray, ...] | None]:
        """The estimate's sds and unseen sds, or (an estimate without them whose
        posterior computes them on request: a bootstrap) the posterior's, computed once."""
        est = self.estimate
        if est.sd is not None or not hasattr(est.posterior, "level_sds"):
            return est.sd, est.unseen_sd
        cached = self.__dict__.get("_lazy_sd")
        if cached is None:
            cached = est.posterior.level_sds(self.tree)
            self.__dict__["_lazy_sd"] = cached
        return cached

    def _levels(self, stat: str) -> tuple[np.ndarray, ...]:
        est = self.estimate
        if stat == "mean":
            return est.probs
        sd, unseen_sd = self._sd_parts()
        if stat == "unseen_sd" and unseen_sd is not None:
            return tuple(unseen_sd) + (sd[-1],)
        return sd

    def _unseen_fill(self, stat: str) -> tuple[np.ndarray | None, Any]:
        """What the unseen rule fills in for ``stat``: the fallback table, and the value
        of the uniform rule (for "sd": the prior's, when the estimate gives it; for a
        frequentist estimate, that of a vector that may be any vertex around ``1/r``)."""
        est = self.estimate
        if stat == "mean":
            return est.fallback, 1.0 / self.card
        if self._sd_parts()[0] is None:
            raise StatisticUnavailableError("standard deviation", None, self.node)
        fb_sd = est.fallback_sd
        if fb_sd is None and est.sd is None and est.unseen == "uniform":
            return None, np.sqrt((1.0 - 1.0 / self.card) / self.card)
        return fb_sd, fb_sd[0] if (est.unseen == "uniform" and fb_sd is not None) else np.nan

    @property
    def has_sd(self) -> bool:
        return self.estimate.has_sd or hasattr(self.estimate.posterior, "level_sds")

    def probs(self, parent_codes: np.ndarray) -> np.ndarray:
        P = _as_matrix(parent_codes, len(self.parents))
        n = P.shape[0]
        known = P.min(axis=1) >= 0 if P.shape[1] else np.ones(n, dtype=bool)
        if self.n_configs * self.card <= QUERY_DENSE_CELLS and known.all():
            return self._query_matrix()[config_index(P, self.parent_cards)]
        return self._tree_values(P, "mean")

    def answers(self, parent_codes: np.ndarray, stats: Sequence[str]) -> list[np.ndarray]:
        """:meth:`probs`, :meth:`sds` and :meth:`unseen_sds` ("mean", "sd",
        "unseen_sd") of the same rows, the tree searched once."""
        P = _as_matrix(parent_codes, len(self.parents))
        found = self.tree.find(P)
        out = []
        for stat in stats:
            if stat == "unseen_sd":
                if self.estimate.sd is None:
                    raise StatisticUnavailableError("standard deviation", None, self.node)
                flat, offsets = self._flat("unseen_sd")
                out.append(flat[offsets[found[0]] + found[1]])
            else:
                out.append(self._tree_values(P, stat, found))
        return out

    def _tree_values(self, P: np.ndarray, stat: str, found: tuple | None = None) -> np.ndarray:
        """Per-row vectors of ``stat`` from the tree and the unseen rule (``found``: the
        tree's :meth:`~ContextTree.find` of ``P``, if known)."""
        fallback, uniform = self._unseen_fill(stat)
        level, node, unseen = found if found is not None else self.tree.find(P)
        flat, offsets = self._flat(stat)
        out = flat[offsets[level] + node]
        if stat == "sd" and self._sd_parts()[1] is not None:
            back = level < self.tree.depth  # backed off: the hierarchy's predictive spread
            if back.any():
                uflat, _ = self._flat("unseen_sd")
                out[back] = uflat[offsets[level[back]] + node[back]]
        rule = self.estimate.unseen
        if rule == "uniform" and unseen.any():
            if self.domain_last:  # only the domain's leaf is missing: the pooled configuration answers
                unseen = unseen & (level < self.tree.depth - 1)
            out[unseen] = uniform
        elif rule == "fallback":
            k = self.estimate.fallback_from
            end = self.tree.depth - int(self.domain_last)  # domain last: the fallback is the pooled configurations'
            tail = P[:, k:end]
            use = level < end
            if tail.shape[1]:
                use &= tail.min(axis=1) >= 0
            if use.any():
                rows = np.flatnonzero(use)
                out[rows] = fallback[config_index(tail[rows], self.parent_cards[k:end])]
        return out

    def _dense(self, max_cells: int, stat: str) -> np.ndarray:
        """The dense configuration-major matrix of ``stat`` ("mean" or "sd")."""
        cells = self.n_configs * self.card
        if cells > max_cells:
            raise DenseTableTooLargeError(self.node, cells, max_cells)
        fallback, uniform = self._unseen_fill(stat)
        levels = self.estimate.probs if stat == "mean" else self._sd_parts()[0]
        rule = self.estimate.unseen
        if rule == "fallback":
            # every configuration starts from the fallback row of its trailing codes;
            # the tree's leaves then overwrite the observed ones
            k = self.estimate.fallback_from
            q_head = int(np.prod(self.parent_cards[:k], dtype=np.int64)) if k else 1
            full = np.tile(fallback, (q_head, 1))
            d = self.tree.depth
            if self.domain_last:  # the pooled configurations', then each domain's below them
                configs = self.tree.node_configs(d - 1)
                if len(configs):
                    back = levels if stat == "mean" else self._levels("unseen_sd")
                    full[config_index(configs, self.parent_cards[: d - 1])] = back[-2]
                full = np.repeat(full, self.parent_cards[-1], axis=0)
            configs = self.tree.node_configs(d)
            if len(configs):
                full[config_index(configs, self.parent_cards)] = levels[-1]
            return full
        # ``fill``: what a configuration absent below each node of the current level gets
        back = levels if stat == "mean" else self._levels("unseen_sd")
        fill = back[0].reshape(1, self.card).copy() if self.tree.depth else levels[0].reshape(1, self.card).copy()
        cfg_idx = np.zeros(1, dtype=np.int64)
        for i in range(1, len(self.tree.levels)):
            c = self.parent_cards[i - 1]
            lev = self.tree.levels[i]
            if rule == "uniform" and not (self.domain_last and i == self.tree.depth):
                nxt = np.empty((fill.shape[0] * c, self.card))
                nxt[:] = uniform
            else:
                nxt = np.repeat(fill, c, axis=0)
            idx = cfg_idx[lev.parent] * c + lev.value
            nxt[idx] = back[i] if i < self.tree.depth else levels[i]
            fill, cfg_idx = nxt, idx
        return fill

    def _matrix(self, max_cells: int) -> np.ndarray:
        return self._dense(max_cells, "mean")

    def _sd_matrix(self, max_cells: int) -> np.ndarray:
        return self._dense(max_cells, "sd")

    def sds(self, parent_codes: np.ndarray) -> np.ndarray:
        """Posterior standard deviations of the vectors :meth:`probs` returns."""
        return self._tree_values(_as_matrix(parent_codes, len(self.parents)), "sd")

    def unseen_sds(self, parent_codes: np.ndarray) -> np.ndarray:
        """For each row, the sd of a configuration absent below the node the codes reach
        (the estimate's ``unseen_sd``; the node's own sd at the leaves)."""
        if self._sd_parts()[0] is None:
            raise StatisticUnavailableError("standard deviation", None, self.node)
        level, node, _ = self.tree.find(_as_matrix(parent_codes, len(self.parents)))
        flat, offsets = self._flat("unseen_sd")
        return flat[offsets[level] + node]


class LazyTreeCPD(TreeCPD):
    """A :class:`TreeCPD` whose tree and estimate are made when first read, by
    ``source.tree(j)`` and ``source.estimate(j)`` (its parents' levels by
    ``source.parent_cards(j)``; the estimates of a whole network
    computed at once: :class:`~pybncsmooth.estimators.closed.flat.FlatEstimates`), so that a
    fit of many nodes makes no per-node object it is not asked for.  It answers as the
    :class:`TreeCPD` of that tree and estimate does, and pickles as one."""

    def __init__(self, source: Any, j: int, node: str, parents: tuple[str, ...], card: int) -> None:
        self._source, self._j = source, j
        self.node, self.parents, self.card = node, parents, card
        self.domain_last = False

    @cached_property
    def parent_cards(self) -> tuple[int, ...]:  # type: ignore[override]
        return self._source.parent_cards(self._j)

    @cached_property
    def tree(self) -> ContextTree:  # type: ignore[override]
        return self._source.tree(self._j)

    @cached_property
    def estimate(self) -> TreeEstimate:  # type: ignore[override]
        return self._source.estimate(self._j)

    def __reduce__(self) -> tuple:
        return (TreeCPD, (self.tree, self.estimate))


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
    validate:
        Check the entries and the columns' sums (default).  ``False`` takes the table
        as it is, without a copy: for a reader that has checked and normalised it
        already (a file of thousands of tables reads faster).
    """

    def __init__(
        self, node: str, parents: Sequence[str], table: np.ndarray, *, normalize: bool = True, validate: bool = True
    ) -> None:
        t = np.asarray(table, dtype=np.float64)
        self.node = node
        self.parents = tuple(parents)
        if not validate and t.ndim == len(self.parents) + 1:
            self._table = t
            self.card = t.shape[0]
            self.parent_cards = tuple(int(c) for c in t.shape[1:])
            return
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

    @classmethod
    def _checked(cls, node: str, parents: tuple[str, ...], table: np.ndarray) -> "TableCPD":
        """The CPD of a float64 ``table`` of shape ``(r, c_1, ..., c_d)`` whose columns a
        reader checked and normalised (``validate=False`` without its conversions), kept
        without a copy."""
        out = cls.__new__(cls)
        out.node, out.parents, out._table = node, parents, table
        out.card, out.parent_cards = table.shape[0], table.shape[1:]
        return out

    def _matrix(self, max_cells: int) -> np.ndarray:
        t = self._table  # (r, c_1, ..., c_d) as (c_1, ..., c_d, r): a transpose (moveaxis costs more)
        return t.transpose(*range(1, t.ndim), 0).reshape(self.n_configs, self.card)

    def table(self, max_cells: int = DEFAULT_MAX_CELLS, stat: str = "mean") -> np.ndarray:
        if stat == "sd":
            raise StatisticUnavailableError("standard deviation", None, self.node)
        if stat != "mean":
            raise HyperparameterError(f"stat must be 'mean' or 'sd', not {stat!r}")
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
                cfg = config_index(P[rows], self.parent_cards)
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

    @property
    def has_sd(self) -> bool:
        return self.inner.has_sd

    def _slice(self, max_cells: int, stat: str) -> np.ndarray:
        if self.n_configs * self.card > max_cells:
            raise DenseTableTooLargeError(self.node, self.n_configs * self.card, max_cells)
        if min(self.prefix_codes, default=0) < 0 or isinstance(self.inner, DomainLastCPD):
            # a prefix unseen in training (an unknown domain), or one domain of many (not the
            # whole multi-domain table for one slice of it): query every configuration
            d = len(self.parent_cards)
            all_cfg = np.indices(self.parent_cards).reshape(d, -1).T if d else np.zeros((1, 0), dtype=np.int64)
            P = self._with_prefix(all_cfg)
            if stat == "sd":
                if not isinstance(self.inner, (TreeCPD, DomainLastCPD)):
                    raise StatisticUnavailableError("standard deviation", None, self.node)
                return self.inner.sds(P)
            return self.inner.probs(P)
        cells = self.inner.n_configs * self.card
        full = self.inner._sd_matrix(cells) if stat == "sd" else self.inner._matrix(cells)
        q = self.n_configs
        start = 0
        for c, k in zip(self.prefix_codes, self.inner.parent_cards):
            start = start * k + c
        return full[start * q : (start + 1) * q]

    def _matrix(self, max_cells: int) -> np.ndarray:
        return self._slice(max_cells, "mean")

    def _sd_matrix(self, max_cells: int) -> np.ndarray:
        return self._slice(max_cells, "sd")


class DomainLastCPD(CPD):
    """The CPD of a multi-domain fit whose context tree splits on the domain *last*.

    The tree of ``X`` branches on ``(P1, ..., Pd, D)``: a domain's distribution for a
    parent configuration is a leaf below that configuration pooled over the domains,
    which is what it shrinks toward and what answers when the domain has no rows
    there (or is unknown, code ``-1``).  Queries and tables present the domain first,
    ``(D, P1, ..., Pd)``, as every multi-domain CPD of a :class:`FittedNetwork`.

    ``added``: domains added or grown by :meth:`FittedNetwork.adapt`, ``{code:
    AddedLeaves}`` (:mod:`pybncsmooth.model.domains.overlay`), kept beside the fitted
    tree ``base`` and read first by the queries; ``n_domains`` counts them in.
    :attr:`inner` (and :attr:`tree`, :attr:`estimate`) is the tree with their leaves in
    it, built on first use.
    """

    def __init__(self, inner: TreeCPD, added: dict | None = None, n_domains: int | None = None) -> None:
        if not inner.domain_last or not inner.parents:
            raise ValueError("DomainLastCPD wraps a TreeCPD whose last split is the domain")
        self.base = inner
        self.added = dict(added or {})
        J = int(n_domains) if n_domains is not None else inner.parent_cards[-1]
        self.node = inner.node
        self.parents = (inner.parents[-1],) + inner.parents[:-1]
        self.card = inner.card
        self.parent_cards = (J,) + inner.parent_cards[:-1]

    @property
    def inner(self) -> TreeCPD:
        """The tree and estimate of every domain, the added ones' leaves in them."""
        if not self.added and self.parent_cards[0] == self.base.parent_cards[-1]:
            return self.base
        cached = self.__dict__.get("_merged")
        if cached is None:
            cached = TreeCPD(*merged_tree(self.base, self.added, self.parent_cards[0]), domain_last=True)
            self.__dict__["_merged"] = cached
        return cached

    @property
    def tree(self) -> ContextTree:
        return self.inner.tree

    @property
    def estimate(self) -> TreeEstimate:
        return self.inner.estimate

    @property
    def has_sd(self) -> bool:
        return self.base.has_sd and all(a.sd is not None for a in self.added.values())

    @staticmethod
    def _to_inner(P: np.ndarray) -> np.ndarray:
        return np.concatenate([P[:, 1:], P[:, :1]], axis=1)

    def _overlaid(self, P: np.ndarray, stat: str) -> np.ndarray:
        """``stat`` ("mean" or "sd") of rows ``P`` (domain first): the fitted tree's
        answers (a domain it does not hold, or one added beside it, as an unknown
        domain: the pooled configuration), then the added domains' leaves."""
        P = _as_matrix(P, len(self.parents))
        inner = self._to_inner(P)
        codes = P[:, 0]
        mine = codes >= self.base.parent_cards[-1]
        for c in self.added:
            mine |= codes == c
        if mine.any():
            inner = inner.copy()
            inner[mine, -1] = -1
        out = self.base.probs(inner) if stat == "mean" else self.base.sds(inner)
        if not self.added or not mine.any():
            return out
        cards = self.base.parent_cards[:-1]
        for c, a in self.added.items():
            rows = np.flatnonzero(codes == c)
            if not len(rows):
                continue
            cfg = P[rows, 1:]
            known = cfg.min(axis=1) >= 0 if cfg.shape[1] else np.ones(len(rows), dtype=bool)
            keys = config_index(a.configs, cards)
            q = config_index(np.maximum(cfg, 0), cards)
            j = np.minimum(np.searchsorted(keys, q), max(len(keys) - 1, 0))
            hit = known & (keys[j] == q) if len(keys) else np.zeros(len(rows), dtype=bool)
            if hit.any():
                vals = a.probs if stat == "mean" else a.sd
                out[rows[hit]] = vals[j[hit]]
        return out

    def probs(self, parent_codes: np.ndarray) -> np.ndarray:
        if not self.added and self.parent_cards[0] == self.base.parent_cards[-1]:
            return self.base.probs(self._to_inner(_as_matrix(parent_codes, len(self.parents))))
        return self._overlaid(parent_codes, "mean")

    def sds(self, parent_codes: np.ndarray) -> np.ndarray:
        if not self.added and self.parent_cards[0] == self.base.parent_cards[-1]:
            return self.base.sds(self._to_inner(_as_matrix(parent_codes, len(self.parents))))
        return self._overlaid(parent_codes, "sd")

    def _reorder(self, m: np.ndarray, J: int) -> np.ndarray:
        """The inner configuration-major matrix (domain fastest) with the domain slowest."""
        return np.ascontiguousarray(m.reshape(-1, J, self.card).transpose(1, 0, 2)).reshape(-1, self.card)

    def _dense(self, max_cells: int, stat: str) -> np.ndarray:
        """The dense table of ``stat``, the domain slowest: the fitted tree's blocks, a
        domain it does not hold answered by the pooled configurations, then the added
        domains' leaves."""
        cells = self.n_configs * self.card
        if cells > max_cells:
            raise DenseTableTooLargeError(self.node, cells, max_cells)
        J0 = self.base.parent_cards[-1]
        base_m = self.base._matrix(cells) if stat == "mean" else self.base._sd_matrix(cells)
        base_m = self._reorder(base_m, J0)
        if not self.added and self.parent_cards[0] == J0:
            return base_m
        q = self.n_configs // self.parent_cards[0]
        d = len(self.parents) - 1
        all_cfg = np.indices(self.parent_cards[1:]).reshape(d, -1).T if d else np.zeros((1, 0), dtype=np.int64)
        fresh = self._overlaid(np.concatenate([np.full((q, 1), -1), all_cfg], axis=1), stat)
        out = np.tile(fresh, (self.parent_cards[0], 1))
        out[: J0 * q] = base_m
        for c, a in self.added.items():
            block = fresh.copy()
            block[config_index(a.configs, self.base.parent_cards[:-1])] = a.probs if stat == "mean" else a.sd
            out[c * q:(c + 1) * q] = block
        return out

    def _matrix(self, max_cells: int) -> np.ndarray:
        return self._dense(max_cells, "mean")

    def _sd_matrix(self, max_cells: int) -> np.ndarray:
        return self._dense(max_cells, "sd")
