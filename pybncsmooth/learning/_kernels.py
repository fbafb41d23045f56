"""numba kernels of structure learning: family scores from a table of counts, and the
choice of the best arc operation of a hill-climbing or tabu step."""

from __future__ import annotations

import math

import numpy as np
from .._jit import njit

__all__ = ["table_score", "best_move", "has_path"]

#: score codes of :func:`table_score`
LOGLIK, AIC, BIC, BDE, BDS, K2 = 0, 1, 2, 3, 4, 5


@njit(cache=True, nogil=True, boundscheck=False)
def table_score(t, kind, a, n_total):  # pragma: no cover - compiled
    """The score of one family from its ``(q, r)`` counts ``t``: ``kind`` one of the
    codes above, ``a`` the penalty coefficient (AIC/BIC) or the imaginary sample size
    (BDe/BDs), ``n_total`` the rows (BIC's default coefficient is set by the caller)."""
    q, r = t.shape
    if kind <= BIC:
        ll = 0.0
        for j in range(q):
            nj = 0
            for k in range(r):
                nj += t[j, k]
            if nj == 0:
                continue
            for k in range(r):
                if t[j, k] > 0:
                    ll += t[j, k] * math.log(t[j, k] / nj)
        if kind == LOGLIK:
            return ll
        return ll - a * (r - 1) * q
    if kind == BDS and q > 1:
        qo = 0
        for j in range(q):
            for k in range(r):
                if t[j, k] > 0:
                    qo += 1
                    break
        if qo == 0:
            return 0.0
        alpha = a / (qo * r)
        row = a / qo
    elif kind == K2:
        alpha = 1.0
        row = float(r)
    else:
        alpha = a / (q * r)
        row = a / q
    lg_alpha = math.lgamma(alpha)
    lg_row = math.lgamma(row)
    s = 0.0
    for j in range(q):
        nj = 0
        for k in range(r):
            c = t[j, k]
            if c > 0:
                nj += c
                s += math.lgamma(alpha + c) - lg_alpha
        if nj > 0:
            s += lg_row - math.lgamma(row + nj)
    return s


@njit(cache=True, nogil=True, boundscheck=False)
def has_path(am, src, dst, skip_direct, stack, seen):  # pragma: no cover - compiled
    """Whether a directed path ``src -> ... -> dst`` exists in the adjacency matrix
    ``am`` (``am[i, j]``: an arc ``i -> j``); with ``skip_direct`` the arc ``src -> dst``
    itself does not count."""
    p = am.shape[0]
    for i in range(p):
        seen[i] = 0
    top = 0
    stack[top] = src
    top += 1
    seen[src] = 1
    while top > 0:
        top -= 1
        v = stack[top]
        for w in range(p):
            if am[v, w] == 0 or seen[w]:
                continue
            if w == dst:
                if skip_direct and v == src:
                    continue
                return True
            seen[w] = 1
            stack[top] = w
            top += 1
    return False


@njit(cache=True, nogil=True, boundscheck=False)
def _is_tabu(am, tabu, n_tabu):  # pragma: no cover - compiled
    p = am.shape[0]
    for t in range(n_tabu):
        same = True
        for i in range(p):
            for j in range(p):
                if tabu[t, i, j] != am[i, j]:
                    same = False
                    break
            if not same:
                break
        if same:
            return True
    return False


@njit(cache=True, nogil=True, boundscheck=False)
def best_move(am, cache, added, wl, bl, nparents, maxp, tabu, n_tabu, baseline, tol):  # pragma: no cover
    """The best arc operation ``(op, i, j)`` (op 1 add, 2 drop, 3 reverse ``i -> j``; 0
    none) whose score change ``cache`` exceeds the best so far (from ``baseline``) by
    more than ``tol``, scanning additions, then removals, then reversals, each ``i``
    then ``j``; an addition or reversal that closes a cycle, or any operation giving a
    network among the first ``n_tabu`` of ``tabu``, is skipped (bnlearn's order and
    rule, so that equal scores choose the same operation)."""
    p = am.shape[0]
    stack = np.empty(p, dtype=np.int64)
    seen = np.empty(p, dtype=np.int64)
    best = baseline
    op, bi, bj = 0, -1, -1
    for i in range(p):
        for j in range(p):
            if added[i, j] == 0:
                continue
            d = cache[i, j]
            if d - best > tol:
                if has_path(am, j, i, False, stack, seen):
                    continue
                if n_tabu > 0:
                    am[i, j] = 1
                    hit = _is_tabu(am, tabu, n_tabu)
                    am[i, j] = 0
                    if hit:
                        continue
                op, bi, bj, best = 1, i, j, d
    for i in range(p):
        for j in range(p):
            if am[i, j] == 0 or wl[i, j] != 0:
                continue
            d = cache[i, j]
            if d - best > tol:
                if n_tabu > 0:
                    am[i, j] = 0
                    hit = _is_tabu(am, tabu, n_tabu)
                    am[i, j] = 1
                    if hit:
                        continue
                op, bi, bj, best = 2, i, j, d
    for i in range(p):
        for j in range(p):
            if am[i, j] == 0 or bl[j, i] != 0 or nparents[i] >= maxp:
                continue
            d = cache[i, j] + cache[j, i]
            if abs(d) < tol:
                d = 0.0
            if d - best > tol:
                if has_path(am, i, j, True, stack, seen):
                    continue
                if n_tabu > 0:
                    am[i, j] = 0
                    am[j, i] = 1
                    hit = _is_tabu(am, tabu, n_tabu)
                    am[i, j] = 1
                    am[j, i] = 0
                    if hit:
                        continue
                op, bi, bj, best = 3, i, j, d
    return op, bi, bj
