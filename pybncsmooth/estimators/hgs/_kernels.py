"""Compiled minimisation of HGS's leave-one-out loss over one context tree's weights.

With one weight per depth (``tying="level"``, a handful of weights) :func:`hgs_newton_level`
takes damped Newton steps on all of them at once (exact Hessian; damped until positive
definite; the step scaled as a whole and halved until the loss falls; stopped when no
free weight's derivative exceeds ``tol``).  With one weight per node, cyclic coordinate
descent in ``u = log alpha``: each weight in turn takes safeguarded
Newton steps on its own one-dimensional problem (exact first and second derivatives;
a gradient step where the curvature is not positive; halving until the loss decreases),
sweeps repeated until a sweep lowers the loss by less than ``tol`` (relative) or
``max_sweeps`` is reached.  After each sweep the whole step it made is extrapolated
(2, 4, 8 times while the loss keeps falling): where two weights trade off along a
valley, coordinate steps zigzag, and the extrapolation follows the valley.  A weight
moves the leaves below it only, a contiguous range of the tree's leaves (node tying) or
every leaf (level tying), so a sweep costs ``O(depth x leaves x classes)``.

Per leaf ``l`` and class ``k`` the kernel keeps the numerator ``A[l, k]`` and the
denominator ``D[l]`` of the leave-one-out estimate (eq. 46): ``theta = A / D``.
"""

from __future__ import annotations

import math

import numpy as np
from ..._jit import njit

__all__ = ["hgs_minimize", "hgs_loss", "hgs_newton_level"]

_U_MIN = -30.0
_U_MAX = 30.0


@njit(cache=True, nogil=True)
def _ell(theta, squared):  # pragma: no cover - compiled
    if squared:
        return (1.0 - theta) * (1.0 - theta)
    return -math.log(theta)


@njit(cache=True, nogil=True)
def _ell_derivs(theta, squared):  # pragma: no cover - compiled
    """First and second derivatives of the loss of one row in its LOO probability."""
    if squared:
        return -2.0 * (1.0 - theta), 2.0
    return -1.0 / theta, 1.0 / (theta * theta)


@njit(cache=True, nogil=True)
def hgs_loss(n, A, D, scale, squared):  # pragma: no cover - compiled
    """Scaled leave-one-out loss of the rows at every leaf (``n > 0``, ``D > 0``)."""
    tot = 0.0
    for l in range(n.shape[0]):
        if D[l] <= 0.0:
            continue
        for k in range(n.shape[1]):
            if n[l, k] > 0.0:
                tot += n[l, k] * _ell(A[l, k] / D[l], squared)
    return tot * scale


@njit(cache=True, nogil=True)
def _range_loss(n, A, D, lo, hi, j, theta, keep, delta, squared):  # pragma: no cover - compiled
    """Loss of leaves ``lo..hi`` with the weight of their depth-``j`` ancestor moved by
    ``delta`` (the leaves whose ancestor is kept)."""
    tot = 0.0
    for l in range(lo, hi):
        d = D[l] + (delta if keep[j, l] else 0.0)
        if d <= 0.0:
            continue
        for k in range(n.shape[1]):
            if n[l, k] > 0.0:
                a = A[l, k] + (delta * theta[j, l, k] if keep[j, l] else 0.0)
                th = a / d
                if th <= 0.0:
                    return np.inf
                tot += n[l, k] * _ell(th, squared)
    return tot


@njit(cache=True, nogil=True)
def _derivs(n, A, D, lo, hi, j, theta, keep, alpha, squared):  # pragma: no cover - compiled
    """First and second derivatives of the range's loss in ``u = log alpha``."""
    g1 = 0.0
    g2 = 0.0
    for l in range(lo, hi):
        if not keep[j, l] or D[l] <= 0.0:
            continue
        d = D[l]
        for k in range(n.shape[1]):
            if n[l, k] <= 0.0:
                continue
            th = A[l, k] / d
            dth = (theta[j, l, k] - th) / d  # d theta / d alpha
            d2th = -2.0 * dth / d
            l1, l2 = _ell_derivs(th, squared)
            g1 += n[l, k] * l1 * dth
            g2 += n[l, k] * (l2 * dth * dth + l1 * d2th)
    # chain rule to u: d/du = alpha d/dalpha, d2/du2 = alpha^2 d2/dalpha2 + alpha d/dalpha
    return alpha * g1, alpha * alpha * g2 + alpha * g1


@njit(cache=True, nogil=True)
def _update_weight(n, A, D, u, q, j, lo, hi, theta, keep, squared, newton_steps):  # pragma: no cover - compiled
    """Newton steps on weight ``q`` (depth ``j``, leaves ``lo..hi``); A and D updated."""
    for _ in range(newton_steps):
        alpha = math.exp(u[q])
        f1, f2 = _derivs(n, A, D, lo, hi, j, theta, keep, alpha, squared)
        if abs(f1) < 1e-12:
            return
        step = -f1 / f2 if f2 > 0.0 else -math.copysign(1.0, f1)
        step = min(max(step, -5.0), 5.0)
        base = _range_loss(n, A, D, lo, hi, j, theta, keep, 0.0, squared)
        moved = False
        for _h in range(30):
            new_u = min(max(u[q] + step, _U_MIN), _U_MAX)
            delta = math.exp(new_u) - alpha
            if new_u != u[q] and _range_loss(n, A, D, lo, hi, j, theta, keep, delta, squared) < base:
                for l in range(lo, hi):
                    if keep[j, l]:
                        D[l] += delta
                        for k in range(n.shape[1]):
                            A[l, k] += delta * theta[j, l, k]
                u[q] = new_u
                moved = True
                break
            step *= 0.5
        if not moved:
            return


@njit(cache=True, nogil=True)
def _rebuild(num0, den0, theta, keep, widx, u, A, D):  # pragma: no cover - compiled
    """``A`` and ``D`` for the weights ``exp(u)``."""
    for l in range(A.shape[0]):
        D[l] = den0[l]
        for k in range(A.shape[1]):
            A[l, k] = num0[l, k]
        for j in range(theta.shape[0]):
            if keep[j, l]:
                a = math.exp(u[widx[j, l]])
                D[l] += a
                for k in range(A.shape[1]):
                    A[l, k] += a * theta[j, l, k]


@njit(cache=True, nogil=True)
def hgs_minimize(
    n, num0, den0, A, D, u, widx, w_depth, w_lo, w_hi, theta, keep, scale, squared, tol, max_sweeps
):  # pragma: no cover - compiled
    """Coordinate descent on the weights ``u`` (log alpha, updated in place, with ``A``
    and ``D`` built for them).  Weight ``q`` is the depth-``w_depth[q]`` ancestor of the
    leaves ``w_lo[q]..w_hi[q]``; ``widx[j, l]``: the weight of leaf ``l``'s depth-``j``
    ancestor.  Returns the sweeps run and the final loss."""
    loss = hgs_loss(n, A, D, scale, squared)
    sweeps = 0
    A2 = np.empty_like(A)
    D2 = np.empty_like(D)
    while sweeps < max_sweeps:
        sweeps += 1
        u0 = u.copy()
        for q in range(u.shape[0]):
            _update_weight(n, A, D, u, q, w_depth[q], w_lo[q], w_hi[q], theta, keep, squared, 3)
        new = hgs_loss(n, A, D, scale, squared)
        # extrapolate the sweep's step while the loss falls
        step = u - u0
        best_t = 1.0
        t = 2.0
        while t <= 8.0:
            trial = np.minimum(np.maximum(u0 + t * step, _U_MIN), _U_MAX)
            _rebuild(num0, den0, theta, keep, widx, trial, A2, D2)
            f = hgs_loss(n, A2, D2, scale, squared)
            if f < new:
                new, best_t = f, t
                t *= 2.0
            else:
                break
        if best_t > 1.0:
            u[:] = np.minimum(np.maximum(u0 + best_t * step, _U_MIN), _U_MAX)
            _rebuild(num0, den0, theta, keep, widx, u, A, D)
        done = loss - new <= tol * max(abs(new), 1e-300)
        loss = new
        if done:
            break
    return sweeps, loss


@njit(cache=True, nogil=True)
def _level_den(den0, keep, a, l):  # pragma: no cover - compiled
    """``D[l]`` with one weight per depth, ``a[j]``."""
    den = den0[l]
    for j in range(a.shape[0]):
        if keep[j, l]:
            den += a[j]
    return den


@njit(cache=True, nogil=True)
def _level_num(num0, theta, keep, a, l, k):  # pragma: no cover - compiled
    """``A[l, k]`` with one weight per depth, ``a[j]``."""
    num = num0[l, k]
    for j in range(a.shape[0]):
        if keep[j, l]:
            num += a[j] * theta[j, l, k]
    return num


@njit(cache=True, nogil=True)
def _level_loss(n, num0, den0, theta, keep, u, squared):  # pragma: no cover - compiled
    """Loss (unscaled) with one weight per depth, ``exp(u[j])``."""
    tot = 0.0
    a = np.exp(u)
    for l in range(n.shape[0]):
        den = _level_den(den0, keep, a, l)
        if den <= 0.0:
            continue
        for k in range(n.shape[1]):
            if n[l, k] <= 0.0:
                continue
            th = _level_num(num0, theta, keep, a, l, k) / den
            if th <= 0.0:
                return np.inf
            tot += n[l, k] * _ell(th, squared)
    return tot


@njit(cache=True, nogil=True)
def hgs_newton_level(n, num0, den0, theta, keep, u, scale, squared, tol, max_iter):  # pragma: no cover - compiled
    """Damped Newton on the few weights of ``tying="level"`` (one per depth) jointly, with
    the exact Hessian in ``u = log alpha``: converges in a handful of iterations where
    coordinate steps crawl along valleys.  ``u`` is updated in place; returns the
    iterations and the final (scaled) loss."""
    d = theta.shape[0]
    loss = _level_loss(n, num0, den0, theta, keep, u, squared)
    it = 0
    g = np.zeros(d)
    H = np.zeros((d, d))
    dth = np.zeros(d)
    while it < max_iter:
        it += 1
        g[:] = 0.0
        H[:, :] = 0.0
        a = np.exp(u)
        for l in range(n.shape[0]):
            den = _level_den(den0, keep, a, l)
            if den <= 0.0:
                continue
            for k in range(n.shape[1]):
                if n[l, k] <= 0.0:
                    continue
                th = _level_num(num0, theta, keep, a, l, k) / den
                l1, l2 = _ell_derivs(th, squared)
                for j in range(d):
                    dth[j] = (theta[j, l, k] - th) / den if keep[j, l] else 0.0
                for i in range(d):
                    if not keep[i, l]:
                        continue
                    g[i] += n[l, k] * l1 * dth[i]
                    for j in range(d):
                        if not keep[j, l]:
                            continue
                        d2 = -(dth[i] + dth[j]) / den  # d2 theta / d alpha_i d alpha_j
                        H[i, j] += n[l, k] * (l2 * dth[i] * dth[j] + l1 * d2)
        # to u: H_u = diag(a) H diag(a) + diag(a g), g_u = a g
        for i in range(d):
            for j in range(d):
                H[i, j] *= a[i] * a[j]
            H[i, i] += a[i] * g[i]
            g[i] *= a[i]
        # damping until the system is positive definite (Cholesky succeeds)
        lam = 0.0
        step = np.zeros(d)
        for _t in range(60):
            M = H.copy()
            for i in range(d):
                M[i, i] += lam
            ok = True
            try:
                np.linalg.cholesky(M)
            except Exception:  # noqa: BLE001 - not positive definite
                ok = False
            if ok:
                step = -np.linalg.solve(M, g)
                break
            lam = 1e-8 if lam == 0.0 else lam * 10.0
        # converged: no weight's derivative is noticeable (a weight pinned at a bound
        # with the gradient pushing it out counts as settled)
        gmax = 0.0
        for i in range(d):
            pinned = (u[i] <= _U_MIN and g[i] > 0.0) or (u[i] >= _U_MAX and g[i] < 0.0)
            if not pinned:
                gmax = max(gmax, abs(g[i]))
        if gmax * scale < tol:
            break
        # at most 5 in any coordinate, scaled as a whole (clipping coordinates one by one
        # would turn the step away from a descent direction)
        big = 0.0
        for i in range(d):
            big = max(big, abs(step[i]))
        if big > 5.0:
            step *= 5.0 / big
        moved = False
        for _h in range(40):
            trial = np.minimum(np.maximum(u + step, _U_MIN), _U_MAX)
            f = _level_loss(n, num0, den0, theta, keep, trial, squared)
            if f < loss:
                u[:] = trial
                loss = f
                moved = True
                break
            step *= 0.5
        if not moved:
            break
    return it, loss * scale
