"""numba kernels of the HDP collapsed Gibbs sampler (Petitjean et al. 2018, Sec. 4.2-4.5).

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
from ..._jit import njit, uint64

from .._rng import gamma, gamma_dc, gamma_int, keyed_uniform, reseed, sweep_key, uniform
from .._stirling import digamma, log_stirling_beyond, pcol_offset

__all__ = ["hdp_init", "hdp_warm_init", "hdp_layout", "hdp_schedule", "hdp_sweeps", "check_invariants"]


@njit(cache=True, nogil=True, error_model="numpy")
def hdp_init(n, t, nsum, tsum, parent, lstart, c0):  # pragma: no cover - compiled
    """Initial table counts, bottom-up (eq. 15): ``t = n`` if ``n <= 1``, else
    ``max(1, floor(c (psi(c + n) - psi(c))))``; internal ``n`` = children's ``t``; the
    root has ``t = min(1, n)`` (:func:`hdp_warm_init` with no previous state)."""
    hdp_warm_init(n, t, nsum, tsum, parent, lstart, c0, np.zeros((1, 1), dtype=np.int64),
                  np.zeros(n.shape[0], dtype=np.bool_))


@njit(cache=True, nogil=True, error_model="numpy")
def hdp_warm_init(n, t, nsum, tsum, parent, lstart, c0, t_prev, has_prev):  # pragma: no cover - compiled
    """Table counts of a warm start, bottom-up: a node that the previous state had
    (``has_prev``) keeps its table count ``t_prev`` where it is still valid, clipped to
    ``1 .. n`` (its count ``n`` may have grown, or shrunk under forgetting); a new node
    or value starts as :func:`hdp_init` starts it (eq. 15); internal ``n`` = children's
    ``t``; the root has ``t = min(1, n)``."""
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
                elif has_prev[i] and t_prev[i, k] > 0:  # (t_prev is read only where has_prev)
                    tk = min(max(t_prev[i, k], 1), nk)
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
def hdp_layout(level_parent, lstart, parent_cards, tying):  # pragma: no cover - compiled
    """The flat layout of a context tree for the sampler, in one pass: every node's
    parent (flat numbering, root ``-1``; ``level_parent``: the levels' parent indices
    within the level above, levels ``1 .. d`` concatenated), its concentration group
    (root ``-1``), the groups' offsets in the node order (every group is a run of
    consecutive nodes, so the members of group ``g`` are nodes
    ``group_off[g] + 1 .. group_off[g + 1]``), each group's tree level, and the nodes
    whose estimates are entries of the table (``used``: the leaves, and the inner nodes
    with fewer children than their variable has values, which answer unseen parent
    configurations).  ``tying``: 0 level, 1 single, 2 parent, 3 none."""
    N = lstart[-1]
    d = lstart.shape[0] - 2
    parent = np.empty(N, dtype=np.int64)
    group = np.empty(N, dtype=np.int64)
    n_child = np.zeros(N, dtype=np.int64)
    parent[0] = -1
    group[0] = -1
    bounds = np.empty(N + d + 1, dtype=np.int64)
    levels = np.empty(N + d, dtype=np.int64)
    g = -1
    for lev in range(1, d + 1):
        base = lstart[lev - 1]
        if tying == 0 or (tying == 1 and lev == 1):  # a level's group (one for all), even empty
            g += 1
            bounds[g] = lstart[lev] - 1
            levels[g] = lev
        for j in range(lstart[lev], lstart[lev + 1]):
            p = level_parent[j - 1] + base
            parent[j] = p
            n_child[p] += 1
            if tying == 3 or (tying == 2 and (j == lstart[lev] or p != parent[j - 1])):
                g += 1
                bounds[g] = j - 1
                levels[g] = lev
            group[j] = g
    bounds[g + 1] = N - 1
    used = np.ones(N, dtype=np.bool_)
    for lev in range(d):
        for j in range(lstart[lev], lstart[lev + 1]):
            used[j] = n_child[j] < parent_cards[lev]
    return parent, group, bounds[: g + 2].copy(), levels[: g + 1].copy(), used


@njit(cache=True, nogil=True)
def hdp_schedule(data, parent, lstart):  # pragma: no cover - compiled
    """The sweep's schedule of ``(node, value)`` pairs, bottom-up: the leaf values
    counted at least twice (a leaf's counts are data, so a value counted once or never
    has its table count fixed), then the values of the internal nodes below the root
    with data below them (``data[i, k] >= 1``), level by level.  Within a level the
    pairs go round-robin over the parents (every parent's first pair, then every
    parent's second, ...; each parent's pairs keep their order).  Given the other
    levels, the table counts of children of different parents are conditionally
    independent (each conditional involves only its node and its parent), so a sweep
    in this order has the transition of the node-by-node order; but consecutive
    updates no longer wait for each other, and the processor overlaps them.

    ``data``: every node's data counts (all levels, flat numbering); a level's nodes
    are grouped by parent.  Returns ``(sched_i, sched_k)``."""
    N, r = data.shape
    d = lstart.shape[0] - 2
    total = 0
    for lev in range(d, 0, -1):
        need = 2 if lev == d else 1
        for i in range(lstart[lev], lstart[lev + 1]):
            for k in range(r):
                if data[i, k] >= need:
                    total += 1
    sched_i = np.empty(total, dtype=np.int64)
    sched_k = np.empty(total, dtype=np.int64)
    pos = 0
    for lev in range(d, 0, -1):
        need = 2 if lev == d else 1
        a, b = lstart[lev], lstart[lev + 1]
        m = 0  # the level's pairs, and each one's rank among its parent's
        for i in range(a, b):
            for k in range(r):
                if data[i, k] >= need:
                    m += 1
        rank = np.empty(m, dtype=np.int64)
        pi = np.empty(m, dtype=np.int64)
        pk = np.empty(m, dtype=np.int64)
        per_rank = np.zeros(m + 1, dtype=np.int64)
        j = 0
        last = -2
        cur = 0
        for i in range(a, b):
            if parent[i] != last:
                last = parent[i]
                cur = 0
            for k in range(r):
                if data[i, k] >= need:
                    rank[j] = cur
                    pi[j] = i
                    pk[j] = k
                    per_rank[cur + 1] += 1
                    cur += 1
                    j += 1
        for q in range(m):  # a stable counting sort by rank
            per_rank[q + 1] += per_rank[q]
        for j in range(m):
            q = pos + per_rank[rank[j]]
            per_rank[rank[j]] += 1
            sched_i[q] = pi[j]
            sched_k[q] = pk[j]
        pos += m
    return sched_i, sched_k


_POOL = 32  # nodes with at most this many customers have their betas pooled (see _sample_concentrations)
_LOGFLOOR = math.log(1e-75)  # log q below this counts as this (X underflowing for tiny alpha)


@njit(nogil=True, inline="always")
def _beta_factor(rng, a, da, ca, nj, prod, rate):  # pragma: no cover - compiled
    """One node's auxiliary :math:`q \\sim \\mathrm{Beta}(a, n_j)` as :math:`X / (X + Y)`
    (``da``, ``ca``: Marsaglia & Tsang's constants of ``a``, or of ``a + 1`` below one):
    multiplies :math:`(X + Y) / X = 1 / q` into ``prod``, whose logarithm goes into
    ``rate`` when it passes 1e250 (and once at the end of the group).  Returns
    ``(prod, rate)``."""
    x = gamma_dc(rng, da, ca)
    if a < 1.0:  # Gamma(a) = Gamma(a + 1) U^(1 / a)
        x *= math.exp(math.log(1.0 - uniform(rng)) / a)
    y = gamma_int(rng, nj)
    if x > 0.0:
        prod *= (x + y) / x
        if prod > 1e250:
            rate += math.log(prod)
            prod = 1.0
    else:
        rate += -_LOGFLOOR
    return prod, rate


@njit(cache=True, nogil=True, error_model="numpy")
def _sample_concentrations(  # pragma: no cover - compiled
    rng, nsum, tsum, conc, logc, group_nodes, group_off, prior_shape, prior_rate, cap, skey
):
    """Auxiliary-variable sampling (Zhang 2020, Algorithm 14): for the tied nodes j,
    :math:`q_j \\sim \\mathrm{Beta}(\\alpha, n_j)`;
    :math:`\\alpha \\sim \\mathrm{Gamma}(\\text{shape} + \\sum_j t_j, \\text{rate} + \\sum_j \\log 1/q_j)`.

    Only :math:`\\sum_j \\log 1/q_j` is needed, and for the nodes with few customers
    (:math:`n_j \\le 32`) it is drawn exactly with far fewer random numbers than one beta
    each: :math:`\\mathrm{Beta}(\\alpha, n) = \\prod_{i < n} \\mathrm{Beta}(\\alpha + i, 1)`
    and :math:`-\\log \\mathrm{Beta}(b, 1)` is an exponential over ``b``, so their sum is
    :math:`\\sum_{i < 32} G_i / (\\alpha + i)` with :math:`G_i \\sim \\mathrm{Gamma}(K_i)`,
    :math:`K_i = \\#\\{j : i < n_j \\le 32\\}` (from a histogram of the :math:`n_j`).  A deep
    tree's thousands of small nodes cost at most 32 gamma draws; a larger node draws its
    beta as ``X / (X + Y)``, and the group's :math:`(X + Y) / X` are multiplied, with one
    logarithm at the end (or when the product nears the top of the doubles).

    ``skey != 0`` (keyed draws, see :func:`hdp_sweeps`): every node draws its own beta
    (no pooling: which nodes pool depends on their counts) from a stream seeded by
    ``skey`` and the node, and each group's concentration from one seeded by ``skey``
    and the group, so two coupled chains draw the same numbers for the same node and
    group however many the others took.
    """
    G = conc.shape[0]
    hist = np.zeros(_POOL + 1)
    for g in range(G):
        rate = prior_rate
        shape = prior_shape
        prod = 1.0  # the individual betas' factors (x + y) / x, one logarithm at the end
        a = conc[g]
        for i in range(_POOL + 1):
            hist[i] = 0.0
        da = (a if a >= 1.0 else a + 1.0) - 1.0 / 3.0  # Marsaglia & Tsang's constants, once a group
        ca = 1.0 / math.sqrt(9.0 * da)
        for jj in range(group_off[g], group_off[g + 1]):
            j = group_nodes[jj]
            nj = nsum[j]
            if nj <= 0:
                continue
            shape += tsum[j]
            if skey != 0:  # keyed: every node's beta of its own, from a stream of its own
                reseed(rng, skey + uint64(j + 1) * uint64(0xA0761D6478BD642F))
                prod, rate = _beta_factor(rng, a, da, ca, nj, prod, rate)
            elif nj <= _POOL:
                hist[nj] += 1.0
            else:  # a beta of its own
                prod, rate = _beta_factor(rng, a, da, ca, nj, prod, rate)
        n_small = 0.0
        top = 0
        for v in range(1, _POOL + 1):
            if hist[v] > 0.0:
                n_small += hist[v]
                top = v
        if top > 2.0 * n_small:  # few small nodes: a beta each is cheaper than `top` pooled draws
            for jj in range(group_off[g], group_off[g + 1]):
                nj = nsum[group_nodes[jj]]
                if 0 < nj <= _POOL:
                    prod, rate = _beta_factor(rng, a, da, ca, nj, prod, rate)
        else:  # K_i = #{pooled j: n_j > i}, a suffix sum of the histogram
            k_i = 0.0
            for i in range(top - 1, -1, -1):
                k_i += hist[i + 1]
                rate += gamma(rng, k_i) / (a + i)
        rate += math.log(prod)
        if shape <= 0 or rate <= 0:
            continue
        if skey != 0:  # and the concentration's
            reseed(rng, skey + uint64(g + 1) * uint64(0xD6E8FEB86659FD93))
        c = gamma(rng, shape) / rate
        if c > cap:
            c = cap
        if c < 1e-300:
            c = 1e-300
        conc[g] = c
        logc[g] = math.log(c)


# ----------------------------------------------------------------------------- one table count

_BIG = 1e250  # weights beyond this are summed again on the log scale (never with the default window)


@njit(cache=True, nogil=True, error_model="numpy")
def _ratios_beyond(f, nk, lo, hi, npk, nps, tpk, a, cp, rtab, pcol, n_tab, n_lim, ckeys, cvals, shift):  # noqa: E501  # pragma: no cover
    """The ratios ``f[j] = w(lo + j + 1) / w(lo + j)`` of the sampler (see
    :func:`hdp_sweeps`) where a count exceeds ``n_lim``: those ratios come from
    :func:`log_stirling_beyond` (a separate function: its memo arrays would otherwise
    cost reference counting in the hot loop)."""
    for tc in range(lo, hi):
        if nk <= n_lim:
            own = rtab[nk * (nk + 1) // 2 + tc]
        else:
            own = math.exp(log_stirling_beyond(nk, tc + 1, ckeys, cvals) - log_stirling_beyond(nk, tc, ckeys, cvals))
        q = npk + tc
        if tpk == 1:
            par = q + shift
        elif tpk < 1:
            par = 1.0
        elif q <= n_lim:
            par = pcol[pcol_offset(tpk, n_tab) + q - tpk]
        else:
            par = math.exp(log_stirling_beyond(q + 1, tpk, ckeys, cvals) - log_stirling_beyond(q, tpk, ckeys, cvals))
        f[tc - lo] = own * a * par / (cp + nps + tc)


@njit(cache=True, nogil=True, error_model="numpy")
def _draw_log(u, f, m, lw):  # pragma: no cover - compiled
    """The sampler's draw (see :func:`_sweep_table_counts`) on the log scale, for weights
    beyond the range of doubles (only in windows far wider than the default's): the
    offset from ``lo`` of the candidate for the uniform ``u``, inverting in ascending
    order (``lw``: a work array of at least ``m``; one allocated here would make its
    callers count references to their arrays)."""
    lw[0] = 0.0
    for j in range(1, m):
        lw[j] = lw[j - 1] + math.log(f[j - 1])
    top = lw[0]
    for j in range(1, m):
        if lw[j] > top:
            top = lw[j]
    total = 0.0
    for j in range(m):
        total += math.exp(lw[j] - top)
    x = u * total
    c = 0.0
    for j in range(m):
        c += math.exp(lw[j] - top)
        if x < c:
            return j
    return m - 1


# ----------------------------------------------------------------------------- estimates


@njit(cache=True, nogil=True, error_model="numpy")
def _record_internal(n, nsum, parent, group, conc, c_root, root_h, leaf0, pk, pk2, acc, acc2, accsq, track_sq):  # noqa: E501  # pragma: no cover
    r"""Estimates of the internal nodes (eqs. 12-14), top-down, added to ``acc``.

    Each vector sums to one by construction ((n + c base) / (N + c) with a base that
    does), so no renormalisation pass is needed.  Given the sweep's state (table
    counts and concentrations) the vectors are Dirichlet top-down,
    :math:`\phi_i \mid \phi_{pa} \sim \mathrm{Dir}(n_i + c\,\phi_{pa})`, so a node's
    conditional mean is ``v`` and, with :math:`A = N + c` fixed (the parent sums to
    one), its conditional second moment is
    :math:`E[a_k (a_k + 1)] / (A (A + 1))`, :math:`a_k = n_k + c \phi_{pa,k}`:
    :math:`(n_k^2 + n_k + (2 n_k + 1) c\,E\phi_{pa,k} + c^2 E\phi_{pa,k}^2) / (A(A+1))`,
    the parent's own uncertainty included (its second moment ``pk2``, computed the
    same way above it).  ``acc2`` receives it: the law of total variance over the
    sweeps then gives the posterior variance.  ``root_h``: the root's base measure
    (``1 / r`` each, or an expert network's :math:`P(x)`).
    """
    r = n.shape[1]
    for i in range(leaf0):
        p = parent[i]
        c = c_root if group[i] < 0 else conc[group[i]]
        A = nsum[i] + c
        inv = 1.0 / A
        inv2 = 1.0 / (A * (A + 1.0))
        for k in range(r):
            if p < 0:  # the root's base measure: uniform, or an expert's P(x)
                m1 = root_h[k]
                m2 = m1 * m1
            else:
                m1 = pk[p, k]
                m2 = pk2[p, k]
            nk = float(n[i, k])
            v = (nk + c * m1) * inv
            w = (nk * nk + nk + (2.0 * nk + 1.0) * c * m1 + c * c * m2) * inv2
            pk[i, k] = v
            pk2[i, k] = w
            acc[i, k] += v
            acc2[i, k] += w
            if track_sq:
                accsq[i, k] += v * v


@njit(cache=True, nogil=True, error_model="numpy")
def _flush_leaves(n, nsum, parent, group, conc, leaf0, b1, b2, b3, m, acc, acc2, accsq, track_sq):  # noqa: E501  # pragma: no cover
    r"""Add ``m`` sweeps of the leaves' estimates at once.

    A leaf's counts are data and its concentration is constant between concentration
    draws, so over a run of ``m`` sweeps with parent estimates :math:`b_s` (second
    moments :math:`e_s`), :math:`\sum_s v_s = (m n + c \sum_s b_s) / (N + c)`,
    :math:`\sum_s v_s^2 = (m n^2 + 2 n c \sum_s b_s + c^2 \sum_s b_s^2) / (N + c)^2`
    and the conditional second moments (see :func:`_record_internal`) sum to
    :math:`(m (n^2 + n) + (2n + 1) c \sum_s b_s + c^2 \sum_s e_s) / (A (A + 1))`:
    the sampler keeps :math:`\sum b`, :math:`\sum b^2` and :math:`\sum e` per parent
    (``b1``, ``b2``, ``b3``) instead of visiting every leaf at every sweep.
    """
    N, r = n.shape
    if m == 0:
        return
    for i in range(leaf0, N):
        p = parent[i]
        c = conc[group[i]]
        A = nsum[i] + c
        inv = 1.0 / A
        inv2 = 1.0 / (A * (A + 1.0))
        for k in range(r):
            nk = float(n[i, k])
            acc[i, k] += (m * nk + c * b1[p, k]) * inv
            acc2[i, k] += (m * (nk * nk + nk) + (2.0 * nk + 1.0) * c * b1[p, k] + c * c * b3[p, k]) * inv2
            if track_sq:
                accsq[i, k] += (m * nk * nk + 2.0 * nk * c * b1[p, k] + c * c * b2[p, k]) * inv * inv
    # the parents' sums start again
    p0 = parent[leaf0]
    p1 = parent[N - 1] + 1
    for p in range(p0, p1):
        for k in range(r):
            b1[p, k] = 0.0
            b2[p, k] = 0.0
            b3[p, k] = 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def _record_state(n, conc, leaf0, j, state_n, state_c, meta):  # pragma: no cover - compiled
    """Keep the sweep's state for posterior draws: the internal nodes' counts (the
    leaves' are data) and the concentrations, every ``meta[1]`` recorded sweeps
    (``j`` counts them from 0).  When the buffer is full every other state is dropped
    and the spacing doubles, so that at most ``len(state_n)`` evenly spaced states
    are held whatever the run's length (``meta[0]``: states held)."""
    cap = state_n.shape[0]
    if cap == 0 or j % meta[1] != 0:
        return
    if meta[0] == cap:
        half = cap // 2
        for q in range(half):
            state_n[q] = state_n[2 * q]
            state_c[q] = state_c[2 * q]
        meta[0] = half
        meta[1] *= 2
        if j % meta[1] != 0:
            return
    d = meta[0]
    for i in range(leaf0):
        for k in range(n.shape[1]):
            state_n[d, i, k] = n[i, k]
    for g in range(conc.shape[0]):
        state_c[d, g] = conc[g]
    meta[0] = d + 1


@njit(cache=True, nogil=True, error_model="numpy")
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


@njit(cache=True, nogil=True, error_model="numpy")
def _lone_root(n, nsum, c_root, root_ch, start_iter, n_sweeps, burn_in, acc, acc2, accsq, track_sq, leaf_trace, thin):  # noqa: E501  # pragma: no cover
    """:func:`hdp_sweeps` on a tree that is its root alone: the root's counts are data
    and its concentration is fixed, so every recorded sweep adds the same estimate
    :math:`v = (n + c_0 h) / (N + c_0)` (``root_ch`` = :math:`c_0 h`, :math:`h = 1/r` or
    an expert's :math:`P(x)`; and its Dirichlet second moment); they are added at once
    instead of sweep by sweep."""
    r = n.shape[1]
    first = max(start_iter, burn_in)
    m = max(start_iter + n_sweeps - first, 0)  # recorded sweeps of this block
    inv = 1.0 / (nsum[0] + c_root)
    inv1 = 1.0 / (nsum[0] + c_root + 1.0)
    for k in range(r):
        v = (n[0, k] + root_ch[k]) * inv
        acc[0, k] += m * v
        acc2[0, k] += m * (v * v + v * (1.0 - v) * inv1)
        if track_sq:
            accsq[0, k] += m * v * v
    n_draws = 0
    if thin > 0 and m > 0:
        it = first + (-(first - burn_in)) % thin  # the first recorded sweep with (it - burn_in) % thin == 0
        while it < start_iter + n_sweeps:
            d = (it - burn_in) // thin
            if d < leaf_trace.shape[0]:
                for k in range(r):
                    leaf_trace[d, k] = (n[0, k] + root_ch[k]) * inv
                n_draws += 1
            it += thin
    return m, 0, n_draws, -1


# ----------------------------------------------------------------------------- sweeps


@njit(cache=True, nogil=True, error_model="numpy")
def _sweep_plan(sched_i, sched_k, parent, group, r, n_groups):  # pragma: no cover - compiled
    """The schedule with everything an update looks up resolved once: six entries a pair,
    the flat index ``i * r + k`` of its count, the flat index ``p * r + k`` of its parent's,
    ``i``, ``p``, ``i``'s concentration group and ``p``'s (``n_groups`` for the root, whose
    concentration sits last in the sweep's concentration vector).  One flat array read
    with unsigned offsets: the two-dimensional lookups through ``parent`` and ``group``
    cost dependent loads, index arithmetic and register spills at every update."""
    m = sched_i.shape[0]
    plan = np.empty(6 * m, dtype=np.int64)
    for jj in range(m):
        i = sched_i[jj]
        k = sched_k[jj]
        p = parent[i]
        plan[6 * jj] = i * r + k
        plan[6 * jj + 1] = p * r + k
        plan[6 * jj + 2] = i
        plan[6 * jj + 3] = p
        plan[6 * jj + 4] = group[i]
        plan[6 * jj + 5] = group[p] if group[p] >= 0 else n_groups
    return plan


@njit(cache=True, nogil=True, error_model="numpy")
def _fill_recip(recip, roff, rlen, nsum, parent_group, leaf0, concx, window):  # pragma: no cover - compiled
    """The reciprocals :math:`1 / (c_g + q)` of the sampler's denominators, per concentration
    group ``g`` of the parents (``concx[g]``; the root's last), for ``q < rlen[g]`` at
    ``recip[roff[g] + q]``: the denominator :math:`c_{pa} + N_{pa} + t` of every candidate
    (see :func:`hdp_sweeps`) is one of them while the parent's total stays within the
    table, which is sized to the group's largest parent total at the last concentration
    draw plus twice the window (a larger total divides, as before).  Filled at every
    concentration draw (the concentrations change only then), a few hundred divisions
    in place of one a candidate; returns ``recip``, reallocated when too short."""
    G1 = concx.shape[0]
    for g in range(G1):
        rlen[g] = 0
    for p in range(leaf0):
        g = parent_group[p]
        need = nsum[p] + 2 * window + 8
        if need > rlen[g]:
            rlen[g] = need
    total = 0
    for g in range(G1):
        roff[g] = total
        total += rlen[g]
    if total > recip.shape[0]:
        recip = np.empty(2 * total)
    for g in range(G1):
        c = concx[g]
        o = roff[g]
        for q in range(rlen[g]):
            recip[o + q] = 1.0 / (c + q)
    return recip


@njit(nogil=True, inline="always")
def _window(nk, old, npk, tpk, window, max_tk):  # pragma: no cover - compiled
    """The candidates ``lo .. hi`` of a table count now at ``old``: within ``window`` of
    it, within ``1 .. nk`` and ``max_tk``, and no lower than leaves the parent (``npk``
    customers without this node's tables, ``tpk`` tables) at least one customer a table."""
    lo = old - window
    if lo < 1:
        lo = 1
    hi = old + window
    if hi > nk:
        hi = nk
    if hi > max_tk:
        hi = max_tk
    if npk + lo < tpk:
        lo = tpk - npk
    return lo, hi


@njit(cache=True, nogil=True, error_model="numpy")
def _sweep_table_counts(  # pragma: no cover - compiled
    rng,
    plan,
    nf,
    tf,
    nsum,
    tsum,
    concx,
    window,
    max_tk,
    rtab,
    pcol,
    n_tab,
    n_lim,
    cum,
    root_base,
    recip,
    roff,
    rlen,
    start,
    skey,
):
    """One Gibbs pass over the table counts of the schedule (``plan``, see
    :func:`_sweep_plan`; ``nf``, ``tf``: the counts and table counts, flat) -- see
    :func:`hdp_sweeps` for the conditional and how it is drawn.  A function of its own,
    called once a sweep: the hot loop gets the registers to itself.

    The running product of the ratios takes two candidates a step (``w`` times
    ``f_j f_{j+1}``), so the chain of multiplications and that of the running sum are
    half as long; the denominators come from the reciprocal tables of
    :func:`_fill_recip`.  Both change the last bits of the weights, which decide a draw
    only when the uniform falls within a rounding error of a running sum.

    Starts at pair ``start`` and returns the index of the first pair it leaves to
    :func:`_update_slow` (counts beyond the exact tables, or weights beyond doubles),
    or the number of pairs when the pass is done.  This pass calls no compiled function
    that takes arrays, so numba prunes the reference counting of its array arguments
    (with the rare paths inside it, each call would pay that counting: about as much as
    the pass's arithmetic on a small tree)."""
    # The hot path is written out here: numba's inlined helpers taking arrays pay
    # atomic reference counting of each array at every call, more than the arithmetic.
    # Table offsets are unsigned so that numba drops its negative-index wraparound.
    npairs = plan.shape[0] // 6
    for jj in range(start, npairs):
        b = uint64(6 * jj)
        ik = uint64(plan[b])
        pkf = uint64(plan[b + uint64(1)])
        i = uint64(plan[b + uint64(2)])
        p = uint64(plan[b + uint64(3)])
        nk = nf[ik]
        old = tf[ik]
        if nk <= 1:
            inc = nk - old
            if inc != 0 and not (inc < 0 and nf[pkf] + inc < tf[pkf]):
                tf[ik] = nk
                tsum[i] += inc
                nf[pkf] += inc
                nsum[p] += inc
            continue
        npk = nf[pkf] - old  # the parent's count without this node's tables
        tpk = tf[pkf]
        lo, hi = _window(nk, old, npk, tpk, window, max_tk)
        nps = nsum[p] - old
        a = concx[uint64(plan[b + uint64(4)])]
        gp = uint64(plan[b + uint64(5)])
        cp = concx[gp]
        m = hi - lo + 1
        den0 = cp + (nps + lo)
        # the ratios f_j = w(lo + j + 1) / w(lo + j), and the weights relative to w(lo) = 1
        # summed in the same pass (running sums in cum); the ratios themselves are kept
        # (in f) only for the rare draw on the log scale
        w = 1.0
        tot = 1.0
        # a child of the root with the root's table counts summed out (root_base = c0 / r):
        # the root's factor is Gamma(c0 / r + q) instead of S(q, 1), its ratio q + c0 / r
        shift = root_base if p == 0 else 0.0
        if nk <= n_lim and npk + hi <= n_lim and shift == 0.0:  # every count within the tables
            ob = uint64(nk * (nk + 1) // 2 + lo)
            pb = uint64(pcol_offset(tpk, n_tab) - tpk + npk + lo)  # P(q, 1) = q is column 1
            n1 = m - 1
            if nps + hi <= rlen[gp]:  # the reciprocals 1 / (cp + q) from the parent group's table
                rb = uint64(roff[gp] + nps + lo)
                j = 0
                while j + 1 < n1:
                    f0 = rtab[ob + uint64(j)] * a * pcol[pb + uint64(j)] * recip[rb + uint64(j)]
                    f1 = rtab[ob + uint64(j + 1)] * a * pcol[pb + uint64(j + 1)] * recip[rb + uint64(j + 1)]
                    w0 = w * f0
                    w = w * (f0 * f1)
                    c0 = tot + w0
                    tot = tot + (w0 + w)
                    cum[j] = c0
                    cum[j + 1] = tot
                    j += 2
                if j < n1:
                    fj = rtab[ob + uint64(j)] * a * pcol[pb + uint64(j)] * recip[rb + uint64(j)]
                    w *= fj
                    tot += w
                    cum[j] = tot
            else:
                for j in range(n1):
                    fj = rtab[ob + uint64(j)] * a * pcol[pb + uint64(j)] / (den0 + j)
                    w *= fj
                    tot += w
                    cum[j] = tot
        elif nk <= n_lim and tpk == 1:  # a child of the root, whose counts may exceed them
            ob = uint64(nk * (nk + 1) // 2 + lo)
            q0 = float(npk + lo) + shift
            for j in range(m - 1):
                fj = rtab[ob + uint64(j)] * a * (q0 + j) / (den0 + j)
                w *= fj
                tot += w
                cum[j] = tot
        else:  # counts beyond the tables: _update_slow
            return jj
        if not tot < _BIG:  # beyond doubles (windows far wider than the default): _update_slow
            return jj
        # inversion in ascending order, branch-free: the number of running sums
        # (cum[j]: candidates lo .. lo + j + 1) not above the draw
        x = (uniform(rng) if skey == 0 else keyed_uniform(skey, ik)) * tot
        cnt = 1 if 1.0 <= x else 0
        for j in range(m - 1):
            cnt += cum[uint64(j)] <= x
        new = lo + min(cnt, m - 1)
        inc = new - old  # written even when zero: a branch here was a coin flip
        tf[ik] = new
        tsum[i] += inc
        nf[pkf] += inc
        nsum[p] += inc
    return npairs


@njit(cache=True, nogil=True, error_model="numpy")
def _update_slow(  # pragma: no cover - compiled
    rng, jj, plan, nf, tf, nsum, tsum, concx, window, max_tk, rtab, pcol, n_tab, n_lim, ckeys, cvals, f, cum, root_base,
    skey,
):
    """The update of pair ``jj`` that :func:`_sweep_table_counts` leaves out: the same
    conditional and window, its ratios from :func:`_ratios_beyond` (beyond ``n_lim``
    from :func:`log_stirling_beyond`), drawn by the same inversion, or on the log scale
    (:func:`_draw_log`) where the weights pass the range of doubles."""
    b = uint64(6 * jj)
    ik = uint64(plan[b])
    pkf = uint64(plan[b + uint64(1)])
    i = uint64(plan[b + uint64(2)])
    p = uint64(plan[b + uint64(3)])
    nk = nf[ik]
    old = tf[ik]
    npk = nf[pkf] - old
    tpk = tf[pkf]
    lo, hi = _window(nk, old, npk, tpk, window, max_tk)
    nps = nsum[p] - old
    a = concx[uint64(plan[b + uint64(4)])]
    cp = concx[uint64(plan[b + uint64(5)])]
    m = hi - lo + 1
    shift = root_base if p == 0 else 0.0
    _ratios_beyond(f, nk, lo, hi, npk, nps, tpk, a, cp, rtab, pcol, n_tab, n_lim, ckeys, cvals, shift)
    w = 1.0
    tot = 1.0
    for j in range(m - 1):
        w *= f[j]
        tot += w
        cum[j] = tot
    u = uniform(rng) if skey == 0 else keyed_uniform(skey, ik)
    if not tot < _BIG:
        new = lo + _draw_log(u, f, m, cum)
    else:
        x = u * tot
        cnt = 1 if 1.0 <= x else 0
        for j in range(m - 1):
            cnt += cum[uint64(j)] <= x
        new = lo + min(cnt, m - 1)
    inc = new - old
    tf[ik] = new
    tsum[i] += inc
    nf[pkf] += inc
    nsum[p] += inc


@njit(cache=True, nogil=True, error_model="numpy")
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
    sched_i,
    sched_k,
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
    rtab,
    pcol,
    n_tab,
    n_lim,
    ckeys,
    cvals,
    pk,
    pk2,
    acc,
    acc2,
    accsq,
    track_sq,
    b1,
    b2,
    b3,
    state_n,
    state_c,
    state_meta,
    conc_trace,
    leaf_trace,
    thin,
    debug,
    root_base,
    root_h,
    root_ch,
    key,
):
    """Run sweeps ``start_iter .. start_iter + n_sweeps - 1`` of the sampler.

    Each sweep samples every table count bottom-up, in the order of the schedule
    ``sched_i``, ``sched_k`` (node, value): the leaf values counted at least twice (a
    leaf's counts are data, so its other table counts never move), then every value of
    the internal nodes below the root, level by level; then the root's.

    A table count ``t`` of value ``k`` at node ``i`` is drawn from its conditional
    (Petitjean et al. 2018, Algorithms 3-4) within ``[lo, hi]`` (the window around its current value
    ``old``, within ``1 .. n``, keeping the parent's count at least its table count):

    .. math:: w(t) \\propto S^{n}_{t}\\, a^{t}\\, S^{n_{pa} + t}_{t_{pa}} / (c_{pa} + N_{pa})^{(t)}

    (:math:`n_{pa}`, :math:`N_{pa}`: the parent's count of ``k`` and its total without
    this node's tables; ``a``, :math:`c_{pa}`: the node's and the parent's
    concentrations).  Neighbouring weights differ by the factor

    .. math:: f(t) = \\frac{w(t + 1)}{w(t)} = R(n, t)\\, a\\, P(n_{pa} + t, t_{pa}) / (c_{pa} + N_{pa} + t)

    with the exact ratio tables :math:`R(n, t) = S^n_{t+1} / S^n_t` and
    :math:`P(q, t) = S^{q+1}_t / S^q_t` of :mod:`._stirling` (beyond ``n_lim``, the fit's
    own limit so that its draws never depend on the tables' size, from
    :func:`log_stirling_beyond`): no logarithm or exponential per candidate.  One pass
    computes the ratios, the weights relative to ``w(lo) = 1`` and their running sums; the
    draw inverts them in ascending order with a branch-free count (see
    :func:`_sweep_table_counts`, which runs the pass over the schedule).  The window's
    candidates below ``1e-17`` of the largest weight could be skipped without changing
    a draw, but on the reference data none is (every window is scanned in full).

    Concentrations are sampled when ``(iter + every // 2) % every == 0`` (every 5 sweeps
    by default, as the reference); after ``burn_in`` sweeps the estimates are
    accumulated in ``acc``/``acc2`` (the leaves' through their parents' sums ``b1``/``b2``/``b3``,
    see :func:`_flush_leaves`) and, every ``state_meta[1]`` of them, the state is kept
    for posterior draws (:func:`_record_state`).
    ``root_h``: the root's base measure in the estimates (``1 / r`` each, or an expert
    network's :math:`P(x)`), ``root_ch`` the same times ``c_root``.
    ``key``: 0 draws every random number from the chain's stream ``rng`` in turn; any
    other value keys them (common random numbers for two coupled chains, see
    :meth:`~pybncsmooth.estimators.hdp.estimator.HDP.estimate_all`): sweep ``it``'s key is a hash
    of ``(key, it)``, the table count of entry ``ik`` (flat ``node * r + value``) is drawn
    from the uniform hashed from ``(sweep key, ik)``, and each concentration group draws
    from its own stream (:func:`_sample_concentrations`).  Two chains on trees of the
    same layout then use the same number for the same decision, whatever their data.
    Returns ``(records, concentration events, leaf draws, offending node or -1)``.
    """
    N, r = n.shape
    L = lstart.shape[0] - 1
    if L < 2:  # a lone root (a node without parents): nothing moves, every sweep records the same
        return _lone_root(n, nsum, c_root, root_ch, start_iter, n_sweeps, burn_in, acc, acc2, accsq, track_sq,
                          leaf_trace, thin)
    leaf0 = lstart[L - 1]  # nodes from here on are leaves with a parent
    f = np.empty(2 * window + 2)
    cum = np.empty(2 * window + 2)
    n_rec = 0
    n_events = 0
    n_draws = 0
    n_levels = conc_trace.shape[1]
    cnt = np.zeros(n_levels)
    m_run = 0  # sweeps in b1/b2 since the last flush
    # the update's lookups resolved once (see _sweep_plan); the concentrations with the
    # root's last; the reciprocal tables of the denominators (see _fill_recip)
    G = conc.shape[0]
    plan = _sweep_plan(sched_i, sched_k, parent, group, r, G)
    npairs = plan.shape[0] // 6
    concx = np.empty(G + 1)
    for g in range(G):
        concx[g] = conc[g]
    concx[G] = c_root
    nf = n.reshape(-1)
    tf = t.reshape(-1)
    pgroup = np.empty(max(leaf0, 1), dtype=np.int64)
    for p in range(leaf0):
        pgroup[p] = group[p] if group[p] >= 0 else G
    roff = np.zeros(G + 1, dtype=np.int64)
    rlen = np.zeros(G + 1, dtype=np.int64)
    recip = _fill_recip(np.empty(64), roff, rlen, nsum, pgroup, leaf0, concx, window)
    for it in range(start_iter, start_iter + n_sweeps):
        # keyed draws (key != 0): this sweep's key
        skey = sweep_key(key, it)
        jj = 0
        while True:
            jj = _sweep_table_counts(
                rng,
                plan,
                nf,
                tf,
                nsum,
                tsum,
                concx,
                window,
                max_tk,
                rtab,
                pcol,
                n_tab,
                n_lim,
                cum,
                root_base,
                recip,
                roff,
                rlen,
                jj,
                skey,
            )
            if jj >= npairs:
                break
            _update_slow(
                rng,
                jj,
                plan,
                nf,
                tf,
                nsum,
                tsum,
                concx,
                window,
                max_tk,
                rtab,
                pcol,
                n_tab,
                n_lim,
                ckeys,
                cvals,
                f,
                cum,
                root_base,
                skey,
            )
            jj += 1
        for k in range(r):  # the root: one table per observed value
            new = 1 if n[0, k] > 0 else 0
            tsum[0] += new - t[0, k]
            t[0, k] = new

        if conc.shape[0] > 0 and (it + every // 2) % every == 0:
            if leaf0 < N:
                _flush_leaves(n, nsum, parent, group, conc, leaf0, b1, b2, b3, m_run, acc, acc2, accsq, track_sq)
                m_run = 0
            _sample_concentrations(rng, nsum, tsum, conc, logc, group_nodes, group_off, prior_shape, prior_rate, cap,
                                   skey)
            for g in range(G):
                concx[g] = conc[g]
            recip = _fill_recip(recip, roff, rlen, nsum, pgroup, leaf0, concx, window)
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
            _record_internal(n, nsum, parent, group, conc, c_root, root_h, leaf0, pk, pk2, acc, acc2, accsq,
                             track_sq)
            if leaf0 < N:
                for p in range(parent[leaf0], parent[N - 1] + 1):
                    for k in range(r):
                        b1[p, k] += pk[p, k]
                        b3[p, k] += pk2[p, k]
                    if track_sq:
                        for k in range(r):
                            b2[p, k] += pk[p, k] * pk[p, k]
                m_run += 1
            if state_n.shape[0] > 0 and (it - burn_in) % state_meta[1] == 0:  # a call only when one is kept
                _record_state(n, conc, leaf0, it - burn_in, state_n, state_c, state_meta)
            n_rec += 1
            if thin > 0 and (it - burn_in) % thin == 0:
                d = (it - burn_in) // thin
                if d < leaf_trace.shape[0]:
                    q = 0
                    for i in range(leaf0, N):  # leaves have a parent and a concentration group
                        p = parent[i]
                        c = conc[group[i]]
                        inv = 1.0 / (nsum[i] + c)
                        for k in range(r):
                            leaf_trace[d, q] = (n[i, k] + c * pk[p, k]) * inv
                            q += 1
                    n_draws += 1
    if leaf0 < N:
        _flush_leaves(n, nsum, parent, group, conc, leaf0, b1, b2, b3, m_run, acc, acc2, accsq, track_sq)
    return n_rec, n_events, n_draws, -1
