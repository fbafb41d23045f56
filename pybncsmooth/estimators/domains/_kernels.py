"""Compiled loops of the domain level (:mod:`~pybncsmooth.estimators.domains.pooling`): every leaf's posterior
moments with the concentration integrated out, in one pass over the leaves."""

from __future__ import annotations

import numpy as np
from ..._jit import njit

__all__ = ["mixture_moments"]


@njit(cache=True, nogil=True)
def mixture_moments(n, m, sk, w, v, p, second):  # pragma: no cover - compiled
    """For every leaf ``i`` (``n``: ``(L, r)`` counts, ``m``: its pooled vector) and grid
    value ``k`` (``sk[k, i]``, or ``sk[k, 0]`` for all leaves; weight ``w[k]``):
    ``a = n + s m``; ``p += w a / |a|``; ``second += w (a^2 + s^2 v + a) / (|a| (|a| + 1))``
    (``v``: the pooled vector's variance, or an empty array for none)."""
    L, r = n.shape
    K = w.shape[0]
    one = sk.shape[1] == 1
    has_v = v.shape[0] > 0
    for i in range(L):
        for x in range(r):
            p[i, x] = 0.0
            second[i, x] = 0.0
        for k in range(K):
            s = sk[k, 0] if one else sk[k, i]
            tot = 0.0
            for x in range(r):
                tot += n[i, x] + s * m[i, x]
            wk = w[k]
            den = tot * (tot + 1.0)
            for x in range(r):
                a = n[i, x] + s * m[i, x]
                p[i, x] += wk * a / tot
                extra = s * s * v[i, x] if has_v else 0.0
                second[i, x] += wk * (a * a + extra + a) / den
