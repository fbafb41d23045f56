r"""What a fitted population knows about the concentration of a domain it has not seen.

A multi-domain fit models domain ``d``'s vector of parent configuration ``y`` as
:math:`\theta_{y,d} \sim \mathrm{Dir}(s\,\theta_y)` around the configuration pooled over
the domains, with one concentration ``s`` per node shared by the fit's domains
(:mod:`._pooling`).  A domain added later (:meth:`FittedNetwork.adapt`) gets a
concentration of its own, :math:`s_{new}`, from its posterior given the population and
its rows:

.. math:: p(s_{new} \mid \text{population}, n_{new}) \propto
          p(s_{new} \mid \text{population})\; p(n_{new} \mid s_{new}, \text{population}).

**The likelihood** is that of the nested model: the population knows :math:`\theta_y`
only as well as its domains tell it, a Dirichlet with mean :math:`m_y` and mass
:math:`A_y = |\beta_y| + \sum_d n_{yd} (s + 1) / (n_{yd} + s)` (the configuration's
prior :math:`\beta_y` and every domain's rows, a domain's ``n`` rows weighing like
:math:`n (s + 1) / (n + s)` draws of :math:`\theta_y`, averaged over the fit's posterior
of ``s``), so

.. math:: p(n_{new} \mid s) = \prod_y \int \mathrm{Dir}(\theta; A_y m_y)\,
          \mathrm{DM}(n_{y,new}; s\,\theta)\, d\theta,

computed exactly (:func:`nested_log_evidence`: the rising factorials of the
Dirichlet-multinomial expanded in unsigned Stirling numbers, Petitjean et al. 2018,
eq. 7, and integrated term by term; a configuration with more than
:data:`EXACT_MAX_ROWS` rows uses the moment match below).  Given ``s`` the domain's
vector is, to its second moments, :math:`\mathrm{Dir}(s'\,m_y)` with
:math:`s' = s A_y / (s + A_y + 1)` (the two Dirichlet stages compounded: for
:math:`s \ll A_y` the population's uncertainty does not matter, and however large
``s``, the domain never pools more than the population's :math:`A_y` draws allow),
whose posterior mean :math:`(n + s' m_y) / (N + s')` is the adapted table.

**The prior** is the population's distribution of a domain's concentrations, learned
from the fit's domains.  Each fitted domain's evidence about its own ``s`` in node
``v``, :math:`\ell_{d,v}(s)`, is the same nested likelihood with the domain's own rows
left out of the vector it is compared with (:func:`domain_curves`).  Per node, the
distribution :math:`G_v` of a domain's ``s`` on the grid :data:`ADAPT_GRID` is the
nonparametric maximum-likelihood mixing distribution (Laird 1978, EM from the flat
prior), and each fitted domain's profile is its posterior under :math:`G_v`,
:math:`r_{d,v}(s) \propto G_v(s)\,e^{\ell_{d,v}(s)}` (:func:`population_prior`).  A new
domain is exchangeable with the fitted ones: as the Pólya urn of a Dirichlet process
over domain types (Blackwell and MacQueen 1973) it is like one of the ``D`` fitted
domains, in every node at once, with prior weight 1 each, or a type of its own, its
``s`` in every node from the uniform shrinkage prior (:func:`novel_prior`), with weight
:data:`NOVEL_WEIGHT`.
The new rows weigh the components jointly over the nodes
(:func:`new_domain_posterior`): a domain whose rows look like an atypical fitted
domain's borrows as little as that one does, a typical one as much as the typical
ones, and rows unlike every fitted domain's select the new type, under which the
rows alone decide.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from numba import njit

from ._pooling import S_MAX, S_MIN
from ._stirling import SHARED_TABLE
from .posterior import pack_concentrations, trapezoid_weights, unpack_concentrations

__all__ = [
    "ADAPT_GRID",
    "NOVEL_WEIGHT",
    "EXACT_MAX_ROWS",
    "effective_mass",
    "domain_curves",
    "population_prior",
    "nested_log_evidence",
    "new_domain_posterior",
    "grid_weights",
    "novel_prior",
    "own_concentrations",
    "with_own_concentration",
]

#: the grid of log s a new domain's posterior lives on (steps of 0.25, S_MIN to S_MAX)
ADAPT_GRID = np.arange(math.log(S_MIN), math.log(S_MAX) + 1e-9, 0.25)

#: prior weight of "a type of its own" against weight 1 for each fitted domain (the
#: Dirichlet process's concentration, at its conventional value 1: with ``D`` fitted
#: domains a new one is of a new type with prior probability ``1 / (D + 1)``).  A
#: tenth of it pulled a domain unusual in one node of two toward the population
#: (0.21 nats/row worse than its separate fit on simulated sites, 0.07 with 1) and
#: changed nothing measurable on GSS or Chile (``benchmarks/bench_domains.py --lodo``).
NOVEL_WEIGHT = 1.0

#: a configuration's rows up to which the nested evidence is computed exactly
EXACT_MAX_ROWS = 400

#: EM iterations at most for the mixing distribution, and its tolerance (the EM creeps
#: along likelihoods that are flat in ``s``, where the weights do not matter)
_EM_MAX_ITER, _EM_TOL = 1000, 1e-9


def grid_weights(grid: np.ndarray = ADAPT_GRID) -> np.ndarray:
    """The flat prior on ``log s``: trapezoidal weights of the grid, summing to 1."""
    w = trapezoid_weights(grid)
    return w / w.sum()


def novel_prior(grid: np.ndarray = ADAPT_GRID) -> np.ndarray:
    r"""The concentration of a domain unlike every fitted one: uniform on the weight
    :math:`s / (s + 1)` the population gets against one of the domain's rows (the
    uniform shrinkage prior, Christiansen and Morris 1997; Daniels 1999), on the grid of
    :math:`\log s`: :math:`p(\log s) \propto s / (s + 1)^2`.  It leaves neither no
    pooling nor complete pooling much weight that the rows cannot remove."""
    s = np.exp(np.asarray(grid, dtype=np.float64))
    w = grid_weights(grid) * s / (s + 1.0) ** 2
    return w / w.sum()


def effective_mass(counts: np.ndarray, groups: np.ndarray, beta: np.ndarray, log_s: np.ndarray,
                   weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The domains' information about each configuration's pooled vector: per leaf the
    effective counts :math:`e = n\,E[(s + 1) / (N + s)]` (``(L, r)``, the expectation over
    the fit's posterior of ``s``) and per configuration :math:`\beta_y + \sum_{d} e_{yd}`
    (``(G, r)``: the Dirichlet the population knows :math:`\theta_y` by)."""
    n = np.asarray(counts, dtype=np.float64)
    tot = n.sum(axis=1)
    s = np.exp(np.asarray(log_s, dtype=np.float64))[:, None]
    ratio = (s + 1.0) / (np.maximum(tot, 1e-300)[None, :] + s)  # s = 0 (no pooling): a domain is one draw
    factor = np.asarray(weights, dtype=np.float64) @ ratio
    e = n * np.where(tot > 0, factor, 0.0)[:, None]
    post = np.array(beta, dtype=np.float64, copy=True)
    np.add.at(post, np.asarray(groups, dtype=np.int64), e)
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


def domain_curves(counts: np.ndarray, groups: np.ndarray, domains: np.ndarray, n_domains: int, e: np.ndarray,
                  post: np.ndarray, grid: np.ndarray = ADAPT_GRID) -> np.ndarray:
    r"""Each fitted domain's log evidence about its own concentration, ``(J, K)`` on
    ``grid``: the nested likelihood of its leaves, each compared with its configuration
    known from the *other* domains (:math:`\beta_y + \sum_{d' \ne d} e_{yd'}`, mean and
    mass) through the moment-matched :math:`\mathrm{DM}(n; s' m)`.  ``e``, ``post``: the
    leaves' effective counts and the configurations' Dirichlets (:func:`effective_mass`).
    A domain without a leaf of two rows or more has a flat row."""
    g = np.asarray(groups, dtype=np.int64)
    out_post = post[g] - e  # every leaf's configuration without the leaf's own domain
    mass = out_post.sum(axis=1)
    centre = out_post / np.maximum(mass, 1e-300)[:, None]
    out = np.zeros((n_domains, len(grid)))
    _dm_curves(np.asarray(counts, dtype=np.float64), centre, mass, np.asarray(domains, dtype=np.int64),
               np.asarray(grid, dtype=np.float64), out)
    return out


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


def population_prior(curves: np.ndarray, present: np.ndarray, grid: np.ndarray = ADAPT_GRID) -> dict[str, Any]:
    r"""What a node's estimate keeps for new domains: the fitted domains' evidence
    ``curves`` (``(J, K)``; ``present``: the domains with rows) and the mixing
    distribution :math:`G` of a domain's ``s`` they give (Laird 1978; a flat row adds
    nothing)."""
    h = grid_weights(grid)
    idx = np.flatnonzero(present)
    G = h.copy()
    if len(idx):
        lik = np.exp(curves[idx] - curves[idx].max(axis=1, keepdims=True))
        G = _em_mixing(np.ascontiguousarray(lik), h, _EM_MAX_ITER, _EM_TOL)
    return {"s_new_grid": np.asarray(grid, dtype=np.float64), "s_new_curves": curves,
            "s_new_present": np.asarray(present, dtype=bool), "s_new_G": G}


def _without(G: np.ndarray, lik: np.ndarray, n_domains: int) -> np.ndarray:
    r"""The mixing distribution without one of its ``n_domains`` domains (likelihood
    ``lik``): its responsibility taken out of the EM's fixed point,
    :math:`(D\,G - r_d) / (D - 1)`."""
    if n_domains <= 1:
        return G
    r = G * lik
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
                        log_s: np.ndarray = ADAPT_GRID) -> np.ndarray:
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


def _profiles(piece: dict[str, Any], codes: np.ndarray, exclude: int | None) -> np.ndarray:
    """A node's prior components for a new domain, ``(len(codes) + 1, K)``: each fitted
    domain's profile, its posterior under the mixing distribution (of the others, when
    ``exclude`` is a fitted domain given more rows), the distribution itself where the
    domain has no rows in this node; the new type's (:func:`novel_prior`) last."""
    curves, present = piece["s_new_curves"], piece["s_new_present"]
    G = piece["s_new_G"]
    if exclude is not None and 0 <= exclude < len(present) and present[exclude]:
        own = np.exp(curves[exclude] - curves[exclude].max())
        G = _without(G, own, int(present.sum()))
    out = np.empty((len(codes) + 1, len(G)))
    out[:-1] = G
    here = np.array([c < len(present) and present[c] for c in codes], dtype=bool)
    if here.any():
        cur = curves[codes[here]]
        R = G[None, :] * np.exp(cur - cur.max(axis=1, keepdims=True))
        out[:-1][here] = R / np.maximum(R.sum(axis=1, keepdims=True), 1e-300)
    out[-1] = novel_prior(piece["s_new_grid"])
    return out


def new_domain_posterior(pieces: Sequence[dict[str, Any]], evidence: Sequence[np.ndarray],
                         exclude: int | None = None) -> list[np.ndarray]:
    """The new domain's posterior weights on the grid, one array per node: the prior
    components of every node (:func:`_profiles`) weighed jointly by the product over
    the nodes of the new rows' evidence (``evidence``: log, on the grid), each fitted
    domain with prior weight 1 and the new type (:func:`novel_prior`) with :data:`NOVEL_WEIGHT`.
    ``exclude``: the code of a fitted domain given more rows (its own profile is not its
    prior)."""
    present = [np.flatnonzero(p["s_new_present"]) for p in pieces]
    codes = np.unique(np.concatenate(present)) if present else np.zeros(0, dtype=np.int64)
    if exclude is not None:
        codes = codes[codes != exclude]
    log_z = np.zeros(len(codes) + 1)
    parts = []
    for piece, L in zip(pieces, evidence):
        comp = _profiles(piece, codes, exclude)
        lik = np.exp(L - L.max())
        z = comp @ lik
        log_z += np.log(np.maximum(z, 1e-300))
        parts.append((comp, lik, z))
    prior = np.ones(len(codes) + 1)
    prior[-1] = NOVEL_WEIGHT
    lw = np.log(prior) + log_z
    w = np.exp(lw - lw.max())
    w /= w.sum()
    out = []
    for comp, lik, z in parts:
        post = (w / np.maximum(z, 1e-300)) @ (comp * lik[None, :])
        out.append(post / post.sum())
    return out


def own_concentrations(info: dict[str, Any]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The posteriors of the domains that have a concentration of their own (added or
    given rows by :meth:`FittedNetwork.adapt`), by domain code, from ``info``'s arrays
    ``s_own_codes``, ``s_own_log``, ``s_own_weights`` (rows padded with weight 0)."""
    if "s_own_codes" not in info:
        return {}
    return unpack_concentrations(info["s_own_codes"], info["s_own_log"], info["s_own_weights"])


def with_own_concentration(info: dict[str, Any], code: int, log_s: np.ndarray, weights: np.ndarray) -> dict:
    """``info`` with domain ``code``'s own posterior of its concentration set."""
    own = own_concentrations(info)
    own[int(code)] = (np.atleast_1d(np.asarray(log_s, dtype=np.float64)),
                      np.atleast_1d(np.asarray(weights, dtype=np.float64)))
    codes, ls, w = pack_concentrations(own)
    return {**info, "s_own_codes": codes, "s_own_log": ls, "s_own_weights": w}
