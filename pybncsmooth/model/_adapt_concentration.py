r"""The concentration of a domain being adapted (:mod:`pybncsmooth.model.adapt`), node by
node: given (``s_domain=``), the estimator's own where it fixes one, or its posterior
given the population and every row the domain has, learned jointly over the nodes
(:func:`~pybncsmooth.estimators._domain_prior.new_domain_posterior`)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..errors import HyperparameterError
from ..estimators._domain_prior import nested_log_evidence, new_domain_posterior
from ..estimators._pooling import fixed_concentration
from ..validation import check_number
from ._adapt_node import NodeContext

__all__ = ["adapt_concentrations"]

#: grid points of a posterior below this weight are dropped (and the rest renormalised)
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


def _trim(log_s: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = w > _TRIM
    return np.asarray(log_s, dtype=np.float64)[keep], w[keep] / w[keep].sum()


def _shared_times_evidence(ctx: NodeContext) -> tuple[np.ndarray, np.ndarray]:
    """A node whose fit kept no prior for new domains (a fixed concentration, or a
    network saved before it kept one): the fitted domains' shared posterior times the
    nested evidence of the domain's rows on its grid."""
    log_s, w = ctx.shared
    if len(log_s) == 1 or not np.isfinite(log_s).all():
        return log_s, w
    ev = nested_log_evidence(ctx.dcnt, ctx.mean, ctx.leaf_mass, log_s)
    post = w * np.exp(ev - ev.max())
    return _trim(log_s, post / post.sum())


def _fitted_domain(pieces: list[dict], code: int) -> int | None:
    """``code`` if it is a domain the population was fitted with (its own evidence is
    then left out of its prior), else ``None``."""
    return code if pieces and code < len(pieces[0]["s_new_present"]) else None


def adapt_concentrations(net: Any, ctxs: Mapping[str, NodeContext], s_domain: Any, has_domain: bool,
                         code: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every node's concentration for the domain ``code`` as ``(log_s, weights)``.

    ``s_domain`` (a number or ``{node: number}``) fixes it; a population fitted without
    domains has none learned: the node's number of levels.  Otherwise the nodes whose
    fit kept what a new domain's concentration is learned from take their joint
    posterior, the others the fitted domains' posterior times the rows' evidence."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    joint = []
    for n in net.nodes:
        ctx = ctxs[n]
        given = _given(n, s_domain, has_domain)
        if given is not None:
            out[n] = fixed_concentration(given)
        elif not has_domain or ctx.shared is None:
            out[n] = fixed_concentration(float(net.schema.cardinality(n)))
        elif "s_new_curves" in ctx.inner.estimate.info:
            joint.append(n)
        else:
            out[n] = _shared_times_evidence(ctx)
    if joint:
        info = [ctxs[n].inner.estimate.info for n in joint]
        pieces = [{k: np.asarray(i[k]) for k in ("s_new_grid", "s_new_curves", "s_new_present", "s_new_G")}
                  for i in info]
        evidence = [nested_log_evidence(ctxs[n].dcnt, ctxs[n].mean, ctxs[n].leaf_mass, p["s_new_grid"])
                    for n, p in zip(joint, pieces)]
        posts = new_domain_posterior(pieces, evidence, exclude=_fitted_domain(pieces, code))
        for n, p, post in zip(joint, pieces, posts):
            out[n] = _trim(p["s_new_grid"], post)
    return out

