"""numba kernels of the HDP collapsed Gibbs sampler (paper 000, Sec. 4.2-4.5).

State of one context tree, all nodes in one flat numbering (level by level,
root first, each level in lexicographic order of its configurations):

``n[i, k]``   counts: data counts at the leaves, the children's table counts
              summed at internal nodes (eq. 10);
``t[i, k]``   table counts ("pseudo-counts") passed to the parent;
``nsum``, ``tsum``  their totals over ``k``;
``group[i]``  index of the (tied) concentration of node ``i`` (-1: the root,
              whose concentration stays at its initial value, as in the paper).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._rng import beta, gamma, uniform
from ._stirling import digamma, log_stirling

__all__ = ["hdp_init", "hdp_sweeps", "check_invariants"]


@njit(cache=True, nogil=True)
def hdp_init(n, t, nsum, tsum, parent, lstart, c0):  # pragma: no cover - compiled
    """Initial table counts, bottom-up (eq. 15): ``t = n`` if ``n <= 1``, else
    ``max(1, floor(c (psi(c + n) - psi(c))))``; internal ``n`` = children's ``t``; the
    root has ``t = min(1, n)``."""
    N, r = n.shape
    L = lstart.shape[0] - 1
    for lev in range(L - 1, -1, -1):
        for i in range(lstart[lev], lstart[lev + 1]):
            s = 0
            for k in range(r):
                s += n[i, k]
            nsum[i] = s
            ts = 0
            for k in range(r):
                nk = n[i, k]
                if parent[i] < 0:
                    tk = 1 if nk > 0 else 0
                elif nk <= 1:
                    tk = nk
                else:
                    tk = int(math.floor(c0 * (digamma(c0 + nk) - digamma(c0))))
                    if tk < 1:
                        tk = 1
                    if tk > nk:
                        tk = nk
                t[i, k] = tk
                ts += tk
            tsum[i] = ts
            p = parent[i]
            if p >= 0:
                for k in range(r):
                    n[p, k] += t[i, k]


@njit(cache=True, nogil=True)
def refresh_rise(  # pragma: no cover - compiled
    rise_tab, rise_len, conc, c_root, group_nodes, group_off, nsum, is_parent, window, max_len
):
    """Tables of the log rising factorials log a^(m) of every concentration that some
    parent node uses, for m up to twice the largest current count (plus the window)."""
    G = conc.shape[0]
    for g in range(G + 1):
        if g < G:
            a = conc[g]
            mx = -1
            for jj in range(group_off[g], group_off[g + 1]):
                j = group_nodes[jj]
                if is_parent[j] and nsum[j] > mx:
                    mx = nsum[j]
        else:
            a = c_root
            mx = nsum[0]
        if mx < 0:
            rise_len[g] = 0
            continue
        L = 2 * mx + 4 * window + 4
        if L > max_len:
            L = max_len
        rise_tab[g, 0] = 0.0
        for m in range(1, L):
            rise_tab[g, m] = rise_tab[g, m - 1] + math.log(a + m - 1)
        rise_len[g] = L


@njit(cache=True, nogil=True)
def _sample_concentrations(  # pragma: no cover - compiled
    rng, nsum, tsum, conc, logc, group_nodes, group_off, prior_shape, prior_rate, cap
):
    """Auxiliary-variable sampling (thesis 002, Algorithm 14): for the tied nodes j,
    q_j ~ Beta(alpha, n_j); alpha ~ Gamma(shape + sum t_j, rate + sum log(1/q_j))."""
    G = conc.shape[0]
    for g in range(G):
        rate = prior_rate
        shape = prior_shape
        a = conc[g]
        for jj in range(group_off[g], group_off[g + 1]):
            j = group_nodes[jj]
            if nsum[j] <= 0:
                continue
            q = beta(rng, a, nsum[j])
            if q < 1e-75:
                q = 1e-75
            rate -= math.log(q)
            shape += tsum[j]
        if shape <= 0 or rate <= 0:
            continue
        c = gamma(rng, shape) / rate
        if c > cap:
            c = cap
        if c < 1e-300:
            c = 1e-300
        conc[g] = c
        logc[g] = math.log(c)


@njit(cache=True, nogil=True, inline="always")
def _record(n, nsum, parent, group, conc, c_root, lstart, pk, acc, acc2):  # pragma: no cover - compiled
    """Estimates at every node (eqs. 12-14), top-down, added to ``acc``.

    Each vector sums to one by construction ((n + c base) / (N + c) with a base that
    does), so no renormalisation pass is needed (the final average is normalised).
    ``acc2`` receives the second moments given the sweep's state,
    :math:`v^2 + v(1 - v)/(N + c + 1)` (the Dirichlet's), for posterior variances.
    """
    N, r = n.shape
    L = lstart.shape[0] - 1
    for lev in range(L):
        for i in range(lstart[lev], lstart[lev + 1]):
            p = parent[i]
            c = c_root if group[i] < 0 else conc[group[i]]
            inv = 1.0 / (nsum[i] + c)
            inv1 = 1.0 / (nsum[i] + c + 1.0)
            for k in range(r):
                base = (1.0 / r) if p < 0 else pk[p, k]
                v = (n[i, k] + c * base) * inv
                pk[i, k] = v
                acc[i, k] += v
                acc2[i, k] += v * v + v * (1.0 - v) * inv1


@njit(cache=True, nogil=True)
def check_invariants(n, t, parent, lstart):  # pragma: no cover - compiled
    """0 <= t <= n, t >= 1 where n >= 1, and each internal n = sum of its children's t.

    Returns -1 when they hold, else the index of an offending node.
    """
    N, r = n.shape
    sums = np.zeros((N, r), dtype=np.int64)
    has_child = np.zeros(N, dtype=np.bool_)
    for i in range(N):
        p = parent[i]
        for k in range(r):
            if t[i, k] < 0 or t[i, k] > n[i, k]:
                return i
            if n[i, k] >= 1 and t[i, k] < 1:
                return i
            if p >= 0:
                sums[p, k] += t[i, k]
        if p >= 0:
            has_child[p] = True
    for i in range(N):
        if has_child[i]:
            for k in range(r):
                if sums[i, k] != n[i, k]:
                    return i
    return -1


@njit(cache=True, nogil=True)
def hdp_sweeps(  # pragma: no cover - compiled
    rng,
    n,
    t,
    nsum,
    tsum,
    parent,
    lstart,
    group,
    conc,
    logc,
    c_root,
    group_nodes,
    group_off,
    group_level,
    start_iter,
    n_sweeps,
    burn_in,
    every,
    window,
    max_tk,
    prior_shape,
    prior_rate,
    cap,
    event_start,
    tab,
    n_max,
    ckeys,
    cvals,
    logint,
    lgint,
    rise_tab,
    rise_len,
    is_parent,
    pk,
    acc,
    acc2,
    conc_trace,
    leaf_trace,
    thin,
    debug,
):
    """Run sweeps ``start_iter .. start_iter + n_sweeps - 1`` of the sampler.

    Each sweep samples every table count bottom-up; concentrations are sampled when
    ``(iter + every // 2) % every == 0`` (every 5 sweeps by default, as the reference);
    after ``burn_in`` sweeps the estimates are accumulated in ``acc``.  Returns
    ``(records, concentration events, leaf draws, offending node or -1)``.
    """
    N, r = n.shape
    L = lstart.shape[0] - 1
    buf = np.empty(2 * window + 1)
    n_rec = 0
    n_events = 0
    n_draws = 0
    leaf0 = lstart[L - 1]
    n_levels = conc_trace.shape[1]
    cnt = np.zeros(n_levels)
    for it in range(start_iter, start_iter + n_sweeps):
        # Gibbs update of every table count, bottom-up (paper 000, Algorithms 3-4): for each
        # value k with n[i, k] >= 2 the candidates tc within the window get log-weights
        # log S(n, tc) + T(tc) log a + log S(n_pa(tc), t_pa) - log a_pa^(N_pa(tc)), computed
        # incrementally along the window.  (Written inline: a helper taking the arrays
        # would pay reference counting on every call.)
        for lev in range(L - 1, -1, -1):
            for i in range(lstart[lev], lstart[lev + 1]):
                p = parent[i]
                if p < 0:  # the root: one table per observed value
                    for k in range(r):
                        new = 1 if n[i, k] > 0 else 0
                        tsum[i] += new - t[i, k]
                        t[i, k] = new
                    continue
                lc = logc[group[i]]
                gp = group[p] if group[p] >= 0 else rise_tab.shape[0] - 1  # the last row is the root's
                cp = c_root if group[p] < 0 else conc[group[p]]
                rlen = rise_len[gp]
                for k in range(r):
                    nk = n[i, k]
                    old = t[i, k]
                    if nk <= 1:
                        inc = nk - old
                        if inc != 0 and not (inc < 0 and n[p, k] + inc < t[p, k]):
                            t[i, k] = nk
                            tsum[i] += inc
                            n[p, k] += inc
                            nsum[p] += inc
                        continue
                    lo = old - window
                    if lo < 1:
                        lo = 1
                    hi = old + window
                    if hi > nk:
                        hi = nk
                    if hi > max_tk:
                        hi = max_tk
                    npk = n[p, k] - old  # the parent's count without this node's tables
                    nps = nsum[p] - old
                    ts = tsum[i] - old
                    tpk = t[p, k]
                    if npk + lo < tpk:  # smaller values would leave the parent fewer customers than tables
                        lo = tpk - npk
                    m = hi - lo + 1
                    # running parts: the parent's rising factorial and (t_pa = 1) its log S(n, 1)
                    m0 = nps + lo
                    tabled = m0 + m < rlen
                    if tabled:
                        rise = rise_tab[gp, m0]
                    else:
                        rise = math.lgamma(cp + m0) - math.lgamma(cp)
                    s1 = 0.0
                    if tpk == 1:
                        q0 = npk + lo
                        s1 = lgint[q0] if q0 < lgint.shape[0] else math.lgamma(q0)
                    own_row = nk * (nk + 1) // 2 if nk <= n_max else -1
                    best = -np.inf
                    for j in range(m):
                        tc = lo + j
                        if own_row >= 0:
                            v = tab[own_row + tc]
                        else:
                            v = log_stirling(nk, tc, tab, n_max, ckeys, cvals)
                        v += (ts + tc) * lc - rise
                        if tpk == 1:
                            v += s1
                            q = npk + tc
                            s1 += logint[q] if q < logint.shape[0] else math.log(q)
                        elif tpk > 1:
                            q = npk + tc
                            if q <= n_max:
                                v += tab[q * (q + 1) // 2 + tpk]
                            else:
                                v += log_stirling(q, tpk, tab, n_max, ckeys, cvals)
                        if tabled:
                            rise = rise_tab[gp, m0 + j + 1]
                        else:
                            rise += math.log(cp + nps + tc)
                        buf[j] = v
                        if v > best:
                            best = v
                    total = 0.0
                    for j in range(m):
                        e = math.exp(buf[j] - best)
                        buf[j] = e
                        total += e
                    u = uniform(rng) * total
                    chosen = m - 1
                    cum = 0.0
                    for j in range(m):
                        cum += buf[j]
                        if u < cum:
                            chosen = j
                            break
                    new = lo + chosen
                    inc = new - old
                    t[i, k] = new
                    tsum[i] += inc
                    n[p, k] += inc
                    nsum[p] += inc

        if conc.shape[0] > 0 and (it + every // 2) % every == 0:
            _sample_concentrations(rng, nsum, tsum, conc, logc, group_nodes, group_off, prior_shape, prior_rate, cap)
            refresh_rise(
                rise_tab, rise_len, conc, c_root, group_nodes, group_off, nsum, is_parent, window, rise_tab.shape[1]
            )
            ev = event_start + n_events
            if ev < conc_trace.shape[0]:
                for l in range(n_levels):
                    conc_trace[ev, l] = 0.0
                    cnt[l] = 0.0
                for g in range(conc.shape[0]):
                    conc_trace[ev, group_level[g]] += conc[g]
                    cnt[group_level[g]] += 1.0
                for l in range(n_levels):
                    if cnt[l] > 0:
                        conc_trace[ev, l] /= cnt[l]
                    else:
                        conc_trace[ev, l] = np.nan
            n_events += 1
        if debug:
            bad = check_invariants(n, t, parent, lstart)
            if bad >= 0:
                return n_rec, n_events, n_draws, bad
        if it >= burn_in:
            _record(n, nsum, parent, group, conc, c_root, lstart, pk, acc, acc2)
            n_rec += 1
            if thin > 0 and (it - burn_in) % thin == 0:
                d = (it - burn_in) // thin
                if d < leaf_trace.shape[0]:
                    q = 0
                    for i in range(leaf0, N):
                        for k in range(r):
                            leaf_trace[d, q] = pk[i, k]
                            q += 1
                    n_draws += 1
    return n_rec, n_events, n_draws, -1
