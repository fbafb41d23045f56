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


@njit(cache=True, nogil=True, boundscheck=False)
def network_counts(M, child, pa_ptr, pa_idx, pa_card, rcard, cell_off, out, has_missing):  # pragma: no cover
    """Dense counts of many nodes in one call: node ``j`` (column ``child[j]`` of ``M``,
    parents ``pa_idx[pa_ptr[j]:pa_ptr[j + 1]]`` with cardinalities ``pa_card``, ``rcard[j]``
    levels) adds its cell counts to ``out[cell_off[j]:cell_off[j + 1]]`` (configuration-
    major, first parent most significant).  With ``has_missing``, rows with any code
    < 0 in the node's family are skipped.  The cell index of every row is built one
    column at a time (passes the compiler vectorises), then counted."""
    n = M.shape[0]
    idx = np.empty(n, dtype=np.int64)
    bad = np.empty(n, dtype=np.int8)
    for j in range(child.shape[0]):
        r = rcard[j]
        x = M[:, child[j]]
        a, b = pa_ptr[j], pa_ptr[j + 1]
        base = cell_off[j]
        for i in range(n):
            idx[i] = 0
        for k in range(a, b):
            col = M[:, pa_idx[k]]
            c = pa_card[k]
            for i in range(n):
                idx[i] = idx[i] * c + col[i]
        for i in range(n):
            idx[i] = idx[i] * r + x[i] + base
        if not has_missing:
            for i in range(n):
                out[idx[i]] += 1
            continue
        for i in range(n):
            bad[i] = x[i]
        for k in range(a, b):
            col = M[:, pa_idx[k]]
            for i in range(n):
                bad[i] |= col[i]
        for i in range(n):
            if bad[i] >= 0:
                out[idx[i]] += 1


@njit(cache=True, nogil=True, boundscheck=False)
def _level_sizes(dense, cell_off, rcard, pa_ptr, pa_card, sizes, blk_ptr):  # pragma: no cover - compiled
    """The number of tree nodes of every level of every node (see :func:`network_levels`)."""
    b = 0
    for j in range(rcard.shape[0]):
        r = rcard[j]
        d = pa_ptr[j + 1] - pa_ptr[j]
        Q = (cell_off[j + 1] - cell_off[j]) // r
        blk_ptr[j] = b
        sizes[b] = 1
        prev = np.full(d, -1, dtype=np.int64)
        for q in range(Q):
            seen = False
            for x in range(r):
                if dense[cell_off[j] + q * r + x] != 0:
                    seen = True
                    break
            if not seen:
                continue
            suffix = 1
            for i in range(d - 1, -1, -1):  # level i + 1 holds the prefix of the first i + 1 parents
                prefix = q // suffix
                if prefix != prev[i]:
                    prev[i] = prefix
                    sizes[b + 1 + i] += 1
                suffix *= pa_card[pa_ptr[j] + i]
        b += d + 1
    blk_ptr[rcard.shape[0]] = b


@njit(cache=True, nogil=True, boundscheck=False)
def network_levels(dense, cell_off, rcard, pa_ptr, pa_card, row_ptr, cnt_ptr, blk_ptr, parent, value, counts
                   ):  # pragma: no cover - compiled
    """Every node's context-tree levels from its dense counts: block ``blk_ptr[j] + i``
    is level ``i`` of node ``j``, its tree nodes rows ``row_ptr[b]:row_ptr[b + 1]`` of
    ``parent`` / ``value`` and cells ``cnt_ptr[b]:`` of ``counts`` (``(rows, r)``,
    row-major).  Tree nodes of a level are the observed prefixes of the configurations,
    in lexicographic order (as :func:`build_levels` makes them)."""
    for j in range(rcard.shape[0]):
        r = rcard[j]
        d = pa_ptr[j + 1] - pa_ptr[j]
        Q = (cell_off[j + 1] - cell_off[j]) // r
        b0 = blk_ptr[j]
        parent[row_ptr[b0]] = -1
        value[row_ptr[b0]] = -1
        prev = np.full(d, -1, dtype=np.int64)
        node = np.full(d + 1, -1, dtype=np.int64)
        node[0] = 0
        fill = np.zeros(d + 1, dtype=np.int64)
        for q in range(Q):
            o = cell_off[j] + q * r
            seen = False
            for x in range(r):
                if dense[o + x] != 0:
                    seen = True
                    break
            if not seen:
                continue
            changed = False
            for i in range(d):
                suffix = 1
                for k in range(i + 1, d):
                    suffix *= pa_card[pa_ptr[j] + k]
                prefix = q // suffix
                if changed or prefix != prev[i]:
                    changed = True
                    prev[i] = prefix
                    node[i + 1] = fill[i + 1]
                    fill[i + 1] += 1
                    at = row_ptr[b0 + 1 + i] + node[i + 1]
                    parent[at] = node[i]
                    value[at] = prefix % pa_card[pa_ptr[j] + i]
            for i in range(d + 1):
                c0 = cnt_ptr[b0 + i] + node[i] * r
                for x in range(r):
                    counts[c0 + x] += dense[o + x]
