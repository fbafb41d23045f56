"""Compiled kernels of hierarchical linear smoothing (HLS, Cooper et al. 2025).

The context tree is flattened in level order (``parent[i] < i``; node 0 is the
root, which carries no coefficient: the design's all-ones column is dropped).
Every other node ``i`` has a coefficient row ``B[i]``; the linear predictor of a
node is the sum of the coefficients on its path, ``eta[i] = eta[parent[i]] + B[i]``.
Leaves are the nodes ``leaf0 ..`` with counts ``n[leaf, x]``.

Classes: with ``r >= 3`` child values, one coefficient per value (symmetric
softmax, ``K = r``); with two, one coefficient (the logit of the second value,
the first fixed at 0, ``K = 1``), as the authors' scikit-learn fit.

Everything the solvers need costs O(nodes x r): a top-down pass for the path sums
and a bottom-up pass for subtree sums (the design matrix is never formed).

* Ridge (``hls``): objective ``sum_leaves [N lse(eta) - n . eta] + tau/2 ||B||^2``,
  its gradient and Hessian-vector products; Newton's method whose exact step is
  computed by dynamic programming on the tree (O(nodes x K^3), no matrix formed;
  conjugate gradients instead when K > 64), with an Armijo line search, to
  ``max |gradient| <= gtol``.
* Bayesian ridge (``hls-bayes``): given Polya-Gamma weights, the coefficients of
  one class are a Gaussian Markov tree (``s_v = s_parent + beta_v``, observations
  at the leaves), sampled exactly by upward information filtering and downward
  sampling (O(nodes), no Cholesky).
"""

from __future__ import annotations

import math

import numpy as np
from ..._jit import njit

__all__ = ["ridge_newton", "newton_direction", "objective_grad", "hessp", "tree_gaussian_sample", "node_probs"]


@njit(cache=True, nogil=True, inline="always")
def _total(counts, j):  # pragma: no cover - compiled
    """Rows of leaf ``j``."""
    acc = 0.0
    for x in range(counts.shape[1]):
        acc += counts[j, x]
    return acc


@njit(cache=True, nogil=True)
def _max_abs(G):  # pragma: no cover - compiled
    """Largest |entry| of the coefficient rows below the root."""
    m = 0.0
    for i in range(1, G.shape[0]):
        for k in range(G.shape[1]):
            a = abs(G[i, k])
            if a > m:
                m = a
    return m


@njit(cache=True, nogil=True)
def _path_sums(B, parent, eta):  # pragma: no cover - compiled
    n, K = B.shape
    for k in range(K):
        eta[0, k] = 0.0
    for i in range(1, n):
        p = parent[i]
        for k in range(K):
            eta[i, k] = eta[p, k] + B[i, k]


@njit(cache=True, nogil=True)
def _softmax_row(e, K, r, out):  # pragma: no cover - compiled
    """Probabilities of the ``r`` child values from the free predictors ``e`` (length K);
    returns the log-sum-exp."""
    if K == r:
        m = e[0]
        for k in range(1, r):
            if e[k] > m:
                m = e[k]
        s = 0.0
        for k in range(r):
            out[k] = math.exp(e[k] - m)
            s += out[k]
        for k in range(r):
            out[k] /= s
        return m + math.log(s)
    # two values, the first fixed at 0
    a = e[0]
    m = a if a > 0.0 else 0.0
    s = math.exp(-m) + math.exp(a - m)
    out[0] = math.exp(-m) / s
    out[1] = math.exp(a - m) / s
    return m + math.log(s)


@njit(cache=True, nogil=True)
def objective_grad(B, parent, leaf0, counts, tau, eta, G, p):  # pragma: no cover - compiled
    """Objective value; ``G`` receives its gradient (row 0 zero), ``p`` the leaf
    probabilities (``(n_leaves, r)``)."""
    n, K = B.shape
    r = counts.shape[1]
    _path_sums(B, parent, eta)
    f = 0.0
    for i in range(n):
        for k in range(K):
            G[i, k] = 0.0
    for j in range(counts.shape[0]):
        i = leaf0 + j
        N = _total(counts, j)
        lse = _softmax_row(eta[i], K, r, p[j])
        f += N * lse
        if K == r:
            for k in range(r):
                f -= counts[j, k] * eta[i, k]
                G[i, k] = N * p[j, k] - counts[j, k]
        else:
            f -= counts[j, 1] * eta[i, 0]
            G[i, 0] = N * p[j, 1] - counts[j, 1]
    for i in range(n - 1, 0, -1):
        q = parent[i]
        if q > 0:
            for k in range(K):
                G[q, k] += G[i, k]
    pen = 0.0
    for i in range(1, n):
        for k in range(K):
            pen += B[i, k] * B[i, k]
            G[i, k] += tau * B[i, k]
    for k in range(K):
        G[0, k] = 0.0
    return f + 0.5 * tau * pen


@njit(cache=True, nogil=True)
def hessp(V, parent, leaf0, counts, p, tau, dn, out):  # pragma: no cover - compiled
    """``out = H V`` at the leaf probabilities ``p`` (``dn``: workspace like ``V``)."""
    n, K = V.shape
    r = counts.shape[1]
    _path_sums(V, parent, dn)
    for i in range(n):
        for k in range(K):
            out[i, k] = 0.0
    for j in range(counts.shape[0]):
        i = leaf0 + j
        N = _total(counts, j)
        if K == r:
            dot = 0.0
            for k in range(r):
                dot += p[j, k] * dn[i, k]
            for k in range(r):
                out[i, k] = N * p[j, k] * (dn[i, k] - dot)
        else:
            out[i, 0] = N * p[j, 1] * p[j, 0] * dn[i, 0]
    for i in range(n - 1, 0, -1):
        q = parent[i]
        if q > 0:
            for k in range(K):
                out[q, k] += out[i, k]
    for k in range(K):
        out[0, k] = 0.0
    for i in range(1, n):
        for k in range(K):
            out[i, k] += tau * V[i, k]


@njit(cache=True, nogil=True)
def _hess_diag(parent, leaf0, counts, p, tau, K, D):  # pragma: no cover - compiled
    n = D.shape[0]
    r = counts.shape[1]
    for i in range(n):
        for k in range(K):
            D[i, k] = 0.0
    for j in range(counts.shape[0]):
        i = leaf0 + j
        N = _total(counts, j)
        if K == r:
            for k in range(r):
                D[i, k] = N * p[j, k] * (1.0 - p[j, k])
        else:
            D[i, 0] = N * p[j, 1] * p[j, 0]
    for i in range(n - 1, 0, -1):
        q = parent[i]
        if q > 0:
            for k in range(K):
                D[q, k] += D[i, k]
    for i in range(n):
        for k in range(K):
            D[i, k] += tau


@njit(cache=True, nogil=True)
def _dot(a, b):  # pragma: no cover - compiled
    s = 0.0
    n, K = a.shape
    for i in range(1, n):
        for k in range(K):
            s += a[i, k] * b[i, k]
    return s


@njit(cache=True, nogil=True)
def _spd_inverse(M, out, L):  # pragma: no cover - compiled
    """Inverse of a small symmetric positive definite matrix (Cholesky)."""
    K = M.shape[0]
    for i in range(K):
        for j in range(i + 1):
            acc = M[i, j]
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            if i == j:
                L[i, i] = math.sqrt(acc)
            else:
                L[i, j] = acc / L[j, j]
    # out = L^-T L^-1, column by column
    for c in range(K):
        # solve L y = e_c
        y = np.zeros(K)
        for i in range(K):
            acc = 1.0 if i == c else 0.0
            for k in range(i):
                acc -= L[i, k] * y[k]
            y[i] = acc / L[i, i]
        # solve L^T x = y
        for i in range(K - 1, -1, -1):
            acc = y[i]
            for k in range(i + 1, K):
                acc -= L[k, i] * out[k, c]
            out[i, c] = acc / L[i, i]


@njit(cache=True, nogil=True)
def newton_direction(parent, leaf0, counts, p, tau, G, A, b, Minv, d):  # pragma: no cover - compiled
    """The exact Newton step ``d = -H^{-1} G`` by dynamic programming on the tree.

    With ``s_v`` the path sum of the step at node ``v``, the quadratic model is
    ``sum_leaves s^T W s / 2 + sum_v (tau/2 |d_v|^2 + G_v . d_v)`` (``W``: the leaf's
    multinomial Hessian).  Upward, each subtree's minimum given ``s`` at its top is
    ``s^T A s / 2 + b . s``; a child contributes ``A' = tau A M^{-1}``,
    ``b' = b - A M^{-1} (b + G)`` with ``M = tau I + A``.  Downward,
    ``d_v = -M_v^{-1} (A_v s_parent + b_v + G_v)``.  O(nodes x K^3).
    """
    n, K = G.shape
    r = counts.shape[1]
    for i in range(n):
        for a in range(K):
            b[i, a] = 0.0
            for c in range(K):
                A[i, a, c] = 0.0
    for j in range(counts.shape[0]):
        i = leaf0 + j
        N = _total(counts, j)
        if K == r:
            for a in range(K):
                for c in range(K):
                    A[i, a, c] = -N * p[j, a] * p[j, c]
                A[i, a, a] += N * p[j, a]
        else:
            A[i, 0, 0] = N * p[j, 0] * p[j, 1]
    M = np.empty((K, K))
    L = np.zeros((K, K))
    AM = np.empty((K, K))
    v = np.empty(K)
    for i in range(n - 1, 0, -1):
        for a in range(K):
            for c in range(K):
                M[a, c] = A[i, a, c]
            M[a, a] += tau
        _spd_inverse(M, Minv[i], L)
        q = parent[i]
        # AM = A M^-1 (symmetric: A and M commute)
        for a in range(K):
            for c in range(K):
                acc = 0.0
                for k in range(K):
                    acc += A[i, a, k] * Minv[i, k, c]
                AM[a, c] = acc
        for a in range(K):
            v[a] = b[i, a] + G[i, a]
        for a in range(K):
            acc = 0.0
            for c in range(K):
                acc += AM[a, c] * v[c]
                A[q, a, c] += tau * AM[a, c]
            b[q, a] += b[i, a] - acc
    # downward
    s = np.zeros((n, K))
    for i in range(1, n):
        q = parent[i]
        for a in range(K):
            acc = b[i, a] + G[i, a]
            for c in range(K):
                acc += A[i, a, c] * s[q, c]
            v[a] = acc
        for a in range(K):
            acc = 0.0
            for c in range(K):
                acc -= Minv[i, a, c] * v[c]
            d[i, a] = acc
            s[i, a] = s[q, a] + acc
    for a in range(K):
        d[0, a] = 0.0


#: above this many coefficients per node the exact step (K x K matrices per node) gives
#: way to conjugate gradients (O(nodes K) memory)
DP_MAX_K = 64


@njit(cache=True, nogil=True)
def cg_direction(parent, leaf0, counts, p, tau, G, D, d, res, z, q, Hq, dn):  # pragma: no cover - compiled
    """An inexact Newton step by conjugate gradients with the Hessian diagonal as
    preconditioner (for many child values, where the exact step is too large)."""
    n, K = G.shape
    _hess_diag(parent, leaf0, counts, p, tau, K, D)
    gnorm = math.sqrt(_dot(G, G))
    forcing = min(0.5, math.sqrt(gnorm)) * gnorm
    for i in range(n):
        for k in range(K):
            d[i, k] = 0.0
            res[i, k] = -G[i, k]
            z[i, k] = res[i, k] / D[i, k]
            q[i, k] = z[i, k]
    rz = _dot(res, z)
    for _ in range(1000):
        hessp(q, parent, leaf0, counts, p, tau, dn, Hq)
        qHq = _dot(q, Hq)
        if qHq <= 0.0:
            break
        alpha = rz / qHq
        for i in range(1, n):
            for k in range(K):
                d[i, k] += alpha * q[i, k]
                res[i, k] -= alpha * Hq[i, k]
        if math.sqrt(_dot(res, res)) <= forcing:
            break
        for i in range(1, n):
            for k in range(K):
                z[i, k] = res[i, k] / D[i, k]
        rz_new = _dot(res, z)
        beta = rz_new / rz
        rz = rz_new
        for i in range(1, n):
            for k in range(K):
                q[i, k] = z[i, k] + beta * q[i, k]


#: the rounding of the gradient's entries relative to the objective's scale
#: (:func:`_objective_scale`; two units of 2.2e-16): the floor of the stopping tolerance,
#: below 1e-9 for up to about 1e5 rows
GRAD_ROUNDING = 4.4e-16


@njit(cache=True, nogil=True)
def _objective_scale(eta, leaf0, counts, K):  # pragma: no cover - compiled
    """The size of the objective's terms, :math:`\\sum_l N_l (2 \\max_k |\\eta_{lk}| + \\log r)`,
    which bounds :math:`|N \\mathrm{lse}(\\eta)| + |n \\cdot \\eta|` (``eta``: the path sums)."""
    r = counts.shape[1]
    acc = 0.0
    for j in range(counts.shape[0]):
        i = leaf0 + j
        e = 0.0
        for k in range(K):
            a = abs(eta[i, k])
            if a > e:
                e = a
        acc += _total(counts, j) * (2.0 * e + math.log(r))
    return acc


@njit(cache=True, nogil=True)
def ridge_newton(parent, leaf0, counts, tau, K, B, gtol, max_iter):  # pragma: no cover - compiled
    """Minimise the ridge objective from ``B`` (updated in place) by Newton's method
    with the exact step of :func:`newton_direction` and an Armijo line search.

    Returns ``(objective, max |gradient|, Newton iterations, converged)``.
    """
    n = B.shape[0]
    r = counts.shape[1]
    m = counts.shape[0]
    eta = np.empty((n, K))
    G = np.empty((n, K))
    p = np.empty((m, r))
    pt = np.empty((m, r))
    D = np.empty((n, K))
    d = np.zeros((n, K))
    exact = K <= DP_MAX_K
    KK = K if exact else 1
    Amat = np.empty((n, KK, KK))
    bvec = np.empty((n, KK))
    Minv = np.empty((n, KK, KK))
    cg_shape = (n, K) if not exact else (1, 1)
    res = np.empty(cg_shape)
    z = np.empty(cg_shape)
    q = np.empty(cg_shape)
    Hq = np.empty(cg_shape)
    dn = np.empty(cg_shape)
    Bt = np.empty((n, K))
    Gt = np.empty((n, K))
    f = objective_grad(B, parent, leaf0, counts, tau, eta, G, p)
    for it in range(max_iter):
        # the gradient's entries N p - n are computed from predictors as large as |eta|:
        # below GRAD_ROUNDING x the objective's scale no iteration can bring them (a fit
        # with large weights would otherwise never converge)
        scale = _objective_scale(eta, leaf0, counts, K)
        gt = max(gtol, GRAD_ROUNDING * scale)
        gmax = _max_abs(G)
        if gmax <= gt:
            return f, gmax, it, True
        if exact:
            newton_direction(parent, leaf0, counts, p, tau, G, Amat, bvec, Minv, d)
        else:
            cg_direction(parent, leaf0, counts, p, tau, G, D, d, res, z, q, Hq, dn)
        slope = _dot(G, d)
        if slope >= 0.0:  # not a descent direction (rounding): diagonally scaled gradient
            _hess_diag(parent, leaf0, counts, p, tau, K, D)
            for i in range(1, n):
                for k in range(K):
                    d[i, k] = -G[i, k] / D[i, k]
            slope = _dot(G, d)
        t = 1.0
        accepted = False
        # below the rounding of the objective, a decrease cannot be seen: judge the full
        # Newton step by the gradient (Newton converges quadratically there).  With large
        # counts the rounding is that of the objective's terms (N lse - n . eta, each as
        # large as the counts times the predictors), far above that of their difference f
        tiny = -slope <= max(1e-11 * (abs(f) + 1.0), 1e-13 * scale)
        for _ in range(60):
            for i in range(n):
                for k in range(K):
                    Bt[i, k] = B[i, k] + t * d[i, k]
            ft = objective_grad(Bt, parent, leaf0, counts, tau, eta, Gt, pt)
            if ft <= f + 1e-4 * t * slope:
                accepted = True
                break
            if tiny:
                if _max_abs(Gt) < gmax:
                    accepted = True
                    break
            t *= 0.5
        if not accepted:
            # no decrease representable in floating point: at the optimum to rounding
            return f, gmax, it, gmax <= 1e3 * gt
        for i in range(n):
            for k in range(K):
                B[i, k] = Bt[i, k]
                G[i, k] = Gt[i, k]
        for j in range(m):
            for x in range(r):
                p[j, x] = pt[j, x]
        f = ft
    gmax = _max_abs(G)
    return f, gmax, max_iter, gmax <= max(gtol, GRAD_ROUNDING * _objective_scale(eta, leaf0, counts, K))


@njit(cache=True, nogil=True)
def node_probs(B, parent, r):  # pragma: no cover - compiled
    """Softmax of every node's path sum: ``(n_nodes, r)`` probabilities."""
    n, K = B.shape
    eta = np.empty((n, K))
    _path_sums(B, parent, eta)
    out = np.empty((n, r))
    for i in range(n):
        _softmax_row(eta[i], K, r, out[i])
    return out


@njit(cache=True, nogil=True)
def tree_gaussian_sample(parent, leaf0, J_leaf, h_leaf, prior_var, z, beta, J, h, s):  # pragma: no cover - compiled
    """Draw one class's coefficients ``beta`` (length n, ``beta[0] = 0``) from

    ``s_v = s_parent(v) + beta_v``, ``beta_v ~ N(0, prior_var)``, ``s_root = 0``, and
    leaf evidence ``exp(-J/2 s^2 + h s)`` (``J_leaf``, ``h_leaf`` per leaf):
    upward information filtering, then downward sampling with standard normals ``z``.
    ``J``, ``h``, ``s``: work arrays of at least n entries (the sampler's, reused).
    """
    n = parent.shape[0]
    for i in range(n):
        J[i] = 0.0
        h[i] = 0.0
    for j in range(J_leaf.shape[0]):
        J[leaf0 + j] = J_leaf[j]
        h[leaf0 + j] = h_leaf[j]
    # upward: the evidence on s_v (own + children's messages) becomes a message on s_parent
    for i in range(n - 1, 0, -1):
        q = parent[i]
        denom = 1.0 + prior_var * J[i]
        J[q] += J[i] / denom
        h[q] += h[i] / denom
    # downward: s_v | s_parent ~ N((s_p / v + h_v) / (1 / v + J_v), 1 / (1 / v + J_v))
    s[0] = 0.0
    beta[0] = 0.0
    iv = 1.0 / prior_var
    for i in range(1, n):
        sp = s[parent[i]]
        prec = iv + J[i]
        mean = (sp * iv + h[i]) / prec
        s[i] = mean + z[i] / math.sqrt(prec)
        beta[i] = s[i] - sp
