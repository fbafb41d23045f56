"""numba kernel of a small network's counting in one call (compiled once, cached on disk).

:func:`plain_trees` counts a frame of complete Categoricals (its codes the rows of one
``(V, n)`` int8 matrix, one variable a row) into every node's context-tree levels as
:func:`~pybncsmooth.counting._kernels.leaf_levels` makes them, and returns them packed
in one int64 array: a compiled function returning nine arrays pays a boxing of each on
every call (a few microseconds, a good share of a tiny network's fit).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import dense_leaves, interleaved_counts, leaf_levels, network_counts

__all__ = ["plain_trees", "PACKED"]

#: the arrays :func:`plain_trees` packs, in order (those of ``leaf_levels``)
PACKED = 9


@njit(cache=True, nogil=True, boundscheck=False)
def plain_trees(C, cards, groups, solo, rcard, pa_ptr, pa_card, cell_off, width):  # pragma: no cover - compiled
    """Every node's tree levels from the codes ``C`` (row ``v``: variable ``v``'s codes,
    ``cards[v]`` levels); node ``j`` has ``rcard[j]`` levels, its parents' levels
    ``pa_card[pa_ptr[j]:pa_ptr[j + 1]]`` and its dense cells ``cell_off[j]:cell_off[j + 1]``
    (configuration-major, first parent most significant, as
    :func:`~pybncsmooth.counting._kernels.network_counts` lays them out).

    The dense counts come from small joint tables: ``groups`` (:func:`_group_counts`)
    counts each group of variables' joint table in one pass over the rows and sums it
    into the cells of the nodes whose families it holds (a tiny network is one group:
    one pass and one histogram instead of a pass per parent and a histogram per node);
    ``solo`` (``(node, child, pa_ptr, pa_idx, pa_card, rcard, cell_off)`` of the other
    nodes, their cells one after another) counts the other nodes one by one with
    ``network_counts``.  The same integers either way.  Their leaves and levels then as
    the general counting makes them (:func:`~pybncsmooth.counting._kernels.dense_leaves`,
    :func:`~pybncsmooth.counting._kernels.leaf_levels`).

    Returns ``[10 offsets, the 9 arrays of leaf_levels one after another]`` (int64; array
    ``k`` is entries ``out[k]:out[k + 1]``), or an empty array when a code is < 0 (a
    missing value: the general counting's case)."""
    n = C.shape[1]
    if _any_negative(C):
        return np.empty(0, dtype=np.int64)
    nn = rcard.shape[0]
    dense = np.zeros(cell_off[nn], dtype=np.int64)
    _group_counts(C, cards, groups, cell_off, dense)
    s_node, s_child, s_pa_ptr, s_pa_idx, s_pa_card, s_rcard, s_off = solo
    if s_node.shape[0]:
        part = np.zeros(s_off[-1], dtype=np.int64)
        network_counts(C.T, s_child, s_pa_ptr, s_pa_idx, s_pa_card, s_rcard, s_off, part, False,
                       np.empty(n, dtype=np.int32))
        for k in range(s_node.shape[0]):
            base = cell_off[s_node[k]]
            for c in range(s_off[k], s_off[k + 1]):
                dense[base + c - s_off[k]] = part[c]
    ptr, codes, off = dense_leaves(dense, cell_off, rcard, pa_ptr, pa_card, width)
    parts = leaf_levels(ptr, codes, off, dense, np.zeros(0, dtype=np.int64), nn, rcard, pa_ptr, pa_card)
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
    counted (:func:`~pybncsmooth.counting._kernels.interleaved_counts`), then summed into
    the nodes' cells."""
    g_ptr, g_vars, g_cells, m_ptr, m_node, f_ptr, fmap = groups
    n = C.shape[1]
    most = 0
    for c in range(g_cells.shape[0]):
        most = max(most, g_cells[c])
    g = np.empty(n, dtype=np.int16)
    hist = np.empty(4 * most, dtype=np.int64)
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
        interleaved_counts(g, J, hist)
        for m in range(m_ptr[c], m_ptr[c + 1]):
            base = cell_off[m_node[m]]
            f = f_ptr[m]
            for k in range(J):
                h = hist[k]
                if h != 0:
                    dense[base + fmap[f + k]] += h
