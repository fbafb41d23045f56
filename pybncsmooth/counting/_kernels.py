"""numba kernels of the counting step (compiled once, cached on disk)."""

from __future__ import annotations

import numpy as np
from .._jit import njit

__all__ = [
    "dense_counts", "build_levels", "network_leaves", "sparse_leaves", "leaf_levels", "spread_rows",
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
def network_leaves(M, child, pa_ptr, pa_idx, pa_card, rcard, has_missing, width, idx):  # pragma: no cover
    """The observed configurations (leaves) of many nodes and their counts, each node
    counted densely in one work table reused from node to node: node ``j`` (column
    ``child[j]`` of ``M``, parents ``pa_idx[pa_ptr[j]:pa_ptr[j + 1]]`` with cardinalities
    ``pa_card``, ``rcard[j]`` levels).  With ``has_missing``, rows with any code < 0 in
    the node's family are skipped (their cell index is sent to a spare cell).

    The cell index of every row (configuration-major, first parent most significant) is
    built in ``idx`` (a work array of ``n`` integers: int32 when every node has fewer
    than 2**31 cells, half the memory traffic of int64) one column at a time (passes the
    compiler vectorises), then counted: a node of at most ``_SPLIT_CELLS`` cells into
    four histograms, row ``i`` into histogram ``i % 4`` (an increment then never waits on
    the one before; the sums are the same integers).  A scan of the node's table then
    gives its leaves in increasing order (their parents' codes counted up as it goes) and
    each leaf's cells that are not zero, and leaves the table zero for the next node.
    The leaves' arrays start with room for the rows and one node's table and grow (to
    twice) when a node could need more: a fit touches and frees about what it keeps, not
    every node's bound.  Returns ``(leaf_ptr, leaf_codes, nz_ptr, nz_x, nz_n)`` as
    :func:`leaf_levels` takes them (``width``: the most parents of a node)."""
    n = M.shape[0]
    nn = child.shape[0]
    most = 1
    bound = 0  # the most cells not zero (and leaves): per node its cells, or its rows if fewer
    for j in range(nn):
        q = 1
        for k in range(pa_ptr[j], pa_ptr[j + 1]):
            q *= pa_card[k]
        most = max(most, q * rcard[j])
        bound += min(q * rcard[j], n)
    table = np.zeros(most + 1, dtype=np.int64)  # one node's cells and the spare cell: zero between nodes
    small = min(most, _SPLIT_CELLS) + 1
    hist = np.zeros(4 * small, dtype=np.int64)
    bad = np.empty(n if has_missing else 0, dtype=np.int8)
    leaf_ptr = np.zeros(nn + 1, dtype=np.int64)
    room = min(bound, n + most)  # leaves and cells made room for (more when a node needs it), not the bound
    codes = np.empty(room * width, dtype=np.int64)
    nz_ptr = np.zeros(room + 1, dtype=np.int64)
    nz_x = np.empty(room, dtype=np.int64)
    nz_n = np.empty(room, dtype=np.int64)
    dig = np.zeros(width + 1, dtype=np.int64)
    leaf = 0
    e = 0
    for j in range(nn):
        r = rcard[j]
        p0, p1 = pa_ptr[j], pa_ptr[j + 1]
        ncell = r
        for k in range(p0, p1):
            ncell *= pa_card[k]
        _cell_index(M, M[:, child[j]], pa_idx[p0:p1], pa_card[p0:p1], r, idx)
        if has_missing:  # a row with a missing code in the family: the spare cell ncell
            x = M[:, child[j]]
            for i in range(n):
                bad[i] = x[i]
            for k in range(p0, p1):
                col = M[:, pa_idx[k]]
                for i in range(n):
                    bad[i] |= col[i]
            for i in range(n):
                if bad[i] < 0:
                    idx[i] = ncell
        if ncell > _SPLIT_CELLS:
            for i in range(n):
                table[idx[i]] += 1
        else:
            _split_count(idx, hist, table, ncell)
        table[ncell] = 0
        need = min(ncell, n)  # the node's leaves and cells not zero are at most its cells and its rows
        if e + need > nz_x.shape[0]:
            nz_x, nz_n = _grown(nz_x, e, e + need), _grown(nz_n, e, e + need)
        if leaf + need >= nz_ptr.shape[0]:  # (codes: room for as many leaves as nz_ptr)
            nz_ptr = _grown(nz_ptr, leaf + 1, leaf + need + 1)
            codes = _grown(codes, leaf * width, nz_ptr.shape[0] * width)
        leaf, e = _scan_leaves(table, 0, ncell, r, pa_card, p0, p1, dig, codes, width, nz_ptr, nz_x, nz_n, leaf, e)
        leaf_ptr[j + 1] = leaf
    return leaf_ptr, codes[: leaf * width], nz_ptr[: leaf + 1], nz_x[:e], nz_n[:e]


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _scan_leaves(table, o0, o1, r, pa_card, p0, p1, dig, codes, width, nz_ptr, nz_x, nz_n, leaf, e):  # pragma: no cover
    """One node's leaves from its dense cells ``table[o0:o1]`` (``r`` levels, its parents'
    levels ``pa_card[p0:p1]``): each configuration with a cell not zero is the next leaf
    (its parents' codes from ``codes[leaf * width]``, its cells from ``nz_x[e]`` /
    ``nz_n[e]``), the cells set back to zero; returns the new ``(leaf, e)``."""
    for i in range(p1 - p0):
        dig[i] = 0
    for o in range(o0, o1, r):  # each configuration: a leaf when a cell is not zero
        e0 = e
        e = _take_row(table, o, r, nz_x, nz_n, e)
        if e > e0:
            for i in range(p1 - p0):
                codes[leaf * width + i] = dig[i]
            leaf += 1
            nz_ptr[leaf] = e
        _advance(dig, pa_card, p0, p1 - p0)
    return leaf, e


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _take_row(table, o, r, nz_x, nz_n, e):  # pragma: no cover - compiled
    """The cells of ``table[o:o + r]`` that are not zero appended from ``nz_x[e]`` /
    ``nz_n[e]`` (level, count), those cells set back to zero; returns the new end."""
    for x in range(r):
        v = table[o + x]
        if v != 0:
            nz_x[e] = x
            nz_n[e] = v
            e += 1
            table[o + x] = 0
    return e


@njit(cache=True, nogil=True, boundscheck=False)
def _grown(a, used, need):  # pragma: no cover - compiled
    """``a`` with room for at least ``need`` entries (twice its size, or ``need``), its
    first ``used`` kept."""
    out = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    out[:used] = a[:used]
    return out


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _split_count(idx, hist, table, ncell):  # pragma: no cover - compiled
    """``table[c]`` = the rows whose ``idx`` is ``c`` (``c <= ncell``), counted into four
    interleaved histograms of ``hist`` (zero before and after), then summed."""
    n = idx.shape[0]
    w = ncell + 1
    m4 = n - n % 4
    for i in range(0, m4, 4):
        hist[idx[i]] += 1
        hist[w + idx[i + 1]] += 1
        hist[2 * w + idx[i + 2]] += 1
        hist[3 * w + idx[i + 3]] += 1
    for i in range(m4, n):
        hist[idx[i]] += 1
    for c in range(w):
        table[c] = hist[c] + hist[w + c] + hist[2 * w + c] + hist[3 * w + c]
        hist[c] = 0
        hist[w + c] = 0
        hist[2 * w + c] = 0
        hist[3 * w + c] = 0


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




@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _advance(dig, pa_card, start, d):  # pragma: no cover - compiled
    """The next configuration's parents' codes (``dig[:d]``, the last parent fastest);
    returns the first tree level whose prefix changed (``1 +`` the first parent whose
    code moved; 0 past the last configuration)."""
    i = d - 1
    while i >= 0:
        dig[i] += 1
        if dig[i] < pa_card[start + i]:
            return i + 1
        dig[i] = 0
        i -= 1
    return 0


@njit(cache=True, nogil=True, boundscheck=False)
def sparse_leaves(M, child, pa_ptr, pa_idx, pa_card, rcard, has_missing, width):  # pragma: no cover - compiled
    """The observed configurations (leaves) of nodes whose configuration space is
    small but whose dense table (configurations x child levels) is far larger than the
    rows, and their counts: work proportional to the rows, the configurations and the
    leaves' cells, never to the dense table.

    Per node, each row's configuration ``q`` (mixed radix, first parent most
    significant) marks ``mark[q]`` (one array of the largest configuration space, reset
    after each node at the marked entries alone); a scan of ``mark`` numbers the
    observed configurations in increasing order (their parents' codes counted up as it
    goes); the rows are then counted into the node's ``leaves x r`` cells (one work
    table for all nodes, left zero by the scan that takes each leaf's cells that are not
    zero).  A first pass over the nodes counts their leaves, so that every array is made
    once.  With ``has_missing``, a row with any code < 0 in the node's family is skipped.
    Returns ``(leaf_ptr, leaf_codes, nz_ptr, nz_x, nz_n)`` as :func:`leaf_levels` takes
    them (``width``: the most parents of a node)."""
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
    widest = 1
    n_cell = 0
    for j in range(nn):  # first the number of leaves of every node: arrays of their exact size
        _row_configs(M, M[:, child[j]], pa_idx[pa_ptr[j] : pa_ptr[j + 1]], pa_card[pa_ptr[j] : pa_ptr[j + 1]],
                     has_missing, cfg)
        m = _mark_rows(cfg, mark)
        for i in range(n):
            if cfg[i] >= 0:
                mark[cfg[i]] = -1
        leaf_ptr[j + 1] = leaf_ptr[j] + m
        widest = max(widest, m * rcard[j])
        n_cell += min(m * rcard[j], n)
    codes = np.empty(leaf_ptr[nn] * width, dtype=np.int64)
    table = np.zeros(widest, dtype=np.int64)  # one node's leaves' cells: zero between nodes
    nz_ptr = np.zeros(leaf_ptr[nn] + 1, dtype=np.int64)
    nz_x = np.empty(n_cell, dtype=np.int64)
    nz_n = np.empty(n_cell, dtype=np.int64)
    dig = np.zeros(width + 1, dtype=np.int64)
    e = 0
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
                t += 1
            _advance(dig, pa_card, pa_ptr[j], d)
        for i in range(n):
            q = cfg[i]
            if q >= 0:
                table[mark[q] * r + x[i]] += 1
        for i in range(n):
            q = cfg[i]
            if q >= 0:
                mark[q] = -1
        for t in range(leaf_ptr[j + 1] - base):
            e = _take_row(table, t * r, r, nz_x, nz_n, e)
            nz_ptr[base + t + 1] = e
    return leaf_ptr, codes, nz_ptr, nz_x[:e], nz_n[:e]


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
def leaf_levels(leaf_ptr, leaf_codes, leaf_nz, leaf_x, leaf_n, rcard, pa_ptr, pa_card):  # pragma: no cover
    """Every node's context-tree levels from its observed configurations (leaves):
    node ``j``'s leaves are ``leaf_ptr[j]:leaf_ptr[j + 1]``, leaf ``k``'s parents' codes
    ``leaf_codes[k * w : k * w + d]`` (``w`` the most parents of a node, ``d`` node
    ``j``'s; the leaves in increasing lexicographic order), its cells that are not zero
    ``leaf_nz[k]:leaf_nz[k + 1]`` of ``leaf_x`` (the child's level, increasing) and
    ``leaf_n`` (the count), as :func:`network_leaves` and :func:`sparse_leaves` give them.

    Returns ``(blk_ptr, row_ptr, parent, value, sizes, row_r, total, nz_ptr, nz_x,
    nz_n)``: block ``blk_ptr[j] + i`` is level ``i`` of node ``j`` (the observed prefixes
    of its first ``i`` parents, in lexicographic order, as :func:`build_levels` makes
    them), its tree nodes rows ``row_ptr[b]:row_ptr[b + 1]`` of ``parent`` / ``value``;
    per row the child's levels and the row's total count.  A row's counts are held
    compactly: its stored cells ``nz_ptr[u]:nz_ptr[u + 1]`` (child level ``nz_x``, count
    ``nz_n``, in increasing level), every other cell of the row a zero.  A row of the
    deepest level (a leaf) stores its cells that are not zero; a row above stores all its
    ``r`` cells (the sums of the leaves below it, zeros included).  A leaf of a child of
    100 levels seen in a few rows then costs a few cells, not 100.  Two passes over the
    leaves (sizes, then cells): each leaf's cells are copied into its row and added to
    its ancestors' rows (the tree nodes a leaf opens are the last of their levels)."""
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
    for b in range(nb):
        row_ptr[b + 1] = row_ptr[b] + sizes[b]
    nrow = row_ptr[nb]
    nz_ptr = np.zeros(nrow + 1, dtype=np.int64)
    row_r = np.empty(nrow, dtype=np.int64)
    for j in range(nn):  # the stored cells of each row: all of a row above the leaves, a leaf's not zero
        r = rcard[j]
        d = pa_ptr[j + 1] - pa_ptr[j]
        b = blk_ptr[j]
        for u in range(row_ptr[b], row_ptr[b + d + 1]):
            row_r[u] = r
        for u in range(row_ptr[b], row_ptr[b + d]):
            nz_ptr[u + 1] = r
        u = row_ptr[b + d]
        for k in range(leaf_ptr[j], leaf_ptr[j + 1]):
            nz_ptr[u + 1] = leaf_nz[k + 1] - leaf_nz[k]
            u += 1
    for u in range(nrow):
        nz_ptr[u + 1] += nz_ptr[u]
    parent = np.empty(nrow, dtype=np.int64)
    value = np.empty(nrow, dtype=np.int64)
    total = np.zeros(nrow, dtype=np.int64)
    nz_x = np.empty(nz_ptr[nrow], dtype=np.int64)
    nz_n = np.empty(nz_ptr[nrow], dtype=np.int64)
    fill = np.zeros(w + 1, dtype=np.int64)
    for j in range(nn):
        r = rcard[j]
        d = pa_ptr[j + 1] - pa_ptr[j]
        b = blk_ptr[j]
        parent[row_ptr[b]] = -1
        value[row_ptr[b]] = -1
        if d > 0:
            _open_row(nz_ptr[row_ptr[b]], r, nz_x, nz_n)
        for i in range(d + 1):
            fill[i] = 0
        fill[0] = 1  # the root
        for k in range(leaf_ptr[j], leaf_ptr[j + 1]):
            for i in range(first[k], d + 1):  # the tree nodes leaf k opens
                at = row_ptr[b + i] + fill[i]
                parent[at] = fill[i - 1] - 1
                value[at] = leaf_codes[k * w + i - 1]
                if i < d:
                    _open_row(nz_ptr[at], r, nz_x, nz_n)
                fill[i] += 1
            leaf = row_ptr[b + d] + fill[d] - 1  # its row (the root's, without parents)
            o0 = nz_ptr[leaf]
            o = o0
            t = 0
            for e in range(leaf_nz[k], leaf_nz[k + 1]):
                v = leaf_n[e]
                nz_x[o] = leaf_x[e]
                nz_n[o] = v
                o += 1
                t += v
            total[leaf] = t
            for i in range(d):  # and its ancestors' rows (all cells stored), each the sum of the leaves below it
                at = row_ptr[b + i] + fill[i] - 1
                a0 = nz_ptr[at]
                for e in range(o0, o):
                    nz_n[a0 + nz_x[e]] += nz_n[e]
                total[at] += t
    return blk_ptr, row_ptr, parent, value, sizes, row_r, total, nz_ptr, nz_x, nz_n


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _open_row(o, r, nz_x, nz_n):  # pragma: no cover - compiled
    """A row storing all its ``r`` cells from ``o``: levels 0..r-1, counts 0."""
    for x in range(r):
        nz_x[o + x] = x
        nz_n[o + x] = 0


@njit(cache=True, nogil=True, boundscheck=False)
def spread_rows(nz_ptr, nz_x, vals, base, lo, hi, r, out):  # pragma: no cover - compiled
    """Rows ``lo:hi`` of a per-cell array held as :func:`leaf_levels` holds the counts
    (``vals``: one value a stored cell; ``base``: per row of ``lo:hi``, the value of its
    other cells) written out whole into ``out`` (``(hi - lo) * r`` cells, row-major)."""
    for u in range(lo, hi):
        o = (u - lo) * r
        v = base[u - lo]
        for x in range(r):
            out[o + x] = v
        for k in range(nz_ptr[u], nz_ptr[u + 1]):
            out[o + nz_x[k]] = vals[k]
