"""numba kernels of the counting step (compiled once, cached on disk)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["dense_counts", "build_levels"]

#: cells of a node counted into four interleaved histograms (then summed): consecutive
#: rows in one cell would otherwise wait on each other's increment
_SPLIT_CELLS = 4096


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

    Returns ``sizes[i]`` (nodes at level ``i + 1``) and flat arrays, level after level:
    level ``i + 1`` is entries ``off[i]:off[i + 1]`` of ``parent`` and ``value`` and rows
    ``off[i]:off[i + 1]`` of ``lcounts`` (``off`` the cumulative ``sizes``, from 0).  A
    first pass sizes the levels (no array of ``depth * leaves * r`` cells)."""
    m, d = configs.shape
    r = counts.shape[1]
    sizes = np.zeros(d, dtype=np.int64)
    for k in range(m):
        for i in range(d):
            if k == 0 or configs[k, i] != configs[k - 1, i]:
                for t in range(i, d):  # a new prefix at level i: a new node at every level below
                    sizes[t] += 1
                break
    off = np.zeros(d + 1, dtype=np.int64)
    for i in range(d):
        off[i + 1] = off[i] + sizes[i]
    parent = np.empty(off[d], dtype=np.int64)
    value = np.empty(off[d], dtype=np.int64)
    lcounts = np.zeros((off[d], r), dtype=counts.dtype)  # int64, or float64 for fractional counts
    node = np.full(d, -1, dtype=np.int64)
    fill = np.zeros(d, dtype=np.int64)
    for k in range(m):
        changed = k == 0
        for i in range(d):
            if not changed and configs[k, i] != configs[k - 1, i]:
                changed = True
            if changed:
                node[i] = off[i] + fill[i]
                fill[i] += 1
                parent[node[i]] = node[i - 1] - off[i - 1] if i > 0 else 0
                value[node[i]] = configs[k, i]
            for c in range(r):
                lcounts[node[i], c] += counts[k, c]
    return sizes, parent, value, lcounts


@njit(cache=True, nogil=True, boundscheck=False)
def network_counts(M, child, pa_ptr, pa_idx, pa_card, rcard, cell_off, out, has_missing, idx):  # pragma: no cover
    """Dense counts of many nodes in one call: node ``j`` (column ``child[j]`` of ``M``,
    parents ``pa_idx[pa_ptr[j]:pa_ptr[j + 1]]`` with cardinalities ``pa_card``, ``rcard[j]``
    levels) adds its cell counts to ``out[cell_off[j]:cell_off[j + 1]]`` (configuration-
    major, first parent most significant).  With ``has_missing``, rows with any code
    < 0 in the node's family are skipped (their cell index is sent to a spare cell).

    The cell index of every row is built in ``idx`` (a work array of ``n`` integers:
    int32 when every node has fewer than 2**31 cells, half the memory traffic of int64)
    one column at a time (passes the compiler vectorises), then counted: a node of at
    most ``_SPLIT_CELLS`` cells into four histograms, row ``i`` into histogram ``i % 4``
    (an increment then never waits on the one before; the sums are the same integers)."""
    n = M.shape[0]
    bad = np.empty(n if has_missing else 0, dtype=np.int8)
    most = 0
    for j in range(child.shape[0]):
        most = max(most, min(cell_off[j + 1] - cell_off[j], _SPLIT_CELLS))
    hist = np.empty(4 * (most + 1), dtype=np.int64)
    for j in range(child.shape[0]):
        base = cell_off[j]
        ncell = cell_off[j + 1] - base
        _cell_index(M, M[:, child[j]], pa_idx[pa_ptr[j] : pa_ptr[j + 1]], pa_card[pa_ptr[j] : pa_ptr[j + 1]],
                    rcard[j], idx)
        if has_missing:  # a row with a missing code in the family: the spare cell ncell
            x = M[:, child[j]]
            for i in range(n):
                bad[i] = x[i]
            for k in range(pa_ptr[j], pa_ptr[j + 1]):
                col = M[:, pa_idx[k]]
                for i in range(n):
                    bad[i] |= col[i]
            for i in range(n):
                if bad[i] < 0:
                    idx[i] = ncell
        if ncell > _SPLIT_CELLS:
            for i in range(n):
                if idx[i] < ncell:
                    out[base + idx[i]] += 1
            continue
        w = ncell + 1
        for c in range(4 * w):
            hist[c] = 0
        m4 = n - n % 4
        for i in range(0, m4, 4):
            hist[idx[i]] += 1
            hist[w + idx[i + 1]] += 1
            hist[2 * w + idx[i + 2]] += 1
            hist[3 * w + idx[i + 3]] += 1
        for i in range(m4, n):
            hist[idx[i]] += 1
        for c in range(ncell):
            out[base + c] += hist[c] + hist[w + c] + hist[2 * w + c] + hist[3 * w + c]


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _cell_index(M, x, pcols, pcards, r, idx):  # pragma: no cover - compiled
    """``idx[i]`` = the cell of row ``i``: ``((p1 * c2 + p2) * c3 + ...) * r + x`` (codes
    of missing values give meaningless cells, which the caller masks)."""
    n = M.shape[0]
    t = idx.dtype.type
    if pcols.shape[0] == 0:
        for i in range(n):
            idx[i] = x[i]
        return
    col = M[:, pcols[0]]
    for i in range(n):
        idx[i] = col[i]
    for k in range(1, pcols.shape[0]):
        col = M[:, pcols[k]]
        c = t(pcards[k])
        for i in range(n):
            idx[i] = idx[i] * c + col[i]
    rr = t(r)
    for i in range(n):
        idx[i] = idx[i] * rr + x[i]


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


@njit(cache=True, nogil=True, boundscheck=False)
def level_configs(pa_ptr, pa_card, blk_ptr, out):  # pragma: no cover - compiled
    """``out[blk_ptr[j] + i]``: the configurations of the first ``i`` parents of node ``j``
    (the product of their levels; 1 at the root)."""
    for j in range(pa_ptr.shape[0] - 1):
        q = 1
        b = blk_ptr[j]
        out[b] = 1
        for k in range(pa_ptr[j], pa_ptr[j + 1]):
            q *= pa_card[k]
            b += 1
            out[b] = q


@njit(cache=True, nogil=True, boundscheck=False)
def tree_levels(dense, cell_off, rcard, pa_ptr, pa_card):  # pragma: no cover - compiled
    """Every node's context-tree levels from its dense counts, in arrays made here:
    ``(blk_ptr, row_ptr, cnt_ptr, parent, value, counts)`` as
    :func:`network_levels` fills them (sizes by :func:`_level_sizes`), then the rows of
    every block, and per row the child's levels and the row's total count."""
    nb = 0
    for j in range(rcard.shape[0]):
        nb += pa_ptr[j + 1] - pa_ptr[j] + 1
    sizes = np.zeros(nb, dtype=np.int64)
    blk_ptr = np.empty(rcard.shape[0] + 1, dtype=np.int64)
    _level_sizes(dense, cell_off, rcard, pa_ptr, pa_card, sizes, blk_ptr)
    row_ptr = np.zeros(nb + 1, dtype=np.int64)
    cnt_ptr = np.zeros(nb + 1, dtype=np.int64)
    for j in range(rcard.shape[0]):
        for b in range(blk_ptr[j], blk_ptr[j + 1]):
            row_ptr[b + 1] = row_ptr[b] + sizes[b]
            cnt_ptr[b + 1] = cnt_ptr[b] + sizes[b] * rcard[j]
    parent = np.empty(row_ptr[nb], dtype=np.int64)
    value = np.empty(row_ptr[nb], dtype=np.int64)
    counts = np.zeros(cnt_ptr[nb], dtype=np.int64)
    network_levels(dense, cell_off, rcard, pa_ptr, pa_card, row_ptr, cnt_ptr, blk_ptr, parent, value, counts)
    row_r = np.empty(row_ptr[nb], dtype=np.int64)
    total = np.zeros(row_ptr[nb], dtype=np.int64)
    for j in range(rcard.shape[0]):
        r = rcard[j]
        for i in range(row_ptr[blk_ptr[j]], row_ptr[blk_ptr[j + 1]]):
            row_r[i] = r
            o = cnt_ptr[blk_ptr[j]] + (i - row_ptr[blk_ptr[j]]) * r
            for x in range(r):
                total[i] += counts[o + x]
    return blk_ptr, row_ptr, cnt_ptr, parent, value, counts, sizes, row_r, total
