"""numba kernel of a small network's counting in one call (compiled once, cached on disk).

:func:`plain_trees` counts a frame of complete Categoricals (its codes the rows of one
``(V, n)`` int8 matrix, one variable a row) into every node's context-tree levels as
:func:`~pybncsmooth.counting._kernels.leaf_levels` makes them, and returns them packed
in one int64 array: a compiled function returning ten arrays pays a boxing of each on
every call (a few microseconds, a good share of a tiny network's fit).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import _SPLIT_CELLS, _cell_index, _split_count, leaf_levels, table_leaves

__all__ = ["plain_trees", "PACKED"]

#: the arrays :func:`plain_trees` packs, in order (those of ``leaf_levels``)
PACKED = 10


@njit(cache=True, nogil=True, boundscheck=False)
def plain_trees(C, cards, groups, solo, rcard, pa_ptr, pa_card, cell_off, width):  # pragma: no cover - compiled
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
    way.  Their leaves and levels then as the general counting makes them
    (:func:`~pybncsmooth.counting._kernels.table_leaves`,
    :func:`~pybncsmooth.counting._kernels.leaf_levels`).

    Returns ``[11 offsets, the 10 arrays of leaf_levels one after another]`` (int64; array
    ``k`` is entries ``out[k]:out[k + 1]``), or an empty array when a code is < 0 (a
    missing value: the general counting's case)."""
    if _any_negative(C):
        return np.empty(0, dtype=np.int64)
    nn = rcard.shape[0]
    dense = np.zeros(cell_off[nn], dtype=np.int64)
    _group_counts(C, cards, groups, cell_off, dense)
    _solo_counts(C, solo, cell_off, dense)
    leaves = table_leaves(dense, cell_off, rcard, pa_ptr, pa_card, width)
    parts = leaf_levels(*leaves, rcard, pa_ptr, pa_card)
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
