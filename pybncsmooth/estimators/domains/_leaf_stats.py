r"""The domains' leaves of one node reduced to what the evidence about their
concentration needs, in one pass over the leaves.

The Dirichlet-multinomial log-likelihood of domain leaves ``(y, d)`` around vectors
:math:`\theta_y`,

.. math:: \sum_{y,d} \Big[\log\Gamma(s) - \log\Gamma(s + n_{yd})
          + \sum_x \log\Gamma(s\,\theta_{yx} + n_{yxd}) - \log\Gamma(s\,\theta_{yx})\Big],

depends on the leaves only through how many have each total :math:`n_{yd}` and how many
have each count :math:`n_{yxd} = v > 0` in each cell ``(y, x)``: a sum over those
distinct values, whatever the number of domains (ten thousand users of twenty rows
each have counts 1 to 20).  The nested model's proposal needs, per configuration and
leaf total, the sum of the leaves' count vectors.  :class:`LeafStats` holds the three
tables (:func:`leaf_stats` builds them with a sort of the non-zero cells).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LeafStats", "leaf_stats"]


@dataclass(frozen=True)
class LeafStats:
    """Distinct cells ``(group, level, value)`` with their multiplicities (sorted by
    group), distinct leaf totals with theirs, and per distinct ``(group, total)`` the
    summed count vectors."""

    cell_group: np.ndarray
    cell_level: np.ndarray
    cell_value: np.ndarray
    cell_mult: np.ndarray
    total_value: np.ndarray
    total_mult: np.ndarray
    gt_group: np.ndarray
    gt_total: np.ndarray
    gt_counts: np.ndarray

    @property
    def n_cells(self) -> int:
        return len(self.cell_value)


def _distinct(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first index of every run of equal keys after a lexicographic sort (the last
    key most significant), the sort order, and the runs' lengths."""
    order = np.lexsort(keys)
    if not len(order):
        return order, np.zeros(0, dtype=np.int64)
    new = np.ones(len(order), dtype=bool)
    for k in keys:
        ks = k[order]
        new[1:] &= ks[1:] == ks[:-1]
    starts = np.flatnonzero(~new | (np.arange(len(order)) == 0))
    return order, starts


def _distinct_cells(gi: np.ndarray, xi: np.ndarray, vi: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_distinct` of the cells ``(group, level, value)``; whole counts go through
    one integer key (a single sort)."""
    top = float(vi.max()) if len(vi) else 0.0
    G = int(gi.max()) + 1 if len(gi) else 1
    if len(vi) and top < 2 ** 20 and G * r * (top + 1) < 2 ** 62 and np.array_equal(vi, np.round(vi)):
        key = (gi * r + xi) * (int(top) + 1) + vi.astype(np.int64)
        order = np.argsort(key, kind="stable")
        ks = key[order]
        starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
        return order, starts
    return _distinct(vi, xi, gi)


def _runs(order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return np.diff(np.append(starts, len(order)))


def leaf_stats(counts: np.ndarray, groups: np.ndarray, informative: bool = False) -> LeafStats:
    """:class:`LeafStats` of the leaves ``counts`` (``(L, r)``) under configurations
    ``groups`` (``(L,)``): those with rows, or (``informative``) two rows or more."""
    n = np.asarray(counts, dtype=np.float64)
    g = np.asarray(groups, dtype=np.int64)
    tot = n.sum(axis=1)
    keep = tot >= 2 if informative else tot > 0
    if not keep.all():
        n, g, tot = n[keep], g[keep], tot[keep]
    li, xi = np.nonzero(n)
    gi, vi = g[li], n[li, xi]
    order, starts = _distinct_cells(gi, xi, vi, n.shape[1])
    first = order[starts]
    mult = _runs(order, starts).astype(np.float64)
    t_order, t_starts = _distinct(tot)
    gt_order, gt_starts = _distinct(tot, g)
    gt_counts = np.add.reduceat(n[gt_order], gt_starts, axis=0) if len(gt_order) else np.zeros((0, n.shape[1]))
    return LeafStats(gi[first], xi[first].astype(np.int64), vi[first], mult, tot[t_order[t_starts]],
                     _runs(t_order, t_starts).astype(np.float64), g[gt_order[gt_starts]], tot[gt_order[gt_starts]],
                     gt_counts)
