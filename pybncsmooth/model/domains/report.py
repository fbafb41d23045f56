r"""How domains differ: per domain and node, the divergence of the domain's CPT from
the population's.

For node ``X`` with parents ``Y``, domain ``d``'s tables :math:`\theta_{\cdot|y,d}` and the
population's :math:`\theta_{\cdot|y}` (what an unseen domain gets), weighted by the
domain's own distribution of parent configurations :math:`w_{y,d}` (its rows'
relative frequencies; uniform for a root):

.. math::
    \mathrm{KL}_d = \sum_y w_{y,d} \sum_x \theta_{x|y,d} \log\frac{\theta_{x|y,d}}{\theta_{x|y}}, \qquad
    \mathrm{JS}_d = \sum_y w_{y,d}\, \mathrm{JS}(\theta_{\cdot|y,d}, \theta_{\cdot|y}),

with :math:`\mathrm{JS}(p, q) = \tfrac12 \mathrm{KL}(p \| m) + \tfrac12 \mathrm{KL}(q \| m)`,
:math:`m = (p + q)/2` (natural logarithms).  ``kl`` and ``js`` are the divergences of
the fitted tables (the network's own estimates).  ``js_median``, ``js_lower`` and
``js_upper`` are those of the divergence under the posterior: ``draws`` joint draws of
the domain's tables and of the population's they shrink toward (the same draws as
:meth:`FittedNetwork.sample_parameters`, :mod:`pybncsmooth.model.draws`), the median
and the equal-tailed ``level`` interval of :math:`\mathrm{JS}_d` over them, so the
median always lies in its interval.  The two point estimates differ where the
divergence is small: the fitted tables are shrunk toward the population (``js``
understates the divergence), two drawn tables differ by their noise even where the
truths do not (``js_median`` overstates it); ``js`` can then fall below ``js_lower``.
Estimators without a posterior give neither: their report has no ``js_median`` /
``js_lower`` / ``js_upper`` columns and ``report.attrs["intervals"]`` says why.  ``shrinkage`` is the weight of the domain's
prior in its tables, for a fitted domain :math:`s_D / (n_{y,d} + s_D)` averaged over the
posterior of :math:`s_D` and with the same weights, and ``s_domain`` that posterior's
geometric mean (the fitted domains share their node's).  A domain added or grown by
:meth:`FittedNetwork.adapt` is a copy of a fitted domain or a type of its own
(:mod:`pybncsmooth.estimators.domains.prior`): its ``shrinkage`` is its prior's weight
averaged over those types, ``s_domain`` the new type's concentration, ``p_new`` the
posterior probability of a type of its own, ``like`` the fitted domain it most likely
copies and ``p_like`` that probability (a fitted domain has none of the three).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...counting.context_tree import config_index
from ...errors import DataError
from ...estimators.domains.prior import own_concentrations, own_urns
from ...estimators.posterior import effective_concentration
from ...validation import check_draws, check_probability, check_random_state
from ..cpd import DomainLastCPD, FixedPrefixCPD

__all__ = ["domain_report", "kl_divergence", "js_divergence"]


def kl_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """:math:`\\sum_x p_x \\log(p_x / q_x)` over the last axis (``0 log 0 = 0``)."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)
    return t.sum(axis=-1)


def js_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    r"""Jensen-Shannon divergence over the last axis (natural logs, at most log 2).

    Computed as :math:`\tfrac12 \sum_x [p_x \log\frac{2 p_x}{p_x + q_x} + q_x
    \log\frac{2 q_x}{p_x + q_x}]`: the sum :math:`p_x + q_x` never underflows where
    either is positive, whereas the mean :math:`(p_x + q_x)/2` of a subnormal
    :math:`p_x` and :math:`q_x = 0` rounds to zero and its logarithm to :math:`-\infty`."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ls = np.log(p + q)
        tp = np.where(p > 0, p * (np.log(2.0 * p) - ls), 0.0)
        tq = np.where(q > 0, q * (np.log(2.0 * q) - ls), 0.0)
    return 0.5 * (tp + tq).sum(axis=-1)


def _joint_draws(net: Any, node: str, draws: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
    """``draws`` joint posterior draws of the domains' tables ``(draws, q, J, r)`` and of
    the population's ``(draws, q, r)`` (configurations in the order of
    ``cpt(node)``'s parents), or ``None`` without a posterior."""
    cpd = net.cpd(node)
    inner = cpd.inner if isinstance(cpd, DomainLastCPD) else cpd
    post = getattr(getattr(inner, "estimate", None), "posterior", None)
    if post is None or not hasattr(post, "draw_joint"):
        return None
    dom, pop = post.draw_joint(inner.tree, draws, rng)
    J, r = cpd.parent_cards[0], cpd.card
    if isinstance(cpd, DomainLastCPD):  # configurations slowest, the domain fastest
        return dom.reshape(draws, -1, J, r), pop
    return dom.reshape(draws, J, -1, r).transpose(0, 2, 1, 3), pop


def domain_report(net: Any, *, level: float = 0.9, draws: int = 200, random_state: Any = 0) -> pd.DataFrame:
    """See :meth:`FittedNetwork.domain_report` (the arguments checked here, for every
    caller: ``draws`` is 0, no interval, or enough for the interval:
    :func:`~pybncsmooth.validation.check_draws`)."""
    if net.domain is None:
        raise DataError("domain_report needs a multi-domain network (fitted with domain=)")
    level = check_probability("level", level)
    draws = check_draws(draws, level, zero_ok=True)
    rng = np.random.default_rng(check_random_state(random_state))
    rows = []
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    for node in net.nodes:
        cpd = net.cpd(node)
        t = np.moveaxis(net.cpt(node), 0, -1)  # (*parents, domain, r)
        r = t.shape[-1]
        J = t.shape[-2]
        tables = t.reshape(-1, J, r)  # (q, J, r)
        pop = FixedPrefixCPD(cpd, [-1])._matrix(tables.shape[0] * r)  # (q, r): an unseen domain's tables
        counts, s_dom = _domain_counts(cpd, tables.shape[0], J, r)
        joint = _joint_draws(net, node, draws, rng) if draws > 0 else None
        own, mass = _own_of(cpd, tables.shape[0])
        urns = own_urns(cpd.estimate.info) if isinstance(cpd, DomainLastCPD) else {}
        for j, dlev in enumerate(net.domains):
            n_y = counts[:, j].sum(axis=1)
            n = n_y.sum()
            w = n_y / n if n > 0 else np.full(len(n_y), 1.0 / len(n_y))
            kl = float(w @ kl_divergence(tables[:, j], pop))
            js = float(w @ js_divergence(tables[:, j], pop))
            conc = own.get(j, s_dom)
            shrink, s_center = _shrinkage(conc, n_y, w, mass if j in own else None)
            p_new, like, p_like, own_shrink = urns.get(j, (np.nan, -1, np.nan, np.nan))
            if j in urns and np.isfinite(own_shrink):
                shrink = own_shrink
            row = {"domain": dlev, "node": node, "n": int(n), "kl": kl, "js": js, "shrinkage": shrink,
                   "s_domain": s_center, "p_new": p_new, "like": net.domains[like] if like >= 0 else None,
                   "p_like": p_like, "js_median": np.nan, "js_lower": np.nan, "js_upper": np.nan}
            if joint is not None:
                js_s = (js_divergence(joint[0][:, :, j], joint[1]) * w).sum(axis=1)
                row["js_median"], row["js_lower"], row["js_upper"] = np.quantile(js_s, [0.5, lo_q, hi_q])
            rows.append(row)
    out = pd.DataFrame(rows)
    if not any(net.cpd(n).has_sd for n in net.nodes):
        out = out.drop(columns=["js_median", "js_lower", "js_upper"])
        out.attrs["intervals"] = (
            f"none: {net.method or 'this estimator'} gives no posterior standard deviations, so the divergences "
            "have no intervals (bayes, hmd, hdp and hls-bayes give them)"
        )
    return out


def _own_of(cpd: Any, q: int) -> tuple[dict, np.ndarray | None]:
    """The domains with a concentration of their own (:meth:`FittedNetwork.adapt`) and
    the pooled configurations' masses :math:`A_y` (configuration-major, ``inf`` where
    none is kept)."""
    if not isinstance(cpd, DomainLastCPD):
        return {}, None
    info = cpd.estimate.info
    own = own_concentrations(info)
    if not own or "s_domain_mass" not in info:
        return own, None
    tree = cpd.tree
    d = tree.depth - 1
    mass = np.full(q, np.inf)
    mass[config_index(tree.node_configs(d), tree.parent_cards[:d])] = np.asarray(info["s_domain_mass"])
    return own, mass


def _shrinkage(conc: tuple | None, n_y: np.ndarray, w: np.ndarray, mass: np.ndarray | None) -> tuple[float, float]:
    """The population's weight in a domain's tables, :math:`s / (n_y + s)` (or the nested
    :math:`s'`) averaged over the posterior ``conc`` and the configurations' weights
    ``w``, and the posterior's geometric mean (0: no pooling)."""
    if conc is None:
        return np.nan, np.nan
    ls, ws = conc
    s_k = effective_concentration(ls, mass)  # (K, 1), or (K, q) with the nested masses
    den = n_y[None, :] + s_k  # 0 only where s_D = 0 (mle) and no rows: no shrinkage
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(den > 0, s_k / np.where(den > 0, den, 1.0), 0.0)
    center = float(np.exp(ws @ ls)) if np.isfinite(ls).all() else 0.0
    return float(w @ (ws @ frac)), center


def _domain_counts(cpd: Any, q: int, J: int, r: int) -> tuple[np.ndarray, tuple | None]:
    """Counts ``(q, J, r)`` of the domains' leaves and the posterior of the node's ``s_D``
    as ``(log_s, weights)`` (domain last), or the counts of a domain-first tree (no ``s_D``)."""
    tree = cpd.tree
    configs, cnt = tree.leaf_table()
    out = np.zeros((q, J, r))
    if isinstance(cpd, DomainLastCPD):
        dom, pa = configs[:, -1], configs[:, :-1]
        info = cpd.estimate.info
        s_dom = None
        if "s_domain_log" in info:
            s_dom = (np.asarray(info["s_domain_log"]), np.asarray(info["s_domain_weights"]))
    else:
        dom, pa = configs[:, 0], configs[:, 1:]
        s_dom = None
    cfg = config_index(pa, tree.parent_cards[:-1] if isinstance(cpd, DomainLastCPD) else tree.parent_cards[1:])
    np.add.at(out, (cfg, dom), cnt)
    return out, s_dom
