"""Compiled variational inference for the hierarchical Multinomial-Dirichlet model.

One problem is a count matrix ``N`` with ``R`` rows (the states ``x`` of the
variable whose distribution is shared) and ``J`` columns (the conditioning
states ``y``: parent configurations of one CPT, or domains of a pooled joint
table), with the model of Azzimonti et al. 2019, eq. (5)::

    alpha ~ s * Dirichlet(alpha0),   theta_y | alpha ~ Dirichlet(alpha),   N[:, y] ~ Mult(theta_y)

and the factorised approximation (eq. 12) ``q(theta_y) = Dir(nu[:, y])``,
``q(alpha / s) = Dir(tau * kappa)``.  The variational parameters maximise the
bound L~ of Sec. 3.1 / Appendix B.1 by coordinate ascent: the closed-form
``nu = s kappa + N`` (eq. 14), a Newton iteration on ``log tau`` (App. B.3.1,
eq. B.4) and a constrained Newton iteration on ``kappa`` with a diagonal
Hessian and a backtracking line search (App. B.3.2).

Two drivers share the pieces:

* :func:`vi_bnlearn` replays bnlearn's ``hdir`` scheme exactly (starting values,
  update order, restarts, line search and the relative-change stopping rules with
  ``eps = sqrt(machine epsilon)``), so that its tables are reproduced to 1e-7;
* :func:`vi_converge` runs the same updates, warm-started and safeguarded so that
  the bound never decreases, until the bound and ``kappa`` stop moving: the
  paper's fixed point.

Notation: ``D[x] = sum_y psi(nu[x, y])``,
``A[x] = alpha0[x] - tau kappa[x] + J (1 - s kappa[x])``.
"""

from __future__ import annotations

import math

import numpy as np
from ..._jit import njit

from .._special import digamma, polygamma

__all__ = ["vi_bnlearn", "vi_converge", "evidence_bound_newton", "vi_newton_sparse", "profiled_bound", "vi_converge_sparse", "outer_bound", "outer_bound_sparse", "EPS"]

#: sqrt of the double machine epsilon (R's ``sqrt(.Machine$double.eps)``)
EPS = 1.4901161193847656e-08
_KAPPA_FLOOR = 1e-10
_NAN = np.nan

# warning flags (bit mask) returned by the drivers
W_TAU_RESTART = 1
W_TAU_CAP = 2
W_KAPPA_CAP = 4
W_INNER_CAP = 8
W_OUTER_CAP = 16


@njit(cache=True, nogil=True)
def _coupling(nu, D):  # pragma: no cover - compiled
    """``D[x] = sum_y psi(nu[x, y])``."""
    R, J = nu.shape
    for x in range(R):
        acc = 0.0
        for y in range(J):
            acc += digamma(nu[x, y])
        D[x] = acc


@njit(cache=True, nogil=True)
def bound_kt(kappa, tau, D, alpha0, s, J):  # pragma: no cover - compiled
    """The terms of L~ that involve ``kappa`` or ``tau`` (nu enters through ``D``)."""
    R = kappa.shape[0]
    ptau = digamma(tau)
    acc = 0.0
    for x in range(R):
        k = kappa[x]
        tk = tau * k
        A = alpha0[x] - tk + J * (1.0 - s * k)
        acc += (digamma(tk) - ptau) * A + math.lgamma(tk) - J * math.lgamma(s * k)
        acc += J * (s * k - 1.0) * math.log(k) + s * k * D[x]
    return acc - math.lgamma(tau) - s * J * (R - 1) / tau


@njit(cache=True, nogil=True)
def _bound_alpha_terms(kappa, tau, alpha0, s, J):  # pragma: no cover - compiled
    """The terms of the bound that do not involve the counts (``q(alpha)`` and the
    expectations under it), shared by :func:`outer_bound` and :func:`outer_bound_sparse`."""
    R = kappa.shape[0]
    acc = 0.0
    ptau = digamma(tau)
    for x in range(R):
        k = kappa[x]
        tk = tau * k
        ptk = digamma(tk)
        acc += -J * math.lgamma(s * k) + J * (s * k - 1.0) * (math.log(k) - ptk + ptau)
        acc += -math.lgamma(alpha0[x]) + math.lgamma(tk) + (alpha0[x] - tk) * (ptk - ptau)
    acc += J * math.lgamma(s) - s / tau * J * (R - 1) - math.lgamma(tau)
    return acc


@njit(cache=True, nogil=True)
def outer_bound(N, nu, kappa, tau, alpha0, s):  # pragma: no cover - compiled
    """The bound L~ of Appendix B.1 without its constant ``log Gamma(s0)``
    (the quantity whose relative change bnlearn's outer loop watches)."""
    R, J = N.shape
    acc = 0.0
    for y in range(J):
        col = 0.0
        for x in range(R):
            col += nu[x, y]
        pcol = digamma(col)
        for x in range(R):
            v = nu[x, y]
            acc += (N[x, y] + s * kappa[x] - v) * (digamma(v) - pcol) + math.lgamma(v)
        acc -= math.lgamma(col)
    return acc + _bound_alpha_terms(kappa, tau, alpha0, s, J)


@njit(cache=True, nogil=True)
def _tau_grad_hess(tau, kappa, alpha0, s, J):  # pragma: no cover - compiled
    R = kappa.shape[0]
    p1 = polygamma(1, tau)
    p2 = polygamma(2, tau)
    g = 0.0
    h = 0.0
    for x in range(R):
        k = kappa[x]
        tk = tau * k
        A = alpha0[x] - tk + J * (1.0 - s * k)
        q1 = polygamma(1, tk)
        g += (q1 * k - p1) * A
        h += (polygamma(2, tk) * k * k - p2) * A - (q1 * k - p1) * k
    c = s * J * (R - 1)
    g += c / (tau * tau)
    h -= 2.0 * c / (tau * tau * tau)
    return g, h


@njit(cache=True, nogil=True)
def newton_tau_bnlearn(kappa, alpha0, s, J, flags):  # pragma: no cover - compiled
    """bnlearn's Newton iteration on ``log tau``: starts at 100 on every call,
    restarts ten times higher if a step leaves the positive reals."""
    start = 100.0
    tau = start
    for _ in range(200):
        g, h = _tau_grad_hess(tau, kappa, alpha0, s, J)
        new = math.exp(math.log(tau) - g / (h * tau + g))
        if new < EPS or math.isnan(new):
            start *= 10.0
            tau = start
            flags[0] |= W_TAU_RESTART
        else:
            tau = new
        if abs(g) < EPS:
            return tau
    flags[0] |= W_TAU_CAP
    return tau


@njit(cache=True, nogil=True)
def _kappa_grad_hess(kappa, tau, D, alpha0, s, J, g, h):  # pragma: no cover - compiled
    R = kappa.shape[0]
    for x in range(R):
        k = kappa[x]
        tk = tau * k
        A = alpha0[x] - tk + J * (1.0 - s * k)
        q1 = polygamma(1, tk)
        g[x] = tau * q1 * A - s * J * (digamma(tk) + digamma(s * k) - math.log(k) - 1.0) - J / k + s * D[x]
        h[x] = (
            tau * tau * polygamma(2, tk) * A
            - tau * q1 * (tau + 2.0 * s * J)
            - s * s * J * polygamma(1, s * k)
            + s * J / k
            + J / (k * k)
        )


@njit(cache=True, nogil=True)
def newton_kappa(kappa, tau, D, alpha0, s, J, max_steps, flags, work):  # pragma: no cover - compiled
    """Constrained Newton iteration on ``kappa`` (sum kept at 1), in place.

    Step ``delta_x = (sum(g/h) / sum(1/h) - g_x) / h_x``; the step length starts
    at 1 (cut so that no entry falls below 1e-10) and shrinks by 0.9 until the
    Armijo condition ``L >= L_old + 0.4 t <g, delta>`` holds.  Stops when the
    Newton decrement ``-sum h delta^2`` is below ``2 eps`` or the step vanishes.
    Returns the bound at the final ``kappa``.
    """
    R = kappa.shape[0]
    g = work[0]
    h = work[1]
    delta = work[2]
    knew = work[3]
    L = bound_kt(kappa, tau, D, alpha0, s, J)
    converged = False
    for _ in range(max_steps):
        L_old = L
        _kappa_grad_hess(kappa, tau, D, alpha0, s, J, g, h)
        sgh = 0.0
        sih = 0.0
        for x in range(R):
            sgh += g[x] / h[x]
            sih += 1.0 / h[x]
        ratio = sgh / sih
        dec = 0.0
        inc = 0.0
        t = 1.0
        for x in range(R):
            d = (ratio - g[x]) / h[x]
            delta[x] = d
            dec -= h[x] * d * d
            inc += g[x] * d
            if d < 0.0:
                lim = (kappa[x] - _KAPPA_FLOOR) / (-d)
                if lim < t:
                    t = lim
        for x in range(R):
            knew[x] = kappa[x]
        while L < L_old + 0.4 * t * inc and t > EPS:
            for x in range(R):
                knew[x] = kappa[x] + t * delta[x]
            L = bound_kt(knew, tau, D, alpha0, s, J)
            t *= 0.9
        for x in range(R):
            kappa[x] = knew[x]
        if dec < 2.0 * EPS or t < EPS:
            converged = True
            break
    if not converged:
        flags[0] |= W_KAPPA_CAP
    return L


@njit(cache=True, nogil=True)
def vi_bnlearn(N, alpha0, s, flags):  # pragma: no cover - compiled
    """bnlearn's ``hdir`` iteration on one count matrix ``N`` (R x J).

    Returns ``(nu, kappa, tau, n_outer)``.  ``flags[0]`` collects the warning bits
    (a loop at its cap of 200, a tau restart), as bnlearn's R warnings.
    """
    R, J = N.shape
    nu = np.full((R, J), 1.0 / R)
    kappa = np.full(R, 1.0 / R)
    D = np.empty(R)
    work = np.empty((4, R))
    tau = 100.0
    b_prev = 0.0
    n_outer = 0
    done = False
    for outer in range(200):
        n_outer = outer + 1
        _coupling(nu, D)
        bkt_prev = 0.0
        inner_done = False
        for inner in range(200):
            tau = newton_tau_bnlearn(kappa, alpha0, s, J, flags)
            for x in range(R):
                kappa[x] = 1.0 / R
            newton_kappa(kappa, tau, D, alpha0, s, J, 200, flags, work)
            b = bound_kt(kappa, tau, D, alpha0, s, J)
            if inner > 0 and abs(b - bkt_prev) < EPS * abs(bkt_prev):
                inner_done = True
                break
            bkt_prev = b
        if not inner_done:
            flags[0] |= W_INNER_CAP
        for x in range(R):
            if kappa[x] < EPS:
                kappa[x] = EPS
        for x in range(R):
            sk = s * kappa[x]
            for y in range(J):
                nu[x, y] = sk + N[x, y]
        b = outer_bound(N, nu, kappa, tau, alpha0, s)
        if b_prev == 0.0:
            b_prev = 1e-10
        if abs(b - b_prev) < EPS * abs(b_prev):
            done = True
            break
        b_prev = b
    if not done:
        flags[0] |= W_OUTER_CAP
    return nu, kappa, tau, n_outer


@njit(cache=True, nogil=True)
def _newton_tau_safe(tau, kappa, D, alpha0, s, J, tol, flags):  # pragma: no cover - compiled
    """Newton on ``log tau`` from a warm start, each step halved until the bound
    does not decrease (so coordinate ascent stays monotone)."""
    L = bound_kt(kappa, tau, D, alpha0, s, J)
    for _ in range(200):
        g, h = _tau_grad_hess(tau, kappa, alpha0, s, J)
        hl = (h * tau + g) * tau  # second derivative in log tau
        gl = g * tau
        if hl < 0.0:
            step = -gl / hl
        else:  # not concave here: a gradient step
            step = 1.0 if gl > 0.0 else -1.0
        if step > 5.0:
            step = 5.0
        elif step < -5.0:
            step = -5.0
        accepted = False
        for _ in range(60):
            cand = tau * math.exp(step)
            if cand > 0.0 and math.isfinite(cand):
                Lc = bound_kt(kappa, cand, D, alpha0, s, J)
                if Lc >= L:
                    accepted = True
                    break
            step *= 0.5
        if not accepted:
            return tau, L
        done = abs(step) < tol
        tau = cand
        L = Lc
        if done:
            return tau, L
    flags[0] |= W_TAU_CAP
    return tau, L


@njit(cache=True, nogil=True)
def _inner_loop(kappa, tau, D, alpha0, s, J, tol, inner_flags, work):  # pragma: no cover - compiled
    """One outer iteration's optimisation of ``(tau, kappa)`` given ``D`` (Newton on
    each in turn until the bound's relative change is below ``tol``), ``kappa`` then
    renormalised (the line search keeps it >= 1e-10; this removes rounding drift)."""
    R = kappa.shape[0]
    bkt_prev = bound_kt(kappa, tau, D, alpha0, s, J)
    for _ in range(200):
        tau, b = _newton_tau_safe(tau, kappa, D, alpha0, s, J, tol, inner_flags)
        b = newton_kappa(kappa, tau, D, alpha0, s, J, 200, inner_flags, work)
        if abs(b - bkt_prev) <= tol * abs(bkt_prev):
            break
        bkt_prev = b
    tot = 0.0
    for x in range(R):
        tot += kappa[x]
    for x in range(R):
        kappa[x] /= tot
    return tau


@njit(cache=True, nogil=True)
def _largest_move(kappa, kold):  # pragma: no cover - compiled
    """The largest relative change of an entry of ``kappa``."""
    kmove = 0.0
    for x in range(kappa.shape[0]):
        m = abs(kappa[x] - kold[x]) / kappa[x]
        if m > kmove:
            kmove = m
    return kmove


@njit(cache=True, nogil=True)
def vi_converge(N, alpha0, s, kappa0, tol, max_iter, trace, flags):  # pragma: no cover - compiled
    """Coordinate ascent to the fixed point of the bound (Azzimonti et al. 2019, Algorithm 1).

    Starts from ``kappa0`` (a distribution over the rows) and ``nu = s kappa0 + N``;
    each outer iteration optimises ``(tau, kappa)`` given ``nu`` (Newton, warm
    started, inner loop to relative change ``tol``), then sets ``nu = s kappa + N``.
    Stops when the relative change of the bound is below ``tol`` and no entry of
    ``kappa`` moved by more than ``tol`` relative, or after ``max_iter``
    outer iterations.  ``trace[k]`` receives the bound after iteration ``k``.
    Returns ``(nu, kappa, tau, n_outer, converged)``.
    """
    R, J = N.shape
    kappa = kappa0.copy()
    nu = np.empty((R, J))
    for x in range(R):
        for y in range(J):
            nu[x, y] = s * kappa[x] + N[x, y]
    D = np.empty(R)
    work = np.empty((4, R))
    kold = np.empty(R)
    tau = 1.0
    for x in range(R):
        tau += alpha0[x]
    b_prev = outer_bound(N, nu, kappa, tau, alpha0, s)
    n_outer = 0
    converged = False
    ktol = tol
    # the inner Newton loops may stop at their caps near the fixed point (rounding);
    # only the outer loop's convergence is reported in this mode
    inner_flags = np.zeros(1, dtype=np.int64)
    for outer in range(max_iter):
        n_outer = outer + 1
        _coupling(nu, D)
        for x in range(R):
            kold[x] = kappa[x]
        tau = _inner_loop(kappa, tau, D, alpha0, s, J, tol, inner_flags, work)
        for x in range(R):
            sk = s * kappa[x]
            for y in range(J):
                nu[x, y] = sk + N[x, y]
        b = outer_bound(N, nu, kappa, tau, alpha0, s)
        if outer < trace.shape[0]:
            trace[outer] = b
        kmove = _largest_move(kappa, kold)
        if abs(b - b_prev) <= tol * abs(b_prev) and kmove <= ktol:
            converged = True
            break
        b_prev = b
    if not converged:
        flags[0] |= W_OUTER_CAP
    return nu, kappa, tau, n_outer, converged


# ----------------------------------------------------------------------------- sparse columns
#
# With nu = s kappa + N (the closed form every outer iteration restores), a column's cells
# without counts all hold nu = s kappa[x]: the sums over the J columns are
# (J - nnz[x]) f(s kappa[x]) plus one term per non-zero count, so a problem with many
# columns (domains) and few counts in each costs O(R + nnz) per iteration instead of
# O(R J), in memory as well as in time.  ``xptr``/``vals``: the non-zero counts of each
# row x in ``vals[xptr[x]:xptr[x + 1]]`` (their columns do not matter here);
# ``colsum[y]``: the column totals n_y.


@njit(cache=True, nogil=True)
def coupling_sparse(kappa, s, J, xptr, vals, D):  # pragma: no cover - compiled
    """``D[x] = sum_y psi(s kappa[x] + N[x, y])`` from the non-zero counts."""
    R = kappa.shape[0]
    for x in range(R):
        sk = s * kappa[x]
        lo = xptr[x]
        hi = xptr[x + 1]
        acc = (J - (hi - lo)) * digamma(sk)
        for e in range(lo, hi):
            acc += digamma(sk + vals[e])
        D[x] = acc


@njit(cache=True, nogil=True)
def outer_bound_sparse(xptr, vals, colsum, kappa, tau, alpha0, s):  # pragma: no cover - compiled
    """:func:`outer_bound` at ``nu = s kappa + N`` from the non-zero counts."""
    R = kappa.shape[0]
    J = colsum.shape[0]
    acc = 0.0
    ktot = 0.0
    for x in range(R):
        ktot += kappa[x]
        sk = s * kappa[x]
        lo = xptr[x]
        hi = xptr[x + 1]
        acc += (J - (hi - lo)) * math.lgamma(sk)
        for e in range(lo, hi):
            acc += math.lgamma(sk + vals[e])
    for y in range(J):
        acc -= math.lgamma(s * ktot + colsum[y])
    return acc + _bound_alpha_terms(kappa, tau, alpha0, s, J)


@njit(cache=True, nogil=True)
def vi_converge_sparse(xptr, vals, colsum, alpha0, s, kappa0, tol, max_iter, trace, flags):  # pragma: no cover
    """:func:`vi_converge` on a count matrix given by its non-zero counts (see above);
    ``nu = s kappa + N`` is implicit.  Returns ``(kappa, tau, n_outer, converged)``."""
    R = kappa0.shape[0]
    J = colsum.shape[0]
    kappa = kappa0.copy()
    D = np.empty(R)
    work = np.empty((4, R))
    kold = np.empty(R)
    tau = 1.0
    for x in range(R):
        tau += alpha0[x]
    b_prev = outer_bound_sparse(xptr, vals, colsum, kappa, tau, alpha0, s)
    n_outer = 0
    converged = False
    inner_flags = np.zeros(1, dtype=np.int64)
    for outer in range(max_iter):
        n_outer = outer + 1
        coupling_sparse(kappa, s, J, xptr, vals, D)
        for x in range(R):
            kold[x] = kappa[x]
        tau = _inner_loop(kappa, tau, D, alpha0, s, J, tol, inner_flags, work)
        b = outer_bound_sparse(xptr, vals, colsum, kappa, tau, alpha0, s)
        if outer < trace.shape[0]:
            trace[outer] = b
        kmove = _largest_move(kappa, kold)
        if abs(b - b_prev) <= tol * abs(b_prev) and kmove <= tol:
            converged = True
            break
        b_prev = b
    if not converged:
        flags[0] |= W_OUTER_CAP
    return kappa, tau, n_outer, converged


# ----------------------------------------------------------------------------- the bound's maximum
#
# Given q(alpha), the optimal q(theta_y) is Dir(s kappa + N[:, y]) (eq. 14), so the bound at
# nu = s kappa + N is a function of (kappa, tau) alone, the profiled bound
#
#   F(kappa, tau) = sum_y log DirMult(N[:, y] | s kappa)
#                 + sum_x [ J (s k_x - 1)(log k_x - psi(tau k_x) + psi(tau)) + lgamma(tau k_x)
#                           + (alpha0_x - tau k_x)(psi(tau k_x) - psi(tau)) - lgamma(alpha0_x) ]
#                 - s J (R - 1) / tau - lgamma(tau) + lgamma(s0),
#
# (outer_bound_sparse at that nu, constants included), and the coordinate ascent's fixed point
# is its maximum over the simplex and tau > 0.  F is separable in kappa given tau, so its
# Hessian in (kappa, log tau) is a diagonal bordered by one row and column: a Newton step under
# the constraint sum(delta kappa) = 0 is closed form in O(R).  ``vi_newton_sparse`` takes such
# steps with a backtracking line search (F never decreases; a step where the model is not
# concave falls back to a diagonal ascent step), from the pooled frequencies; every point it
# visits gives a valid lower bound, and it stops when the Newton decrement (twice the predicted
# gain) is below ``tol`` nats, so the value is the maximum to about tol / 2.


#: counts up to this size shift lgamma / digamma / trigamma by their recurrences (a sum of
#: v terms) instead of calling them
_SHIFT_MAX = 16.0
_TAU_START = 2


@njit(cache=True, nogil=True)
def _lgamma_shift(a, v):  # pragma: no cover - compiled
    """``lgamma(a + v) - lgamma(a)`` (the product stays far from overflow while ``a < 1e4``)."""
    if v <= _SHIFT_MAX and v == math.floor(v) and a < 1e4:
        p = 1.0
        for i in range(int(v)):
            p *= a + i
        return math.log(p)
    return math.lgamma(a + v) - math.lgamma(a)


@njit(cache=True, nogil=True)
def _psi_shift(a, v):  # pragma: no cover - compiled
    """``(psi(a + v) - psi(a), psi'(a + v) - psi'(a))``."""
    if v <= _SHIFT_MAX and v == math.floor(v):
        d0 = 0.0
        d1 = 0.0
        for i in range(int(v)):
            w = 1.0 / (a + i)
            d0 += w
            d1 -= w * w
        return d0, d1
    return digamma(a + v) - digamma(a), polygamma(1, a + v) - polygamma(1, a)


@njit(cache=True, nogil=True)
def profiled_bound(xptr, vals, colsum, kappa, tau, alpha0, s, lg_const):  # pragma: no cover - compiled
    """The profiled bound ``F(kappa, tau)`` above of one problem given by its non-zero
    counts; ``lg_const`` holds the data's constant ``lgamma(s0) - sum_x lgamma(alpha0_x)
    - sum_y [lgamma(s + n_y) - lgamma(s)]``."""
    R = kappa.shape[0]
    J = colsum.shape[0]
    ptau = digamma(tau)
    acc = lg_const - s * J * (R - 1) / tau - math.lgamma(tau)
    for x in range(R):
        k = kappa[x]
        sk = s * k
        for e in range(xptr[x], xptr[x + 1]):
            acc += _lgamma_shift(sk, vals[e])
        tk = tau * k
        d = digamma(tk) - ptau
        acc += J * (sk - 1.0) * (math.log(k) - d) + math.lgamma(tk) + (alpha0[x] - tk) * d
    return acc


@njit(cache=True, nogil=True)
def _newton_direction(xptr, vals, J, kappa, tau, alpha0, s, work):  # pragma: no cover - compiled
    """The constrained Newton direction of F in ``(log kappa, log tau)``: ``work[0]``
    receives ``delta log kappa``; returns ``(delta log tau, predicted gain, concave)``,
    with a diagonal ascent direction where the quadratic model is not concave."""
    R = kappa.shape[0]
    g = work[1]
    h = work[2]
    c = work[3]
    dk = work[0]
    p0 = digamma(tau)
    p1 = polygamma(1, tau)
    p2 = polygamma(2, tau)
    cst = s * J * (R - 1)
    ft = cst / (tau * tau)
    ftt = -2.0 * cst / (tau * tau * tau)
    for x in range(R):
        k = kappa[x]
        sk = s * k
        tk = tau * k
        q0 = digamma(tk)
        q1 = polygamma(1, tk)
        q2 = polygamma(2, tk)
        A = alpha0[x] - tk + J * (1.0 - sk)
        gd = 0.0
        hd = 0.0
        for e in range(xptr[x], xptr[x + 1]):
            a, b = _psi_shift(sk, vals[e])
            gd += a
            hd += b
        g[x] = s * gd + J * s * (math.log(k) - q0 + p0) + J * s - J / k + tau * p0 + tau * q1 * A
        h[x] = s * s * hd + J * s / k + J / (k * k) + tau * tau * q2 * A - tau * q1 * (tau + 2.0 * J * s)
        c[x] = tau * (q1 * (A - J * sk - tk) + tk * q2 * A + J * s * p1 + p0 + tau * p1)
        ft += (k * q1 - p1) * A
        ftt += (k * k * q2 - p2) * A - k * (k * q1 - p1)
    gt = tau * ft
    ht = tau * tau * ftt + tau * ft
    # in l = log kappa: gradient kappa g, Hessian kappa^2 h + kappa (g - lambda) (the
    # Lagrangian's, lambda the multiplier's estimate sum kappa g), the constraint
    # sum kappa dl = 0 to first order
    lam0 = 0.0
    for x in range(R):
        lam0 += kappa[x] * g[x]
    concave = True
    for x in range(R):
        k = kappa[x]
        h[x] = k * k * h[x] + k * (g[x] - lam0)
        g[x] = k * g[x]
        c[x] = k * c[x]
        if not h[x] < 0.0:
            concave = False
    if concave:
        Saa = 0.0
        Sag = 0.0
        Sac = 0.0
        Scg = 0.0
        Scc = 0.0
        for x in range(R):
            ih = 1.0 / h[x]
            a = kappa[x]
            Saa += a * a * ih
            Sag += a * g[x] * ih
            Sac += a * c[x] * ih
            Scg += c[x] * g[x] * ih
            Scc += c[x] * c[x] * ih
        den = ht + Sac * Sac / Saa - Scc
        if den < 0.0:
            dt = (Scg - Sag * Sac / Saa - gt) / den
            lam = (Sag + dt * Sac) / Saa
            gain = gt * dt
            for x in range(R):
                dk[x] = (lam * kappa[x] - g[x] - c[x] * dt) / h[x]
                gain += g[x] * dk[x]
            # the model is concave: its gain is >= 0 but for rounding at the maximum
            return dt, max(gain, 0.0), True
    # not concave here: a diagonal ascent step (projected onto the constraint's plane)
    Saa = 0.0
    Sag = 0.0
    for x in range(R):
        hx = -abs(h[x]) - 1.0
        h[x] = hx
        Saa += kappa[x] * kappa[x] / hx
        Sag += kappa[x] * g[x] / hx
    lam = Sag / Saa
    gain = 0.0
    for x in range(R):
        dk[x] = (lam * kappa[x] - g[x]) / h[x]
        gain += g[x] * dk[x]
    dt = gt / (abs(ht) + 1.0)
    gain += gt * dt
    return dt, gain, False


@njit(cache=True, nogil=True)
def vi_newton_sparse(xptr, vals, colsum, alpha0, s, kappa, tau, lg_const, tol, max_iter, work):  # pragma: no cover
    """Maximise the profiled bound F over ``(kappa, tau)`` from ``kappa`` (updated in place)
    and ``tau`` (``<= 0``: the root of the derivative in ``tau`` of F's large-``tau``
    approximation, given ``kappa``; ``R >= 2``): Newton steps in ``(log kappa, log tau)``,
    each backtracked until F increases (Armijo), until the predicted gain is below
    ``tol``, then one step more.  Returns ``(F, tau, iterations, converged)``."""
    R = kappa.shape[0]
    J = colsum.shape[0]
    if tau <= 0.0:
        # the root of dF/dtau when every tau kappa is large (psi'(z) ~ 1/z + 1/(2 z^2))
        acc = 0.0
        for x in range(R):
            acc += (1.0 / kappa[x] - 1.0) * (alpha0[x] + J * (1.0 - s * kappa[x]))
        tau = acc / (R - 1) + 2.0 * s * J
        if not tau > 1e-3:
            tau = 1e-3
    F = profiled_bound(xptr, vals, colsum, kappa, tau, alpha0, s, lg_const)
    knew = work[4]
    last = False
    for it in range(max_iter):
        dt, gain, concave = _newton_direction(xptr, vals, J, kappa, tau, alpha0, s, work)
        dk = work[0]
        if concave and gain < tol:
            last = True
        # steps in log kappa and log tau of at most 3
        step = 1.0
        for x in range(R):
            if abs(dk[x]) * step > 3.0:
                step = 3.0 / abs(dk[x])
        if abs(dt) * step > 3.0:
            step = 3.0 / abs(dt)
        accepted = False
        for _ in range(60):
            tot = 0.0
            for x in range(R):
                knew[x] = kappa[x] * math.exp(step * dk[x])
                tot += knew[x]
            for x in range(R):
                knew[x] /= tot
            tn = tau * math.exp(step * dt)
            Fn = profiled_bound(xptr, vals, colsum, knew, tn, alpha0, s, lg_const)
            if Fn >= F + 1e-4 * step * gain or (Fn >= F and (last or step * gain < 1e3 * tol)):
                accepted = True
                break
            if last:
                break
            step *= 0.5
        if accepted:
            for x in range(R):
                kappa[x] = knew[x]
            tau = tn
            F = Fn
        if last:
            return F, tau, it + 1, True
        if not accepted:
            return F, tau, it + 1, concave and gain < 1e3 * tol
    return F, tau, max_iter, False


@njit(cache=True, nogil=True)
def evidence_bound_newton(T, alpha0, s, tol, max_iter, flags):  # pragma: no cover - compiled
    """The sum over ``g`` of the
    maximum of the bound of the ``R x J_g`` count matrix ``T[g].T`` on its non-empty
    columns (:func:`vi_newton_sparse`, started at the pooled frequencies with ``alpha0``);
    a group without counts adds 0, and so does every group when ``R = 1``."""
    G, J, R = T.shape
    s0 = 0.0
    lga = 0.0
    for x in range(R):
        s0 += alpha0[x]
        lga += math.lgamma(alpha0[x])
    lgs = math.lgamma(s)
    const0 = math.lgamma(s0) - lga
    xptr = np.empty(R + 1, dtype=np.int64)
    vals = np.empty(J * R)
    colsum_all = np.empty(J)
    kappa = np.empty(R)
    work = np.empty((5, R))
    total = 0.0
    if R < 2:  # one level: every likelihood is 1
        return total
    for g in range(G):
        m = 0
        const = const0
        for y in range(J):
            tot = 0.0
            for x in range(R):
                tot += T[g, y, x]
            if tot > 0:
                colsum_all[m] = tot
                m += 1
                const -= math.lgamma(s + tot) - lgs
        if m == 0:
            continue
        ntot = 0.0
        e = 0
        for x in range(R):
            xptr[x] = e
            kx = alpha0[x]
            for y in range(J):
                v = T[g, y, x]
                if v > 0:
                    vals[e] = v
                    e += 1
                    kx += v
            kappa[x] = kx
            ntot += kx
        xptr[R] = e
        for x in range(R):
            kappa[x] /= ntot
        F, tau, it, conv = vi_newton_sparse(xptr, vals[:e], colsum_all[:m], alpha0, s, kappa, 0.0, const, tol,
                                            max_iter, work)
        if not conv:
            flags[0] |= W_OUTER_CAP
        total += F
    return total
