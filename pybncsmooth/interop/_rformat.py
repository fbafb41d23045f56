"""R's ``format(x, nsmall = 1)`` for numeric vectors (``options(digits = 7)``).

bnlearn writes each probability vector of a BIF/DSC/NET file with
``format(probs, nsmall = 1)``; this module reproduces R's ``formatReal``: every
number needs at most 7 significant digits; the vector is printed either in fixed
notation with a common number of decimals (at least ``nsmall``) or in scientific
notation with a common mantissa length, whichever is narrower (fixed wins ties).
"""

from __future__ import annotations

from functools import lru_cache
from math import isfinite
from typing import Iterable

import numpy as np

__all__ = ["format_r", "format_probs", "probability_digits", "table_digits"]

_DIGITS = 7
#: most significant digits :func:`probability_digits` writes a distribution with (more would
#: let the decimals of a fitted table pass its test by chance)
_MAX_EXACT_DIGITS = 10


@lru_cache(maxsize=65536)
def _scientific(x: float, digits: int = _DIGITS) -> tuple[int, int, int, bool]:
    """(neg, kpower, nsig, roundingwidens) as R's ``scientific()`` computes them.

    The ``digits`` significant digits of ``|x|`` are its exact binary value rounded
    half-even (C's ``printf``, as an exact decimal expansion would give)."""
    if x == 0.0:
        return 0, 0, 1, False
    neg = 1 if x < 0 else 0
    r = -x if neg else x
    mant, ex = f"{r:.{digits - 1}e}".split("e")
    alpha = int(mant.replace(".", ""))
    kpower = int(ex)
    nsig = digits
    while nsig > 1 and alpha % 10 == 0:
        alpha //= 10
        nsig -= 1
    rgt = max(0, min(digits - kpower, 22))
    fuzz = 0.5 / 10**rgt
    widens = 0 < kpower <= 22 and r < 10**kpower - fuzz
    return neg, kpower, nsig, widens


def probability_digits(values: Iterable[float]) -> int:
    """The significant digits to write one distribution with (see :func:`table_digits`)."""
    v = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=np.float64)
    return int(table_digits(v.reshape(-1, 1))[1][0])


def table_digits(table: np.ndarray, search: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The numbers to write each distribution (a column: axis 0 of ``table``) as, and
    their significant digits: R's 7 and the values themselves, or the fewest digits (up
    to 10) and decimals that, read back and renormalised as every reader of these
    formats does, give each value back to within a few units in the last place.

    A table read from a file holds short decimals divided by their sum (which is 1 up
    to the file's rounding); those decimals are found again (the largest entry's
    candidates within ``r`` units of its last digit fix the scale, the others follow)
    and written back, so that the table reads back unchanged.  Decimals are taken only
    if they could be the rounding of a distribution (their sum no farther from one than
    90% of ``r`` half units of the largest entry's last digit): a fitted table's rationals
    (``k / n``) have decimals that renormalise to them exactly too, summing farther from
    one, and are written as bnlearn writes them (7 digits); some (``1/219``,
    ``55/219``, ``163/219``) cannot be told from a file's decimals, so a writer passes
    ``search=False`` for the tables of a fit (bnlearn's 7 digits, byte for byte)."""
    t = np.asarray(table, dtype=np.float64)
    r = t.shape[0]
    v = t.reshape(r, -1).T  # (columns, r)
    out = np.full(len(v), _DIGITS, dtype=np.int64)
    values = v.copy()
    todo = np.all(np.isfinite(v) & (v >= 0), axis=1) & (v.sum(axis=1) > 0) & search
    if not todo.any():
        return t, out.reshape(t.shape[1:])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = np.floor(np.log10(np.where(v > 0, v, 1.0)))
        ulp = 4 * np.spacing(np.maximum(v, np.finfo(np.float64).tiny))
        top = np.argmax(v, axis=1)
        rows = np.arange(len(v))
        for d in range(_DIGITS, _MAX_EXACT_DIGITS + 1):
            scale = 10.0 ** np.clip(d - 1 - e, -22, 22)  # exact powers: a decimal's double is m / 10^k
            base = np.rint(v[rows, top] * scale[rows, top])
            for c in range(-r, r + 1):
                cand = (base + c) / scale[rows, top] / v[rows, top]  # the scale S that makes the top entry short
                w = np.rint(v * cand[:, None] * scale) / scale
                total = w.sum(axis=1, keepdims=True)
                # decimals that can be a distribution rounded (their sum within 90% of the
                # largest total rounding error, r half units of the largest entry's last digit):
                # a fitted table's rationals (k / n) have decimals that renormalise exactly
                # too, but summing farther from one
                rounded = np.abs(total[:, 0] - 1.0) < 0.45 * r / scale[rows, top]
                ok = todo & rounded & np.all(np.abs(w / total - v) <= ulp, axis=1)
                out[ok] = d
                values[ok] = w[ok]
                todo &= ~ok
            if not todo.any():
                break
    return values.T.reshape(t.shape), out.reshape(t.shape[1:])


def format_probs(values: Iterable[float], nsmall: int = 1, digits: int | None = None) -> list[str]:
    """A distribution as :func:`format_r` prints it with ``digits``; by default the
    decimals and digits :func:`table_digits` finds: bnlearn's output for fitted
    tables, and tables read from a file written back unchanged (give ``digits`` only
    with the values :func:`table_digits` returned)."""
    vals = np.asarray(values, dtype=np.float64)
    if digits is None:
        w, d = table_digits(vals.reshape(-1, 1))
        vals, digits = w.ravel(), int(d[0])
    return format_r(vals.tolist(), nsmall, digits)


def format_r(values: Iterable[float], nsmall: int = 1, digits: int = _DIGITS) -> list[str]:
    """Strings of ``values`` exactly as R's ``format(values, nsmall = nsmall)``.

    (Without padding to a common width: probabilities never need it.)
    """
    vals = [float(v) for v in values]
    if not all(isfinite(v) for v in vals):
        raise ValueError("format_r handles finite numbers only")
    mxsl = rgt = mxe = mxns = -(10**9)
    mne = 10**9
    neg_any = 0
    for v in vals:
        neg, kpower, nsig, widens = _scientific(v, digits)
        left = kpower + 1
        if widens:
            left -= 1
        sleft = neg + (1 if left <= 0 else left)
        right = nsig - left
        neg_any = neg_any or neg
        rgt = max(rgt, right)
        mxsl = max(mxsl, sleft)
        mxns = max(mxns, nsig)
        mxe = max(mxe, kpower)
        mne = min(mne, kpower)
    if rgt < 0:
        rgt = 0
    w_fixed = neg_any + mxsl + rgt + (1 if rgt else 0)
    e_width = 2 if (mxe >= 100 or mne <= -99) else 1
    d = mxns - 1
    w_sci = neg_any + (1 if d > 0 else 0) + d + 4 + e_width
    if w_fixed <= w_sci:
        rgt = max(rgt, nsmall)
        return [f"{v:.{rgt}f}" for v in vals]
    return [_sci(v, d) for v in vals]


def _sci(v: float, d: int) -> str:
    s = f"{v:.{d}e}"
    mant, exp = s.split("e")
    sign = exp[0]
    digits = exp[1:].lstrip("0").rjust(2, "0")
    return f"{mant}e{sign}{digits}"
