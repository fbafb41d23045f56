"""The number kernels of :mod:`~pybncsmooth.interop.reading._number_kernels` in Python and NumPy, for a process that
has not loaded a compiled kernel yet.

A script's first read of a network would otherwise pay numba's start (a second or
more) for a pass over a few hundred kilobytes.  :func:`parse_rows_python` parses rows
of plain decimal numbers with ``float()`` (the double the kernel gives by contract)
and declines (``None``) anything else, so every unusual or faulty row still goes to the
kernel, which parses or reports it as before; :func:`place_rows_numpy` scatters,
checks and normalises as :func:`~pybncsmooth.interop.reading._number_kernels.place_rows` does, the same
operations in the same order (a distribution summed left to right), so the tables and
the errors are the kernel's.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

__all__ = ["parse_rows_python", "place_rows_numpy", "TWIN_MAX_BYTES"]

#: the most text the twins parse (about 0.1 s of ``float()``); beyond, the kernel
TWIN_MAX_BYTES = 1 << 22

#: the characters of rows of plain decimal numbers (and the rows' separator)
_PLAIN = str.maketrans("", "", "0123456789.eE+- \t\r\n,;")
#: a comma with no number before or after it (within a row)
_LONE_COMMA = re.compile(r"(?:^|;)[ \t\r\n]*,|,[ \t\r\n]*(?:,|;|$)")


def parse_rows_python(rows: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """The numbers of every row and how many each holds, when every row is a plain list
    of decimal numbers (separated by commas and/or white space: digits, a point, an
    exponent, signs; each number the double ``float()`` gives for it); else ``None``."""
    text = ";".join(rows)
    if text.translate(_PLAIN) or _LONE_COMMA.search(text):
        return None
    split = [row.split() for row in text.replace(",", " ").split(";")]
    if len(split) != len(rows):  # a ';' inside a row
        return None
    counts = np.fromiter(map(len, split), dtype=np.int64, count=len(split))
    if not counts.all():  # a row without a number
        return None
    try:
        values = list(map(float, (x for row in split for x in row)))
    except ValueError:  # "1e", "+-2", "1.2.3": the kernel reports it
        return None
    return np.array(values, dtype=np.float64), counts


def place_rows_numpy(values: np.ndarray, counts: np.ndarray, rows: np.ndarray, blocks: np.ndarray, out: np.ndarray
                     ) -> tuple[int, int, int, float] | None:
    """:func:`~pybncsmooth.interop.reading._number_kernels.place_rows` (same arguments, same ``out``, same status),
    or ``None`` (nothing written that matters) when two rows fill one configuration: the
    kernel's order of writes then decides, so the kernel places them."""
    out[:] = np.nan
    wrong = np.flatnonzero(counts != rows[3])
    bad = np.flatnonzero(~(values >= 0.0) | (values == np.inf))
    ends = np.cumsum(counts)
    bad_row = int(np.searchsorted(ends, bad[0], side="right")) if bad.size else len(counts)
    if wrong.size and wrong[0] <= bad_row:
        return 1, int(wrong[0]), int(counts[wrong[0]]), 0.0
    if bad.size:
        return 2, bad_row, int(bad[0]), 0.0
    starts = ends - counts
    at = np.arange(values.shape[0]) - np.repeat(starts, counts)  # each number's place in its row
    kind, dest, span, r = (np.repeat(rows[k], counts) for k in (4, 0, 1, 2))
    table = kind == 1
    where = np.where(table, dest + (at % np.maximum(span, 1)) * r + at // np.maximum(span, 1), dest + at)
    keep = kind != 2
    where = where[keep]
    if where.size and np.bincount(where, minlength=out.shape[0]).max() > 1:
        return None
    out[where] = values[keep]
    for j in range(blocks.shape[1]):
        base, Q, r, dflt = (int(x) for x in blocks[:, j])
        T = out[base:base + Q * r].reshape(Q, r)
        missing = np.isnan(T[:, 0])
        if dflt >= 0:
            T[missing] = values[starts[dflt]:starts[dflt] + r]
        s = np.zeros(Q)
        for t in range(r):  # left to right, as the kernel sums
            s += T[:, t]
        fail = np.flatnonzero((missing & (dflt < 0)) | (np.abs(s - 1.0) > 0.01))
        if fail.size:
            q = int(fail[0])
            return (3, j, q, 0.0) if missing[q] and dflt < 0 else (4, j, q, float(s[q]))
        T /= s[:, None]
    return 0, 0, 0, 0.0
