r"""The posterior of a domain being adapted (:mod:`pybncsmooth.model.domains.adapt`): in each
node a copy of one of the fitted domains' tables or a type of its own, the nodes'
choices tied or not, weighed by the domain's rows
(:func:`~pybncsmooth.estimators.domains.prior.node_choice_weights`); a given
``s_domain=``, an estimator that fixes its concentration, or a population fitted
without domains: the new type alone, with that concentration."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...errors import HyperparameterError
from ...estimators.domains.prior import (
    UNUSUAL_GRID,
    UNUSUAL_LOG_S,
    atom_log_evidence,
    node_choice_weights,
    novel_posterior,
    without_domain,
)
from ...estimators.domains.pooling import fixed_concentration
from ...estimators.posterior import DirichletMixture, effective_concentration
from ...validation import check_number
from ._node import AdaptedNode, NodeContext, atom_dirichlets

__all__ = ["adapt_posteriors"]

#: components of a posterior below this weight are dropped (and the rest renormalised)
_TRIM = 1e-12


def _given(node: str, s_domain: Any, has_domain: bool) -> float | None:
    """The concentration ``s_domain`` gives ``node`` (a number, or a mapping's entry)."""
    if s_domain is None:
        return None
    val = s_domain.get(node) if isinstance(s_domain, Mapping) else s_domain
    if val is None:
        if isinstance(s_domain, Mapping) and not has_domain:
            raise HyperparameterError(f"s_domain gives no value for node {node!r}")
        return None
    v = check_number("s_domain", val, strict=False)
    if v > 1e10:
        raise HyperparameterError(f"s_domain must be <= 1e10, not {val!r}")
    return v


def _prior(net: Any, node: str, ctx: NodeContext, s_domain: Any, has_domain: bool, code: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """The new type's concentration before the rows: given; how a domain's concentration
    is spread among the fitted domains (``s_new_G``, without the adapted domain's own
    evidence if it is one of them); or the fitted domains' shared posterior (a fit that
    kept no spread); or (a population without domains) the node's number of levels."""
    given = _given(node, s_domain, has_domain)
    if given is not None:
        return fixed_concentration(given)
    if not has_domain or ctx.shared is None:
        return fixed_concentration(float(net.schema.cardinality(node)))
    info = ctx.inner.estimate.info
    if "s_new_G" not in info:
        return ctx.shared
    G = np.asarray(info["s_new_G"], dtype=np.float64)
    codes = np.asarray(info["s_atom_codes"])
    at = int(np.searchsorted(codes, code))
    if at < len(codes) and codes[at] == code:
        G = without_domain(G, np.asarray(info["s_atom_curves"])[at], len(codes))
    return UNUSUAL_GRID, G


def _atoms(ctxs: Mapping[str, NodeContext], code: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The fitted domains the adapted one may copy: those the fit kept in every node
    (:func:`~pybncsmooth.estimators.domains.prior.atom_table`), but ``code`` itself;
    their codes and, per node, their rows in the node's ``s_atom_alpha``."""
    kept = [np.asarray(c.inner.estimate.info["s_atom_codes"]) for c in ctxs.values()]
    codes = kept[0]
    for k in kept[1:]:
        codes = np.intersect1d(codes, k)
    codes = codes[codes != code]
    return codes, {n: np.searchsorted(k, codes) for n, k in zip(ctxs, kept)}


def _novel_alpha(ctx: NodeContext, log_s: np.ndarray) -> np.ndarray:
    """``(K, Q, r)``: the new type's Dirichlets :math:`s'_k m_y + n_y` at every
    configuration of the union, one per grid value of ``s``."""
    sp = effective_concentration(log_s, ctx.mass)  # (K, Q) or (K, 1)
    with np.errstate(invalid="ignore"):
        base = np.where(np.isfinite(sp)[:, :, None], sp[:, :, None] * ctx.pooled[None], 0.0)
    return base + ctx.dcounts[None]


def _trim(w: np.ndarray) -> np.ndarray:
    return np.flatnonzero(w > _TRIM * w.max())


def _mixture_node(ctx: NodeContext, concs: list, w_new: np.ndarray, atoms: np.ndarray, w_atoms: np.ndarray,
                  urn: tuple) -> AdaptedNode:
    """The domain's posterior at every configuration of the union: the new types' grid
    components (``concs``: each kind's ``(log_s, posterior)``, weighed by ``w_new``)
    and the kept fitted domains', as one mixture of Dirichlets; its ``conc`` is the
    new types' concentration posterior (the kinds merged)."""
    parts_w, parts_a, merged = [], [], []
    for (log_s, post), wk in zip(concs, w_new):
        keep = _trim(post)
        if wk > 0 and len(keep):
            parts_w.append(wk * post[keep])
            parts_a.append(_novel_alpha(ctx, log_s[keep]))
            merged.append((log_s[keep], wk * post[keep]))
    if len(atoms):  # (atoms: their rows in the node's s_atom_alpha)
        where = np.arange(len(ctx.pooled))
        parts_w.append(w_atoms)
        parts_a.append(atom_dirichlets(ctx, atoms, where) + ctx.dcounts[None])
    weights = np.concatenate(parts_w)
    alpha = np.concatenate(parts_a)
    # no pooling (s = 0) where the domain has no rows: the pooled vector answers, as a back-off would
    alpha = np.where(alpha.sum(axis=2, keepdims=True) > 0, alpha, ctx.pooled[None])
    mix = DirichletMixture(weights, alpha)
    probs, sd = mix.moments()
    has_sd = ctx.inner.estimate.sd is not None
    ls = np.concatenate([m[0] for m in merged])
    cw = np.concatenate([m[1] for m in merged])
    order = np.argsort(ls, kind="stable")
    return AdaptedNode(np.arange(len(ctx.pooled)), probs, sd if has_sd else None, mix if has_sd else None,
                       (ls[order], cw[order] / cw.sum()), urn + (_shrinkage(mix, ctx.dcounts),))


def _shrinkage(mix: DirichletMixture, counts: np.ndarray) -> float:
    r"""The prior's weight in the domain's tables, :math:`\sum_c w_c (1 - N_y / |\alpha_{c,y}|)`,
    averaged over the configurations of its rows (all alike without rows)."""
    N = counts.sum(axis=1)
    per = mix.weights @ (1.0 - N[None, :] / mix.alpha.sum(axis=2))
    w = N / N.sum() if N.sum() > 0 else np.full(len(N), 1.0 / max(len(N), 1))
    return float(w @ per)


def _own_frequencies(estimator: Any, ctx: NodeContext) -> AdaptedNode:
    """An estimator that never pools (``mle``): the domain's own frequencies where it has rows."""
    conc = fixed_concentration(0.0)
    p, sd = estimator.domain_posterior(ctx.dcnt, ctx.mean, *conc)
    return AdaptedNode(ctx.dpos, p, sd, None, conc, (1.0, -1, 0.0, 0.0))


def adapt_posteriors(net: Any, ctxs: Mapping[str, NodeContext], s_domain: Any, has_domain: bool,
                     code: int, new_type: float | None = None) -> dict[str, AdaptedNode]:
    """Every node's posterior for the domain ``code`` (see the module docstring): each
    new type's concentration posterior per node and its evidence, the fitted domains'
    evidence per node, each node's weights of its choices (``new_type``: the prior
    probability of a new type, default the module's), then each node's mixture."""
    estimator = net.estimator
    if not estimator.pools_domains:
        return {n: _own_frequencies(estimator, ctxs[n]) for n in net.nodes}
    urn = has_domain and s_domain is None and all(
        c.mass is not None and c.shared is not None and "s_atom_codes" in c.inner.estimate.info for c in ctxs.values())
    atoms, rows = _atoms(ctxs, code) if urn else (np.zeros(0, dtype=np.int64), {})
    kinds = 2 if urn else 1
    concs: dict[str, list] = {n: [] for n in net.nodes}
    new_ev = np.zeros((len(net.nodes), kinds))
    atom_ev = np.zeros((len(net.nodes), len(atoms)))
    for i, n in enumerate(net.nodes):
        ctx = ctxs[n]
        priors = [_prior(net, n, ctx, s_domain, has_domain, code), (UNUSUAL_LOG_S, np.ones(1))][:kinds]
        for k, (log_s, w) in enumerate(priors):
            ev, post = novel_posterior(ctx.dcnt, ctx.mean, ctx.leaf_mass, log_s, w)
            concs[n].append((np.asarray(log_s, dtype=np.float64), post))
            new_ev[i, k] = ev
        if len(atoms):
            atom_ev[i] = atom_log_evidence(ctx.dcnt, atom_dirichlets(ctx, rows[n], ctx.dpos))
    w_atoms, w_new, _ = node_choice_weights(atom_ev, new_ev, new_type)
    out = {}
    for i, n in enumerate(net.nodes):
        wa, wn = w_atoms[i], w_new[i]
        kept = np.flatnonzero(wa > _TRIM * max(wa.max(initial=0.0), wn.max()))
        best = int(np.argmax(wa)) if len(atoms) else -1
        summary = (float(wn.sum()), int(atoms[best]) if best >= 0 else -1, float(wa[best]) if best >= 0 else 0.0)
        out[n] = _mixture_node(ctxs[n], concs[n], wn, rows[n][kept] if len(atoms) else atoms, wa[kept], summary)
    return out
