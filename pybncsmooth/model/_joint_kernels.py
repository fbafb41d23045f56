r"""numba kernel of :mod:`.query_joint`: the joint distribution of a tiny network in
one compiled pass.

The nodes come in topological order :math:`v_1, \dots, v_n`; after node :math:`v_k`
the partial joint has the axes :math:`(v_k, \dots, v_1)` (C order, the newest axis
slowest), and

.. math:: J_k(x_k, \mathbf{x}) = P(x_k \mid \mathbf{x}_{\pi_k}) \, J_{k-1}(\mathbf{x}),

one product per cell, in the order numpy's broadcast product of the table and the
partial joint takes (so the cells are the same doubles).  Each parent configuration
index of the older cells is built by adding each parent's code times its place value
over runs of equal codes: no division per cell.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["joint_product"]


@njit(cache=True, nogil=True, boundscheck=False)
def _configs(size, stride, card, pa_ptr, pa, k):  # pragma: no cover - compiled
    """The parent configuration (mixed radix, the first parent most significant) of
    every cell of a partial joint of ``size`` cells whose axis ``j`` has ``stride[j]``."""
    cfg = np.zeros(size, np.int64)
    place = 1
    for h in range(pa_ptr[k + 1] - 1, pa_ptr[k] - 1, -1):  # the last parent varies fastest
        p = pa[h]
        s, c = stride[p], card[p]
        for start in range(0, size, s * c):
            for code in range(1, c):
                add = code * place
                lo = start + code * s
                for i in range(lo, lo + s):
                    cfg[i] += add
        place *= c
    return cfg


@njit(cache=True, nogil=True, boundscheck=False)
def joint_product(tables, base, card, pa_ptr, pa):  # pragma: no cover - compiled
    """The joint of nodes ``0..n-1`` (topological order) as a flat C-order array over
    the axes ``(n-1, ..., 0)``, and the product over the nodes of each table's smallest
    positive entry (1 for a table without one).  Node ``k``'s table is the
    configuration-major ``(Q, r)`` matrix at ``tables[base[k]:]``; its parents are
    ``pa[pa_ptr[k]:pa_ptr[k + 1]]`` (node indices, the table's order)."""
    n = card.shape[0]
    total = 1
    for k in range(n):
        total *= card[k]
    stride = np.empty(n, np.int64)
    joint = np.empty(total)
    prev = np.ones(1)
    size = 1
    floor = 1.0
    for k in range(n):
        r = card[k]
        q = 1
        for h in range(pa_ptr[k], pa_ptr[k + 1]):
            q *= card[pa[h]]
        low = np.inf
        for j in range(base[k], base[k] + q * r):
            if 0.0 < tables[j] < low:
                low = tables[j]
        if low < np.inf:
            floor *= low
        cfg = _configs(size, stride, card, pa_ptr, pa, k)
        out = joint[: r * size] if k == n - 1 else np.empty(r * size)
        for x in range(r):
            for i in range(size):
                out[x * size + i] = tables[base[k] + cfg[i] * r + x] * prev[i]
        stride[k] = size
        prev = out
        size *= r
    return joint, floor
