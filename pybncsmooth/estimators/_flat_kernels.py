r"""BDeu posterior means of every cell of every context tree of a network in one
compiled pass over the counting's flat arrays
(:class:`~pybncsmooth.counting.flat.FlatTrees`).

Level ``i`` of node ``j``'s tree (``r`` levels of the child, ``q_i`` configurations of
its first ``i`` parents) has the pseudo-count :math:`\alpha_i = iss / (r q_i)` per cell
(the BDeu prior of :class:`~pybncsmooth.estimators.classical.Bayes`, bnlearn's
``bn.fit(method = "bayes")``), a row (tree node) of total :math:`n(\pi)` the denominator
:math:`n(\pi) + r \alpha_i` and a cell of count :math:`n(x, \pi)` the mean
:math:`(n(x, \pi) + \alpha_i) / (n(\pi) + r \alpha_i)`.  Each is the one IEEE operation
NumPy's element-wise evaluation of the same formula makes (an integer converted to a
double first), so the values are those of that evaluation, bit for bit; one pass costs
a small network's fit one call instead of a dozen array operations.  :func:`cell_ratio`
is the same pass for ``mle`` (:math:`n(x, \pi) / n(\pi)`) and ``mestimate``
(:math:`(n(x, \pi) + m / r) / (n(\pi) + m)`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["bayes_cells", "cell_ratio"]


@njit(cache=True, nogil=True, boundscheck=False)
def bayes_cells(iss, rcard, pa_ptr, pa_card, blk_ptr, row_ptr, counts, row_total):  # pragma: no cover - compiled
    """``(alpha_blk, tot, p)``: per block (a tree level) its pseudo-count
    :math:`iss / (r q_i)`, per row its denominator :math:`n(\\pi) + r \\alpha_i`, per
    cell its posterior mean; ``counts`` laid out as the flat trees' (row-major, ``r``
    cells a row, the rows of the blocks one after another)."""
    alpha_blk = np.empty(blk_ptr[-1], dtype=np.float64)
    tot = np.empty(row_ptr[-1], dtype=np.float64)
    p = np.empty(counts.shape[0], dtype=np.float64)
    c = 0
    for j in range(rcard.shape[0]):
        r = rcard[j]
        q = 1
        k = pa_ptr[j]
        for b in range(blk_ptr[j], blk_ptr[j + 1]):
            if b > blk_ptr[j]:  # the configurations of the parents above this level
                q *= pa_card[k]
                k += 1
            a = iss / (r * q)
            alpha_blk[b] = a
            for i in range(row_ptr[b], row_ptr[b + 1]):
                t = row_total[i] + r * a
                tot[i] = t
                for x in range(r):
                    p[c] = (counts[c] + a) / t
                    c += 1
    return alpha_blk, tot, p


@njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")
def cell_ratio(counts, row_r, add, div):  # pragma: no cover - compiled
    """``out[c] = (counts[c] + add[i]) / div[i]`` for each cell ``c`` of row ``i`` (rows of
    ``row_r[i]`` cells, one after another; a count as float64 first, as NumPy adds)."""
    out = np.empty(counts.shape[0], dtype=np.float64)
    c = 0
    for i in range(row_r.shape[0]):
        a = add[i]
        t = div[i]
        for _ in range(row_r[i]):
            out[c] = (np.float64(counts[c]) + a) / t
            c += 1
    return out
