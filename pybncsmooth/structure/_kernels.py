"""numba kernels of structure learning (compiled once, cached on disk)."""

from __future__ import annotations

import numpy as np
from .._jit import njit

__all__ = ["pair_counts_kernel", "cmi_from_pair_counts"]


@njit(cache=True, nogil=True)
def pair_counts_kernel(M, cards, c, rc, off, w, out):  # pragma: no cover - compiled
    """Add to ``out`` the counts :math:`n_{c x_a x_b}` of every pair ``a < b`` of columns
    of the ``(n, p)`` code matrix ``M``, on the rows where ``X_a``, ``X_b`` and ``C`` are
    observed (codes >= 0), row ``r`` counting ``w[r]`` (ones as int64 for plain counts,
    row weights as float64 with a float64 ``out``).  Pair ``(a, b)``'s block starts at
    ``off[a * p + b]`` and is laid out ``(c, x_a, x_b)`` row-major."""
    n, p = M.shape
    for r in range(n):
        cr = c[r]
        wr = w[r]
        if cr < 0 or wr == 0:
            continue
        for a in range(p):
            xa = M[r, a]
            if xa < 0:
                continue
            base = cr * cards[a] + xa
            for b in range(a + 1, p):
                xb = M[r, b]
                if xb < 0:
                    continue
                out[off[a * p + b] + base * cards[b] + xb] += wr


@njit(cache=True, nogil=True)
def cmi_from_pair_counts(counts, cards, rc, off):  # pragma: no cover - compiled
    """:math:`I(X_a; X_b \\mid C)` (plug-in, nats) of every pair from the blocks of
    :func:`pair_counts_kernel`; a pair with no complete row gets 0."""
    p = len(cards)
    out = np.zeros((p, p))
    maxr = 1
    for j in range(p):
        if cards[j] > maxr:
            maxr = cards[j]
    ni = np.zeros((rc, maxr), dtype=counts.dtype)  # int64, or float64 for weighted rows
    nj = np.zeros((rc, maxr), dtype=counts.dtype)
    nc = np.zeros(rc, dtype=counts.dtype)
    for a in range(p):
        ra = cards[a]
        for b in range(a + 1, p):
            rb = cards[b]
            o = off[a * p + b]
            ni[:, :ra] = 0
            nj[:, :rb] = 0
            nc[:] = 0
            m = 0.0
            for cc in range(rc):
                for u in range(ra):
                    for v in range(rb):
                        q = counts[o + (cc * ra + u) * rb + v]
                        ni[cc, u] += q
                        nj[cc, v] += q
                        nc[cc] += q
                        m += q
            if m == 0:
                continue
            s = 0.0
            for cc in range(rc):
                for u in range(ra):
                    for v in range(rb):
                        q = counts[o + (cc * ra + u) * rb + v]
                        if q > 0:
                            s += q * np.log(q * nc[cc] / (ni[cc, u] * nj[cc, v]))
            out[a, b] = s / m
            out[b, a] = s / m
    return out
