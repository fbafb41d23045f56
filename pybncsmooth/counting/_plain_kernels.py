"""numba kernel of a small network's counting in one call (compiled once, cached on disk).

:func:`plain_trees` counts a frame of complete Categoricals (its codes the rows of one
``(V, n)`` int8 matrix, one variable a row) into every node's context-tree levels as
:func:`~pybncsmooth.counting._kernels.leaf_levels` makes them, and returns them packed
in one int64 array: a compiled function returning ten arrays pays a boxing of each on
every call (a few microseconds, a good share of a tiny network's fit).
"""

from __future__ import annotations

import numpy as np
from .._jit import njit

from ._kernels import _SPLIT_CELLS, _advance, _cell_index, _split_count

__all__ = ["plain_trees", "dense_levels", "PACKED"]

#: the arrays :func:`plain_trees` packs, in order (those of ``leaf_levels``)
PACKED = 10


@njit(cache=True, nogil=True, boundscheck=False)
def plain_trees(C, cards, groups, solo, rcard, pa_ptr, pa_card, cell_off):  # pragma: no cover - compiled
    """Every node's tree levels from the codes ``C`` (row ``v``: variable ``v``'s codes,
    ``cards[v]`` levels); node ``j`` has ``rcard[j]`` levels, its parents' levels
    ``pa_card[pa_ptr[j]:pa_ptr[j + 1]]`` and its dense cells ``cell_off[j]:cell_off[j + 1]``
    (configuration-major, first parent most significant, as
    :func:`~pybncsmooth.counting._kernels.network_leaves` counts them).

    The dense counts come from small joint tables: ``groups`` (:func:`_group_counts`)
    counts each group of variables' joint table in one pass over the rows and sums it
    into the cells of the nodes whose families it holds (a tiny network is one group:
    one pass and one histogram instead of a pass per parent and a histogram per node);
    ``solo`` (``(node, child, pa_ptr, pa_idx, pa_card, rcard)`` of the other nodes)
    counts the other nodes one by one (:func:`_solo_counts`).  The same integers either
    way.  Their levels then straight from the dense cells (:func:`dense_levels`), as
    :func:`~pybncsmooth.counting._kernels.leaf_levels` makes them from leaves.

    Returns ``[11 offsets, the 10 arrays of leaf_levels one after another]`` (int64; array
    ``k`` is entries ``out[k]:out[k + 1]``), or an empty array when a code is < 0 (a
    missing value: the general counting's case)."""
    if _any_negative(C):
        return np.empty(0, dtype=np.int64)
    nn = rcard.shape[0]
    dense = np.zeros(cell_off[nn], dtype=np.int64)
    _group_counts(C, cards, groups, cell_off, dense)
    _solo_counts(C, solo, cell_off, dense)
    parts = dense_levels(dense, cell_off, rcard, pa_ptr, pa_card)
    size = PACKED + 1
    for a in parts:
        size += a.shape[0]
    out = np.empty(size, dtype=np.int64)
    at = PACKED + 1
    k = 0
    for a in parts:
        out[k] = at
        k += 1
        for i in range(a.shape[0]):
            out[at + i] = a[i]
        at += a.shape[0]
    out[PACKED] = at
    return out


@njit(cache=True, nogil=True, boundscheck=False)
def _any_negative(C):  # pragma: no cover - compiled
    """Whether a code of ``C`` (int8, C-contiguous) is < 0: the codes read eight at a
    time as int64 words, OR-ed, and their bytes' sign bits looked at once."""
    flat = C.reshape(C.size)
    m8 = C.size - C.size % 8
    words = flat[:m8].view(np.int64)
    m = np.int64(0)
    for i in range(words.shape[0]):
        m |= words[i]
    if m & _SIGN_BITS:
        return True
    for i in range(m8, C.size):
        if flat[i] < 0:
            return True
    return False


#: the sign bit of each byte of an int64 word (0x8080808080808080)
_SIGN_BITS = np.int64(-0x7F7F7F7F7F7F7F80)


@njit(cache=True, nogil=True, boundscheck=False)
def _group_counts(C, cards, groups, cell_off, dense):  # pragma: no cover - compiled
    """Adds to ``dense`` (every node's cells) the counts of the nodes of each group:
    ``groups = (g_ptr, g_vars, g_cells, m_ptr, m_node, f_ptr, fmap)``, group ``c`` the
    variables ``g_vars[g_ptr[c]:g_ptr[c + 1]]`` (rows of ``C``) with a joint table of
    ``g_cells[c]`` cells, its nodes ``m_node[m_ptr[c]:m_ptr[c + 1]]``, node ``m``'s cell
    of each joint cell ``fmap[f_ptr[m]:f_ptr[m + 1]]``.  Each row's joint cell is built a
    variable at a time (passes the compiler vectorises; int16, the joint tables being
    far smaller than 2**15 cells: twice the cells a vector operation makes of int32),
    counted (:func:`~pybncsmooth.counting._kernels._split_count`), then summed into
    the nodes' cells."""
    g_ptr, g_vars, g_cells, m_ptr, m_node, f_ptr, fmap = groups
    n = C.shape[1]
    most = 0
    for c in range(g_cells.shape[0]):
        most = max(most, g_cells[c])
    g = np.empty(n, dtype=np.int16)
    hist = np.zeros(4 * most, dtype=np.int64)
    table = np.empty(most, dtype=np.int64)
    for c in range(g_cells.shape[0]):
        J = g_cells[c]
        row = C[g_vars[g_ptr[c]]]
        for i in range(n):
            g[i] = row[i]
        for t in range(g_ptr[c] + 1, g_ptr[c + 1]):
            v = g_vars[t]
            cv = np.int16(cards[v])
            row = C[v]
            for i in range(n):
                g[i] = g[i] * cv + row[i]
        _split_count(g, hist, table, J - 1)
        for m in range(m_ptr[c], m_ptr[c + 1]):
            base = cell_off[m_node[m]]
            f = f_ptr[m]
            for k in range(J):
                h = table[k]
                if h != 0:
                    dense[base + fmap[f + k]] += h


@njit(cache=True, nogil=True, boundscheck=False)
def _solo_counts(C, solo, cell_off, dense):  # pragma: no cover - compiled
    """Adds to ``dense`` the counts of the nodes of no group, one node at a time:
    ``solo = (node, child, pa_ptr, pa_idx, pa_card, rcard)``, node ``node[k]`` (cells
    ``cell_off[node[k]]:``) the child ``child[k]`` (a row of ``C``) of the parents
    ``pa_idx[pa_ptr[k]:pa_ptr[k + 1]]``; each row's cell built a parent at a time and
    counted as :func:`~pybncsmooth.counting._kernels.network_leaves` counts it."""
    s_node, s_child, s_pa_ptr, s_pa_idx, s_pa_card, s_rcard = solo
    if s_node.shape[0] == 0:
        return
    M = C.T
    idx = np.empty(M.shape[0], dtype=np.int32)  # a plain plan's tables are far below 2**31 cells
    most = 0
    for k in range(s_node.shape[0]):
        j = s_node[k]
        most = max(most, min(cell_off[j + 1] - cell_off[j], _SPLIT_CELLS))
    hist = np.zeros(4 * (most + 1), dtype=np.int64)
    table = np.empty(most + 1, dtype=np.int64)
    for k in range(s_node.shape[0]):
        j = s_node[k]
        base = cell_off[j]
        ncell = cell_off[j + 1] - base
        p0, p1 = s_pa_ptr[k], s_pa_ptr[k + 1]
        _cell_index(M, M[:, s_child[k]], s_pa_idx[p0:p1], s_pa_card[p0:p1], s_rcard[k], idx)
        if ncell > _SPLIT_CELLS:
            for i in range(idx.shape[0]):
                dense[base + idx[i]] += 1
        else:
            _split_count(idx, hist, table, ncell)
            for c in range(ncell):
                dense[base + c] += table[c]


@njit(cache=True, nogil=True, boundscheck=False)
def dense_levels(dense, cell_off, rcard, pa_ptr, pa_card):  # pragma: no cover - compiled
    """Every node's context-tree levels from its dense cells: node ``j``'s cells
    ``dense[cell_off[j]:cell_off[j + 1]]`` (configuration-major, first parent most
    significant), ``rcard[j]`` levels, its parents' levels ``pa_card[pa_ptr[j]:pa_ptr[j + 1]]``.
    Returns the ten arrays of :func:`~pybncsmooth.counting._kernels.leaf_levels`, equal
    to those it makes from the same counts' leaves (the tree node of the first ``i``
    parents' codes ``p`` at level ``i`` counts ``n(p, x) = sum over the configurations c
    extending p of n(c, x)``; a level holds the observed prefixes in lexicographic order).

    Two passes over the configurations, each in order (its parents' codes advanced as
    an odometer, the last parent fastest, which also says the first level whose prefix
    changed): the first sums each configuration's cells and counts each level's rows and
    the leaves' cells that are not zero, which sizes every array; the second writes the
    rows of each observed configuration: the rows it opens (one per level from the first
    changed prefix down; all ``r`` cells of a row above the leaves), its leaf's cells
    that are not zero (copied branch-free: every cell written, the end moved on by
    ``count != 0``, so the arrays carry ``max(r)`` cells of slack), and the leaf added into
    its parent's row.  A row is added into its own parent when it closes (a row of its
    level opens, or the node ends): a level's sums come from the level below it, not
    from every leaf, so a leaf costs its cells once."""
    nn = rcard.shape[0]
    nb = 0
    ncfg = 0
    w = 0
    rmax = 0
    for j in range(nn):
        nb += pa_ptr[j + 1] - pa_ptr[j] + 1
        ncfg += (cell_off[j + 1] - cell_off[j]) // rcard[j]
        w = max(w, pa_ptr[j + 1] - pa_ptr[j])
        rmax = max(rmax, rcard[j])
    blk_ptr = np.zeros(nn + 1, dtype=np.int64)
    sizes = np.zeros(nb, dtype=np.int64)
    cells = np.zeros(nb, dtype=np.int64)  # the cells each block stores
    ctot = np.empty(ncfg, dtype=np.int64)  # each configuration's count
    dig = np.zeros(w + 1, dtype=np.int64)
    q0 = 0
    for j in range(nn):  # pass 1
        r = rcard[j]
        p0 = pa_ptr[j]
        d = pa_ptr[j + 1] - p0
        b = blk_ptr[j]
        blk_ptr[j + 1] = b + d + 1
        o = cell_off[j]
        nq = (cell_off[j + 1] - o) // r
        for i in range(d):
            dig[i] = 0
        chg = 0  # the first level whose prefix changed since the last observed configuration
        nz = 0
        for q in range(nq):
            s = 0
            k = 0
            for x in range(r):
                v = dense[o + x]
                s += v
                k += v != 0
            ctot[q0 + q] = s
            if s != 0:
                for i in range(chg, d + 1):
                    sizes[b + i] += 1
                nz += k
                chg = d + 1
            chg = min(chg, _advance(dig, pa_card, p0, d))
            o += r
        q0 += nq
        for i in range(d):
            cells[b + i] = sizes[b + i] * r
        cells[b + d] = nz
    row_ptr = np.zeros(nb + 1, dtype=np.int64)
    cell_at = np.zeros(nb + 1, dtype=np.int64)
    for u in range(nb):
        row_ptr[u + 1] = row_ptr[u] + sizes[u]
        cell_at[u + 1] = cell_at[u] + cells[u]
    nrow = row_ptr[nb]
    ncell = cell_at[nb]
    parent = np.empty(nrow, dtype=np.int64)
    value = np.empty(nrow, dtype=np.int64)
    row_r = np.empty(nrow, dtype=np.int64)
    total = np.zeros(nrow, dtype=np.int64)
    nz_ptr = np.empty(nrow + 1, dtype=np.int64)
    nz_ptr[nrow] = ncell
    nz_x = np.empty(ncell + rmax, dtype=np.int64)
    nz_n = np.zeros(ncell + rmax, dtype=np.int64)
    fill = np.zeros(w + 1, dtype=np.int64)  # per level, the rows written
    q0 = 0
    for j in range(nn):  # pass 2
        r = rcard[j]
        p0 = pa_ptr[j]
        d = pa_ptr[j + 1] - p0
        b = blk_ptr[j]
        for u in range(row_ptr[b], row_ptr[b + d + 1]):
            row_r[u] = r
        for i in range(d):
            dig[i] = 0
        for i in range(d + 1):
            fill[i] = 0
        e = cell_at[b + d]  # the next leaf cell
        o = cell_off[j]
        nq = (cell_off[j + 1] - o) // r
        chg = 0
        for q in range(nq):
            s = ctot[q0 + q]
            if s != 0:
                for i in range(d - 1, max(chg, 1) - 1, -1):  # the rows it closes
                    _close_row(i, b, r, row_ptr, cell_at, fill, total, nz_n)
                for i in range(chg, d + 1):  # the rows it opens
                    u = row_ptr[b + i] + fill[i]
                    if i == 0:
                        parent[u] = -1
                        value[u] = -1
                    else:
                        parent[u] = fill[i - 1] - 1
                        value[u] = dig[i - 1]
                    if i < d:
                        a = cell_at[b + i] + fill[i] * r
                        nz_ptr[u] = a
                        for x in range(r):
                            nz_x[a + x] = x
                    fill[i] += 1
                u = row_ptr[b + d] + fill[d] - 1  # its leaf
                nz_ptr[u] = e
                total[u] = s
                e0 = e
                for x in range(r):
                    v = dense[o + x]
                    nz_x[e] = x
                    nz_n[e] = v
                    e += v != 0
                if d > 0:  # added into its parent's row
                    u = row_ptr[b + d - 1] + fill[d - 1] - 1
                    a = cell_at[b + d - 1] + (fill[d - 1] - 1) * r
                    total[u] += s
                    for k in range(e0, e):
                        nz_n[a + nz_x[k]] += nz_n[k]
                chg = d + 1
            chg = min(chg, _advance(dig, pa_card, p0, d))
            o += r
        q0 += nq
        for i in range(d - 1, 0, -1):  # the rows still open
            _close_row(i, b, r, row_ptr, cell_at, fill, total, nz_n)
    return blk_ptr, row_ptr, parent, value, sizes, row_r, total, nz_ptr, nz_x[:ncell], nz_n[:ncell]


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _close_row(i, b, r, row_ptr, cell_at, fill, total, nz_n):  # pragma: no cover - compiled
    """The last row written at level ``i`` (of the node whose blocks start at ``b``; all
    its ``r`` cells stored) added into the last row of level ``i - 1``, its parent."""
    u = row_ptr[b + i] + fill[i] - 1
    up = row_ptr[b + i - 1] + fill[i - 1] - 1
    total[up] += total[u]
    a = cell_at[b + i] + (fill[i] - 1) * r
    au = cell_at[b + i - 1] + (fill[i - 1] - 1) * r
    for x in range(r):
        nz_n[au + x] += nz_n[a + x]
