r"""Domains added to a multi-domain fit (:meth:`FittedNetwork.adapt`) without copying
it: the population's context tree stays as it was fitted, and each added (or grown)
domain keeps its own leaves beside it (:class:`AddedLeaves`), which the CPD's
queries read first (:class:`~pybncsmooth.model.cpd.DomainLastCPD`).  Adapting one
more domain therefore costs the same whatever the number of fitted ones.  What needs
the whole tree (saving, draws, reports) gets it from :func:`merged_tree`, built once:
the population's pooled configurations united with the added domains' (their rows
counted in), their values the population's answers there, and the leaves of every
domain, the added ones' replacing any they had."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...counting.context_tree import ContextTree, TreeLevel, config_index
from ...estimators.domains.prior import with_own_concentration
from ...estimators.domains.pooling import shrink_weight
from ...estimators.posterior import DirichletMixture, DomainPosterior

__all__ = ["AddedLeaves", "merged_tree", "pooled_levels", "union_mass", "union_index"]


@dataclass(frozen=True)
class AddedLeaves:
    """One added domain's leaves in one node: their parent configurations (codes, the
    domain left out), counts, the rows ``adapt`` counted (summed over its calls),
    posterior means and sds (``None``: none), the posterior they come from (``None``:
    none), the new type's concentration posterior and the urn's summary
    (:func:`~pybncsmooth.estimators.domains.prior.own_urns`)."""

    configs: np.ndarray
    counts: np.ndarray
    rows: np.ndarray
    probs: np.ndarray
    sd: np.ndarray | None
    mixture: DirichletMixture | None
    conc: tuple[np.ndarray, np.ndarray]
    urn: tuple[float, int, float, float]


def union_index(union: ContextTree, d: int, configs: np.ndarray) -> np.ndarray:
    """Indices in the union's level ``d`` of prefix ``configs`` (every one present)."""
    keys = config_index(union.node_configs(d), union.parent_cards[:d])
    return np.searchsorted(keys, config_index(configs, union.parent_cards[:d]))


def pooled_levels(inner: Any, union: ContextTree, d: int, want_sd: bool) -> tuple[list, list, list]:
    """The pooled levels of the adapted tree: what the population answers for each
    prefix configuration of the union (the other parents and the domain unknown: the
    node's estimate where the tree has it, its unseen rule otherwise), their sds and
    unseen configurations' sds."""
    probs, sds, unseen = [], [], []
    depth = inner.tree.depth
    stats = ("mean", "sd", "unseen_sd") if want_sd else ("mean",)
    for i in range(d + 1):
        cf = union.node_configs(i)
        P = np.full((len(cf), depth), -1, dtype=np.int64)
        P[:, :i] = cf
        got = inner.answers(P, stats)
        probs.append(got[0])
        if want_sd:
            sds.append(got[1])
            unseen.append(got[2])
    return probs, sds, unseen


def fresh_mass(mean: np.ndarray, unseen_sd: np.ndarray | None, w: float, r: int) -> np.ndarray:
    r"""The mass of configurations the population never saw, from the spread it gives a
    domain there (:math:`w\,v + (1 - w)\,m(1 - m)`, ``w`` the fitted domains'
    :math:`E[s / (s + 1)]`; :func:`~pybncsmooth.estimators.posterior.predictive_sd`)
    solved for the vector's own variance ``v`` and matched by a Dirichlet; ``r``
    (:math:`\mathrm{Dir}(1, \dots, 1)`) without sds."""
    from ...estimators.domains.prior import moment_mass
    if unseen_sd is None:
        return np.full(len(mean), float(r))
    mm = mean * (1.0 - mean)
    v = (unseen_sd ** 2 - (1.0 - w) * mm) / w if w > 1e-12 else unseen_sd ** 2
    return moment_mass(mean, np.sqrt(np.maximum(v, 0.0)))


def union_mass(inner: Any, union: ContextTree, d: int, levels: tuple, shared: tuple | None) -> np.ndarray | None:
    """:math:`A_y` of every configuration at the union's last pooled level: the fit's
    (``s_domain_mass``) where the population has the configuration, else
    :func:`fresh_mass`; ``None`` for a population that keeps none."""
    info = inner.estimate.info
    if "s_domain_mass" not in info or shared is None:
        return None
    old = np.asarray(info["s_domain_mass"], dtype=np.float64)
    level, node, _ = inner.tree.truncate(d).find(union.node_configs(d))
    out = np.empty(len(level))
    hit = level == d
    out[hit] = old[node[hit]]
    if (~hit).any():
        spread = levels[1][-1][~hit] if levels[1] else None  # the estimator's answer there, its unseen rule's
        out[~hit] = fresh_mass(levels[0][-1][~hit], spread, shrink_weight(*shared), union.child_card)
    return out


def _union(base: Any, added: dict, d: int) -> ContextTree:
    """The population's pooled tree with the added domains' rows counted in."""
    pooled = base.tree.truncate(d)
    if not added:
        return pooled
    cfg = np.concatenate([np.asarray(a.configs, dtype=np.int64).reshape(len(a.configs), d) for a in added.values()])
    rows = np.concatenate([a.rows for a in added.values()])
    extra = ContextTree.from_leaves(pooled.child, pooled.parents, pooled.child_card, pooled.parent_cards, cfg, rows)
    return pooled.merge(extra) if extra.total else pooled


def _leaf_level(base: Any, added: dict, union: ContextTree, d: int) -> tuple:
    """The merged leaves: the population's (those of added codes dropped) and the added
    domains', sorted by configuration then domain: parent, value, counts, probs, sd."""
    tree, est = base.tree, base.estimate
    leaves = tree.levels[-1]
    keep = ~np.isin(leaves.value, np.array(sorted(added), dtype=np.int64))
    remap = union_index(union, d, tree.truncate(d).node_configs(d))
    parent = [remap[leaves.parent[keep]]]
    value, counts = [leaves.value[keep]], [leaves.counts[keep].astype(np.float64)]
    probs = [est.probs[-1][keep]]
    has_sd = est.sd is not None and all(a.sd is not None for a in added.values())
    sd = [est.sd[-1][keep]] if has_sd else []
    for code, a in added.items():
        parent.append(union_index(union, d, a.configs))
        value.append(np.full(len(a.configs), code, dtype=np.int64))
        counts.append(np.asarray(a.counts, dtype=np.float64))
        probs.append(a.probs)
        if has_sd:
            sd.append(a.sd)
    parent, value = np.concatenate(parent), np.concatenate(value)
    order = np.lexsort((value, parent))
    cnt = np.concatenate(counts)[order]
    if leaves.counts.dtype.kind != "f" and np.array_equal(cnt, np.round(cnt)):
        cnt = cnt.astype(leaves.counts.dtype)
    return (parent[order], value[order], cnt, np.concatenate(probs)[order],
            np.concatenate(sd)[order] if has_sd else None)


def merged_tree(base: Any, added: dict, n_domains: int) -> tuple[ContextTree, Any]:
    """The population's ``base`` (a domain-last :class:`~pybncsmooth.model.cpd.TreeCPD`)
    with the ``added`` domains' leaves in its tree and estimate (see the module
    docstring): the tree of ``n_domains`` domains and its estimate."""
    tree, est = base.tree, base.estimate
    d = tree.depth - 1
    union = _union(base, added, d)
    probs, sds, unseen = pooled_levels(base, union, d, est.sd is not None)
    parent, value, counts, leaf_p, leaf_sd = _leaf_level(base, added, union, d)
    out_tree = ContextTree(tree.child, tree.parents, tree.child_card, tuple(tree.parent_cards[:d]) + (n_domains,),
                           tuple(union.levels) + (TreeLevel(parent, value, counts),))
    info = dict(est.info)
    shared = (np.asarray(info["s_domain_log"]), np.asarray(info["s_domain_weights"])) if "s_domain_log" in info else None
    mass = union_mass(base, union, d, (probs, sds, unseen), shared)
    if mass is not None:
        info["s_domain_mass"] = mass
    post = est.posterior
    for code, a in added.items():
        info = with_own_concentration(info, code, *a.conc, urn=a.urn)
        if isinstance(post, DomainPosterior) and a.mixture is not None:
            post = post.with_own(code, config_index(a.configs, tree.parent_cards[:d]), a.mixture)
    sd = tuple(sds) + (leaf_sd,) if sds and leaf_sd is not None else None
    new_est = replace(est, probs=tuple(probs) + (leaf_p,), info=info, sd=sd,
                      unseen_sd=tuple(unseen) if sd is not None else None,
                      posterior=post if sd is not None else None)
    return out_tree, new_est
