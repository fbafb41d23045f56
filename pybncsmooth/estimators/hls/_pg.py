r"""Polya-Gamma draws, compiled (numba's generator, seeded per thread, or a xoshiro256**
state of :mod:`._rng` given to :func:`pg_draw_with`).

:math:`\omega \sim \mathrm{PG}(b, z)` for a whole number :math:`b \ge 0`:

* :math:`b \le` ``EXACT_MAX``: the sum of :math:`b` draws of :math:`\mathrm{PG}(1, z)`,
  each by Devroye's exact alternating-series method as Polson, Scott and Windle (2013,
  Sec. 4 and their algorithm for :math:`J^*(1, z/2)`) give it:
  :math:`\mathrm{PG}(1, z) = J^*(1, |z|/2) / 4`, the proposal a mixture of an exponential
  beyond the truncation point :math:`t = 0.64` and an inverse Gaussian truncated to
  :math:`(0, t)`, accepted by the partial sums of the series :math:`a_n(x)`;
* beyond, the series that defines the distribution (their eq. 1),

  .. math:: \omega = \frac{1}{2\pi^2} \sum_{k \ge 1} \frac{g_k}{(k - 1/2)^2 + z^2 / (4\pi^2)},
            \qquad g_k \sim \mathrm{Gamma}(b, 1),

  its first ``SERIES_TERMS`` terms drawn and the rest replaced by a normal with the
  rest's exact mean and variance (the total's are

  .. math:: E\,\omega = \frac{b}{2z} \tanh\frac{z}{2}, \qquad
            \operatorname{Var}\omega = \frac{b}{4 z^3} \frac{\sinh z - z}{\cosh^2 (z/2)},

  :math:`b/4` and :math:`b/24` at :math:`z = 0`): the first two moments are exact, the
  rest carries about :math:`10^{-4}` of the variance, and a draw costs the same for
  every :math:`b` (the exact sum costs :math:`b` draws).
"""

from __future__ import annotations

import math

import numpy as np
from ..._jit import njit

from .. import _rng

__all__ = ["pg_draw", "pg_draw_with", "pg_moments", "seed_numba", "EXACT_MAX", "SERIES_TERMS"]

_T = 0.64  # the truncation point of the proposal
_PI2_8 = math.pi * math.pi / 8.0
#: largest b drawn as a sum of b exact PG(1, z) draws; the truncated series beyond
EXACT_MAX = 2
#: terms of the series drawn (the rest: a normal with its exact mean and variance)
SERIES_TERMS = 6


@njit(cache=True)
def seed_numba(seed):  # pragma: no cover - compiled
    """Seed numba's generator of the calling thread."""
    np.random.seed(seed)


@njit(nogil=True, inline="always")
def _uniform(s):  # pragma: no cover - compiled
    return np.random.random() if s.shape[0] == 0 else _rng.uniform(s)


@njit(nogil=True, inline="always")
def _exponential(s):  # pragma: no cover - compiled
    return np.random.exponential() if s.shape[0] == 0 else -math.log(1.0 - _rng.uniform(s))


@njit(nogil=True, inline="always")
def _normal(s):  # pragma: no cover - compiled
    return np.random.standard_normal() if s.shape[0] == 0 else _rng.normal(s)


@njit(nogil=True, inline="always")
def _gamma(s, b):  # pragma: no cover - compiled
    return np.random.gamma(b) if s.shape[0] == 0 else _rng.gamma(s, b)


@njit(cache=True, nogil=True)
def _log_phi(x):  # pragma: no cover - compiled
    """log of the standard normal CDF."""
    if x > -5.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    # the asymptotic series in the far left tail (erfc underflows past -37)
    x2 = x * x
    return -0.5 * x2 - math.log(-x) - 0.5 * math.log(2.0 * math.pi) + math.log1p(-1.0 / x2 + 3.0 / (x2 * x2))


@njit(cache=True, nogil=True)
def _a(n, x):  # pragma: no cover - compiled
    """The n-th term of the series of the J*(1, 0) density at x (the piece for x <= t or x > t)."""
    k = (n + 0.5) * math.pi
    if x > _T:
        return k * math.exp(-0.5 * k * k * x)
    if x <= 0.0:
        return 0.0
    return math.exp(-1.5 * (math.log(0.5 * math.pi) + math.log(x)) + math.log(k) - 2.0 * (n + 0.5) ** 2 / x)


@njit(cache=True, nogil=True)
def _exponential_mass(c):  # pragma: no cover - compiled
    """The proposal's probability of the exponential piece (beyond t), for J*(1, c)."""
    fz = _PI2_8 + 0.5 * c * c
    rt = math.sqrt(1.0 / _T)
    b = rt * (_T * c - 1.0)
    a = -rt * (_T * c + 1.0)
    x0 = math.log(fz) + fz * _T
    q_over_p = 4.0 / math.pi * (math.exp(x0 - c + _log_phi(b)) + math.exp(x0 + c + _log_phi(a)))
    return 1.0 / (1.0 + q_over_p)


@njit(cache=True, nogil=True)
def _truncated_inverse_gaussian(c, s):  # pragma: no cover - compiled
    """An inverse Gaussian IG(1/c, 1) draw truncated to (0, t)."""
    if c < 1.0 / _T:  # mean beyond t: a truncated Levy proposal, accepted with exp(-c^2 x / 2)
        while True:
            e1 = _exponential(s)
            e2 = _exponential(s)
            while e1 * e1 > 2.0 * e2 / _T:
                e1 = _exponential(s)
                e2 = _exponential(s)
            x = 1.0 + e1 * _T
            x = _T / (x * x)
            if _uniform(s) <= math.exp(-0.5 * c * c * x):
                return x
    mu = 1.0 / c
    while True:  # the inverse Gaussian by Michael, Schucany and Haas, until below t
        y = _normal(s)
        y *= y
        my = mu * y
        x = mu + 0.5 * mu * my - 0.5 * mu * math.sqrt(4.0 * my + my * my)
        if _uniform(s) > mu / (mu + x):
            x = mu * mu / x
        if x < _T:
            return x


@njit(cache=True, nogil=True)
def _pg1(z, s):  # pragma: no cover - compiled
    """One exact PG(1, z) draw."""
    c = 0.5 * abs(z)
    fz = _PI2_8 + 0.5 * c * c
    p_exp = _exponential_mass(c)
    while True:
        if _uniform(s) < p_exp:
            x = _T + _exponential(s) / fz
        else:
            x = _truncated_inverse_gaussian(c, s)
        sn = _a(0, x)
        y = _uniform(s) * sn
        n = 0
        while True:
            n += 1
            if n % 2 == 1:
                sn -= _a(n, x)
                if y <= sn:
                    return 0.25 * x
            else:
                sn += _a(n, x)
                if y > sn:
                    break


@njit(cache=True, nogil=True)
def pg_moments(b, z):  # pragma: no cover - compiled
    """Mean and variance of PG(b, z)."""
    z = abs(z)
    if z < 1e-4:  # the series' first terms
        z2 = z * z
        return b * (0.25 - z2 / 48.0), b * (1.0 / 24.0 - z2 / 240.0)
    mean = b / (2.0 * z) * math.tanh(0.5 * z)
    ch = math.cosh(0.5 * z)
    var = b / (4.0 * z * z * z) * (math.sinh(z) - z) / (ch * ch)
    return mean, var


@njit(cache=True, nogil=True)
def _pg_series(b, z, s):  # pragma: no cover - compiled
    """PG(b, z) from its gamma series: ``SERIES_TERMS`` terms drawn, the rest a normal."""
    c = z * z / (4.0 * math.pi * math.pi)
    head = 0.0
    head_mean = 0.0
    head_var = 0.0
    scale = 1.0 / (2.0 * math.pi * math.pi)
    for k in range(1, SERIES_TERMS + 1):
        w = scale / ((k - 0.5) ** 2 + c)
        head += w * _gamma(s, b)
        head_mean += w * b
        head_var += w * w * b
    mean, var = pg_moments(b, z)
    rest_mean = max(mean - head_mean, 0.0)
    rest_sd = math.sqrt(max(var - head_var, 0.0))
    return head + max(rest_mean + rest_sd * _normal(s), 0.0)


@njit(cache=True, nogil=True)
def pg_draw_with(b, z, s):  # pragma: no cover - compiled
    """One PG(b, z) draw for a whole number ``b >= 0`` (0 for ``b = 0``), its random
    numbers from the xoshiro256** state ``s`` (an empty array: numba's generator)."""
    nb = int(b)
    if nb <= 0:
        return 0.0
    if nb <= EXACT_MAX:
        out = 0.0
        for _ in range(nb):
            out += _pg1(z, s)
        return out
    return _pg_series(float(nb), z, s)


@njit(cache=True, nogil=True)
def pg_draw(b, z):  # pragma: no cover - compiled
    """One PG(b, z) draw for a whole number ``b >= 0`` (0 for ``b = 0``), from numba's
    generator."""
    return pg_draw_with(b, z, np.zeros(0, dtype=np.uint64))
