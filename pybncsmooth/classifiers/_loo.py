"""numba kernel of selective kDB's incremental leave-one-out pass."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["loo_attribute_logprobs"]


@njit(cache=True, nogil=True)
def loo_attribute_logprobs(x, P, y, n_classes, r, cards, keys, offsets, counts, m, out):  # pragma: no cover
    """Add, for each row ``i``, class ``c`` and number of extra parents ``k'``, the
    leave-one-out m-estimate :math:`\\log \\hat p_{-i}(x_i \\mid c, \\pi^{k'}_i)` to ``out[k', i, c]``.

    The attribute's context tree branches on the class first, then on its parents
    (``P[:, 1:]``; ``P[:, 0]`` is ignored).  Row ``i``'s own counts are removed from
    the nodes on its path (the root always, deeper nodes when ``c`` is its class);
    a node left with no data backs off to its ancestor (paper 000, Sec. 6.1).
    Tree level ``j`` holds ``keys[offsets[j]:offsets[j + 1]]`` and the matching
    rows of ``counts``.
    """
    n = x.shape[0]
    depth = offsets.shape[0] - 2
    kmax = out.shape[0] - 1
    root_total = 0
    for v in range(r):
        root_total += counts[0, v]
    for i in range(n):
        xi = x[i]
        for c in range(n_classes):
            own = 1 if c == y[i] else 0
            n0 = counts[0, xi] - 1
            tot0 = root_total - 1
            if tot0 + m > 0:
                est = (n0 + m / r) / (tot0 + m)
            else:
                est = 1.0 / r
            node = 0
            alive = True
            for j in range(1, depth + 1):
                v = c if j == 1 else P[i, j - 1]
                if alive and v >= 0:
                    key = node * cards[j - 1] + v
                    lo = offsets[j]
                    hi = offsets[j + 1]
                    while lo < hi:
                        mid = (lo + hi) // 2
                        if keys[mid] < key:
                            lo = mid + 1
                        else:
                            hi = mid
                    if lo < offsets[j + 1] and keys[lo] == key:
                        node = lo - offsets[j]
                        tot = 0
                        for u in range(r):
                            tot += counts[lo, u]
                        tot -= own
                        nx = counts[lo, xi] - own
                        if tot > 0:
                            est = (nx + m / r) / (tot + m)
                    else:
                        alive = False
                else:
                    alive = False
                if j - 1 <= kmax:
                    out[j - 1, i, c] += np.log(est)
            for kk in range(depth, kmax + 1):
                out[kk, i, c] += np.log(est)
