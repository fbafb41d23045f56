"""The structure-learning kernels of :mod:`._kernels` (and the family counting they
read) in Python and NumPy, for a process that has not loaded a compiled kernel yet.

numba's start (importing it, its CPU target and the cached kernels: a second or more)
would be most of a script's first search on a few thousand rows, which runs in a
fraction of a second once compiled.  So a search whose work is small and that runs
before any kernel was called counts, scores and chooses its moves with these twins
(:func:`pybncsmooth.learning._family.use_twins`).  They compute what the kernels
compute, to the bit: the same counts, the same family terms (the C library's
``lgamma`` and ``log``, which the kernels call, on the same arguments, added in the
kernel's order), and the same scan of the operations (additions, then removals, then
reversals, each ``i`` then ``j``, a candidate taken when it beats the best so far by
more than the tolerance), so a search takes the same steps and returns the same
network on either, and a score is the same double.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ._kernels import BDS, BIC, K2, LOGLIK

__all__ = ["int64_columns", "family_counts_numpy", "table_score_numpy", "best_move_numpy", "has_path_numpy"]


def int64_columns(M: np.ndarray) -> list[np.ndarray]:
    """The columns of a code matrix as contiguous int64 arrays (what
    :func:`family_counts_numpy` reads)."""
    return [np.ascontiguousarray(M[:, x], dtype=np.int64) for x in range(M.shape[1])]


def family_counts_numpy(cols: Sequence[np.ndarray], child: int, parents: Sequence[int],
                        cards: Sequence[int]) -> np.ndarray:
    """:func:`pybncsmooth.counting.family.family_counts` of complete rows (every code
    ``>= 0``) from the code matrix's columns (:func:`int64_columns`): the ``(q, r)``
    int64 table, the first parent most significant."""
    r = int(cards[child])
    if not parents:
        return np.bincount(cols[child], minlength=r).reshape(1, r)
    cell = cols[parents[0]].copy()
    q = int(cards[parents[0]])
    for x in parents[1:]:
        c = int(cards[x])
        cell *= c
        cell += cols[x]
        q *= c
    cell *= r
    cell += cols[child]
    return np.bincount(cell, minlength=q * r).reshape(q, r)


#: above this many values, :func:`_lgammas` calls ``lgamma`` once per distinct value
_DISTINCT_FROM = 256


def _c_lgamma():
    """The C library's ``lgamma``, which numba's ``math.lgamma`` calls (Python's own
    differs from it in the last place for about half of all arguments); Python's
    where the C library's cannot be found."""
    try:
        import ctypes

        fn = ctypes.CDLL(None).lgamma
        fn.restype = ctypes.c_double
        fn.argtypes = [ctypes.c_double]
        if abs(fn(0.5) - math.lgamma(0.5)) > 1e-12:
            return math.lgamma
        return fn
    except (OSError, AttributeError, TypeError):
        return math.lgamma


_LGAMMA: list = []


def _lgamma():
    if not _LGAMMA:
        _LGAMMA.append(_c_lgamma())
    return _LGAMMA[0]


def _lgammas(x: np.ndarray) -> np.ndarray:
    """``lgamma`` of every entry (one call per distinct value of a long array)."""
    lg = _lgamma()
    if x.size > _DISTINCT_FROM:
        uniq, inv = np.unique(x, return_inverse=True)
        return np.array(list(map(lg, uniq.tolist())), dtype=np.float64)[inv.ravel()]
    return np.array(list(map(lg, x.tolist())), dtype=np.float64)


def _sequential_sum(x: np.ndarray) -> float:
    """The sum from left to right (the kernel's loop; NumPy's ``sum`` adds pairwise)."""
    return float(np.cumsum(x)[-1]) if x.size else 0.0


def table_score_numpy(t: np.ndarray, kind: int, a: float, n_total: int) -> float:
    """:func:`pybncsmooth.learning._kernels.table_score` in NumPy: the same terms (the
    C library's ``lgamma`` and ``log``) added in the same order, so the same double."""
    q, r = t.shape
    rows, cols = np.nonzero(t)  # row after row: the kernel's order
    c = t[rows, cols]
    nj = t.sum(axis=1)
    if kind <= BIC:
        ll = _sequential_sum(c * np.array(list(map(math.log, (c / nj[rows]).tolist())), dtype=np.float64))
        if kind == LOGLIK:
            return ll
        return ll - a * (r - 1) * q
    if kind == BDS and q > 1:
        qo = int(np.count_nonzero(nj))
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
    lg = _lgamma()
    seen = np.flatnonzero(nj)
    terms = np.empty(c.size + seen.size, dtype=np.float64)
    at = np.cumsum(np.bincount(rows, minlength=q))[seen] + np.arange(seen.size)  # each row's term after its cells
    cell = np.ones(terms.size, dtype=bool)
    cell[at] = False
    both = _lgammas(np.concatenate((alpha + c, row + nj[seen])))  # one pass of lgamma calls
    terms[cell] = both[:c.size] - lg(alpha)
    terms[at] = lg(row) - both[c.size:]
    return _sequential_sum(terms)


def has_path_numpy(am: np.ndarray, src: int, dst: int, skip_direct: bool) -> bool:
    """:func:`pybncsmooth.learning._kernels.has_path`: a directed path ``src -> ... ->
    dst`` in ``am`` (with ``skip_direct``, not counting the arc ``src -> dst``)."""
    seen = {src}
    stack = [src]
    while stack:
        v = stack.pop()
        for w in np.flatnonzero(am[v]).tolist():
            if w in seen:
                continue
            if w == dst:
                if skip_direct and v == src:
                    continue
                return True
            seen.add(w)
            stack.append(w)
    return False


def _is_tabu(am: np.ndarray, tabu: np.ndarray, n_tabu: int) -> bool:
    return bool((tabu[:n_tabu] == am).all(axis=(1, 2)).any())


def best_move_numpy(am: np.ndarray, cache: np.ndarray, added: np.ndarray, wl: np.ndarray, bl: np.ndarray,
                    nparents: np.ndarray, maxp: float, tabu: np.ndarray, n_tabu: int, baseline: float,
                    tol: float) -> tuple[int, int, int]:
    """:func:`pybncsmooth.learning._kernels.best_move`: the same scan, visiting only the
    operations whose change beats ``baseline`` by more than ``tol`` (the best so far
    never falls below it, so no other can be taken)."""
    p = am.shape[0]
    best = baseline
    op, bi, bj = 0, -1, -1
    reversal = cache + cache.T
    reversal[np.abs(reversal) < tol] = 0.0
    scans = (
        (1, added != 0, cache),
        (2, (am != 0) & (wl == 0), cache),
        (3, (am != 0) & (bl.T == 0) & (nparents < maxp)[:, None], reversal),
    )
    for code, legal, delta in scans:
        flat = np.flatnonzero(legal & (delta - baseline > tol))
        for idx, d in zip(flat.tolist(), delta.ravel()[flat].tolist()):
            if not d - best > tol:
                continue
            i, j = divmod(idx, p)
            if code == 1 and has_path_numpy(am, j, i, False):
                continue
            if code == 3 and has_path_numpy(am, i, j, True):
                continue
            if n_tabu > 0:
                trial = am.copy()
                if code == 1:
                    trial[i, j] = 1
                elif code == 2:
                    trial[i, j] = 0
                else:
                    trial[i, j], trial[j, i] = 0, 1
                if _is_tabu(trial, tabu, n_tabu):
                    continue
            op, bi, bj, best = code, i, j, d
    return op, bi, bj
