r"""numba kernel of EM's E-step: every family's expected counts, row by row, by a
junction tree over the row's missing cells.

For each incomplete row the kernel builds a junction tree of its own: the graph links
two missing variables that share a family (the observed cells are fixed at the row's
values, so they link nothing), a greedy elimination order (next the variable whose
clique -- itself and its current neighbours -- has the fewest cells, ties to the
earlier column) gives one clique per missing variable ``v``, ``{v} + neighbours(v)``,
whose parent is the clique of the first of those neighbours to be eliminated (cliques
come children first; the separator is the clique without ``v``); each family with a
missing cell goes to the clique of its first-eliminated missing variable.  Then:

* potentials :math:`\psi_c` = the product of the CPT entries of the families assigned
  to clique ``c``, over the clique's completions (each rescaled by its largest entry,
  the log of the scale kept); a family without missing cells counts ``w_row`` at once;
* an upward pass of sum-product messages (rescaled the same way), whose scales and the
  roots' sums give the row's observed-data log-likelihood :math:`\log P(x_O)`;
* a downward pass; the belief of each clique (normalised) is the posterior of its
  missing cells, and each family assigned to it gains ``w_row`` times the belief at
  its cell (soft EM);
* hard EM: a max-product upward pass and a top-down decoding give the most probable
  completion of the whole row, which counts ``w_row``.

The work per row follows its missing cells (the cliques' completions), not the
network's treewidth.
"""

from __future__ import annotations

import numpy as np
from .._jit import njit

__all__ = ["estep_rows", "MAX_MISSING"]

#: most missing cells in one row the kernel takes (its cliques are bit masks)
MAX_MISSING = 62


@njit(cache=True, nogil=True)
def _cell(x, fam_var, strides, start, stop, offset):  # pragma: no cover - compiled
    c = offset
    for j in range(start, stop):
        c += x[fam_var[j]] * strides[j]
    return c


@njit(cache=True, nogil=True)
def _set_digits(x, mvar, start, stop, cards, k):  # pragma: no cover - compiled
    """``x[mvar[start:stop]]`` := the mixed-radix digits of ``k`` (first most significant)."""
    for t in range(stop - 1, start - 1, -1):
        v = mvar[t]
        x[v] = k % cards[v]
        k //= cards[v]


@njit(cache=True, nogil=True)
def _next_digits(x, mvar, start, stop, cards):  # pragma: no cover - compiled
    """The next completion after ``x[mvar[start:stop]]`` in mixed-radix order (an odometer)."""
    for t in range(stop - 1, start - 1, -1):
        v = mvar[t]
        x[v] += 1
        if x[v] < cards[v]:
            return
        x[v] = 0


@njit(cache=True, nogil=True)
def _clear(x, mvar, start, stop):  # pragma: no cover - compiled
    for t in range(start, stop):
        x[mvar[t]] = -1


@njit(cache=True, nogil=True)
def _sep_index(x, svar, sstr, start, stop):  # pragma: no cover - compiled
    t = 0
    for j in range(start, stop):
        t += x[svar[j]] * sstr[j]
    return t


@njit(cache=True, nogil=True, boundscheck=False)
def _upward(buf, ibuf, nc, K, psi_off, up_off, S, sep_at, ch_at, cl_par, ch_ptr, ch_list, use_max):
    # pragma: no cover - compiled
    """Upward messages into ``buf[up_off[c]:]``, each rescaled to a largest entry of 1;
    returns the sum of the logs of the scales and of the roots' sums (sum-product:
    the row's ``log P(x_O)`` minus the potentials' scales), ``-inf`` if it is zero."""
    logz = 0.0
    for c in range(nc):
        u = up_off[c]
        for t in range(S[c]):
            buf[u + t] = 0.0
        c0, nch = ch_ptr[c], ch_ptr[c + 1] - ch_ptr[c]
        root = 0.0
        for k in range(K[c]):
            val = buf[psi_off[c] + k]
            at = ch_at[c] + k * nch
            for a in range(nch):
                val *= buf[up_off[ch_list[c0 + a]] + ibuf[at + a]]
            if cl_par[c] < 0:
                root = max(root, val) if use_max else root + val
            else:
                t = u + ibuf[sep_at[c] + k]
                buf[t] = max(buf[t], val) if use_max else buf[t] + val
        if cl_par[c] < 0:
            if root == 0.0:
                return -np.inf
            logz += np.log(root)
            continue
        mx = 0.0
        for t in range(S[c]):
            mx = max(mx, buf[u + t])
        if mx == 0.0:
            return -np.inf
        for t in range(S[c]):
            buf[u + t] /= mx
        logz += np.log(mx)
    return logz


@njit(cache=True, nogil=True, boundscheck=False)
def _downward(wi, buf, ibuf, pre, nc, K, psi_off, up_off, dn_off, S, sep_at, ch_at, cell_at, cl_par, ch_ptr, ch_list,
              fa_ptr, counts):  # pragma: no cover - compiled
    """Downward messages, then every clique's belief added to its families' counts."""
    for c in range(nc - 1, -1, -1):
        c0, nch, nfa = ch_ptr[c], ch_ptr[c + 1] - ch_ptr[c], fa_ptr[c + 1] - fa_ptr[c]
        for a in range(nch):
            d = ch_list[c0 + a]
            for t in range(S[d]):
                buf[dn_off[d] + t] = 0.0
        tot = 0.0
        for k in range(K[c]):
            base = buf[psi_off[c] + k]
            if cl_par[c] >= 0:
                base *= buf[dn_off[c] + ibuf[sep_at[c] + k]]
            at = ch_at[c] + k * nch
            pre[0] = 1.0  # prefix products of the children's messages; the suffix runs below
            for a in range(nch):
                pre[a + 1] = pre[a] * buf[up_off[ch_list[c0 + a]] + ibuf[at + a]]
            tot += base * pre[nch]
            suf = 1.0
            for a in range(nch - 1, -1, -1):
                d = ch_list[c0 + a]
                buf[dn_off[d] + ibuf[at + a]] += base * pre[a] * suf
                suf *= buf[up_off[d] + ibuf[at + a]]
        for a in range(nch):
            d = ch_list[c0 + a]
            mx = 0.0
            for t in range(S[d]):
                mx = max(mx, buf[dn_off[d] + t])
            if mx > 0.0:
                for t in range(S[d]):
                    buf[dn_off[d] + t] /= mx
        if nfa == 0 or tot == 0.0:
            continue
        for k in range(K[c]):
            b = buf[psi_off[c] + k]
            if cl_par[c] >= 0:
                b *= buf[dn_off[c] + ibuf[sep_at[c] + k]]
            at = ch_at[c] + k * nch
            for a in range(nch):
                b *= buf[up_off[ch_list[c0 + a]] + ibuf[at + a]]
            if b == 0.0:
                continue
            b *= wi / tot
            cells = cell_at[c] + k * nfa
            for a in range(nfa):
                counts[ibuf[cells + a]] += b


@njit(cache=True, nogil=True)
def _completion_weight(z, y, buf, ibuf, c, k, psi_off, msg_off, ch_at, cm_var, cm_ptr, c0, nch, ch_list):
    # pragma: no cover - compiled
    """Clique ``c``'s completion ``k`` (its digits in ``y``): ``-1`` if it disagrees with
    a cell already set in ``z``, else its potential times its children's messages (at
    ``msg_off``)."""
    for t in range(cm_ptr[c], cm_ptr[c + 1]):
        v = cm_var[t]
        if z[v] >= 0 and z[v] != y[v]:
            return -1.0
    val = buf[psi_off[c] + k]
    at = ch_at[c] + k * nch
    for a in range(nch):
        val *= buf[msg_off[ch_list[c0 + a]] + ibuf[at + a]]
    return val


@njit(cache=True, nogil=True, boundscheck=False)
def _draw_clique(z, y, buf, ibuf, c, K, psi_off, up_off, ch_at, cm_var, cm_ptr, c0, nch, ch_list, cards):
    # pragma: no cover - compiled
    """Draw clique ``c``'s missing cells given those already set in ``z`` (two passes
    over its completions: the total, then the inversion)."""
    tot = 0.0
    for rep in range(2):
        u = np.random.random() * tot if rep else 0.0
        run = 0.0
        _set_digits(y, cm_var, cm_ptr[c], cm_ptr[c + 1], cards, 0)
        last = -1
        for k in range(K[c]):
            if k:
                _next_digits(y, cm_var, cm_ptr[c], cm_ptr[c + 1], cards)
            val = _completion_weight(z, y, buf, ibuf, c, k, psi_off, up_off, ch_at, cm_var, cm_ptr, c0, nch, ch_list)
            if val < 0.0:
                continue
            if val > 0.0:
                last = k
            run += val
            if rep and run > u:
                break
        if rep:
            _set_digits(y, cm_var, cm_ptr[c], cm_ptr[c + 1], cards, last)
        tot = run
    for t in range(cm_ptr[c], cm_ptr[c + 1]):
        z[cm_var[t]] = y[cm_var[t]]


@njit(cache=True, nogil=True, boundscheck=False)
def _decode(z, y, buf, ibuf, nc, K, psi_off, mx_off, ch_at, cm_var, cm_ptr, ch_ptr, ch_list, cards, draw):
    # pragma: no cover - compiled
    """A completion written into ``z``, clique by clique from the roots, each clique's
    cells given those already set: the most probable one (``draw`` False; max-product
    messages at ``mx_off``; ties to the first), or a draw from the posterior
    (``draw`` True; sum-product messages at ``mx_off``: forward filtering, backward
    sampling)."""
    for c in range(nc - 1, -1, -1):
        c0, nch = ch_ptr[c], ch_ptr[c + 1] - ch_ptr[c]
        if draw:
            _draw_clique(z, y, buf, ibuf, c, K, psi_off, mx_off, ch_at, cm_var, cm_ptr, c0, nch, ch_list, cards)
            continue
        best, bestv = 0, -1.0
        _set_digits(y, cm_var, cm_ptr[c], cm_ptr[c + 1], cards, 0)
        for k in range(K[c]):
            if k:
                _next_digits(y, cm_var, cm_ptr[c], cm_ptr[c + 1], cards)
            val = _completion_weight(z, y, buf, ibuf, c, k, psi_off, mx_off, ch_at, cm_var, cm_ptr, c0, nch, ch_list)
            if val > bestv:  # a disagreeing completion (-1) never wins
                best, bestv = k, val
        _set_digits(z, cm_var, cm_ptr[c], cm_ptr[c + 1], cards, best)


@njit(cache=True, nogil=True, boundscheck=False)
def _layout(z, buf, ibuf, nc, K, psi_off, sep_at, ch_at, cell_at, cm_var, cm_ptr, sm_var, sm_str, sm_ptr, ch_ptr,
            ch_list, fa_ptr, fa_fam, fam_ptr, fam_var, fam_sp, fam_sc, fam_op, fam_oc, cards, probs):
    # pragma: no cover - compiled
    """Every clique's completions once: its potential (rescaled; the log of the scale
    returned, ``-inf`` if a clique's potential is zero), the index of each completion
    in its separator's and its children's messages, and its families' count cells."""
    logz = 0.0
    for c in range(nc):
        c0, nch, f0, nfa = ch_ptr[c], ch_ptr[c + 1] - ch_ptr[c], fa_ptr[c], fa_ptr[c + 1] - fa_ptr[c]
        mx = 0.0
        _set_digits(z, cm_var, cm_ptr[c], cm_ptr[c + 1], cards, 0)
        for k in range(K[c]):
            if k:
                _next_digits(z, cm_var, cm_ptr[c], cm_ptr[c + 1], cards)
            p = 1.0
            for a in range(nfa):
                f = fa_fam[f0 + a]
                p *= probs[_cell(z, fam_var, fam_sp, fam_ptr[f], fam_ptr[f + 1], fam_op[f])]
                ibuf[cell_at[c] + k * nfa + a] = _cell(z, fam_var, fam_sc, fam_ptr[f], fam_ptr[f + 1], fam_oc[f])
            buf[psi_off[c] + k] = p
            mx = max(mx, p)
            ibuf[sep_at[c] + k] = _sep_index(z, sm_var, sm_str, sm_ptr[c], sm_ptr[c + 1])
            for a in range(nch):
                d = ch_list[c0 + a]
                ibuf[ch_at[c] + k * nch + a] = _sep_index(z, sm_var, sm_str, sm_ptr[d], sm_ptr[d + 1])
        _clear(z, cm_var, cm_ptr[c], cm_ptr[c + 1])
        if mx == 0.0:
            return -np.inf
        for k in range(K[c]):
            buf[psi_off[c] + k] /= mx
        logz += np.log(mx)
    return logz


@njit(cache=True, nogil=True, boundscheck=False)
def _eliminate(m, mv, adj, cards, max_k, order, cmask, cl_par, K, step):  # pragma: no cover - compiled
    """Greedy elimination of the ``m`` missing variables (``adj``: neighbour bit masks
    by local index): ``order[t]`` the local index eliminated at step ``t``, ``cmask[t]``
    its clique, ``cl_par[t]`` the parent clique, ``K[t]`` its completions (capped at
    ``max_k + 1``).  Returns False if a clique has more than ``max_k`` completions."""
    remaining = (np.int64(1) << m) - 1
    for t in range(m):
        best, bestk = -1, max_k + 2
        for j in range(m):
            if (remaining >> j) & 1:
                nb = adj[j] & remaining
                k = cards[mv[j]]
                for a in range(m):
                    if (nb >> a) & 1:
                        k = min(k * cards[mv[a]], max_k + 1)
                if k < bestk:
                    best, bestk = j, k
        if bestk > max_k:
            return False
        nb = adj[best] & remaining
        order[t] = best
        cmask[t] = nb | (np.int64(1) << best)
        K[t] = bestk
        step[best] = t
        remaining &= ~(np.int64(1) << best)
        for a in range(m):
            if (nb >> a) & 1:
                adj[a] |= nb & ~(np.int64(1) << a)
    for t in range(m):
        nb = cmask[t] & ~(np.int64(1) << order[t])
        par = -1
        for a in range(m):
            if (nb >> a) & 1 and (par < 0 or step[a] < par):
                par = step[a]
        cl_par[t] = par
    return True


@njit(cache=True, nogil=True, boundscheck=False)
def estep_rows(X, w, is_node, cards, fam_ptr, fam_var, fam_sp, fam_sc, fam_op, fam_oc, probs, counts, mode, max_k,
               seed):  # pragma: no cover - compiled
    """Add the expected counts of the rows of ``X`` (``(n, V)`` codes, ``-1`` missing)
    with weights ``w`` to ``counts``: ``mode`` 0 the posterior expectation (soft EM),
    1 the most probable completion of each row (hard EM), 2 one completion of each row
    drawn from its posterior (data augmentation; numba's generator seeded with
    ``seed``).

    Family ``f`` holds the variables ``fam_var[fam_ptr[f]:fam_ptr[f+1]]``; its cell in
    the flat probability table ``probs`` is ``fam_op[f] + sum x_u * fam_sp``, in
    ``counts`` ``fam_oc[f] + sum x_u * fam_sc``.  Returns ``(deferred, loglik, bad)``:
    the rows left to the caller (a clique of more than ``max_k`` completions, more than
    :data:`MAX_MISSING` missing cells, or a missing variable that is not a node), the
    weighted observed-data log-likelihood of the others, and the first incomplete row
    whose observed cells have probability 0 (``-1`` if none; the pass stops there)."""
    n, V = X.shape
    F = fam_op.shape[0]
    M = min(V, MAX_MISSING)
    deferred = np.zeros(n, dtype=np.bool_)
    z = np.empty(V, dtype=np.int64)
    y = np.empty(V, dtype=np.int64)
    loc = np.full(V, -1, dtype=np.int64)
    mv = np.empty(M, dtype=np.int64)
    fmask = np.empty(F, dtype=np.int64)
    adj = np.empty(M, dtype=np.int64)
    order = np.empty(M, dtype=np.int64)
    cmask = np.empty(M, dtype=np.int64)
    cl_par = np.empty(M, dtype=np.int64)
    K = np.empty(M, dtype=np.int64)
    S = np.empty(M, dtype=np.int64)
    cm_ptr = np.zeros(M + 1, dtype=np.int64)
    cm_var = np.empty(M * M, dtype=np.int64)
    sm_ptr = np.zeros(M + 1, dtype=np.int64)
    sm_var = np.empty(M * M, dtype=np.int64)
    sm_str = np.empty(M * M, dtype=np.int64)
    ch_ptr = np.zeros(M + 1, dtype=np.int64)
    ch_list = np.empty(M, dtype=np.int64)
    fa_ptr = np.zeros(M + 1, dtype=np.int64)
    fa_fam = np.empty(F, dtype=np.int64)
    fa_of = np.empty(F, dtype=np.int64)
    offs = np.empty((10, M + 1), dtype=np.int64)
    pre = np.empty(M + 1, dtype=np.float64)
    buf = np.empty(1024, dtype=np.float64)
    ibuf = np.empty(1024, dtype=np.int64)
    total = 0.0
    np.random.seed(seed)
    for i in range(n):
        m = 0
        skip = False
        for v in range(V):
            z[v] = X[i, v]
            if z[v] < 0:
                if not is_node[v] or m == M:
                    skip = True
                    break
                loc[v] = m
                mv[m] = v
                m += 1
        if skip:
            for t in range(m):
                loc[mv[t]] = -1
            deferred[i] = True
            continue
        wi = w[i]
        for j in range(m):
            adj[j] = 0
        for f in range(F):
            mask = np.int64(0)
            for j in range(fam_ptr[f], fam_ptr[f + 1]):
                lj = loc[fam_var[j]]
                if lj >= 0:
                    mask |= np.int64(1) << lj
            fmask[f] = mask
            for a in range(m):
                if (mask >> a) & 1:
                    adj[a] |= mask & ~(np.int64(1) << a)
        for t in range(m):
            loc[mv[t]] = -1
        if m and not _eliminate(m, mv, adj, cards, max_k, order, cmask, cl_par, K, offs[6]):
            deferred[i] = True
            continue
        ll = 0.0
        for f in range(F):  # the families without missing cells
            if fmask[f] == 0:
                ll += np.log(probs[_cell(z, fam_var, fam_sp, fam_ptr[f], fam_ptr[f + 1], fam_op[f])])
                counts[_cell(z, fam_var, fam_sc, fam_ptr[f], fam_ptr[f + 1], fam_oc[f])] += wi
        if m == 0:
            if wi != 0.0:
                total += wi * ll
            continue
        if ll == -np.inf:
            return deferred, total, i
        lt, buf, ibuf = _row_tree(z, y, wi, m, mv, order, cmask, cl_par, K, S, fmask, cm_ptr, cm_var, sm_ptr,
                                  sm_var, sm_str, ch_ptr, ch_list, fa_ptr, fa_fam, fa_of, offs, pre, buf, ibuf,
                                  fam_ptr, fam_var, fam_sp, fam_sc, fam_op, fam_oc, cards, probs, counts, mode)
        ll += lt
        if ll == -np.inf:
            return deferred, total, i
        if wi != 0.0:
            total += wi * ll
    return deferred, total, -1


@njit(cache=True, nogil=True, boundscheck=False)
def _row_tree(z, y, wi, m, mv, order, cmask, cl_par, K, S, fmask, cm_ptr, cm_var, sm_ptr, sm_var, sm_str, ch_ptr,
              ch_list, fa_ptr, fa_fam, fa_of, offs, pre, buf, ibuf, fam_ptr, fam_var, fam_sp, fam_sc, fam_op, fam_oc,
              cards, probs, counts, mode):  # pragma: no cover - compiled
    """One row's junction tree (cliques from :func:`_eliminate`): its lists, then the
    passes; returns the row's ``log P(x_O)`` less its complete families' part, and the
    work buffers (grown if the row needed more)."""
    F = fmask.shape[0]
    step, fill_c, fill_f, cell_at = offs[6], offs[7], offs[8], offs[9]
    pos, spos = 0, 0
    for t in range(m):  # clique and separator variables (ascending columns), strides
        sep = cmask[t] & ~(np.int64(1) << order[t])
        for a in range(m):
            if (cmask[t] >> a) & 1:
                cm_var[pos] = mv[a]
                pos += 1
        cm_ptr[t + 1] = pos
        start = spos
        for a in range(m):
            if (sep >> a) & 1:
                sm_var[spos] = mv[a]
                spos += 1
        st = 1
        for j in range(spos - 1, start - 1, -1):
            sm_str[j] = st
            st *= cards[sm_var[j]]
        sm_ptr[t + 1] = spos
        S[t] = st
    for t in range(m + 1):  # children and families per clique (counting sort)
        ch_ptr[t] = 0
        fa_ptr[t] = 0
    for t in range(m):
        if cl_par[t] >= 0:
            ch_ptr[cl_par[t] + 1] += 1
    nf = 0
    for f in range(F):
        if fmask[f] != 0:
            first = m
            for a in range(m):
                if (fmask[f] >> a) & 1:
                    first = min(first, step[a])
            fa_of[f] = first
            fa_ptr[first + 1] += 1
            nf += 1
    for t in range(m):
        ch_ptr[t + 1] += ch_ptr[t]
        fa_ptr[t + 1] += fa_ptr[t]
    for t in range(m):
        fill_c[t] = ch_ptr[t]
        fill_f[t] = fa_ptr[t]
    for t in range(m):
        if cl_par[t] >= 0:
            ch_list[fill_c[cl_par[t]]] = t
            fill_c[cl_par[t]] += 1
    for f in range(F):
        if fmask[f] != 0:
            fa_fam[fill_f[fa_of[f]]] = f
            fill_f[fa_of[f]] += 1
    psi_off, up_off, dn_off, mx_off, sep_at, ch_at = offs[0], offs[1], offs[2], offs[3], offs[4], offs[5]
    need, ineed = 0, 0
    for t in range(m):
        k, st = K[t], S[t]
        psi_off[t], up_off[t], dn_off[t], mx_off[t] = need, need + k, need + k + st, need + k + 2 * st
        need += k + 3 * st
        nch, nfa = ch_ptr[t + 1] - ch_ptr[t], fa_ptr[t + 1] - fa_ptr[t]
        sep_at[t], ch_at[t], cell_at[t] = ineed, ineed + k, ineed + k + k * nch
        ineed += k * (1 + nch + nfa)
    if need > buf.shape[0]:
        buf = np.empty(2 * need, dtype=np.float64)
    if ineed > ibuf.shape[0]:
        ibuf = np.empty(2 * ineed, dtype=np.int64)
    logz = _layout(z, buf, ibuf, m, K, psi_off, sep_at, ch_at, cell_at, cm_var, cm_ptr, sm_var, sm_str, sm_ptr,
                   ch_ptr, ch_list, fa_ptr, fa_fam, fam_ptr, fam_var, fam_sp, fam_sc, fam_op, fam_oc, cards, probs)
    if logz == -np.inf:
        return logz, buf, ibuf
    logz += _upward(buf, ibuf, m, K, psi_off, up_off, S, sep_at, ch_at, cl_par, ch_ptr, ch_list, False)
    if logz == -np.inf:
        return logz, buf, ibuf
    if mode == 0:
        _downward(wi, buf, ibuf, pre, m, K, psi_off, up_off, dn_off, S, sep_at, ch_at, cell_at, cl_par, ch_ptr,
                  ch_list, fa_ptr, counts)
        return logz, buf, ibuf
    if mode == 1:
        _upward(buf, ibuf, m, K, psi_off, mx_off, S, sep_at, ch_at, cl_par, ch_ptr, ch_list, True)
        _decode(z, y, buf, ibuf, m, K, psi_off, mx_off, ch_at, cm_var, cm_ptr, ch_ptr, ch_list, cards, False)
    else:
        _decode(z, y, buf, ibuf, m, K, psi_off, up_off, ch_at, cm_var, cm_ptr, ch_ptr, ch_list, cards, True)
    for f in range(F):
        if fmask[f] != 0:
            counts[_cell(z, fam_var, fam_sc, fam_ptr[f], fam_ptr[f + 1], fam_oc[f])] += wi
    return logz, buf, ibuf
