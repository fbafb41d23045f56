"""Rows of decimal numbers parsed at once (the probability blocks of a file).

:func:`parse_number_rows` joins the rows' texts and hands them to one compiled pass
(:mod:`~pybncsmooth.interop.reading._number_kernels`); the few numbers that pass cannot convert exactly are
converted by ``float()``.  A row that is not a list of numbers raises
:class:`BadNumber` naming the row and the offending text, for the reader to report
with its file line.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..._jit import numba_loaded
from ._number_kernels import _POW10, parse_rows
from ._number_twins import TWIN_MAX_BYTES, parse_rows_python

__all__ = ["BadNumber", "parse_number_rows"]


class BadNumber(ValueError):
    """Row ``row`` holds ``token`` where a number was expected."""

    def __init__(self, row: int, token: str) -> None:
        super().__init__(f"expected a number but found {token!r} (row {row})")
        self.row = row
        self.token = token


def parse_number_rows(rows: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The numbers of every row, concatenated, and how many each row holds.

    Numbers are separated by commas and/or white space; ``;`` may not occur inside a
    row.  Each number is the double ``float()`` gives for its text."""
    if not rows:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    if not numba_loaded() and sum(map(len, rows)) <= TWIN_MAX_BYTES:  # no numba start for a script's first read
        got = parse_rows_python(rows)
        if got is not None:
            return got
    text = ";".join(rows)
    buf = np.frombuffer(text.encode("ascii", errors="replace"), dtype=np.uint8)
    # a number takes a byte and a separator: a bound on how many there are
    out = np.empty(len(buf) // 2 + 1)
    counts = np.empty(len(rows), dtype=np.int64)
    slow = np.empty((2, 16 + len(buf) // 256), dtype=np.int64)  # few numbers need float()
    status, k, n_slow, pos = parse_rows(buf, _POW10, out, counts, slow[0], slow[1])
    if status == 2:  # more of them than room: again with room for all
        slow = np.empty((2, len(out)), dtype=np.int64)
        status, k, n_slow, pos = parse_rows(buf, _POW10, out, counts, slow[0], slow[1])
    if status:
        raise _bad(text, int(pos))
    slow_s, slow_e = slow[0], slow[1]
    out = out[:k]
    if n_slow:
        _convert_slow(out, buf.tobytes(), slow_s[:n_slow], slow_e[:n_slow])
    return out, counts


def _convert_slow(out: np.ndarray, raw: bytes, starts: np.ndarray, ends: np.ndarray) -> None:
    """Numbers the compiled pass left as NaN, in order, converted by ``float()``."""
    where = np.flatnonzero(np.isnan(out))
    for j, s, e in zip(where, starts, ends):
        out[j] = float(raw[s:e])


def _bad(text: str, pos: int) -> BadNumber:
    row = text.count(";", 0, pos)
    start = pos
    while start < len(text) and text[start] in " \t\r\n":
        start += 1
    end = start
    while end < len(text) and text[end] not in ",; \t\r\n":
        end += 1
    token = text[start:end] if end > start else (text[start] if start < len(text) else "")
    return BadNumber(row, token or "end of the row")
