"""numba kernel of the file readers: decimal numbers parsed in one pass over bytes.

The probability blocks of a large BIF file hold millions of numbers; parsing them one
Python ``float()`` at a time costs more than everything else the reader does.  This
kernel reads the text of all of a file's blocks at once: rows separated by ``;``,
numbers inside a row by ``,`` and/or white space.

A number whose decimal mantissa fits in 15 significant digits and whose decimal
exponent is at most 22 in magnitude is converted exactly: the mantissa and the power
of ten are both exact doubles, and one IEEE multiplication or division rounds the
quotient correctly (Clinger 1990, the "fast path"), so the result is the double Python's
``float()`` gives.  Any other number (more digits, a far exponent) is left for the
caller to convert with ``float()``, by its byte span.
"""

from __future__ import annotations

import numpy as np
from ..._jit import njit

__all__ = ["parse_rows"]

_POW10 = np.array([10.0**k for k in range(23)])

# status codes
_OK, _BAD, _FULL = 0, 1, 2


@njit(cache=True, nogil=True, boundscheck=False)
def _is_space(c):  # pragma: no cover - compiled
    return c == 32 or c == 9 or c == 10 or c == 13 or c == 12 or c == 11


@njit(cache=True, nogil=True, boundscheck=False)
def parse_rows(buf, pow10, out, row_counts, slow_start, slow_end):  # pragma: no cover - compiled
    """Parse ``buf`` (``uint8``): rows separated by ``;`` (59), numbers by ``,`` (44)
    and/or white space.

    Fills ``out`` with the numbers in order and ``row_counts`` with the numbers of each
    row; a number the fast path cannot convert exactly gets NaN in ``out`` and its byte
    span in ``slow_start`` / ``slow_end``.  Returns ``(status, n_values, n_slow,
    position)``: status 0 when all went well, else 1 with ``position`` the byte where a
    number was expected (an empty item between two commas, a word, a lone sign).
    """
    n = buf.shape[0]
    i = 0
    k = 0
    row = 0
    n_slow = 0
    in_row = 0
    need = False  # a comma was read: a number must follow before the row ends
    while i <= n:
        if i == n or buf[i] == 59:
            if need:
                return _BAD, k, n_slow, i
            row_counts[row] = in_row
            row += 1
            in_row = 0
            i += 1
            if i > n:
                break
            continue
        c = buf[i]
        if _is_space(c):
            i += 1
            continue
        if c == 44:
            if not need and in_row > 0:
                need = True
                i += 1
                continue
            return _BAD, k, n_slow, i
        start = i
        neg = False
        if c == 43 or c == 45:
            neg = c == 45
            i += 1
        mant = np.int64(0)
        digits = 0
        any_digit = False
        exp10 = 0
        while i < n and 48 <= buf[i] <= 57:
            any_digit = True
            d = buf[i] - 48
            if digits > 0 or d != 0:
                if digits < 18:
                    mant = mant * 10 + d
                else:
                    exp10 += 1
                digits += 1
            i += 1
        if i < n and buf[i] == 46:
            i += 1
            while i < n and 48 <= buf[i] <= 57:
                any_digit = True
                d = buf[i] - 48
                if digits > 0 or d != 0:
                    if digits < 18:
                        mant = mant * 10 + d
                        exp10 -= 1
                    digits += 1
                else:
                    exp10 -= 1
                i += 1
        if not any_digit:
            return _BAD, k, n_slow, start
        if i < n and (buf[i] == 101 or buf[i] == 69):
            i += 1
            eneg = False
            if i < n and (buf[i] == 43 or buf[i] == 45):
                eneg = buf[i] == 45
                i += 1
            if i >= n or not (48 <= buf[i] <= 57):
                return _BAD, k, n_slow, start
            e = 0
            while i < n and 48 <= buf[i] <= 57:
                if e < 100000:
                    e = e * 10 + (buf[i] - 48)
                i += 1
            exp10 += -e if eneg else e
        if i < n and not (_is_space(buf[i]) or buf[i] == 44 or buf[i] == 59):
            return _BAD, k, n_slow, start
        if digits > 15 or exp10 > 22 or exp10 < -22:
            if n_slow == slow_start.shape[0]:
                return _FULL, k, n_slow, start
            out[k] = np.nan
            slow_start[n_slow] = start
            slow_end[n_slow] = i
            n_slow += 1
        elif exp10 >= 0:
            out[k] = float(mant) * pow10[exp10]
        else:
            out[k] = float(mant) / pow10[-exp10]
        if neg:
            out[k] = -out[k]
        k += 1
        in_row += 1
        need = False
    return _OK, k, n_slow, 0


@njit(cache=True, nogil=True, boundscheck=False)
def place_rows(values, counts, rows, blocks, out):  # pragma: no cover - compiled
    """Scatter the rows' numbers into the flat tables, fill defaults, check, normalise.

    ``rows`` is ``(5, n_rows)``: each row's first destination (``base + index * r``),
    its span (configurations it covers: 1, or ``Q`` for a ``table`` row whose numbers
    have the node's level slowest), the block's ``r``, the count of numbers it must
    hold and its kind (0 configuration, 1 table, 2 default).  ``blocks`` is
    ``(4, n_blocks)``: base, ``Q``, ``r`` and the block's default row (-1: none).
    ``out`` (the flat tables, configuration-major) is filled and every distribution
    divided by its sum.

    Returns ``(status, a, b, s)``: 0 when all is well; 1 row ``a`` holds ``b``
    numbers, not its count; 2 number ``b`` (of row ``a``) is negative or not finite;
    3 configuration ``b`` of block ``a`` has no distribution; 4 the distribution of
    configuration ``b`` of block ``a`` sums to ``s``, more than 0.01 from one.
    """
    n_rows = counts.shape[0]
    out[:] = np.nan
    k = 0
    for i in range(n_rows):
        c = counts[i]
        if c != rows[3, i]:
            return 1, i, c, 0.0
        for t in range(c):
            v = values[k + t]
            if not (v >= 0.0) or v == np.inf:
                return 2, i, k + t, 0.0
        kind = rows[4, i]
        if kind == 0:
            d = rows[0, i]
            for t in range(c):
                out[d + t] = values[k + t]
        elif kind == 1:
            q = rows[1, i]
            r = rows[2, i]
            d = rows[0, i]
            for t in range(c):
                out[d + (t % q) * r + t // q] = values[k + t]
        k += c
    starts = np.cumsum(counts) - counts
    for j in range(blocks.shape[1]):
        base, Q, r, dflt = blocks[0, j], blocks[1, j], blocks[2, j], blocks[3, j]
        for q in range(Q):
            o = base + q * r
            if np.isnan(out[o]):
                if dflt < 0:
                    return 3, j, q, 0.0
                s0 = starts[dflt]
                for t in range(r):
                    out[o + t] = values[s0 + t]
            s = 0.0
            for t in range(r):
                s += out[o + t]
            if abs(s - 1.0) > 0.01:
                return 4, j, q, s
            for t in range(r):
                out[o + t] /= s
    return 0, 0, 0, 0.0
