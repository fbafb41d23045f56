"""numba kernels of the counting step (compiled once, cached on disk)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["dense_counts", "build_levels"]


@njit(cache=True, nogil=True, boundscheck=False)
def dense_counts(M, child, pcols, cards, r, n_cells):  # pragma: no cover - compiled
    """Counts of every (configuration, child level) cell.

    ``M`` is an ``(n, V)`` Fortran-ordered code matrix; ``child`` and ``pcols`` are
    column indices.  Cell index ``cfg * r + x`` with ``cfg`` mixed-radix, first
    parent most significant, built column by column (vectorisable passes); rows
    with any code < 0 (not observed) are skipped.  The caller guarantees codes
    below the cardinalities.
    """
    n = M.shape[0]
    d = pcols.shape[0]
    cfg = np.zeros(n, dtype=np.int64)
    flag = np.zeros(n, dtype=np.int64)
    for j in range(d):
        c = cards[j]
        col = M[:, pcols[j]]
        for i in range(n):
            v = col[i]
            flag[i] |= v
            cfg[i] = cfg[i] * c + v
    x = M[:, child]
    out = np.zeros(n_cells, dtype=np.int64)
    for i in range(n):
        xi = x[i]
        if (flag[i] | xi) >= 0:
            out[cfg[i] * r + xi] += 1
    return out


@njit(cache=True, nogil=True)
def build_levels(configs, counts):  # pragma: no cover - compiled
    """Tree levels from lexicographically sorted, unique leaf configurations.

    Returns ``sizes[i]`` (nodes at level ``i + 1``), and per level ``i + 1`` the
    first ``sizes[i]`` entries of ``parent[i]``, ``value[i]`` and ``lcounts[i]``.
    """
    m, d = configs.shape
    r = counts.shape[1]
    parent = np.empty((d, m), dtype=np.int64)
    value = np.empty((d, m), dtype=np.int64)
    lcounts = np.zeros((d, m, r), dtype=counts.dtype)  # int64, or float64 for fractional counts
    sizes = np.zeros(d, dtype=np.int64)
    node = np.full(d, -1, dtype=np.int64)
    for k in range(m):
        changed = k == 0
        for i in range(d):
            if not changed and configs[k, i] != configs[k - 1, i]:
                changed = True
            if changed:
                node[i] = sizes[i]
                sizes[i] += 1
                parent[i, node[i]] = node[i - 1] if i > 0 else 0
                value[i, node[i]] = configs[k, i]
            for c in range(r):
                lcounts[i, node[i], c] += counts[k, c]
    return sizes, parent, value, lcounts
