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

__all__ = ["format_r", "format_probs", "probability_digits"]

_DIGITS = 7


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
    """The significant digits to write ``values`` with: R's 7, or, when every value is a
    decimal of at most 12 significant digits (up to floating-point noise: a few units in
    the last place, as a table read from a file and renormalised is), the fewest that
    give them all back."""
    v = np.abs(np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=np.float64))
    v = v[v > 0]
    if v.size == 0:
        return _DIGITS
    e = np.floor(np.log10(v))
    ulp = 4 * np.spacing(v)
    for d in range(_DIGITS, 13):
        scale = 10.0 ** (e - d + 1)
        m = v / scale
        if np.all(np.abs(np.rint(m) - m) * scale <= ulp):
            return d
    return _DIGITS


def format_probs(values: Iterable[float], nsmall: int = 1) -> list[str]:
    """``values`` as :func:`format_r` prints them with :func:`probability_digits` digits:
    bnlearn's output for fitted tables, and tables of short decimals written back
    unchanged."""
    vals = np.asarray(values, dtype=np.float64)
    return format_r(vals.tolist(), nsmall, probability_digits(vals))


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
