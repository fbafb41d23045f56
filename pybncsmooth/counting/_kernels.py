"""numba kernels of the counting step (compiled once, cached on disk)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "dense_counts", "build_levels", "network_counts", "interleaved_counts", "dense_leaves", "sparse_leaves", "leaf_levels",
]

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
        interleaved_counts(idx, ncell + 1, hist)
        for c in range(ncell):
            out[base + c] += hist[c]


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def interleaved_counts(idx, w, hist):  # pragma: no cover - compiled
    """``hist[:w]``: how many of ``idx`` (values below ``w``) take each value, counted into
    four interleaved histograms (``hist[:4 * w]``, row ``i`` into histogram ``i % 4``: an
    increment then never waits on the one before) and summed into the first."""
    n = idx.shape[0]
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
    for c in range(w):
        hist[c] += hist[w + c] + hist[2 * w + c] + hist[3 * w + c]


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
def dense_leaves(dense, cell_off, rcard, pa_ptr, pa_card, width):  # pragma: no cover - compiled
    """The observed configurations (leaves) of every node from its dense counts
    (:func:`network_counts`' layout): ``(leaf_ptr, leaf_codes, leaf_off)`` as
    :func:`leaf_levels` takes them (``width``: the most parents of a node; ``leaf_off``:
    where each leaf's counts start in ``dense``, which are not copied).  A configuration
    is observed when a cell of its row is not zero.  One pass, the parents' codes of the
    configuration counted up as it goes (no division)."""
    nn = rcard.shape[0]
    most = 0
    for j in range(nn):
        most += (cell_off[j + 1] - cell_off[j]) // rcard[j]
    leaf_ptr = np.zeros(nn + 1, dtype=np.int64)
    codes = np.empty(most * width, dtype=np.int64)
    leaf_off = np.empty(most, dtype=np.int64)
    dig = np.zeros(width + 1, dtype=np.int64)
    k = 0
    for j in range(nn):
        r = rcard[j]
        d = pa_ptr[j + 1] - pa_ptr[j]
        for i in range(d):
            dig[i] = 0
        for o in range(cell_off[j], cell_off[j + 1], r):
            for x in range(r):
                if dense[o + x] != 0:
                    for i in range(d):
                        codes[k * width + i] = dig[i]
                    leaf_off[k] = o
                    k += 1
                    break
            _advance(dig, pa_card, pa_ptr[j], d)
        leaf_ptr[j + 1] = k
    return leaf_ptr, codes[: k * width], leaf_off[:k]


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _advance(dig, pa_card, start, d):  # pragma: no cover - compiled
    """The next configuration's parents' codes (``dig[:d]``, the last parent fastest)."""
    i = d - 1
    while i >= 0:
        dig[i] += 1
        if dig[i] < pa_card[start + i]:
            return
        dig[i] = 0
        i -= 1


@njit(cache=True, nogil=True, boundscheck=False)
def sparse_leaves(M, child, pa_ptr, pa_idx, pa_card, rcard, has_missing, width):  # pragma: no cover - compiled
    """The observed configurations (leaves) of nodes whose configuration space is
    small but whose dense table (configurations x child levels) is far larger than the
    rows: work proportional to the rows, the configurations and the leaves' cells,
    never to the dense table.

    Per node, each row's configuration ``q`` (mixed radix, first parent most
    significant) marks ``mark[q]`` (one array of the largest configuration space, reset
    after each node at the marked entries alone); a scan of ``mark`` numbers the
    observed configurations in increasing order (their parents' codes counted up as it
    goes); the rows are then counted into ``leaves x r`` cells (a first pass over the
    nodes counts their leaves, so that every array is made once, at its size).  With ``has_missing``, a
    row with any code < 0 in the node's family is skipped.  Returns ``(leaf_ptr,
    leaf_codes, leaf_off, counts)`` as :func:`leaf_levels` takes them (``width``: the most
    parents of a node; leaf ``k``'s counts are ``counts[leaf_off[k]:][:r]``)."""
    n = M.shape[0]
    nn = child.shape[0]
    most = 1
    for j in range(nn):
        q = 1
        for k in range(pa_ptr[j], pa_ptr[j + 1]):
            q *= pa_card[k]
        most = max(most, q)
    mark = np.full(most, -1, dtype=np.int64)
    cfg = np.empty(n, dtype=np.int64)
    leaf_ptr = np.zeros(nn + 1, dtype=np.int64)
    cells = 0
    for j in range(nn):  # first the number of leaves of every node: arrays of their exact size
        _row_configs(M, M[:, child[j]], pa_idx[pa_ptr[j] : pa_ptr[j + 1]], pa_card[pa_ptr[j] : pa_ptr[j + 1]],
                     has_missing, cfg)
        m = _mark_rows(cfg, mark)
        for i in range(n):
            if cfg[i] >= 0:
                mark[cfg[i]] = -1
        leaf_ptr[j + 1] = leaf_ptr[j] + m
        cells += m * rcard[j]
    codes = np.empty(leaf_ptr[nn] * width, dtype=np.int64)
    leaf_off = np.empty(leaf_ptr[nn], dtype=np.int64)
    counts = np.zeros(cells, dtype=np.int64)
    dig = np.zeros(width + 1, dtype=np.int64)
    used = 0
    for j in range(nn):
        x = M[:, child[j]]
        r = rcard[j]
        d = pa_ptr[j + 1] - pa_ptr[j]
        Q = _row_configs(M, x, pa_idx[pa_ptr[j] : pa_ptr[j + 1]], pa_card[pa_ptr[j] : pa_ptr[j + 1]], has_missing, cfg)
        _mark_rows(cfg, mark)
        base = leaf_ptr[j]
        for i in range(d):
            dig[i] = 0
        t = 0
        for q in range(Q):  # numbered in increasing order: the leaves sorted
            if mark[q] >= 0:
                mark[q] = t
                for i in range(d):
                    codes[(base + t) * width + i] = dig[i]
                leaf_off[base + t] = used + t * r
                t += 1
            _advance(dig, pa_card, pa_ptr[j], d)
        for i in range(n):
            q = cfg[i]
            if q >= 0:
                counts[used + mark[q] * r + x[i]] += 1
        for i in range(n):
            q = cfg[i]
            if q >= 0:
                mark[q] = -1
        used += (leaf_ptr[j + 1] - base) * r
    return leaf_ptr, codes, leaf_off, counts


@njit(cache=True, nogil=True, boundscheck=False)
def _mark_rows(cfg, mark):  # pragma: no cover - compiled
    """``mark[q] = 0`` for every configuration ``q`` of a row (``cfg[i] >= 0``) and the
    number of them (``mark`` -1 elsewhere before)."""
    m = 0
    for i in range(cfg.shape[0]):
        q = cfg[i]
        if q >= 0 and mark[q] < 0:
            mark[q] = 0
            m += 1
    return m


@njit(cache=True, nogil=True, boundscheck=False)
def _row_configs(M, x, pcols, pcards, has_missing, cfg):  # pragma: no cover - compiled
    """``cfg[i]``: row ``i``'s configuration of the parents ``pcols`` (mixed radix, the
    first most significant), -1 when ``has_missing`` and a code of the family is < 0;
    returns the number of configurations."""
    n = M.shape[0]
    Q = 1
    for i in range(n):
        cfg[i] = 0
    for k in range(pcols.shape[0]):
        col = M[:, pcols[k]]
        c = pcards[k]
        Q *= c
        for i in range(n):
            cfg[i] = cfg[i] * c + col[i]
    if has_missing:
        for i in range(n):
            bad = np.int64(x[i])
            for k in range(pcols.shape[0]):
                bad |= M[i, pcols[k]]
            if bad < 0:
                cfg[i] = -1
    return Q


@njit(cache=True, nogil=True, boundscheck=False)
def leaf_levels(leaf_ptr, leaf_codes, leaf_off, dense, sparse, nd, rcard, pa_ptr, pa_card):  # pragma: no cover
    """Every node's context-tree levels from its observed configurations (leaves):
    node ``j``'s leaves are ``leaf_ptr[j]:leaf_ptr[j + 1]``, leaf ``k``'s parents' codes
    ``leaf_codes[k * w : k * w + d]`` (``w`` the most parents of a node, ``d`` node
    ``j``'s; the leaves in increasing lexicographic order), its ``r`` counts from
    ``leaf_off[k]`` in ``dense`` for the first ``nd`` nodes (:func:`dense_leaves`), in
    ``sparse`` for the others (:func:`sparse_leaves`).

    Returns ``(blk_ptr, row_ptr, cnt_ptr, parent, value, counts, sizes, row_r, total)``:
    block ``blk_ptr[j] + i`` is level ``i`` of node ``j`` (the observed prefixes of its
    first ``i`` parents, in lexicographic order, as :func:`build_levels` makes them), its
    tree nodes rows ``row_ptr[b]:row_ptr[b + 1]`` of ``parent`` / ``value`` and cells
    ``cnt_ptr[b]:`` of ``counts`` (``(rows, r)``, row-major); per row the child's levels
    and the row's total.  One pass over the leaves: each leaf's counts are copied into the
    deepest level and added to its ancestors' rows (the tree nodes a leaf opens are the
    last of their levels): work proportional to the leaves' cells."""
    nn = rcard.shape[0]
    nb = 0
    w = 0
    for j in range(nn):
        nb += pa_ptr[j + 1] - pa_ptr[j] + 1
        w = max(w, pa_ptr[j + 1] - pa_ptr[j])
    sizes = np.zeros(nb, dtype=np.int64)
    blk_ptr = np.zeros(nn + 1, dtype=np.int64)
    first = np.empty(leaf_ptr[nn], dtype=np.int64)  # per leaf, the first level where it opens a tree node
    for j in range(nn):
        d = pa_ptr[j + 1] - pa_ptr[j]
        b = blk_ptr[j]
        blk_ptr[j + 1] = b + d + 1
        sizes[b] = 1
        for k in range(leaf_ptr[j], leaf_ptr[j + 1]):
            i0 = 1
            if k > leaf_ptr[j]:
                while i0 < d and leaf_codes[k * w + i0 - 1] == leaf_codes[(k - 1) * w + i0 - 1]:
                    i0 += 1
            first[k] = i0
            for i in range(i0, d + 1):
                sizes[b + i] += 1
    row_ptr = np.zeros(nb + 1, dtype=np.int64)
    cnt_ptr = np.zeros(nb + 1, dtype=np.int64)
    for j in range(nn):
        for b in range(blk_ptr[j], blk_ptr[j + 1]):
            row_ptr[b + 1] = row_ptr[b] + sizes[b]
            cnt_ptr[b + 1] = cnt_ptr[b] + sizes[b] * rcard[j]
    parent = np.empty(row_ptr[nb], dtype=np.int64)
    value = np.empty(row_ptr[nb], dtype=np.int64)
    counts = np.zeros(cnt_ptr[nb], dtype=np.int64)
    row_r = np.empty(row_ptr[nb], dtype=np.int64)
    total = np.zeros(row_ptr[nb], dtype=np.int64)
    fill = np.zeros(w + 1, dtype=np.int64)
    for j in range(nn):
        r = rcard[j]
        d = pa_ptr[j + 1] - pa_ptr[j]
        b = blk_ptr[j]
        src = dense if j < nd else sparse
        parent[row_ptr[b]] = -1
        value[row_ptr[b]] = -1
        for i in range(d + 1):
            fill[i] = 0
        fill[0] = 1  # the root
        for k in range(leaf_ptr[j], leaf_ptr[j + 1]):
            for i in range(first[k], d + 1):  # the tree nodes leaf k opens
                at = row_ptr[b + i] + fill[i]
                parent[at] = fill[i - 1] - 1
                value[at] = leaf_codes[k * w + i - 1]
                fill[i] += 1
            c = leaf_off[k]
            o = cnt_ptr[b + d] + (fill[d] - 1) * r  # its row (the root's, without parents)
            t = 0
            for x in range(r):
                v = src[c + x]
                counts[o + x] = v
                t += v
            total[row_ptr[b + d] + fill[d] - 1] = t
            for i in range(d):  # and its ancestors' rows, each the sum of the leaves below it
                o = cnt_ptr[b + i] + (fill[i] - 1) * r
                for x in range(r):
                    counts[o + x] += src[c + x]
                total[row_ptr[b + i] + fill[i] - 1] += t
        for u in range(row_ptr[b], row_ptr[b + d + 1]):
            row_r[u] = r
    return blk_ptr, row_ptr, cnt_ptr, parent, value, counts, sizes, row_r, total
