r"""What a fitted population knows about a domain it has not seen: the prior of a domain
added later (:meth:`FittedNetwork.adapt`) and its posterior given the domain's rows.

A multi-domain fit models domain ``d``'s vector of parent configuration ``y`` as
:math:`\theta_{y,d} \sim \mathrm{Dir}(s\,\theta_y)` around the configuration's vector
pooled over the domains, with one concentration ``s`` per node shared by the fit's
domains (:mod:`~pybncsmooth.estimators.domains.pooling`).  A new domain is exchangeable with the fitted ones.  As the
predictive rule of a Pitman-Yor process over domain *types* (Pitman and Yor 1997;
Blackwell and MacQueen 1973 for the Dirichlet process), with every fitted domain a
type of its own and discount :math:`1/2`, the new domain is

* with probability :data:`NOVEL_SHARE` (:math:`1/2`) **a type of its own**: a fresh
  draw from the fitted model, :math:`\theta_{y,new} \sim \mathrm{Dir}(s\,\theta_y)` in
  every node with the node's shared ``s`` (its posterior given the fit, on its grid);
* with probability :math:`1/(2D)` each, **a copy of fitted domain** ``d`` (its tables
  in every node at once, known as the fit knows them: at configuration ``y`` the
  Dirichlet :math:`\mathrm{Dir}(M_{yd}\,p_{yd})` matched to the fitted leaf's posterior
  mean :math:`p_{yd}` and sd; a configuration ``d`` has no rows in answers the pooled
  vector with a fresh domain's spread).  With more than :data:`MAX_ATOMS` fitted
  domains an evenly spaced sample of them stands for all (each with probability
  :math:`1/(2K)`), so that adapting costs the same whatever their number.

The new rows weigh the types by their exact marginal likelihood, jointly over the nodes.
Under the new type it is that of the **nested model**: the population knows
:math:`\theta_y` only as well as its domains tell it, a Dirichlet with mean :math:`m_y`
and mass :math:`A_y = |\beta_y| + \sum_d n_{yd} (s + 1) / (n_{yd} + s)` (the
configuration's prior :math:`\beta_y` and every domain's rows, a domain's ``n`` rows
weighing like :math:`n (s + 1) / (n + s)` draws of :math:`\theta_y`, averaged over the
fit's posterior of ``s``), so

.. math:: p(n_{new} \mid s) = \prod_y \int \mathrm{Dir}(\theta; A_y m_y)\,
          \mathrm{DM}(n_{y,new}; s\,\theta)\, d\theta,

computed exactly (:func:`nested_log_evidence`: the rising factorials of the
Dirichlet-multinomial expanded in unsigned Stirling numbers, Petitjean et al. 2018,
eq. 7, and integrated term by term; a configuration with more than
:data:`EXACT_MAX_ROWS` rows uses the moment match below).  Given ``s`` the domain's
vector is, to its second moments, :math:`\mathrm{Dir}(s'\,m_y)` with
:math:`s' = s A_y / (s + A_y + 1)` (the two Dirichlet stages compounded).  Under a copy
of ``d`` it is the Dirichlet-multinomial :math:`\prod_y \mathrm{DM}(n_{y,new}; M_{yd}
p_{yd})`.  The posterior of the new domain's vectors is then a mixture of Dirichlets,
:math:`w_{new} \sum_k \pi_k \mathrm{Dir}(s'_k m_y + n_y) + \sum_d w_d
\mathrm{Dir}(M_{yd} p_{yd} + n_y)` (:func:`urn_weights`): a domain whose rows look like
an unusual fitted domain's takes that domain's tables, one that looks typical borrows
from the population, and one unlike every fitted domain keeps the new type's
concentration toward the population.

Why not one concentration per new domain, learned from its rows (what ``adapt`` did
before): when the fitted domains spread widely, :math:`A_y` is small, so even
:math:`s \to \infty` pools toward a vector the population barely knows
(:math:`s' \le A_y`); a few rows far from :math:`m_y` are then about as likely under
large ``s`` as under small, and the concentration learned for a domain that departs
plainly (11 of 20 rows positive where the others give a third) came out large.  A
concentration says how far from the centre a domain sits, never in which direction;
the fitted domains say where the unusual ones are.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from ..._jit import njit

from .pooling import S_MAX, S_MIN
from .._stirling import SHARED_TABLE
from ..posterior import pack_concentrations, trapezoid_weights, unpack_concentrations

__all__ = [
    "NOVEL_SHARE",
    "MAX_ATOMS",
    "EXACT_MAX_ROWS",
    "effective_mass",
    "nested_log_evidence",
    "novel_posterior",
    "UNUSUAL_GRID",
    "UNUSUAL_LOG_S",
    "UNUSUAL_SHARE",
    "atom_codes",
    "atom_table",
    "spread_of_concentrations",
    "without_domain",
    "moment_mass",
    "ATOM_BUDGET",
    "atom_log_evidence",
    "urn_weights",
    "choice_prior",
    "node_choice_weights",
    "TIED_SHARE",
    "own_concentrations",
    "own_urns",
    "with_own_concentration",
]

#: prior probability that a new domain is a type of its own (the Pitman-Yor process's
#: discount 1/2 with its concentration 0, every fitted domain a type: each fitted
#: domain then has prior probability 1 / (2 D)).  With 1 / (D + 1) instead (the
#: Dirichlet process's conventional concentration 1) the rows choose among the fitted
#: domains more eagerly: on GSS 20 rows of a held-out year then point to the wrong years
#: more often (12 of 80 domain-draws more than 0.01 nats/row behind pooling, against 7),
#: for a mean gain over pooling of 0.018 nats/row against 0.015
#: (``benchmarks/bench_domains.py --regret``).
NOVEL_SHARE = 0.5

#: prior probability that a new domain's nodes make one choice together (a copy of one
#: fitted domain, or a new type of one kind, in every node at once); otherwise each node
#: chooses on its own (:func:`node_choice_weights`).  At 1/2 the nodes chose on their
#: own far too often on real data: a node's 20 rows are few, its evidence for its
#: choices weak, and untied choices fit every node's rows best by construction, so the
#: untied model won on its flexibility alone; leave-one-domain-out with 20 rows, 8 draws
#: (``benchmarks/bench_domains.py --regret``), the worst draw rose to 0.32 nats/row on
#: GSS and 0.48 on Chile (0.02 with the choices tied).  At 0.99 the nodes part only when
#: their rows say so by a factor of a hundred.
TIED_SHARE = 0.99

#: fitted domains a new domain can be a copy of, at most (beyond: an evenly spaced
#: sample of them, each standing for ``D / MAX_ATOMS`` domains)
MAX_ATOMS = 256

#: values at most in a node's table of the fitted domains' Dirichlets kept for adapt
#: (``domains x configurations x levels``; fewer domains where the tables are large)
ATOM_BUDGET = 1 << 20

#: a configuration's rows up to which the nested evidence is computed exactly
EXACT_MAX_ROWS = 400

#: the grid of log s of a new type's concentration (steps of 0.5, S_MIN to S_MAX:
#: its prior is smooth, and the rows' evidence in ``s`` too)
UNUSUAL_GRID = np.arange(math.log(S_MIN), math.log(S_MAX) + 1e-9, 0.5)


#: the log concentration of an unusual new type toward the population: one row's
#: weight (``s = 1``).  It was drawn from the uniform shrinkage prior on the grid
#: (:math:`p(\log s) \propto s / (s + 1)^2`); but a few rows far from the centre (1 of 20
#: positive where the fitted domains give 25-64%) are explained best by a moderate
#: ``s`` (a Dirichlet-multinomial around a far centre puts little mass on near-zero
#: counts when ``s`` is small, as it spreads toward both ends), so the posterior
#: settled near ``s = 3`` and pulled the domain half way to the population.  A type
#: unlike every fitted domain has no reason to lean on their centre beyond a single
#: row: at ``s = 1`` its table is within one row of the separate fit where it has rows,
#: and the population's where it has none.
UNUSUAL_LOG_S = np.zeros(1)

#: of a new type's prior probability, the share of an unusual one (the rest: spread
#: like the fitted domains).  It was :math:`1 / (D + 1)`, 1/12 of the whole with six
#: domains: a node 1 of 20 positive (where the fitted domains give 25-64%) then kept
#: much of its weight on the population's spread and on copies of the nearest fitted
#: domain (``benchmarks/bench_domains.py --regret --data mixed``, the domain at 0.06
#: left out: mean regret 0.031 nats/row over 8 draws with the previous model, 0.009 with this
#: share, ``s = 1`` and the choices tied as :data:`TIED_SHARE` ties them).
UNUSUAL_SHARE = 0.5


def effective_mass(counts: np.ndarray, groups: np.ndarray, beta: np.ndarray, log_s: np.ndarray,
                   weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The domains' information about each configuration's pooled vector: per leaf the
    effective counts :math:`e = n\,E[(s + 1) / (N + s)]` (``(L, r)``, the expectation over
    the fit's posterior of ``s``) and per configuration :math:`\beta_y + \sum_{d} e_{yd}`
    (``(G, r)``: the Dirichlet the population knows :math:`\theta_y` by)."""
    n = np.asarray(counts, dtype=np.float64)
    tot = n.sum(axis=1)
    safe = np.maximum(tot, 1e-300)
    factor = np.zeros(len(tot))
    for ls, w in zip(np.asarray(log_s, dtype=np.float64), np.asarray(weights, dtype=np.float64)):
        s = np.exp(ls)
        factor += w * (s + 1.0) / (safe + s)  # s = 0 (no pooling): a domain is one draw
    e = n * np.where(tot > 0, factor, 0.0)[:, None]
    post = np.array(beta, dtype=np.float64, copy=True)
    g = np.asarray(groups, dtype=np.int64)
    for x in range(n.shape[1]):  # bincount: one pass per level (np.add.at is far slower on many leaves)
        post[:, x] += np.bincount(g, weights=e[:, x], minlength=post.shape[0])[: post.shape[0]]
    return e, post


@njit(cache=True, nogil=True)
def _dm_curves(n, m, mass, dom, grid, out):  # pragma: no cover - compiled
    """Moment-matched Dirichlet-multinomial log-likelihood of every leaf (``n``: counts,
    ``m``: centre, ``mass``: its ``A``) added to its domain's row of ``out`` (J, K)."""
    L, r = n.shape
    for i in range(L):
        N = 0.0
        for x in range(r):
            N += n[i, x]
        if N < 2.0:
            continue  # one row has the same likelihood under every s
        A = mass[i]
        for k in range(grid.shape[0]):
            s = math.exp(grid[k])
            sp = s * A / (s + A + 1.0) if A < np.inf else s
            v = math.lgamma(sp) - math.lgamma(sp + N)
            for x in range(r):
                if n[i, x] > 0:
                    a = sp * max(m[i, x], 1e-300)
                    v += math.lgamma(a + n[i, x]) - math.lgamma(a)
            out[dom[i], k] += v


#: EM iterations at most for the mixing distribution of a domain's concentration, and
#: its tolerance (the EM creeps along likelihoods that are flat in ``s``, where the
#: weights do not matter)
_EM_MAX_ITER, _EM_TOL = 500, 1e-7


@njit(cache=True, nogil=True)
def _em_mixing(lik, h, max_iter, tol):  # pragma: no cover - compiled
    """Laird's (1978) EM for the mixing distribution on the grid, from ``h``: ``lik``
    ``(D, K)``, the domains' likelihoods (each row scaled to max 1)."""
    D, K = lik.shape
    G = h.copy()
    new = np.empty(K)
    for _ in range(max_iter):
        new[:] = 0.0
        for d in range(D):
            z = 0.0
            for k in range(K):
                z += G[k] * lik[d, k]
            if z > 0.0:
                for k in range(K):
                    new[k] += G[k] * lik[d, k] / z
        change = 0.0
        for k in range(K):
            new[k] /= D
            change = max(change, abs(new[k] - G[k]))
            G[k] = new[k]
        if change < tol:
            break
    return G


def spread_of_concentrations(counts: np.ndarray, groups: np.ndarray, value: np.ndarray, codes: np.ndarray,
                             e: np.ndarray, post: np.ndarray) -> dict[str, np.ndarray]:
    r"""How a domain's own concentration is spread among the fitted domains ``codes``
    (those :func:`atom_table` keeps): each one's evidence about its own ``s`` on
    :data:`UNUSUAL_GRID` (its leaves, from ``counts``, ``groups``, ``value``, against
    its configurations known from the *other* domains, :math:`\beta_y + \sum_{d' \ne d}
    e_{yd'}`, mean and mass, through the moment-matched
    :math:`\mathrm{DM}(n; s' m)`; ``e``, ``post``: :func:`effective_mass`), and the
    nonparametric maximum-likelihood mixing distribution of ``s`` they give (Laird 1978,
    EM from the flat prior): ``s_atom_curves`` (``(K, grid)``) and ``s_new_G``."""
    slot = np.full(int(max(value.max(initial=-1), codes.max(initial=-1))) + 1, -1, dtype=np.int64)
    slot[codes] = np.arange(len(codes))
    k = slot[value]
    hit = np.flatnonzero(k >= 0)
    g = np.asarray(groups, dtype=np.int64)[hit]
    others = post[g] - e[hit]  # every leaf's configuration without the leaf's own domain
    mass = others.sum(axis=1)
    curves = np.zeros((len(codes), len(UNUSUAL_GRID)))
    _dm_curves(np.asarray(counts, dtype=np.float64)[hit], others / np.maximum(mass, 1e-300)[:, None], mass,
               k[hit], UNUSUAL_GRID, curves)
    h = trapezoid_weights(UNUSUAL_GRID)
    h = h / h.sum()
    lik = np.exp(curves - curves.max(axis=1, keepdims=True)) if len(codes) else curves
    G = _em_mixing(np.ascontiguousarray(lik), h, _EM_MAX_ITER, _EM_TOL) if len(codes) else h
    return {"s_atom_curves": curves, "s_new_G": G}


def without_domain(G: np.ndarray, curve: np.ndarray, n_domains: int) -> np.ndarray:
    r"""The mixing distribution without one of its ``n_domains`` domains (evidence
    ``curve``): its responsibility taken out of the EM's fixed point,
    :math:`(D\,G - r_d) / (D - 1)`."""
    if n_domains <= 1:
        return G
    r = G * np.exp(curve - curve.max())
    r /= max(r.sum(), 1e-300)
    out = np.maximum(n_domains * G - r, 0.0)
    return out / out.sum()


@njit(cache=True, nogil=True)
def _log_evidence(n, a, log_s, tab, out):  # pragma: no cover - compiled
    """Exact log of :math:`\\int \\mathrm{Dir}(\\theta; a) \\mathrm{DM}(n; s\\theta)` for one
    leaf and every ``log s``: :math:`\\Gamma(sa+n)/\\Gamma(sa) = \\sum_j S(n, j)(sa)^j`,
    the product over levels a polynomial in :math:`\\theta` whose Dirichlet moments are
    closed forms; positive terms, each level's scaled by its largest."""
    r = n.shape[0]
    N = 0
    A = 0.0
    for x in range(r):
        N += n[x]
        A += a[x]
    conv = np.zeros(N + 1)
    poly = np.zeros(N + 1)
    for k in range(log_s.shape[0]):
        ls = log_s[k]
        conv[:] = 0.0
        conv[0] = 1.0
        length = 1
        offset = 0.0
        for x in range(r):
            nx = n[x]
            if nx == 0:
                continue
            row = nx * (nx + 1) // 2
            top = -np.inf
            for j in range(1, nx + 1):
                poly[j] = tab[row + j] + j * ls + math.lgamma(a[x] + j) - math.lgamma(a[x])
                top = max(top, poly[j])
            for j in range(1, nx + 1):
                poly[j] = math.exp(poly[j] - top)
            offset += top
            for i in range(length - 1, -1, -1):  # in place, from the top: conv[i + j] += conv[i] poly[j]
                c = conv[i]
                conv[i] = 0.0
                if c != 0.0:
                    for j in range(1, nx + 1):
                        conv[i + j] += c * poly[j]
            length += nx
        best = -np.inf
        for K in range(length):
            if conv[K] > 0.0:
                best = max(best, math.log(conv[K]) + math.lgamma(A) - math.lgamma(A + K))
        acc = 0.0
        for K in range(length):
            if conv[K] > 0.0:
                acc += math.exp(math.log(conv[K]) + math.lgamma(A) - math.lgamma(A + K) - best)
        s = math.exp(ls)
        out[k] = math.lgamma(s) - math.lgamma(s + N) + offset + best + math.log(acc)


def nested_log_evidence(counts: np.ndarray, mean: np.ndarray, mass: np.ndarray | None,
                        log_s: np.ndarray) -> np.ndarray:
    r"""``(K,)``: the log evidence of the leaves ``counts`` (``(L, r)``) under each
    ``log s``, every leaf's vector :math:`\mathrm{Dir}(s\,\theta)` around a configuration
    known as :math:`\mathrm{Dir}(A\,m)` (``mean`` ``(L, r)``, ``mass`` ``(L,)``; ``None``
    or infinite: known exactly, the plain Dirichlet-multinomial).  Exact up to
    :data:`EXACT_MAX_ROWS` rows a leaf, the moment match :math:`s'` beyond.  Leaves of
    fewer than two rows carry no information about ``s`` and add nothing."""
    n = np.asarray(counts, dtype=np.float64)
    m = np.maximum(np.asarray(mean, dtype=np.float64), 1e-300)
    A = np.full(len(n), np.inf) if mass is None else np.asarray(mass, dtype=np.float64)
    grid = np.asarray(log_s, dtype=np.float64)
    total = np.zeros(len(grid))
    tot = n.sum(axis=1)
    whole = np.all(n == np.round(n), axis=1)
    exact = (tot >= 2) & (tot <= EXACT_MAX_ROWS) & np.isfinite(A) & whole
    if exact.any():
        tab, _ = SHARED_TABLE.ensure(int(n[exact].max()))
        buf = np.empty(len(grid))
        for i in np.flatnonzero(exact):
            _log_evidence(n[i].astype(np.int64), A[i] * m[i], grid, tab, buf)
            total += buf
    rest = (tot >= 2) & ~exact
    if rest.any():
        out = np.zeros((1, len(grid)))
        _dm_curves(n[rest], m[rest], A[rest], np.zeros(int(rest.sum()), dtype=np.int64), grid, out)
        total += out[0]
    return total


def novel_posterior(counts: np.ndarray, mean: np.ndarray, mass: np.ndarray | None, log_s: np.ndarray,
                    weights: np.ndarray) -> tuple[float, np.ndarray]:
    r"""The new type's side of one node: the log marginal likelihood of the domain's
    leaves ``counts`` (``(L, r)``) with ``s`` drawn from its prior ``(log_s, weights)``
    (the fit's posterior of the shared ``s``), and the posterior weights of ``log_s``.
    A leaf of one row has probability :math:`m_x` whatever ``s``."""
    n = np.asarray(counts, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if not len(n):
        return 0.0, w / w.sum()
    ls = np.asarray(log_s, dtype=np.float64)
    ev = nested_log_evidence(n, mean, mass, ls) if np.isfinite(ls).all() else np.zeros(len(ls))
    tot = n.sum(axis=1)
    lone = tot < 2
    const = 0.0
    if lone.any():
        m = np.maximum(np.asarray(mean, dtype=np.float64)[lone], 1e-300)
        const = float((n[lone] * np.log(m)).sum())
    lw = np.log(np.maximum(w, 1e-300)) + ev
    top = float(lw.max())
    post = np.exp(lw - top)
    z = float(post.sum())
    return top + math.log(z) + const, post / z


def atom_codes(codes: np.ndarray, limit: int = MAX_ATOMS) -> np.ndarray:
    """The fitted domains a new domain can be a copy of: ``codes`` (sorted, unique), or
    ``limit`` of them evenly spaced when there are more."""
    codes = np.unique(np.asarray(codes, dtype=np.int64))
    if len(codes) <= limit:
        return codes
    return codes[np.unique(np.round(np.linspace(0, len(codes) - 1, limit)).astype(np.int64))]


def moment_mass(mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    r"""The mass :math:`M` of the Dirichlet with these means and sds (row-wise):
    :math:`M + 1 = \sum_x m_x (1 - m_x) / \sum_x \mathrm{sd}_x^2`."""
    A = (mean * (1.0 - mean)).sum(axis=1) / np.maximum((sd * sd).sum(axis=1), 1e-300) - 1.0
    return np.clip(A, 1e-6, 1e12)


def atom_table(parent: np.ndarray, value: np.ndarray, counts: np.ndarray, probs: np.ndarray, sd: np.ndarray | None,
               n_domains: int, pooled: np.ndarray, fresh: np.ndarray, s_bar: float) -> dict[str, np.ndarray]:
    r"""What a fit keeps of its domains for adapt (:func:`atom_codes` of them, at most
    :data:`ATOM_BUDGET` values): ``s_atom_codes`` and ``s_atom_alpha``
    (``(K, q, r)``), each domain's Dirichlet at every pooled configuration, matched to
    its leaf's posterior mean and sd (``probs``, ``sd`` of the leaves ``parent``,
    ``value``, ``counts``), or without sds its rows plus ``s_bar``; where it has no rows,
    the pooled vector ``pooled`` with the mass ``fresh`` of a domain without rows."""
    q, r = pooled.shape
    present = np.bincount(np.asarray(value, dtype=np.int64), minlength=n_domains) > 0
    codes = atom_codes(np.flatnonzero(present), max(1, min(MAX_ATOMS, ATOM_BUDGET // max(q * r, 1))))
    alpha = np.empty((len(codes), q, r))
    alpha[:] = np.maximum(fresh, 1e-6)[None, :, None] * np.maximum(pooled, 1e-300)[None]
    slot = np.full(n_domains, -1, dtype=np.int64)
    slot[codes] = np.arange(len(codes))
    k = slot[value]
    hit = np.flatnonzero(k >= 0)
    p = probs[hit]
    M = moment_mass(p, sd[hit]) if sd is not None else counts[hit].sum(axis=1) + s_bar
    alpha[k[hit], parent[hit]] = np.maximum(M, 1e-6)[:, None] * np.maximum(p, 1e-300)
    return {"s_atom_codes": codes, "s_atom_alpha": alpha}


@njit(cache=True, nogil=True)
def _atom_log_dm(n, alpha, out):  # pragma: no cover - compiled
    """``out[k] = sum_q log DM(n[q]; alpha[k, q])`` (rows ``q`` with no count add 0)."""
    K, Q, r = alpha.shape
    for k in range(K):
        acc = 0.0
        for q in range(Q):
            N = 0.0
            A = 0.0
            for x in range(r):
                N += n[q, x]
                A += alpha[k, q, x]
            if N <= 0.0:
                continue
            acc += math.lgamma(A) - math.lgamma(A + N)
            for x in range(r):
                if n[q, x] > 0.0:
                    acc += math.lgamma(alpha[k, q, x] + n[q, x]) - math.lgamma(alpha[k, q, x])
        out[k] = acc


def atom_log_evidence(counts: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    r"""``(K,)``: the log Dirichlet-multinomial likelihood of the domain's leaves
    ``counts`` (``(Q, r)``) under each fitted domain's Dirichlets ``alpha``
    (``(K, Q, r)``, the same configurations)."""
    out = np.zeros(alpha.shape[0])
    if alpha.shape[0] and alpha.shape[1]:
        _atom_log_dm(np.ascontiguousarray(counts, dtype=np.float64), np.ascontiguousarray(alpha, dtype=np.float64),
                     out)
    return out


def urn_weights(atom_ev: np.ndarray, new_ev: np.ndarray, share: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""The posterior probabilities of the fitted domains (``atom_ev``: their log
    evidence) and of a new type of each kind (``new_ev``: spread like the fitted
    domains, unusual), from the prior :func:`choice_prior`."""
    atom_ev = np.asarray(atom_ev, dtype=np.float64)
    new_ev = np.asarray(new_ev, dtype=np.float64)
    D = len(atom_ev)
    with np.errstate(divide="ignore"):
        lw = np.concatenate([atom_ev, new_ev]) + choice_prior(D, len(new_ev), share)
    w = np.exp(lw - lw.max())
    w /= w.sum()
    return w[:D], w[D:]


def choice_prior(D: int, kinds: int, share: float | None = None) -> np.ndarray:
    r"""The log prior probabilities of a node's choices: ``1 - share`` spread evenly over
    the ``D`` fitted domains, ``share`` on a new type, of which :data:`UNUSUAL_SHARE` on an
    unusual one (without fitted domains, all on the new types' first kind); ``share``
    defaults to :data:`NOVEL_SHARE`."""
    share = NOVEL_SHARE if share is None else share
    kind = np.array([1.0 - UNUSUAL_SHARE, UNUSUAL_SHARE])[:kinds] if D else np.eye(1, kinds)[0]
    with np.errstate(divide="ignore"):
        return np.concatenate([np.full(D, np.log((1.0 - share) / D) if D else 0.0),
                               np.log(kind * (share if D else 1.0))])


def _logsumexp(x: np.ndarray, axis: int = -1) -> np.ndarray:
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(top, axis=axis) + np.log(np.exp(x - top).sum(axis=axis))


def node_choice_weights(atom_ev: np.ndarray, new_ev: np.ndarray, share: float | None = None,
                        tied: float | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    r"""Each node's posterior probabilities of its choices (``atom_ev``: ``(N, D)``, the
    rows' log evidence in each node under a copy of each fitted domain; ``new_ev``:
    ``(N, kinds)``, under a new type of each kind), and the posterior probability that
    the choices are tied.

    Prior: with probability ``tied`` (default :data:`TIED_SHARE`) one choice
    :math:`c` for every node, otherwise a choice :math:`c_v` per node drawn
    independently, each from :func:`choice_prior` :math:`\pi`.  With :math:`L_{vc}` the
    log evidence of node ``v``'s rows under choice ``c``, the evidences are

    .. math:: T = \sum_c \pi_c \prod_v e^{L_{vc}}, \qquad
              U = \prod_v \sum_c \pi_c e^{L_{vc}},

    the posterior of the tie :math:`\rho' = \rho T / (\rho T + (1 - \rho) U)` and node
    ``v``'s posterior of its choice

    .. math:: P(c_v = c \mid n) = \rho' \frac{\pi_c \prod_u e^{L_{uc}}}{T}
              + (1 - \rho') \frac{\pi_c e^{L_{vc}}}{\sum_{c'} \pi_{c'} e^{L_{vc'}}}.
    """
    atom_ev = np.atleast_2d(np.asarray(atom_ev, dtype=np.float64))
    new_ev = np.atleast_2d(np.asarray(new_ev, dtype=np.float64))
    D = atom_ev.shape[1]
    rho = TIED_SHARE if tied is None else tied
    L = np.concatenate([atom_ev, new_ev], axis=1)
    prior = choice_prior(D, new_ev.shape[1], share)
    with np.errstate(invalid="ignore"):
        per = L + prior[None]  # (N, C)
    per = np.where(np.isfinite(prior)[None], per, -np.inf)
    lse = _logsumexp(per, axis=1)
    untied = np.exp(per - lse[:, None])
    U = float(lse.sum())
    joint = np.where(np.isfinite(prior), L.sum(axis=0) + prior, -np.inf)
    T = float(_logsumexp(joint))
    w_tied = np.exp(joint - T)
    with np.errstate(divide="ignore"):
        lt = np.log(rho) + T if rho > 0 else -np.inf
        lu = np.log1p(-rho) + U if rho < 1 else -np.inf
    top = max(lt, lu)
    p = float(np.exp(lt - top) / (np.exp(lt - top) + np.exp(lu - top)))
    w = p * w_tied[None] + (1.0 - p) * untied
    return w[:, :D], w[:, D:], p


def own_concentrations(info: dict[str, Any]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The new-type concentration posteriors of the domains added or given rows by
    :meth:`FittedNetwork.adapt`, by domain code, from ``info``'s arrays ``s_own_codes``,
    ``s_own_log``, ``s_own_weights`` (rows padded with weight 0)."""
    if "s_own_codes" not in info:
        return {}
    return unpack_concentrations(info["s_own_codes"], info["s_own_log"], info["s_own_weights"])


#: an adapted domain's summary when none was kept: a new type, no fitted domain copied,
#: shrinkage unknown
NO_URN = (1.0, -1, 0.0, float("nan"))


def own_urns(info: dict[str, Any]) -> dict[int, tuple[float, int, float, float]]:
    """For each adapted domain: the posterior probability that it is a type of its own,
    the fitted domain it most likely copies (``-1``: none), that probability, and the
    weight of its prior in its tables (averaged over its rows' configurations)."""
    if "s_own_urn" not in info:
        return {}
    return {int(c): (float(u[0]), int(u[1]), float(u[2]), float(u[3]))
            for c, u in zip(info["s_own_codes"], info["s_own_urn"])}


def with_own_concentration(info: dict[str, Any], code: int, log_s: np.ndarray, weights: np.ndarray,
                           urn: tuple[float, int, float, float] = NO_URN) -> dict:
    """``info`` with domain ``code``'s new-type concentration posterior and its summary
    (:func:`own_urns`) set."""
    own = own_concentrations(info)
    urns = own_urns(info)
    own[int(code)] = (np.atleast_1d(np.asarray(log_s, dtype=np.float64)),
                      np.atleast_1d(np.asarray(weights, dtype=np.float64)))
    urns[int(code)] = urn
    codes, ls, w = pack_concentrations(own)
    table = np.array([urns.get(int(c), NO_URN) for c in codes], dtype=np.float64).reshape(-1, 4)
    return {**info, "s_own_codes": codes, "s_own_log": ls, "s_own_weights": w, "s_own_urn": table}
