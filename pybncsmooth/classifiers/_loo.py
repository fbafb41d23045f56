"""numba kernels of selective kDB's incremental leave-one-out pass."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["loo_attribute_logprobs", "loo_losses"]


@njit(cache=True, nogil=True)
def loo_attribute_logprobs(  # pragma: no cover - compiled
    x, P, y, n_classes, r, cards, keys, offsets, dense, dense_offsets, counts, totals, logtab, m, out
):
    """Add, for each row ``i``, class ``c`` and number of extra parents ``k'``, the
    leave-one-out m-estimate :math:`\\log \\hat p_{-i}(x_i \\mid c, \\pi^{k'}_i)` to ``out[k', i, c]``.

    The attribute's context tree branches on the class first, then on its parents
    (``P[:, 1:]``; ``P[:, 0]`` is ignored).  Row ``i``'s own counts are removed from
    the nodes on its path (the root always, deeper nodes when ``c`` is its class);
    a node left with no data backs off to its ancestor (paper 000, Sec. 6.1).
    Tree level ``j`` holds ``keys[offsets[j]:offsets[j + 1]]`` and the matching
    rows of ``counts``, ``totals`` and ``logtab`` (the log m-estimates of the full
    data, used as they are on paths that do not hold row ``i``).  Where
    ``dense_offsets[j] >= 0``, ``dense[dense_offsets[j] + cfg]`` maps the level's
    mixed-radix configuration code to its node (or -1), replacing the binary search.
    """
    n = x.shape[0]
    depth = offsets.shape[0] - 2
    kmax = out.shape[0] - 1
    for i in range(n):
        xi = x[i]
        yi = y[i]
        tot0 = totals[0] - 1
        if tot0 + m > 0:
            log_root = np.log((counts[0, xi] - 1 + m / r) / (tot0 + m))
        else:
            log_root = np.log(1.0 / r)
        for c in range(n_classes):
            own = c == yi
            lest = log_root
            node = 0
            cfg = 0
            alive = True
            for j in range(1, depth + 1):
                v = c if j == 1 else P[i, j - 1]
                if alive and v >= 0:
                    cfg = cfg * cards[j - 1] + v
                    found = -1
                    if dense_offsets[j] >= 0:
                        g = dense[dense_offsets[j] + cfg]
                        if g >= 0:
                            found = offsets[j] + g
                    else:
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
                            found = lo
                    if found >= 0:
                        node = found - offsets[j]
                        if own:
                            tot = totals[found] - 1
                            if tot > 0:
                                lest = np.log((counts[found, xi] - 1 + m / r) / (tot + m))
                        else:
                            lest = logtab[found, xi]
                    else:
                        alive = False
                else:
                    alive = False
                if j - 1 <= kmax:
                    out[j - 1, i, c] += lest
            for kk in range(depth, kmax + 1):
                out[kk, i, c] += lest


@njit(cache=True, nogil=True)
def loo_losses(logpost, y, kind, out_col):  # pragma: no cover - compiled
    """Write into ``out_col[k']`` the loss of the posteriors ``softmax(logpost[k'])``:
    ``kind`` 0 = RMSE over all classes, 1 = log loss, 2 = 0-1 loss."""
    nk, n, K = logpost.shape
    buf = np.empty(K)
    for kk in range(nk):
        acc = 0.0
        for i in range(n):
            mx = -np.inf
            arg = 0
            for c in range(K):
                if logpost[kk, i, c] > mx:
                    mx = logpost[kk, i, c]
                    arg = c
            if not np.isfinite(mx):
                mx = 0.0
            s = 0.0
            for c in range(K):
                e = np.exp(logpost[kk, i, c] - mx)
                buf[c] = e
                s += e
            if kind == 0:
                se = 0.0
                for c in range(K):
                    d = buf[c] / s - (1.0 if c == y[i] else 0.0)
                    se += d * d
                acc += se
            elif kind == 1:
                acc += -np.log(max(buf[y[i]] / s, 1e-300))
            else:
                acc += 1.0 if arg != y[i] else 0.0
        if kind == 0:
            out_col[kk] = np.sqrt(acc / n)
        else:
            out_col[kk] = acc / n
