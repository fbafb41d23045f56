"""numba kernels of selective kDB's incremental leave-one-out pass."""

from __future__ import annotations

import numpy as np
from .._jit import njit

__all__ = ["loo_attribute_probs", "loo_normalize_losses", "loo_attribute_losses", "loo_level_posterior",
           "tempered_log_losses", "loo_dense_maps", "loo_attribute_losses_by_class", "loo_attribute_losses_by_key",
           "loo_level_posterior_by_key", "loo_level_posterior_by_class", "loo_summed_out_posteriors"]


@njit(cache=True, nogil=True)
def loo_attribute_probs(  # pragma: no cover - compiled
    x, P, y, n_classes, r, cards, keys, offsets, dense, dense_offsets, counts, totals, probtab, m, d, out
):
    """Multiply ``out[k', i, c]``, for each row ``i``, class ``c`` and number of extra
    parents ``k'``, by the leave-one-out m-estimate :math:`\\hat p_{-i}(x_i \\mid c, \\pi^{k'}_i)`
    (the posteriors are kept in linear space and renormalised by
    :func:`loo_normalize_losses` after every attribute: no logarithm or exponential).

    The attribute's context tree branches on the class first, then on its parents
    (``P[:, 1:]``; ``P[:, 0]`` is ignored).  Row ``i``'s own counts are removed from
    the nodes on its path (the root always, deeper nodes when ``c`` is its class);
    a node left with no data backs off to its ancestor (Petitjean et al. 2018, Sec. 6.1).
    Tree level ``j`` holds ``keys[offsets[j]:offsets[j + 1]]`` and the matching
    rows of ``counts``, ``totals`` and ``probtab`` (the m-estimates of the full data,
    used as they are on paths that do not hold row ``i``).  Where
    ``dense_offsets[j] >= 0``, ``dense[dense_offsets[j] + cfg]`` maps the level's
    mixed-radix configuration code to its node (or -1), replacing the binary search.
    ``d[i]``: what row ``i`` contributes to the counts it is taken out of (1; with row
    weights ``min(w_i, 1)``: one copy of a row of integer weight, the whole of a
    fractional one).
    """
    n = x.shape[0]
    depth = offsets.shape[0] - 2
    kmax = out.shape[0] - 1
    for i in range(n):
        xi = x[i]
        yi = y[i]
        di = d[i]
        tot0 = totals[0] - di
        if tot0 + m > 0:
            p_root = (counts[0, xi] - di + m / r) / (tot0 + m)
        else:
            p_root = 1.0 / r
        for c in range(n_classes):
            own = c == yi
            lest = p_root
            node = 0
            cfg = 0
            alive = True
            for j in range(1, depth + 1):
                v = c if j == 1 else P[i, j - 1]
                if alive and v >= 0:
                    cfg = cfg * cards[j - 1] + v
                    found = -1
                    if dense_offsets[j] >= 0:
                        g = dense[dense_offsets[j] + cfg]
                        if g >= 0:
                            found = offsets[j] + g
                    else:
                        key = node * cards[j - 1] + v
                        lo = offsets[j]
                        hi = offsets[j + 1]
                        while lo < hi:
                            mid = (lo + hi) // 2
                            if keys[mid] < key:
                                lo = mid + 1
                            else:
                                hi = mid
                        if lo < offsets[j + 1] and keys[lo] == key:
                            found = lo
                    if found >= 0:
                        node = found - offsets[j]
                        if own:
                            tot = totals[found] - di
                            if tot > 0:
                                lest = (counts[found, xi] - di + m / r) / (tot + m)
                        else:
                            lest = probtab[found, xi]
                    else:
                        alive = False
                else:
                    alive = False
                if j - 1 <= kmax:
                    out[j - 1, i, c] *= lest
            for kk in range(depth, kmax + 1):
                out[kk, i, c] *= lest


@njit(cache=True, nogil=True)
def loo_attribute_losses(  # pragma: no cover - compiled
    x, P, y, n_classes, r, cards, keys, offsets, dense, dense_offsets, counts, totals, probtab, m, d, out, kind, wt,
    out_col,
):
    """:func:`loo_attribute_probs` and :func:`loo_normalize_losses` in one pass over
    the rows: each row's posteriors are multiplied by the attribute's leave-one-out
    m-estimates, then normalised and their losses added to ``out_col[k']`` while they
    are in cache (the two passes over ``out`` the two kernels make, at ``(k + 1) n K``
    doubles each, cost as much as the work on large sets).  The same arithmetic in the
    same order: the same numbers."""
    n = x.shape[0]
    depth = offsets.shape[0] - 2
    kmax = out.shape[0] - 1
    acc = np.zeros(kmax + 1)
    for i in range(n):
        xi = x[i]
        yi = y[i]
        di = d[i]
        tot0 = totals[0] - di
        if tot0 + m > 0:
            p_root = (counts[0, xi] - di + m / r) / (tot0 + m)
        else:
            p_root = 1.0 / r
        for c in range(n_classes):
            own = c == yi
            lest = p_root
            node = 0
            cfg = 0
            alive = True
            for j in range(1, depth + 1):
                v = c if j == 1 else P[i, j - 1]
                if alive and v >= 0:
                    cfg = cfg * cards[j - 1] + v
                    found = -1
                    if dense_offsets[j] >= 0:
                        g = dense[dense_offsets[j] + cfg]
                        if g >= 0:
                            found = offsets[j] + g
                    else:
                        key = node * cards[j - 1] + v
                        lo = offsets[j]
                        hi = offsets[j + 1]
                        while lo < hi:
                            mid = (lo + hi) // 2
                            if keys[mid] < key:
                                lo = mid + 1
                            else:
                                hi = mid
                        if lo < offsets[j + 1] and keys[lo] == key:
                            found = lo
                    if found >= 0:
                        node = found - offsets[j]
                        if own:
                            tot = totals[found] - di
                            if tot > 0:
                                lest = (counts[found, xi] - di + m / r) / (tot + m)
                        else:
                            lest = probtab[found, xi]
                    else:
                        alive = False
                else:
                    alive = False
                if j - 1 <= kmax:
                    out[j - 1, i, c] *= lest
            for kk in range(depth, kmax + 1):
                out[kk, i, c] *= lest
        for kk in range(kmax + 1):  # the row done: normalise it and add its loss (loo_normalize_losses)
            s = 0.0
            arg = 0
            mx = -1.0
            for c in range(n_classes):
                v = out[kk, i, c]
                s += v
                if v > mx:
                    mx = v
                    arg = c
            inv = 1.0 / s
            se = 0.0
            for c in range(n_classes):
                v = out[kk, i, c] * inv
                out[kk, i, c] = v
                dd = v - (1.0 if c == yi else 0.0)
                se += dd * dd
            if kind == 0:
                acc[kk] += wt[i] * se
            elif kind == 1:
                acc[kk] += wt[i] * -np.log(max(out[kk, i, yi], 1e-300))
            else:
                acc[kk] += wt[i] * (1.0 if arg != yi else 0.0)
    for kk in range(kmax + 1):
        out_col[kk] = acc[kk]


@njit(cache=True, nogil=True)
def loo_normalize_losses(post, y, kind, wt, out_col):  # pragma: no cover - compiled
    """Normalise the posteriors ``post[k', i, :]`` in place (they stay in linear space
    without underflow) and write into ``out_col[k']`` the sum over rows of their loss,
    row ``i`` weighted by ``wt[i]``: ``kind`` 0 = squared error over all classes, 1 =
    log loss, 2 = 0-1 loss."""
    nk, n, K = post.shape
    for kk in range(nk):
        acc = 0.0
        for i in range(n):
            s = 0.0
            arg = 0
            mx = -1.0
            for c in range(K):
                v = post[kk, i, c]
                s += v
                if v > mx:
                    mx = v
                    arg = c
            inv = 1.0 / s
            se = 0.0
            for c in range(K):
                v = post[kk, i, c] * inv
                post[kk, i, c] = v
                d = v - (1.0 if c == y[i] else 0.0)
                se += d * d
            if kind == 0:
                acc += wt[i] * se
            elif kind == 1:
                acc += wt[i] * -np.log(max(post[kk, i, y[i]], 1e-300))
            else:
                acc += wt[i] * (1.0 if arg != y[i] else 0.0)
        out_col[kk] = acc


@njit(cache=True, nogil=True)
def loo_level_posterior(  # pragma: no cover - compiled
    x, P, y, n_classes, r, cards, keys, offsets, dense, dense_offsets, counts, totals, probtab, m, d, level, out
):
    """One sub-model's posteriors of :func:`loo_attribute_probs` then
    :func:`loo_normalize_losses`: ``out[i, c]`` (``(n, K)``, the posteriors at
    ``k' = level``) multiplied by the attribute's leave-one-out m-estimate at
    ``level`` extra parents, then each row normalised, in one pass over the rows.
    The same arithmetic in the same order as those two kernels' on ``out[level]``
    (the same numbers), without the other sub-models' (tempering needs one: the
    selected ``k*``)."""
    n = x.shape[0]
    depth = offsets.shape[0] - 2
    last = min(depth, level + 1)  # the deepest tree level the sub-model reads
    for i in range(n):
        xi = x[i]
        yi = y[i]
        di = d[i]
        tot0 = totals[0] - di
        if tot0 + m > 0:
            p_root = (counts[0, xi] - di + m / r) / (tot0 + m)
        else:
            p_root = 1.0 / r
        for c in range(n_classes):
            own = c == yi
            lest = p_root
            node = 0
            cfg = 0
            for j in range(1, last + 1):
                v = c if j == 1 else P[i, j - 1]
                if v < 0:
                    break
                cfg = cfg * cards[j - 1] + v
                found = -1
                if dense_offsets[j] >= 0:
                    g = dense[dense_offsets[j] + cfg]
                    if g >= 0:
                        found = offsets[j] + g
                else:
                    key = node * cards[j - 1] + v
                    lo = offsets[j]
                    hi = offsets[j + 1]
                    while lo < hi:
                        mid = (lo + hi) // 2
                        if keys[mid] < key:
                            lo = mid + 1
                        else:
                            hi = mid
                    if lo < offsets[j + 1] and keys[lo] == key:
                        found = lo
                if found < 0:
                    break
                node = found - offsets[j]
                if own:
                    tot = totals[found] - di
                    if tot > 0:
                        lest = (counts[found, xi] - di + m / r) / (tot + m)
                else:
                    lest = probtab[found, xi]
            out[i, c] *= lest
        s = 0.0
        for c in range(n_classes):
            s += out[i, c]
        inv = 1.0 / s
        for c in range(n_classes):
            out[i, c] = out[i, c] * inv


@njit(cache=True, nogil=True)
def tempered_log_losses(logs, y, w, step, floor, out):  # pragma: no cover - compiled
    r"""``out[g]``: the summed log loss of the mean of the members' tempered posteriors
    at the exponent :math:`\beta_g = (g + 1)\,\delta` (``step`` :math:`\delta`),
    :math:`\sum_i w_i\,(-\log \frac1M \sum_m q_{m,i,y_i})`,
    :math:`q_{m,i,c} = p^\beta_{m,i,c} / \sum_{c'} p^\beta_{m,i,c'}` from the log
    posteriors ``logs`` (members x rows x classes); a probability below ``floor``
    counts as ``floor``.  Each member's row is shifted by its largest log (no
    overflow) and :math:`u_c = e^{\delta (\log p_c - \max)} \le 1` taken once: the
    numerators at :math:`\beta_g` are :math:`u_c^{g+1}`, one product a step (one
    exponential a class, not one a class and exponent; a few ulps from the
    exponentials)."""
    M, n, K = logs.shape
    G = out.shape[0]
    u = np.empty(K)
    cur = np.empty(K)
    pt = np.empty(G)
    acc = np.zeros(G)
    for i in range(n):
        yi = y[i]
        for g in range(G):
            pt[g] = 0.0
        for mm in range(M):
            mx = logs[mm, i, 0]
            for c in range(1, K):
                if logs[mm, i, c] > mx:
                    mx = logs[mm, i, c]
            for c in range(K):
                u[c] = np.exp(step * (logs[mm, i, c] - mx))
                cur[c] = u[c]
            for g in range(G):
                if g > 0:
                    for c in range(K):
                        cur[c] *= u[c]
                s = 0.0
                for c in range(K):
                    s += cur[c]
                pt[g] += cur[yi] / s
        for g in range(G):
            acc[g] += w[i] * -np.log(max(pt[g] / M, floor))
    for g in range(G):
        out[g] = acc[g]


@njit(cache=True, nogil=True)
def loo_dense_maps(parent, value, offsets, cards, limit):  # pragma: no cover - compiled
    """Per tree level ``j >= 1`` while the level's configuration space (the product of
    ``cards[:j]``) is at most ``limit``, a map from a node's mixed-radix configuration
    code to its index in the level (-1: no node), all maps in one array ``dense``;
    ``offs[j]`` where level ``j``'s map starts (-1: none, for that level and every
    deeper one).  ``parent``, ``value``: the nodes of levels ``1 .. depth`` in flat order
    (``offsets``: where each level starts, the root's level 0 one node)."""
    depth = offsets.shape[0] - 2
    offs = np.full(depth + 1, -1, dtype=np.int64)
    total = 0
    q = 1
    for j in range(1, depth + 1):
        q *= cards[j - 1]
        if q > limit:
            break
        offs[j] = total
        total += q
    if total == 0:
        return np.zeros(1, dtype=np.int64), offs
    dense = np.full(total, -1, dtype=np.int64)
    code = np.zeros(offsets[depth + 1], dtype=np.int64)
    for j in range(1, depth + 1):
        if offs[j] < 0:
            break
        for g in range(offsets[j], offsets[j + 1]):
            c = code[offsets[j - 1] + parent[g - 1]] * cards[j - 1] + value[g - 1]
            code[g] = c
            dense[offs[j] + c] = g - offsets[j]
    return dense, offs



@njit(cache=True, nogil=True)
def loo_attribute_losses_by_class(  # pragma: no cover - compiled
    x, P, y, n_classes, r, cards, keys, offsets, dense, dense_offsets, counts, totals, probtab, m, d, out, kind, wt,
    out_col,
):
    """:func:`loo_attribute_losses` for a tree whose every level has a dense map,
    reading each row's estimates of the classes other than its own as one vector: the
    same numbers (every ``out[k', i, c]`` multiplied by the same estimate, then the rows
    normalised as there), less work when there are many classes.

    For a class ``c`` other than row ``i``'s, the estimate at tree level ``j`` is the
    full-data m-estimate ``probtab`` of the deepest node on the path ``(c, parents)``
    down to level ``j`` (no count of row ``i`` is on it): it depends on the row only
    through its parents' configuration ``pc`` at that level and its value ``x_i``.  So
    a table ``T[j][pc, x, c]`` (classes contiguous) is filled first, level by level,
    an absent node backing off to its parent's entry, and a row then multiplies its
    ``K`` posteriors at each level by one contiguous vector; its own class's estimate
    (its counts taken out) is made as in :func:`loo_attribute_losses`, on its own path
    only.  A level's dense map indexes the configuration ``c * stride_j + pc``
    (``stride_j``: the product of the parents' cardinalities above level ``j``).  The
    table holds ``r K \\sum_j stride_j`` doubles: the caller takes this kernel only when
    that is small beside the ``n K (k + 1)`` estimates it serves
    (:func:`~pybncsmooth.classifiers.skdb._by_class_table_size`).  A class without a
    node of its own (no row) backs off to the root, whose estimate takes row ``i`` out
    (``p_root``): it is read as in the other kernel.
    """
    n = x.shape[0]
    depth = offsets.shape[0] - 2
    kmax = out.shape[0] - 1
    K = n_classes
    acc = np.zeros(kmax + 1)
    stride = np.ones(depth + 1, dtype=np.int64)
    toff = np.zeros(depth + 2, dtype=np.int64)
    for j in range(2, depth + 1):
        stride[j] = stride[j - 1] * cards[j - 1]
    for j in range(1, depth + 1):
        toff[j + 1] = toff[j] + stride[j] * r * K
    T = np.empty(toff[depth + 1])
    has_class = np.zeros(K, dtype=np.bool_)
    all_class = True
    for c in range(K):
        g = dense[dense_offsets[1] + c]
        if g >= 0:
            has_class[c] = True
            for xv in range(r):
                T[xv * K + c] = probtab[offsets[1] + g, xv]
        else:
            all_class = False
            for xv in range(r):
                T[xv * K + c] = 0.0  # never read: has_class
    for j in range(2, depth + 1):
        cj = cards[j - 1]
        for pc in range(stride[j]):
            src = toff[j - 1] + (pc // cj) * r * K  # the parent configuration's entry: the back-off
            dst = toff[j] + pc * r * K
            for c in range(K):
                g = dense[dense_offsets[j] + c * stride[j] + pc]
                if g >= 0:
                    f = offsets[j] + g
                    for xv in range(r):
                        T[dst + xv * K + c] = probtab[f, xv]
                else:
                    for xv in range(r):
                        T[dst + xv * K + c] = T[src + xv * K + c]
    own_l = np.empty(depth + 1)
    pcs = np.zeros(depth + 1, dtype=np.int64)
    for i in range(n):
        xi = x[i]
        yi = y[i]
        di = d[i]
        tot0 = totals[0] - di
        if tot0 + m > 0:
            p_root = (counts[0, xi] - di + m / r) / (tot0 + m)
        else:
            p_root = 1.0 / r
        jl = 1  # the deepest level whose parents the row has (a missing parent ends its path)
        pc = 0
        for j in range(2, depth + 1):
            v = P[i, j - 1]
            if v < 0:
                break
            pc = pc * cards[j - 1] + v
            pcs[j] = pc
            jl = j
        # its own class: its counts taken out, as loo_attribute_losses
        lest = p_root
        reached = jl
        for j in range(1, jl + 1):
            g = dense[dense_offsets[j] + yi * stride[j] + pcs[j]]
            if g < 0:
                reached = j - 1
                break
            f = offsets[j] + g
            tot = totals[f] - di
            if tot > 0:
                lest = (counts[f, xi] - di + m / r) / (tot + m)
            own_l[j] = lest
        for j in range(reached + 1, depth + 1):
            own_l[j] = lest
        for j in range(1, kmax + 2):
            jj = min(j, jl)
            base = toff[jj] + (pcs[jj] * r + xi) * K
            o = out[j - 1, i, yi]
            if all_class:
                for c in range(K):
                    out[j - 1, i, c] *= T[base + c]
            else:
                for c in range(K):
                    out[j - 1, i, c] *= T[base + c] if has_class[c] else p_root
            out[j - 1, i, yi] = o * own_l[min(j, depth)]
        for kk in range(kmax + 1):  # the row done: normalise it and add its loss (loo_normalize_losses)
            s = 0.0
            arg = 0
            mx = -1.0
            for c in range(n_classes):
                v = out[kk, i, c]
                s += v
                if v > mx:
                    mx = v
                    arg = c
            inv = 1.0 / s
            se = 0.0
            for c in range(n_classes):
                v = out[kk, i, c] * inv
                out[kk, i, c] = v
                dd = v - (1.0 if c == yi else 0.0)
                se += dd * dd
            if kind == 0:
                acc[kk] += wt[i] * se
            elif kind == 1:
                acc[kk] += wt[i] * -np.log(max(out[kk, i, yi], 1e-300))
            else:
                acc[kk] += wt[i] * (1.0 if arg != yi else 0.0)
    for kk in range(kmax + 1):
        out_col[kk] = acc[kk]


@njit(cache=True, nogil=True)
def loo_attribute_losses_by_key(  # pragma: no cover - compiled
    x, P, y, n_classes, r, cards, keys, offsets, dense, dense_offsets, counts, totals, probtab, m, d, out, kind, wt,
    out_col,
):
    """:func:`loo_attribute_losses` where every row takes out the same ``d`` and the
    attribute's rows fall on few distinct paths: the same numbers, each path's
    estimates made once.

    With ``d`` the same for every row, what row ``i`` multiplies its posteriors by
    (every class's estimate at every number of parents) depends on the row only
    through its class ``y_i``, its value ``x_i`` and its parents' configuration
    ``pc`` (when it has every parent): the key ``(y_i r + x_i) S + pc`` (``S``: the
    product of the non-class parents' cardinalities).  The first row of a key makes
    them as :func:`loo_attribute_losses` does (the same arithmetic on the same
    numbers) into ``M[key]``, the others read them; a row missing a parent makes its
    own, in the spare slot.  ``M`` holds ``(K r S + 1) (k + 1) K`` doubles: the caller
    takes this kernel only when ``K r S`` is at most half the rows
    (:func:`~pybncsmooth.classifiers.skdb._attribute_step_losses`; dna's 3 classes and
    binary features: the kernel in 0.56 of the time).
    """
    n = x.shape[0]
    depth = offsets.shape[0] - 2
    kmax = out.shape[0] - 1
    K = n_classes
    acc = np.zeros(kmax + 1)
    S = 1
    for j in range(1, depth):
        S *= cards[j]
    nkeys = K * r * S
    M = np.empty((nkeys + 1, kmax + 1, K))
    done = np.zeros(nkeys, dtype=np.bool_)
    for i in range(n):
        xi = x[i]
        yi = y[i]
        di = d[i]
        pc = 0
        full = True
        for j in range(1, depth):
            v = P[i, j]
            if v < 0:
                full = False
                break
            pc = pc * cards[j] + v
        slot = nkeys
        if full:
            slot = (yi * r + xi) * S + pc
        if slot == nkeys or not done[slot]:
            tot0 = totals[0] - di
            if tot0 + m > 0:
                p_root = (counts[0, xi] - di + m / r) / (tot0 + m)
            else:
                p_root = 1.0 / r
            for c in range(n_classes):
                own = c == yi
                lest = p_root
                node = 0
                cfg = 0
                alive = True
                for j in range(1, depth + 1):
                    v = c if j == 1 else P[i, j - 1]
                    if alive and v >= 0:
                        cfg = cfg * cards[j - 1] + v
                        found = -1
                        if dense_offsets[j] >= 0:
                            g = dense[dense_offsets[j] + cfg]
                            if g >= 0:
                                found = offsets[j] + g
                        else:
                            key = node * cards[j - 1] + v
                            lo = offsets[j]
                            hi = offsets[j + 1]
                            while lo < hi:
                                mid = (lo + hi) // 2
                                if keys[mid] < key:
                                    lo = mid + 1
                                else:
                                    hi = mid
                            if lo < offsets[j + 1] and keys[lo] == key:
                                found = lo
                        if found >= 0:
                            node = found - offsets[j]
                            if own:
                                tot = totals[found] - di
                                if tot > 0:
                                    lest = (counts[found, xi] - di + m / r) / (tot + m)
                            else:
                                lest = probtab[found, xi]
                        else:
                            alive = False
                    else:
                        alive = False
                    if j - 1 <= kmax:
                        M[slot, j - 1, c] = lest
                for kk in range(depth, kmax + 1):
                    M[slot, kk, c] = lest
            if slot < nkeys:
                done[slot] = True
        for kk in range(kmax + 1):
            for c in range(n_classes):
                out[kk, i, c] *= M[slot, kk, c]
        for kk in range(kmax + 1):  # the row done: normalise it and add its loss (loo_normalize_losses)
            s = 0.0
            arg = 0
            mx = -1.0
            for c in range(n_classes):
                v = out[kk, i, c]
                s += v
                if v > mx:
                    mx = v
                    arg = c
            inv = 1.0 / s
            se = 0.0
            for c in range(n_classes):
                v = out[kk, i, c] * inv
                out[kk, i, c] = v
                dd = v - (1.0 if c == yi else 0.0)
                se += dd * dd
            if kind == 0:
                acc[kk] += wt[i] * se
            elif kind == 1:
                acc[kk] += wt[i] * -np.log(max(out[kk, i, yi], 1e-300))
            else:
                acc[kk] += wt[i] * (1.0 if arg != yi else 0.0)
    for kk in range(kmax + 1):
        out_col[kk] = acc[kk]


@njit(cache=True, nogil=True)
def loo_level_posterior_by_key(  # pragma: no cover - compiled
    x, P, y, n_classes, r, cards, keys, offsets, dense, dense_offsets, counts, totals, probtab, m, d, level, out
):
    """:func:`loo_level_posterior` where every row takes out the same ``d`` and the rows
    fall on few paths down to the sub-model's level: the same numbers, each path's
    estimates made once, as :func:`loo_attribute_losses_by_key` does (the key
    ``(y_i r + x_i) S + pc`` over the parents the level reads, ``S`` the product of
    their cardinalities; a row missing one of them makes its own, in the spare slot).
    The caller takes it when ``K r S`` is at most half the rows."""
    n = x.shape[0]
    depth = offsets.shape[0] - 2
    last = min(depth, level + 1)  # the deepest tree level the sub-model reads
    S = 1
    for j in range(1, last):
        S *= cards[j]
    nkeys = n_classes * r * S
    M = np.empty((nkeys + 1, n_classes))
    done = np.zeros(nkeys, dtype=np.bool_)
    for i in range(n):
        xi = x[i]
        yi = y[i]
        di = d[i]
        pc = 0
        full = True
        for j in range(1, last):
            v = P[i, j]
            if v < 0:
                full = False
                break
            pc = pc * cards[j] + v
        slot = nkeys
        if full:
            slot = (yi * r + xi) * S + pc
        if slot == nkeys or not done[slot]:
            tot0 = totals[0] - di
            if tot0 + m > 0:
                p_root = (counts[0, xi] - di + m / r) / (tot0 + m)
            else:
                p_root = 1.0 / r
            for c in range(n_classes):
                own = c == yi
                lest = p_root
                node = 0
                cfg = 0
                for j in range(1, last + 1):
                    v = c if j == 1 else P[i, j - 1]
                    if v < 0:
                        break
                    cfg = cfg * cards[j - 1] + v
                    found = -1
                    if dense_offsets[j] >= 0:
                        g = dense[dense_offsets[j] + cfg]
                        if g >= 0:
                            found = offsets[j] + g
                    else:
                        key = node * cards[j - 1] + v
                        lo = offsets[j]
                        hi = offsets[j + 1]
                        while lo < hi:
                            mid = (lo + hi) // 2
                            if keys[mid] < key:
                                lo = mid + 1
                            else:
                                hi = mid
                        if lo < offsets[j + 1] and keys[lo] == key:
                            found = lo
                    if found < 0:
                        break
                    node = found - offsets[j]
                    if own:
                        tot = totals[found] - di
                        if tot > 0:
                            lest = (counts[found, xi] - di + m / r) / (tot + m)
                    else:
                        lest = probtab[found, xi]
                M[slot, c] = lest
            if slot < nkeys:
                done[slot] = True
        for c in range(n_classes):
            out[i, c] *= M[slot, c]
        s = 0.0
        for c in range(n_classes):
            s += out[i, c]
        inv = 1.0 / s
        for c in range(n_classes):
            out[i, c] = out[i, c] * inv


@njit(cache=True, nogil=True)
def loo_level_posterior_by_class(  # pragma: no cover - compiled
    x, P, y, n_classes, r, cards, keys, offsets, dense, dense_offsets, counts, totals, probtab, m, d, level, out
):
    """:func:`loo_level_posterior` reading a row's other classes as one vector, as
    :func:`loo_attribute_losses_by_class` does (the same numbers): the table ``T`` of
    the other classes' estimates is filled for the tree levels the sub-model reads
    (``1 .. min(depth, level + 1)``), then each row multiplies its ``K`` posteriors by
    the vector of its parents' configuration and value, its own class's estimate (its
    counts taken out) made on its own path."""
    n = x.shape[0]
    depth = offsets.shape[0] - 2
    last = min(depth, level + 1)  # the deepest tree level the sub-model reads
    K = n_classes
    stride = np.ones(last + 1, dtype=np.int64)
    toff = np.zeros(last + 2, dtype=np.int64)
    for j in range(2, last + 1):
        stride[j] = stride[j - 1] * cards[j - 1]
    for j in range(1, last + 1):
        toff[j + 1] = toff[j] + stride[j] * r * K
    T = np.empty(toff[last + 1])
    has_class = np.zeros(K, dtype=np.bool_)
    all_class = True
    for c in range(K):
        g = dense[dense_offsets[1] + c]
        if g >= 0:
            has_class[c] = True
            for xv in range(r):
                T[xv * K + c] = probtab[offsets[1] + g, xv]
        else:
            all_class = False
            for xv in range(r):
                T[xv * K + c] = 0.0  # never read: has_class
    for j in range(2, last + 1):
        cj = cards[j - 1]
        for pc in range(stride[j]):
            src = toff[j - 1] + (pc // cj) * r * K  # the parent configuration's entry: the back-off
            dst = toff[j] + pc * r * K
            for c in range(K):
                g = dense[dense_offsets[j] + c * stride[j] + pc]
                if g >= 0:
                    f = offsets[j] + g
                    for xv in range(r):
                        T[dst + xv * K + c] = probtab[f, xv]
                else:
                    for xv in range(r):
                        T[dst + xv * K + c] = T[src + xv * K + c]
    for i in range(n):
        xi = x[i]
        yi = y[i]
        di = d[i]
        tot0 = totals[0] - di
        if tot0 + m > 0:
            p_root = (counts[0, xi] - di + m / r) / (tot0 + m)
        else:
            p_root = 1.0 / r
        jl = 1  # the deepest level read whose parents the row has (a missing parent ends its path)
        pc = 0
        for j in range(2, last + 1):
            v = P[i, j - 1]
            if v < 0:
                break
            pc = pc * cards[j - 1] + v
            jl = j
        # its own class: its counts taken out, as loo_level_posterior
        lest = p_root
        cfg = yi
        for j in range(1, jl + 1):
            if j > 1:
                cfg = cfg * cards[j - 1] + P[i, j - 1]
            g = dense[dense_offsets[j] + cfg]
            if g < 0:
                break
            f = offsets[j] + g
            tot = totals[f] - di
            if tot > 0:
                lest = (counts[f, xi] - di + m / r) / (tot + m)
        base = toff[jl] + (pc * r + xi) * K
        o = out[i, yi]
        if all_class:
            for c in range(K):
                out[i, c] *= T[base + c]
        else:
            for c in range(K):
                out[i, c] *= T[base + c] if has_class[c] else p_root
        out[i, yi] = o * lest
        s = 0.0
        for c in range(n_classes):
            s += out[i, c]
        inv = 1.0 / s
        for c in range(n_classes):
            out[i, c] = out[i, c] * inv


@njit(cache=True, nogil=True, inline="always")
def _flat_estimate(  # pragma: no cover - compiled
    a, c, pv, v, kk, yi, apv, xi, di, m, depth, r, cards, cards_off, keys, keys_off, offs, offs_off, dense,
    dense_base, doffs, doffs_off, counts, counts_off, totals, nodes_off, probtab
):
    """The leave-one-out m-estimate :math:`\\hat p_{-i}(v \\mid c, \\pi)` of row ``i`` at
    ``kk`` extra parents on attribute ``a`` of the flat tables of
    :func:`loo_summed_out_posteriors`, for a query that completes the row's missing
    cells: class ``c``, parents ``pv`` (the tree's levels ``2, 3, ...``) and value ``v``,
    where the row itself has class ``yi``, parents ``apv`` and value ``xi`` (the missing
    level where a cell is missing).  Row ``i``'s ``di`` is taken out
    of the nodes on its own path only (the root; deeper, while the query's class and
    parents are the row's), and out of the count of its own value only; elsewhere the
    full data's m-estimates, with the back-off of :func:`loo_attribute_probs` (a node
    left with no data, or absent: its ancestor's estimate).  A query equal to the row
    gives :func:`loo_attribute_probs`'s number."""
    ra = r[a]
    co = cards_off[a]
    oo = offs_off[a]
    do = doffs_off[a]
    cb = counts_off[a]
    nb = nodes_off[a]
    dv = di if v == xi else 0.0
    tot0 = totals[nb] - di
    if tot0 + m > 0:
        lest = (counts[cb + v] - dv + m / ra) / (tot0 + m)
    else:
        lest = 1.0 / ra
    own = c == yi
    node = 0
    cfg = 0
    last = min(depth[a], kk + 1)
    for j in range(1, last + 1):
        u = c if j == 1 else pv[j - 2]
        if j > 1 and u != apv[j - 2]:
            own = False
        cfg = cfg * cards[co + j - 1] + u
        found = -1
        if doffs[do + j] >= 0:
            g = dense[dense_base[a] + doffs[do + j] + cfg]
            if g >= 0:
                found = offs[oo + j] + g
        else:
            key = node * cards[co + j - 1] + u
            lo = offs[oo + j]
            hi = offs[oo + j + 1]
            ko = keys_off[a]
            while lo < hi:
                mid = (lo + hi) // 2
                if keys[ko + mid] < key:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < offs[oo + j + 1] and keys[ko + lo] == key:
                found = lo
        if found < 0:
            break
        node = found - offs[oo + j]
        if own:
            tot = totals[nb + found] - di
            if tot > 0:
                lest = (counts[cb + found * ra + v] - dv + m / ra) / (tot + m)
        else:
            lest = probtab[cb + found * ra + v]
    return lest


@njit(cache=True, nogil=True, inline="always")
def _flat_path_levels(  # pragma: no cover - compiled
    a, c, apv, xi, yi, di, m, depth, r, cards, cards_off, keys, keys_off, offs, offs_off, dense, dense_base, doffs,
    doffs_off, counts, counts_off, totals, nodes_off, probtab, lev
):
    """``lev[j]``: :func:`_flat_estimate` of the row's own value and parents (``apv``)
    at class ``c`` and ``j - 1`` extra parents (``lev[0]``: the root's), for every
    ``j <= depth[a]``, from one walk down attribute ``a``'s tree."""
    ra = r[a]
    co = cards_off[a]
    oo = offs_off[a]
    do = doffs_off[a]
    cb = counts_off[a]
    nb = nodes_off[a]
    tot0 = totals[nb] - di
    if tot0 + m > 0:
        lest = (counts[cb + xi] - di + m / ra) / (tot0 + m)
    else:
        lest = 1.0 / ra
    lev[0] = lest
    own = c == yi
    node = 0
    cfg = 0
    alive = True
    for j in range(1, depth[a] + 1):
        if alive:
            u = c if j == 1 else apv[j - 2]
            cfg = cfg * cards[co + j - 1] + u
            found = -1
            if doffs[do + j] >= 0:
                g = dense[dense_base[a] + doffs[do + j] + cfg]
                if g >= 0:
                    found = offs[oo + j] + g
            else:
                key = node * cards[co + j - 1] + u
                lo = offs[oo + j]
                hi = offs[oo + j + 1]
                ko = keys_off[a]
                while lo < hi:
                    mid = (lo + hi) // 2
                    if keys[ko + mid] < key:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo < offs[oo + j + 1] and keys[ko + lo] == key:
                    found = lo
            if found < 0:
                alive = False
            else:
                node = found - offs[oo + j]
                if own:
                    tot = totals[nb + found] - di
                    if tot > 0:
                        lest = (counts[cb + found * ra + xi] - di + m / ra) / (tot + m)
                else:
                    lest = probtab[cb + found * ra + xi]
        lev[j] = lest


@njit(cache=True, nogil=True)
def loo_summed_out_posteriors(  # pragma: no cover - compiled
    x, miss, y, d, prior, ks, fpar, npar, depth, r, cards, cards_off, keys, keys_off, offs, offs_off, dense,
    dense_base, doffs, doffs_off, counts, counts_off, totals, nodes_off, probtab, m, limit, out, ok
):
    """Leave-one-out class posteriors of rows with missing cells, the cells summed out:
    ``out[i, a, l - 1, c]`` for row ``i`` (codes ``x[i]``, missing cells ``miss[i]``,
    columns the attributes in order), ``ks[a]`` extra parents and the first ``l``
    attributes; ``ok[i]`` false where the row's table over its missing cells in use
    would pass ``limit`` entries (its ``out`` is then not set).

    Variable elimination along the order: the table over the class and the missing
    attributes in use (class first, then the attributes as they entered, mixed radix)
    starts at the row's leave-one-out class prior ``prior[i]``; an attribute kept (observed,
    or missing with an observed descendant) multiplies it by its leave-one-out
    m-estimate (:func:`_flat_estimate`; a missing one adds its levels as a
    new axis); a missing attribute is summed out after the last attribute kept that has
    it among its first ``ks[a]`` parents.  A missing attribute with no observed
    descendant is left out: its factors sum to 1 over its levels.  ``fpar[t, q]``: the
    position of attribute ``t``'s ``q``-th full-kDB parent (``npar[t]`` of them); the
    attributes' context trees flattened one after the other (``*_off``: where attribute
    ``t``'s part starts; ``counts`` and ``probtab`` by node then level)."""
    n, L = x.shape
    K = prior.shape[1]
    phi = np.empty(limit)
    nphi = np.empty(limit)
    need = np.zeros(L, dtype=np.bool_)
    last = np.zeros(L, dtype=np.int64)
    slot = np.full(L, -1, dtype=np.int64)
    live = np.zeros(L, dtype=np.int64)
    livecard = np.zeros(L, dtype=np.int64)
    maxpa = max(fpar.shape[1], 1)
    pv = np.zeros(maxpa, dtype=np.int64)
    apv = np.zeros(maxpa, dtype=np.int64)
    vals = np.zeros(L + 1, dtype=np.int64)
    lpq = np.zeros(maxpa, dtype=np.int64)
    lps = np.zeros(maxpa, dtype=np.int64)
    fac = np.empty(limit)
    vals_f = np.zeros(offs.shape[0] + 2)
    maxdepth = 0
    for t in range(L):
        maxdepth = max(maxdepth, depth[t])
    simple = np.zeros(L, dtype=np.bool_)
    sfac = np.zeros((L, maxdepth + 1, K))
    for i in range(n):
        ok[i] = True
        for t in range(L):  # observed, with every parent observed: one walk for every k'
            simple[t] = not miss[i, t]
            for q in range(npar[t]):
                if miss[i, fpar[t, q]]:
                    simple[t] = False
            if simple[t]:
                for q in range(npar[t]):
                    apv[q] = x[i, fpar[t, q]]
                for c in range(K):
                    _flat_path_levels(t, c, apv, x[i, t], y[i], d[i], m, depth, r, cards, cards_off, keys, keys_off,
                                      offs, offs_off, dense, dense_base, doffs, doffs_off, counts, counts_off, totals,
                                      nodes_off, probtab, vals_f)
                    for j in range(depth[t] + 1):
                        sfac[t, j, c] = vals_f[j]
        for a in range(ks.shape[0]):
            kk = ks[a]
            for j in range(L - 1, -1, -1):  # kept: observed, or a parent of a kept attribute
                nd = not miss[i, j]
                t = j + 1
                while not nd and t < L:
                    if need[t]:
                        for q in range(min(kk, npar[t])):
                            if fpar[t, q] == j:
                                nd = True
                    t += 1
                need[j] = nd
            for j in range(L):  # where a missing attribute kept is last read
                lj = j
                if miss[i, j] and need[j]:
                    for t in range(j + 1, L):
                        if need[t]:
                            for q in range(min(kk, npar[t])):
                                if fpar[t, q] == j:
                                    lj = t
                last[j] = lj
            size = K
            for c in range(K):
                phi[c] = prior[i, c]
            nlive = 0
            for t in range(L):
                if need[t] and simple[t]:  # a factor of the class alone: the row's own path
                    lv = min(depth[t], kk + 1)
                    block = size // K
                    s = 0.0
                    for idx in range(size):
                        phi[idx] *= sfac[t, lv, idx // block]
                        s += phi[idx]
                    for idx in range(size):
                        phi[idx] /= s
                elif need[t]:
                    ent = miss[i, t]
                    rt = r[t]
                    nsize = size * rt if ent else size
                    if nsize > limit:
                        ok[i] = False
                        break
                    nlp = 0  # the attribute's parents in the table: its factor is a table over them
                    fsize = K * (rt if ent else 1)
                    for q in range(npar[t]):
                        apv[q] = x[i, fpar[t, q]]
                        if q < kk and slot[fpar[t, q]] >= 0:
                            lpq[nlp] = q
                            lps[nlp] = slot[fpar[t, q]]
                            nlp += 1
                            fsize *= livecard[slot[fpar[t, q]]]
                    for q in range(npar[t]):
                        pv[q] = apv[q]
                    for f in range(fsize):  # the factor over (class, parents in the table, value)
                        rem = f
                        v = x[i, t]
                        if ent:
                            v = rem % rt
                            rem //= rt
                        for g in range(nlp - 1, -1, -1):
                            cg = livecard[lps[g]]
                            pv[lpq[g]] = rem % cg
                            rem //= cg
                        fac[f] = _flat_estimate(t, rem, pv, v, kk, y[i], apv, x[i, t], d[i], m, depth, r, cards,
                                                cards_off, keys, keys_off, offs, offs_off, dense, dense_base, doffs,
                                                doffs_off, counts, counts_off, totals, nodes_off, probtab)
                    for idx in range(nsize):
                        rem = idx
                        v = 0
                        if ent:
                            v = rem % rt
                            rem //= rt
                        for b in range(nlive - 1, -1, -1):
                            vals[b] = rem % livecard[b]
                            rem //= livecard[b]
                        f = rem
                        for g in range(nlp):
                            f = f * livecard[lps[g]] + vals[lps[g]]
                        if ent:
                            f = f * rt + v
                        nphi[idx] = phi[idx // rt if ent else idx] * fac[f]
                    phi, nphi = nphi, phi
                    size = nsize
                    if ent:
                        slot[t] = nlive
                        live[nlive] = t
                        livecard[nlive] = rt
                        nlive += 1
                    b = 0
                    while b < nlive:  # sum out the attributes read for the last time
                        if last[live[b]] == t:
                            cb_ = livecard[b]
                            stride = 1
                            for bb in range(b + 1, nlive):
                                stride *= livecard[bb]
                            nsize = size // cb_
                            for idx in range(nsize):
                                nphi[idx] = 0.0
                            for idx in range(size):
                                nphi[(idx // (cb_ * stride)) * stride + idx % stride] += phi[idx]
                            phi, nphi = nphi, phi
                            size = nsize
                            slot[live[b]] = -1
                            for bb in range(b, nlive - 1):
                                live[bb] = live[bb + 1]
                                livecard[bb] = livecard[bb + 1]
                                slot[live[bb]] = bb
                            nlive -= 1
                        else:
                            b += 1
                    s = 0.0
                    for idx in range(size):
                        s += phi[idx]
                    for idx in range(size):
                        phi[idx] /= s
                block = size // K
                s = 0.0
                for c in range(K):
                    pc = 0.0
                    for idx in range(c * block, (c + 1) * block):
                        pc += phi[idx]
                    out[i, a, t, c] = pc
                    s += pc
                for c in range(K):
                    out[i, a, t, c] /= s
            for b in range(nlive):
                slot[live[b]] = -1
            if not ok[i]:
                break
