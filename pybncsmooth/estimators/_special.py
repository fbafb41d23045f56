"""Special functions for compiled kernels: digamma and polygamma.

numba compiles ``math.lgamma`` but has no digamma; these are the recurrence
:math:`\\psi^{(k)}(x) = \\psi^{(k)}(x + 1) - (-1)^k k! / x^{k+1}` up to ``x >= 10`` followed
by the asymptotic (Stirling) series, accurate to a few units in the last place
for ``x > 0`` (checked against SciPy in the tests).
"""

from __future__ import annotations

import math

from .._jit import njit

__all__ = ["digamma", "polygamma"]


@njit(cache=True, nogil=True)
def digamma(x):  # pragma: no cover - compiled
    """:math:`\\psi(x)` for ``x > 0``: recurrence up to 10, then the asymptotic series."""
    r = 0.0
    while x < 10.0:
        r -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    s = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760))))))
    return r + math.log(x) - 0.5 / x + s


@njit(cache=True, nogil=True)
def polygamma(k, x):  # pragma: no cover - compiled
    """:math:`\\psi^{(k)}(x)` for ``k = 1, 2, 3`` and ``x > 0``."""
    r = 0.0
    if k == 1:
        while x < 10.0:
            r += 1.0 / (x * x)
            x += 1.0
        f = 1.0 / (x * x)
        return (
            r
            + 1.0 / x
            + 0.5 * f
            + (1.0 / x) * f * (1.0 / 6 + f * (-1.0 / 30 + f * (1.0 / 42 + f * (-1.0 / 30 + f * (5.0 / 66)))))
        )
    if k == 2:
        while x < 10.0:
            r -= 2.0 / (x * x * x)
            x += 1.0
        f = 1.0 / (x * x)
        return r - f * (1.0 + 1.0 / x + f * (0.5 + f * (-1.0 / 6 + f * (1.0 / 6 + f * (-3.0 / 10 + f * (5.0 / 6))))))
    while x < 10.0:
        r += 6.0 / (x * x * x * x)
        x += 1.0
    f = 1.0 / (x * x)
    return r + (1.0 / x) * f * (2.0 + 3.0 / x + f * (2.0 + f * (-1.0 + f * (4.0 / 3 + f * (-3.0 + f * 10.0)))))
