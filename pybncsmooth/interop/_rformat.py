"""R's ``format(x, nsmall = 1)`` for numeric vectors (``options(digits = 7)``).

bnlearn writes each probability vector of a BIF/DSC/NET file with
``format(probs, nsmall = 1)``; this module reproduces R's ``formatReal``: every
number needs at most 7 significant digits; the vector is printed either in fixed
notation with a common number of decimals (at least ``nsmall``) or in scientific
notation with a common mantissa length, whichever is narrower (fixed wins ties).
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from math import floor, isfinite, log10
from typing import Iterable

__all__ = ["format_r"]

_DIGITS = 7


def _scientific(x: float, digits: int = _DIGITS) -> tuple[int, int, int, bool]:
    """(neg, kpower, nsig, roundingwidens) as R's ``scientific()`` computes them."""
    if x == 0.0:
        return 0, 0, 1, False
    neg = 1 if x < 0 else 0
    r = -x if neg else x
    kp = floor(log10(r)) - digits + 1
    with localcontext() as ctx:
        ctx.prec = 60
        r_prec = Decimal(r).scaleb(-kp)
        if r_prec < Decimal(10) ** (digits - 1):
            r_prec *= 10
            kp -= 1
        alpha = int(r_prec.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
    nsig = digits
    for _ in range(digits):
        if alpha % 10 == 0:
            alpha //= 10
            nsig -= 1
        else:
            break
    if nsig == 0:
        nsig = 1
        kp += 1
    kpower = kp + digits - 1
    rgt = max(0, min(digits - kpower, 22))
    fuzz = 0.5 / 10**rgt
    widens = 0 < kpower <= 22 and r < 10**kpower - fuzz
    return neg, kpower, nsig, widens


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
