r"""Compiled likelihood of the back-off concentration (:mod:`~pybncsmooth.estimators.hmd.backoff`).

:func:`backoff_loglik` evaluates, at every point of a grid of :math:`\log t`, the
Dirichlet-multinomial log likelihood of each leaf's counts around the centre of its
level-``i`` node without that leaf (:func:`~pybncsmooth.estimators.hmd.backoff.backoff_concentration`):

.. math::
    \ell(t) = \sum_{y:\,N_y \ge 2} \Big[\log\Gamma(t) - \log\Gamma(t + N_y)
        + \sum_{x:\,n_{xy} > 0} \log\Gamma(t m_{xy} + n_{xy}) - \log\Gamma(t m_{xy})\Big],

:math:`m_{\cdot y} \propto \beta + \sum_{y' \in a(y),\, y' \ne y} e_{y'}(t)\,\hat\theta_{y'}`,
:math:`e_y(t) = t\,(\psi(t + N_y) - \psi(t))` the expected tables.  One pass over the
leaves a grid point, no temporaries: the NumPy form it replaces built ``(L, r)`` arrays
41 times a level and called SciPy's ``gammaln`` on them, the bulk of an ensemble's fit
(ESKDB-HDP on dna: about two thirds).  ``math.lgamma`` and the compiled digamma
(:mod:`._special`) agree with SciPy's to a few units in the last place, and a difference
of log-gammas whose arguments differ by a small count is a sum of logarithms (more
accurate: no cancellation at large ``t``); the sums run in another order, so the
likelihoods agree with the NumPy form's to its rounding: about 1e-13 relative where ``t``
is moderate, while at large ``t`` the NumPy form loses digits to the cancellation of
:math:`\log\Gamma(t) - \log\Gamma(t + N_y)` (terms of size :math:`t \log t`), where
the posterior weight is negligible on real data.  :func:`backoff_loglik_levels` does
every inner level of a tree in one call (the expected tables computed once).
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import njit
from .._special import digamma

__all__ = ["backoff_loglik", "backoff_loglik_levels"]

#: below this count the log-gamma differences are sums of logarithms
_SMALL = 8


@njit(cache=True, nogil=True)
def _lgamma_rise(a, n):  # pragma: no cover - compiled
    r""":math:`\log\Gamma(a + n) - \log\Gamma(a)` for a whole ``n >= 0``: the sum of
    :math:`\log(a + k)`, ``k < n``, for small ``n`` (no cancellation between two large
    log-gammas when ``a`` is large), else the difference of ``math.lgamma``."""
    if n < _SMALL:
        acc = 0.0
        k = 0.0
        while k < n:
            acc += math.log(a + k)
            k += 1.0
        return acc
    return math.lgamma(a + n) - math.lgamma(a)


@njit(cache=True, nogil=True)
def backoff_loglik_levels(leaves, rows, anc, n_nodes, means, prior, grid):  # pragma: no cover - compiled
    r"""``ll[i, g]``, the log likelihood above at ``t = exp(grid[g])`` for the level of
    ``anc[i]`` (each leaf's node among the ``n_nodes[i]`` nodes of that level):
    ``leaves`` ``(L, r)`` the leaves' counts, ``rows`` their totals, ``means`` ``(L, r)``
    the leaves' centres' ingredients :math:`\hat\theta_y`, ``prior`` ``(r,)`` a node's
    own :math:`\beta`.  The expected tables of a grid point are computed once for all
    the levels."""
    L, r = leaves.shape
    G = grid.shape[0]
    D = anc.shape[0]
    ll = np.zeros((D, G))
    big = 0
    for i in range(D):
        big = max(big, n_nodes[i])
    sums = np.zeros((big, r))
    e = np.zeros(L)
    rest = np.zeros(r)
    for g in range(G):
        t = math.exp(grid[g])
        dt = digamma(t)
        for y in range(L):
            e[y] = t * (digamma(t + rows[y]) - dt)
        for i in range(D):
            sums[: n_nodes[i], :] = 0.0
            for y in range(L):
                a = anc[i, y]
                ey = e[y]
                for x in range(r):
                    sums[a, x] += ey * means[y, x]
            acc = 0.0
            for y in range(L):
                if rows[y] < 2.0:
                    continue
                a = anc[i, y]
                ey = e[y]
                tot = 0.0
                for x in range(r):
                    v = sums[a, x] - ey * means[y, x] + prior[x]
                    rest[x] = v
                    tot += v
                acc -= _lgamma_rise(t, rows[y])
                for x in range(r):
                    n = leaves[y, x]
                    if n > 0.0:
                        m = rest[x] / tot
                        if m < 1e-300:
                            m = 1e-300
                        acc += _lgamma_rise(t * m, n)
            ll[i, g] = acc
    return ll


@njit(cache=True, nogil=True)
def backoff_loglik(leaves, rows, anc, n_nodes, means, prior, grid):  # pragma: no cover - compiled
    r"""``ll[g]``, the log likelihood above at ``t = exp(grid[g])`` for one level:
    ``anc`` each leaf's node among the ``n_nodes`` of the level (see
    :func:`backoff_loglik_levels`)."""
    nn = np.full(1, n_nodes, dtype=np.int64)
    return backoff_loglik_levels(leaves, rows, anc.reshape(1, -1), nn, means, prior, grid)[0]
