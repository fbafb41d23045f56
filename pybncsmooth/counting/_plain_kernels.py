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

from ._kernels import dense_leaves, leaf_levels, network_counts

__all__ = ["plain_trees", "PACKED"]

#: the arrays :func:`plain_trees` packs, in order (those of ``leaf_levels``)
PACKED = 9


@njit(cache=True, nogil=True, boundscheck=False)
def plain_trees(C, cards, fmap, child, pa_ptr, pa_idx, pa_card, rcard, cell_off, width):  # pragma: no cover
    """Every node's tree levels from the codes ``C`` (row ``v``: variable ``v``'s codes,
    ``cards[v]`` levels), node ``j`` the variable ``child[j]`` with parents
    ``pa_idx[pa_ptr[j]:pa_ptr[j + 1]]`` (rows of ``C``), its dense cells
    ``cell_off[j]:cell_off[j + 1]`` as :func:`~pybncsmooth.counting._kernels.network_counts`
    lays them out.

    The dense counts come from the joint table of all the variables when ``fmap`` (``(nodes,
    J)``: each node's cell of each of the ``J`` joint cells) is not empty: one pass over the
    rows (each row's joint cell, mixed radix, the first variable most significant) and a
    sum of the joint counts into each node's cells, instead of a pass per parent and a
    count per node; otherwise per node, by ``network_counts``.  The same integers either
    way.  Their leaves and levels then as the general counting makes them
    (:func:`~pybncsmooth.counting._kernels.dense_leaves`,
    :func:`~pybncsmooth.counting._kernels.leaf_levels`).

    Returns ``[10 offsets, the 9 arrays of leaf_levels one after another]`` (int64; array
    ``k`` is entries ``out[k]:out[k + 1]``), or an empty array when a code is < 0 (a
    missing value: the general counting's case)."""
    n = C.shape[1]
    if _any_negative(C):
        return np.empty(0, dtype=np.int64)
    nn = child.shape[0]
    dense = np.zeros(cell_off[nn], dtype=np.int64)
    if fmap.shape[1] > 0:
        _joint_counts(C, cards, fmap, cell_off, dense)
    else:
        network_counts(C.T, child, pa_ptr, pa_idx, pa_card, rcard, cell_off, dense, False,
                       np.empty(n, dtype=np.int32))
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
def _joint_counts(C, cards, fmap, cell_off, dense):  # pragma: no cover - compiled
    """``dense`` (every node's cells) from the joint table of the rows of ``C``: each
    row's joint cell built a variable at a time (passes the compiler vectorises),
    counted into four interleaved histograms (consecutive rows in one cell then do not
    wait on each other's increment), summed into each node's cells by ``fmap``.  The
    joint cells as int16 (``J`` at most 2**15: twice the cells a vector operation makes
    of int32)."""
    V, n = C.shape
    J = fmap.shape[1]
    g = np.zeros(n, dtype=np.int16)
    for v in range(V):
        c = np.int16(cards[v])
        row = C[v]
        for i in range(n):
            g[i] = g[i] * c + row[i]
    hist = np.zeros(4 * J, dtype=np.int64)
    m4 = n - n % 4
    for i in range(0, m4, 4):
        hist[g[i]] += 1
        hist[J + g[i + 1]] += 1
        hist[2 * J + g[i + 2]] += 1
        hist[3 * J + g[i + 3]] += 1
    for i in range(m4, n):
        hist[g[i]] += 1
    for k in range(J):
        hist[k] += hist[J + k] + hist[2 * J + k] + hist[3 * J + k]
    for j in range(fmap.shape[0]):
        base = cell_off[j]
        for k in range(J):
            h = hist[k]
            if h != 0:
                dense[base + fmap[j, k]] += h
