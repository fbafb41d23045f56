"""Unsigned Stirling numbers of the first kind, on the log scale, for the HDP sampler.

:math:`S(n, t)` counts the permutations of ``n`` items with ``t`` cycles;
:math:`\\Gamma(\\alpha + n) / \\Gamma(\\alpha) = \\sum_t \\alpha^t S(n, t)` (Petitjean et al. 2018, eq. 7).
The sampler needs :math:`\\log S(n, t)` for the counts ``n`` and table counts ``t``
of every context-tree node.

* For the sampler, exact tables of the *ratios* of neighbouring numbers (no logarithms
  or exponentials in the sampler's inner loop): :math:`R(n, t) = S(n, t + 1) / S(n, t)`
  along a row and :math:`P(q, t) = S(q + 1, t) / S(q, t)` down a column, from the
  rational recurrence :math:`R(n + 1, t) = R(n, t - 1)\\,(n R(n, t) + 1) / (n R(n, t - 1) + 1)`
  (from :math:`S(n + 1, t) = n S(n, t) + S(n, t - 1)`) and :math:`P(q, t) = q + 1 / R(q, t - 1)`
  (:class:`StirlingRatioTables`; about 25 ms for all ``n <= 4096``, built only as far as
  a fit's counts reach).
* An exact table for ``n <= n_max`` (all ``t <= n``), computed by the recurrence
  :math:`S(n + 1, t) = n S(n, t) + S(n, t - 1)` in log space, stored as a flat
  triangle, grown on demand and shared by every tree of a process
  (:class:`LogStirlingTable`), capped at ``MAX_TABLE_N`` rows.
* Beyond the table: exact closed forms for ``t <= 3`` and ``t >= n - 1``, and
  otherwise the saddle-point approximation of the generating-function integral
  with its second-order correction (relative error of ``S`` about ``1e-5`` where the
  table stops; the sampler only uses differences of neighbouring values, whose
  error is far smaller).  Values are memoised per sampler run.
"""

from __future__ import annotations

import math
import os
import threading
from typing import Any

import numpy as np
from .._jit import njit

from .._cache import cache_dir
from ._special import digamma, polygamma

__all__ = [
    "LogStirlingTable",
    "StirlingRatioTables",
    "log_stirling",
    "log_stirling_beyond",
    "pcol_offset",
    "digamma",
    "polygamma",
    "MAX_TABLE_N",
    "SHARED_TABLE",
    "SHARED_RATIOS",
]

#: Largest n of the exact triangle (n_max^2 / 2 doubles: 67 MB at 4096).
MAX_TABLE_N = 4096


# ----------------------------------------------------------------------------- exact table


@njit(cache=True, nogil=True)
def _extend_triangle(tab, n_old, n_new):  # pragma: no cover - compiled
    """Fill rows ``n_old + 1 .. n_new`` of the flat triangle ``tab`` (row n at n(n+1)/2)."""
    for n in range(n_old + 1, n_new + 1):
        prev = (n - 1) * n // 2
        row = n * (n + 1) // 2
        tab[row] = -np.inf  # S(n, 0) = 0 for n >= 1
        lm = math.log(n - 1) if n > 1 else -np.inf
        for t in range(1, n + 1):
            a = tab[prev + t] + lm if t <= n - 1 else -np.inf
            b = tab[prev + t - 1]
            if a == -np.inf:
                tab[row + t] = b
            elif b == -np.inf:
                tab[row + t] = a
            elif a > b:
                tab[row + t] = a + math.log1p(math.exp(b - a))
            else:
                tab[row + t] = b + math.log1p(math.exp(a - b))


class LogStirlingTable:
    """The exact triangle of :math:`\\log S(n, t)`, grown on demand (thread-safe).

    ``ensure(n)`` makes rows up to ``min(n, MAX_TABLE_N)`` available; ``array`` and
    ``n_max`` are what the compiled sampler reads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.n_max = 0
        self.array = np.zeros(1)  # S(0, 0) = 1

    def ensure(self, n: int) -> tuple[np.ndarray, int]:
        n = min(int(n), MAX_TABLE_N)
        with self._lock:
            if n > self.n_max:
                target = min(MAX_TABLE_N, max(n, int(self.n_max * 1.5) + 16))
                new = np.empty((target + 1) * (target + 2) // 2)
                new[: self.array.shape[0]] = self.array
                _extend_triangle(new, self.n_max, target)
                self.array, self.n_max = new, target
            return self.array, self.n_max


#: The table shared by every caller of the process.
SHARED_TABLE = LogStirlingTable()


# ----------------------------------------------------------------------------- ratio tables


@njit(cache=True, nogil=True)
def _extend_ratios(rtab, n_old, n_new):  # pragma: no cover - compiled
    """Fill rows ``n_old + 1 .. n_new`` of the flat triangle of
    :math:`R(n, t) = S(n, t + 1) / S(n, t)`, ``t = 0 .. n`` (row n at n(n+1)/2):
    ``R(n, 0) = inf`` for ``n >= 1``, ``R(n, 1) = H_{n-1}``, ``R(n, n) = 0``."""
    for n in range(n_old, n_new):  # row n + 1 from row n
        prev = n * (n + 1) // 2
        row = (n + 1) * (n + 2) // 2
        rtab[row] = np.inf
        rtab[row + 1] = rtab[prev + 1] + 1.0 / n if n >= 1 else 0.0
        for t in range(2, n + 1):
            a = rtab[prev + t - 1]
            rtab[row + t] = a * (n * rtab[prev + t] + 1.0) / (n * a + 1.0)
        rtab[row + n + 1] = 0.0


@njit(cache=True, nogil=True, inline="always")
def pcol_offset(t, n_tab):  # pragma: no cover - compiled
    """Start of column ``t`` (``q = t .. n_tab``) of the column-major triangle of P."""
    return (t - 1) * (n_tab + 1) - (t - 1) * t // 2


@njit(cache=True, nogil=True)
def _fill_pcol(pcol, rtab, n_tab):  # pragma: no cover - compiled
    """:math:`P(q, t) = S(q + 1, t) / S(q, t) = q + S(q, t - 1) / S(q, t)` for
    ``1 <= t <= q <= n_tab`` (``P(q, 1) = q``): a transpose of ``R``, done in tiles of
    64 x 64 so that reads and writes both stay in cache."""
    B = 64
    for q0 in range(1, n_tab + 1, B):
        q1 = min(q0 + B, n_tab + 1)
        for t0 in range(1, q1, B):
            t1 = min(t0 + B, q1)
            for t in range(t0, t1):
                off = pcol_offset(t, n_tab) - t
                for q in range(max(q0, t), q1):
                    if t == 1:
                        pcol[off + q] = q
                    else:
                        pcol[off + q] = q + 1.0 / rtab[q * (q + 1) // 2 + t - 1]


#: Tables at least this large are kept on disk (in the user cache folder) and mapped into
#: memory by later processes: a cross-validation's workers share one copy in the page cache.
_DISK_MIN_N = 2048


def _disk_paths(n_tab: int) -> tuple[Any, Any] | None:
    try:
        folder = cache_dir().parent / "tables"
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):
        return None
    return folder / f"stirling_ratio_{n_tab}_R.npy", folder / f"stirling_ratio_{n_tab}_P.npy"


def _load_tables(n_tab: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The tables of size ``n_tab`` from the disk cache, mapped copy-on-write (shared
    pages, ordinary writable arrays for the compiled code), or None."""
    paths = _disk_paths(n_tab)
    if paths is None or not (paths[0].exists() and paths[1].exists()):
        return None
    try:
        rtab = np.load(paths[0], mmap_mode="c")
        pcol = np.load(paths[1], mmap_mode="c")
    except (OSError, ValueError):
        return None
    if rtab.shape != ((n_tab + 1) * (n_tab + 2) // 2,) or pcol.shape != (n_tab * (n_tab + 1) // 2,):
        return None
    return rtab, pcol


def _save_tables(n_tab: int, rtab: np.ndarray, pcol: np.ndarray) -> None:
    """Write the tables to the disk cache atomically (silently skipped when it cannot)."""
    paths = _disk_paths(n_tab)
    if paths is None:
        return
    for path, arr in zip(paths, (rtab, pcol)):
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npy")
        try:
            np.save(tmp, arr)
            os.replace(tmp, path)
        except OSError:
            try:
                tmp.unlink()
            except OSError:
                pass


class StirlingRatioTables:
    """Exact ratio tables :math:`R(n, t)` (row-major) and :math:`P(q, t)` (column-major,
    so that the sampler reads consecutive ``q`` from consecutive memory) for
    ``n, q <= n_tab``, grown on demand (thread-safe), capped at ``MAX_TABLE_N``.

    ``ensure(n)`` returns ``(rtab, pcol, n_tab)`` with ``n_tab >= min(n, MAX_TABLE_N)``.
    A sampler must use the rows only up to its *own* limit (see the HDP sampler), so
    that its draws never depend on what earlier fits of the process built.  Tables of
    ``n_tab >= 2048`` (sizes rounded up to 2048 or 4096; 34 MB and 134 MB) are written
    to the user cache folder once and mapped into memory by later processes (``disk``).
    """

    def __init__(self, disk: bool = True) -> None:
        self._lock = threading.Lock()
        self.disk = disk
        self.n_tab = 0
        self.rtab = np.zeros(1)  # R(0, 0) = S(0, 1) / S(0, 0) = 0
        self.pcol = np.zeros(0)

    def ensure(self, n: int) -> tuple[np.ndarray, np.ndarray, int]:
        n = min(int(n), MAX_TABLE_N)
        with self._lock:
            if n > self.n_tab:
                target = min(MAX_TABLE_N, max(n, int(self.n_tab * 1.25) + 16))
                if self.disk and target >= _DISK_MIN_N:
                    target = _DISK_MIN_N if target <= _DISK_MIN_N else MAX_TABLE_N
                    loaded = _load_tables(target)
                    if loaded is not None:
                        self.rtab, self.pcol = loaded
                        self.n_tab = target
                        return self.rtab, self.pcol, self.n_tab
                rtab = np.empty((target + 1) * (target + 2) // 2)
                rtab[: self.rtab.shape[0]] = self.rtab
                _extend_ratios(rtab, self.n_tab, target)
                pcol = np.empty(target * (target + 1) // 2)
                _fill_pcol(pcol, rtab, target)
                self.rtab, self.pcol, self.n_tab = rtab, pcol, target
                if self.disk and target >= _DISK_MIN_N:
                    _save_tables(target, rtab, pcol)
            return self.rtab, self.pcol, self.n_tab


#: The ratio tables shared by every HDP sampler of the process.
SHARED_RATIOS = StirlingRatioTables()


# ----------------------------------------------------------------------------- beyond the table


@njit(cache=True, nogil=True)
def _saddle_log_stirling(n, t):  # pragma: no cover - compiled
    """Saddle-point approximation of :math:`\\log S(n, t)` for ``4 <= t <= n - 2``.

    :math:`S(n, t) = \\frac{1}{2\\pi i}\\oint \\frac{\\Gamma(x + n)}{\\Gamma(x)} x^{-t-1} dx`;
    with :math:`H(x) = \\log\\Gamma(x+n) - \\log\\Gamma(x) - (t+1)\\log x`, the saddle
    :math:`H'(x_0) = 0` gives :math:`e^{H(x_0)} / \\sqrt{2\\pi H''(x_0)}` times the
    correction :math:`1 + H^{(4)}/(8 H''^2) - 5 H'''^2 / (24 H''^3)`.
    """
    M = t + 1.0
    # solve x (psi(x + n) - psi(x)) = M for y = log x (increasing in x)
    lo = -40.0
    hi = math.log(10.0 * n * n + 10.0)
    y = math.log(max(M - 1.0, 1e-3)) - math.log(max(math.log(n), 1.0))
    if y < lo or y > hi:
        y = 0.5 * (lo + hi)
    for _ in range(100):
        x = math.exp(y)
        d0 = digamma(x + n) - digamma(x)
        g = x * d0 - M
        if g > 0:
            hi = y
        else:
            lo = y
        dg = x * (d0 + x * (polygamma(1, x + n) - polygamma(1, x)))
        step = g / dg if dg != 0 else 0.0
        y_new = y - step
        if not (lo < y_new < hi):
            y_new = 0.5 * (lo + hi)
        if abs(y_new - y) < 1e-14:
            y = y_new
            break
        y = y_new
    x = math.exp(y)
    h0 = math.lgamma(x + n) - math.lgamma(x) - M * y
    h2 = polygamma(1, x + n) - polygamma(1, x) + M / (x * x)
    h3 = polygamma(2, x + n) - polygamma(2, x) - 2.0 * M / (x * x * x)
    h4 = polygamma(3, x + n) - polygamma(3, x) + 6.0 * M / (x * x * x * x)
    corr = 1.0 + h4 / (8.0 * h2 * h2) - 5.0 * h3 * h3 / (24.0 * h2 * h2 * h2)
    out = h0 - 0.5 * math.log(2.0 * math.pi * h2)
    if corr > 0.5:
        out += math.log(corr)
    return out


@njit(cache=True, nogil=True)
def log_stirling_beyond(n, t, ckeys, cvals):  # pragma: no cover - compiled
    """:math:`\\log S(n, t)` without the exact table: closed forms for ``t <= 3`` and
    ``t >= n - 1``, else the saddle point; memoised in ``ckeys``/``cvals``."""
    if t > n or t < 0:
        return -np.inf
    if t == n:
        return 0.0
    if t == 0:
        return -np.inf
    if t == 1:
        return math.lgamma(n)
    if t == n - 1:
        return math.log(n * (n - 1.0) / 2.0)
    key = n * 4294967296 + t
    h = key * 0x9E3779B97F4A7C1  # Fibonacci hashing; fold the high half, which depends
    slot = (h ^ (h >> 32)) & (ckeys.shape[0] - 1)  # on n as well as t, into the slot bits
    if ckeys[slot] == key:
        return cvals[slot]
    if t == 2:
        v = math.lgamma(n) + math.log(digamma(n) + 0.5772156649015329)
    elif t == 3:
        h = digamma(n) + 0.5772156649015329
        h2 = math.pi * math.pi / 6.0 - polygamma(1, n)
        v = math.lgamma(n) - math.log(2.0) + math.log(h * h - h2)
    else:
        v = _saddle_log_stirling(n, t)
    ckeys[slot] = key
    cvals[slot] = v
    return v


@njit(cache=True, nogil=True)
def log_stirling(n, t, tab, n_max, ckeys, cvals):  # pragma: no cover - compiled
    """:math:`\\log S(n, t)` (``-inf`` where ``S = 0``).

    ``tab``/``n_max``: the exact triangle; ``ckeys``/``cvals``: a direct-mapped
    memo (size a power of two) for values beyond it.
    """
    if t > n or t < 0:
        return -np.inf
    if t == n:
        return 0.0
    if t == 0:
        return -np.inf
    if n <= n_max:
        return tab[n * (n + 1) // 2 + t]
    return log_stirling_beyond(n, t, ckeys, cvals)


def new_memo(size_log2: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Empty memo arrays for :func:`log_stirling`."""
    size = 1 << size_log2
    return np.full(size, -1, dtype=np.int64), np.zeros(size)


class _MemoPool:
    """Memo arrays (:func:`new_memo`, 1 MB each) lent to samplers' chains: a chain
    holds one of its own while it runs and gives it back when done, so a run of many
    small trees (an ensemble's hundreds) does not allocate and fill a fresh megabyte
    for each.  A memo is a pure cache (each slot holds its full key ``(n, t)`` and the
    value the key determines), so what an earlier chain left in it changes no result."""

    def __init__(self, size_log2: int = 16) -> None:
        self.size_log2 = size_log2
        self._free: list[tuple[np.ndarray, np.ndarray]] = []
        self._lock = threading.Lock()

    def acquire(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            if self._free:
                return self._free.pop()
        return new_memo(self.size_log2)

    def release(self, memo: tuple[np.ndarray, np.ndarray]) -> None:
        with self._lock:
            if len(self._free) < 64:  # at most 64 MB kept
                self._free.append(memo)


#: The memos lent to HDP chains (see :class:`_MemoPool`).
MEMO_POOL = _MemoPool()


def log_stirling_py(n: int, t: int) -> float:
    """:math:`\\log S(n, t)` from Python (grows the shared table as needed)."""
    tab, n_max = SHARED_TABLE.ensure(n)
    keys, vals = new_memo(4)
    return float(log_stirling(int(n), int(t), tab, n_max, keys, vals))
