r"""BDeu posterior means of every cell of every context tree of a network in one
compiled pass over the counting's flat arrays
(:class:`~pybncsmooth.counting.flat.FlatTrees`).

Level ``i`` of node ``j``'s tree (``r`` levels of the child, ``q_i`` configurations of
its first ``i`` parents) has the pseudo-count :math:`\alpha_i = iss / (r q_i)` per cell
(the BDeu prior of :class:`~pybncsmooth.estimators.closed.classical.Bayes`, bnlearn's
``bn.fit(method = "bayes")``), a row (tree node) of total :math:`n(\pi)` the denominator
:math:`n(\pi) + r \alpha_i` and a cell of count :math:`n(x, \pi)` the mean
:math:`(n(x, \pi) + \alpha_i) / (n(\pi) + r \alpha_i)`.  Each is the one IEEE operation
NumPy's element-wise evaluation of the same formula makes (an integer converted to a
double first), so the values are those of that evaluation, bit for bit; one pass costs
a small network's fit one call instead of a dozen array operations.  The cells a row
does not store (counts 0 of a leaf) share one value, computed once a row.  :func:`cell_ratio`
is the same pass for ``mle`` (:math:`n(x, \pi) / n(\pi)`) and ``mestimate``
(:math:`(n(x, \pi) + m / r) / (n(\pi) + m)`).
"""

from __future__ import annotations

import numpy as np
from ..._jit import njit

__all__ = ["bayes_cells", "cell_ratio"]


@njit(cache=True, nogil=True, boundscheck=False)
def bayes_cells(iss, rcard, pa_ptr, pa_card, blk_ptr, row_ptr, nz_ptr, nz_n, row_total):  # pragma: no cover
    """``(alpha_blk, tot, base, stored)``: per block (a tree level) its pseudo-count
    :math:`iss / (r q_i)`, per row its denominator :math:`n(\\pi) + r \\alpha_i` and the
    posterior mean of its cells of count 0, per stored cell (the counts held as
    :class:`~pybncsmooth.counting.flat.FlatTrees` holds them: row ``i``'s are
    ``nz_ptr[i]:nz_ptr[i + 1]``) its posterior mean; a count 0 as any other count
    (``0.0 + alpha`` over the denominator)."""
    alpha_blk = np.empty(blk_ptr[-1], dtype=np.float64)
    tot = np.empty(row_ptr[-1], dtype=np.float64)
    base = np.empty(row_ptr[-1], dtype=np.float64)
    p = np.empty(nz_n.shape[0], dtype=np.float64)
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
                base[i] = (np.float64(0) + a) / t
                for c in range(nz_ptr[i], nz_ptr[i + 1]):
                    p[c] = (nz_n[c] + a) / t
    return alpha_blk, tot, base, p


@njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")
def cell_ratio(nz_ptr, nz_n, add, div):  # pragma: no cover - compiled
    """``(base, stored)``: per row ``i`` the value ``(0 + add[i]) / div[i]`` of its cells
    of count 0, per stored cell ``c`` of row ``i`` (``nz_ptr[i] <= c < nz_ptr[i + 1]``)
    ``(nz_n[c] + add[i]) / div[i]`` (a count as float64 first, as NumPy adds)."""
    m = nz_ptr.shape[0] - 1
    base = np.empty(m, dtype=np.float64)
    out = np.empty(nz_n.shape[0], dtype=np.float64)
    for i in range(m):
        a = add[i]
        t = div[i]
        base[i] = (np.float64(0) + a) / t
        for c in range(nz_ptr[i], nz_ptr[i + 1]):
            out[c] = (np.float64(nz_n[c]) + a) / t
    return base, out
