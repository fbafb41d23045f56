"""numba kernels of structure learning (compiled once, cached on disk)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["pairwise_cmi_kernel"]


@njit(cache=True, nogil=True)
def pairwise_cmi_kernel(M, cards, c, rc):  # pragma: no cover - compiled
    """:math:`I(X_i; X_j | C)` for every pair of columns of the ``(n, p)`` code matrix ``M``.

    Each pair is counted on the rows where ``X_i``, ``X_j`` and ``C`` are all
    observed (codes >= 0); plug-in estimate in nats.
    """
    n, p = M.shape
    out = np.zeros((p, p))
    maxr = 1
    for j in range(p):
        if cards[j] > maxr:
            maxr = cards[j]
    cnt = np.zeros((rc, maxr, maxr), dtype=np.int64)
    ni = np.zeros((rc, maxr), dtype=np.int64)
    nj = np.zeros((rc, maxr), dtype=np.int64)
    nc = np.zeros(rc, dtype=np.int64)
    for a in range(p):
        ra = cards[a]
        for b in range(a + 1, p):
            rb = cards[b]
            cnt[:, :ra, :rb] = 0
            ni[:, :ra] = 0
            nj[:, :rb] = 0
            nc[:] = 0
            m = 0
            for r in range(n):
                cr = c[r]
                xa = M[r, a]
                xb = M[r, b]
                if cr < 0 or xa < 0 or xb < 0:
                    continue
                cnt[cr, xa, xb] += 1
                ni[cr, xa] += 1
                nj[cr, xb] += 1
                nc[cr] += 1
                m += 1
            if m == 0:
                continue
            s = 0.0
            for cc in range(rc):
                for u in range(ra):
                    for v in range(rb):
                        q = cnt[cc, u, v]
                        if q > 0:
                            s += q * np.log(q * nc[cc] / (ni[cc, u] * nj[cc, v]))
            out[a, b] = s / m
            out[b, a] = s / m
    return out
