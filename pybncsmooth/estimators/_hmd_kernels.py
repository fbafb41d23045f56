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
from .._jit import njit

from ._special import digamma, polygamma

__all__ = ["vi_bnlearn", "vi_converge", "evidence_bound_groups", "vi_converge_sparse", "outer_bound", "outer_bound_sparse", "EPS"]

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


@njit(cache=True, nogil=True)
def evidence_bound_groups(T, alpha0, s, tol, max_iter, flags):  # pragma: no cover - compiled
    """The sum over ``g`` of the fixed-point bound (:func:`vi_converge`, constants
    included) of the ``R x J_g`` count matrix ``T[g].T`` restricted to its non-empty
    columns; a group without counts adds 0 (its marginal likelihood is 1).  ``T`` is
    ``(G, J, R)``: group, column, state."""
    G, J, R = T.shape
    s0 = 0.0
    for x in range(R):
        s0 += alpha0[x]
    const = math.lgamma(s0)
    trace = np.empty(0)
    total = 0.0
    for g in range(G):
        m = 0
        for y in range(J):
            tot = 0.0
            for x in range(R):
                tot += T[g, y, x]
            if tot > 0:
                m += 1
        if m == 0:
            continue
        N = np.empty((R, m))
        k0 = alpha0.copy()
        c = 0
        for y in range(J):
            tot = 0.0
            for x in range(R):
                tot += T[g, y, x]
            if tot > 0:
                for x in range(R):
                    N[x, c] = T[g, y, x]
                    k0[x] += T[g, y, x]
                c += 1
        ksum = 0.0
        for x in range(R):
            ksum += k0[x]
        for x in range(R):
            k0[x] /= ksum
        nu, kappa, tau, it, conv = vi_converge(N, alpha0, s, k0, tol, max_iter, trace, flags)
        total += outer_bound(N, nu, kappa, tau, alpha0, s) + const
    return total


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
