r"""One node of a network adapted to a domain (:mod:`pybncsmooth.model.adapt`): its
population's tree with the domain's leaves added or grown, in two steps, so that the
domain's concentration can be learned from every node's rows at once between them:
:func:`node_context` (the domain's counts, the pooled vectors they shrink toward and
the mass :math:`A_y` these are known with) and :func:`node_result` (the leaves'
posterior given the domain's concentration)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..counting.context_tree import ContextTree, TreeLevel, config_index
from ..estimators._domain_prior import own_concentrations, with_own_concentration
from ..estimators._pooling import concentration_info, shrink_weight
from ..estimators.posterior import DomainPosterior, predictive_sd
from .cpd import DomainLastCPD, TreeCPD

__all__ = ["NodeContext", "node_context", "node_result"]


@dataclass
class NodeContext:
    """What one node's adaptation needs between its two steps."""

    inner: TreeCPD
    has_domain: bool
    union: ContextTree  # the pooled tree with the new rows' configurations added
    old: tuple  # the other domains' leaves: configurations, counts, estimates, sds
    dcfg: np.ndarray  # the domain's leaves: configurations (domain code last) and counts
    dcnt: np.ndarray
    parent: np.ndarray  # every leaf's configuration at the union's last level
    levels: tuple  # the union's pooled levels: estimates, sds, unseen configurations' sds
    mass: np.ndarray | None  # A_y of the union's configurations (None: known exactly)
    shared: tuple | None  # the node's concentration posterior shared by the fitted domains

    @property
    def mean(self) -> np.ndarray:
        """The pooled vector of each of the domain's leaves."""
        return self.levels[0][-1][self.parent[len(self.old[0]):]]

    @property
    def mean_sd(self) -> np.ndarray | None:
        return self.levels[1][-1][self.parent[len(self.old[0]):]] if self.levels[1] else None

    @property
    def leaf_mass(self) -> np.ndarray | None:
        return None if self.mass is None else self.mass[self.parent[len(self.old[0]):]]


def _old_values(cpd: TreeCPD, configs: np.ndarray, depth: int, stat: str) -> np.ndarray:
    """What the population answers for each prefix configuration (codes of the first
    parents, the others and the domain unknown): the node's estimate where the tree
    has it, the estimator's unseen rule otherwise."""
    n, i = configs.shape
    P = np.full((n, depth), -1, dtype=np.int64)
    P[:, :i] = configs
    if stat == "unseen_sd":
        return cpd.unseen_sds(P)
    return cpd.probs(P) if stat == "mean" else cpd.sds(P)


def _split_leaves(tree: ContextTree, est: Any, code: int, d: int, has_domain: bool) -> tuple:
    """The population's leaves split into the other domains' (configurations, counts,
    estimates, sds: kept as they are) and the adapted domain's old ones (configurations,
    counts)."""
    r = tree.child_card
    if not has_domain:
        empty_cfg, empty_cnt = np.zeros((0, d + 1), dtype=np.int64), np.zeros((0, r), dtype=np.int64)
        return empty_cfg, empty_cnt, np.zeros((0, r)), None, empty_cfg, empty_cnt
    cfg, cnt = tree.leaf_table()
    keep = cfg[:, -1] != code
    sd = est.sd[-1][keep] if est.sd is not None else None
    return cfg[keep], cnt[keep], est.probs[-1][keep], sd, cfg[~keep], cnt[~keep]


def _domain_counts(tree: ContextTree, new_tree: ContextTree, base: tuple, code: int, n_domains: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The adapted domain's leaves (configurations with the domain's code last, counts):
    its old counts (``base``) plus the new rows'."""
    d, r = len(new_tree.parents), tree.child_card
    ncfg, ncnt = new_tree.leaf_table()
    seen = ncnt.sum(axis=1) > 0  # rows where the node is unobserved leave an empty tree: no leaf
    ncfg, ncnt = ncfg[seen], ncnt[seen]
    ncfg = np.concatenate([ncfg, np.full((len(ncfg), 1), code, dtype=np.int64)], axis=1)
    if not len(base[0]):
        return ncfg.reshape(-1, d + 1), ncnt.reshape(-1, r)
    dom_tree = ContextTree.from_leaves(
        tree.child, tuple(new_tree.parents) + ("_d",), r, tuple(new_tree.parent_cards) + (n_domains,),
        np.concatenate([base[0], ncfg]).reshape(-1, d + 1), np.concatenate([base[1], ncnt]).reshape(-1, r),
    )
    return dom_tree.leaf_table()


def _pooled_levels(inner: TreeCPD, union: ContextTree, d: int, want_sd: bool) -> tuple[list, list, list]:
    """The pooled levels of the adapted tree: the population's estimates (or its answer
    for a configuration it never saw), their sds and unseen configurations' sds."""
    probs, sds, unseen = [], [], []
    depth = inner.tree.depth
    for i in range(d + 1):
        cf = union.node_configs(i)
        probs.append(_old_values(inner, cf, depth, "mean"))
        if want_sd:
            sds.append(_old_values(inner, cf, depth, "sd"))
            unseen.append(_old_values(inner, cf, depth, "unseen_sd"))
    return probs, sds, unseen


def _fresh_mass(mean: np.ndarray, unseen_sd: np.ndarray | None, w: float, r: int) -> np.ndarray:
    r"""The mass of configurations the population never saw, from the spread it gives a
    domain there (:math:`w\,v + (1 - w)\,m(1 - m)`, ``w`` the fitted domains'
    :math:`E[s / (s + 1)]`; :func:`~pybncsmooth.estimators.posterior.predictive_sd`)
    solved for the vector's own variance ``v`` and matched by a Dirichlet; ``r``
    (:math:`\mathrm{Dir}(1, \dots, 1)`) without sds."""
    if unseen_sd is None:
        return np.full(len(mean), float(r))
    mm = mean * (1.0 - mean)
    v = (unseen_sd ** 2 - (1.0 - w) * mm) / w if w > 1e-12 else unseen_sd ** 2
    A = mm.sum(axis=1) / np.maximum(np.maximum(v, 0.0).sum(axis=1), 1e-300) - 1.0
    return np.clip(A, 1e-6, 1e12)


def _union_mass(inner: TreeCPD, union: ContextTree, d: int, levels: tuple, shared: tuple | None) -> np.ndarray | None:
    """:math:`A_y` of every configuration at the union's last pooled level: the fit's
    (``s_domain_mass``) where the population has the configuration, else
    :func:`_fresh_mass`; ``None`` for a population that keeps none."""
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
        out[~hit] = _fresh_mass(levels[0][-1][~hit], spread, shrink_weight(*shared), union.child_card)
    return out


def node_context(cpd: Any, new_tree: ContextTree, code: int, n_domains: int, has_domain: bool) -> NodeContext:
    """Step one: the domain's counts (its old ones and ``new_tree``'s), the pooled
    vectors its leaves shrink toward and their masses."""
    inner: TreeCPD = cpd.inner if has_domain else cpd
    tree, est = inner.tree, inner.estimate
    d = len(new_tree.parents)
    pooled_old = tree.truncate(d) if has_domain else tree
    union = pooled_old.merge(new_tree) if new_tree.total else pooled_old  # the new rows' configurations added
    cfg_old, cnt_old, leaf_old_p, leaf_old_sd, *base = _split_leaves(tree, est, code, d, has_domain)
    dcfg, dcnt = _domain_counts(tree, new_tree, tuple(base), code, n_domains)
    levels = _pooled_levels(inner, union, d, est.sd is not None)
    all_cfg = np.concatenate([cfg_old, dcfg]).reshape(-1, d + 1)
    _, parent, _ = union.find(all_cfg[:, :d])
    info = est.info
    shared = None
    if has_domain and "s_domain_log" in info:
        shared = (np.asarray(info["s_domain_log"], dtype=np.float64), np.asarray(info["s_domain_weights"]))
    mass = _union_mass(inner, union, d, levels, shared)
    return NodeContext(inner, has_domain, union, (cfg_old, cnt_old, leaf_old_p, leaf_old_sd), dcfg, dcnt, parent,
                       levels, mass, shared)


def _dense_mass(ctx: NodeContext) -> tuple[np.ndarray, np.ndarray] | None:
    """The union's masses by pooled configuration index (configuration-major)."""
    if ctx.mass is None:
        return None
    d = len(ctx.union.parents)
    return config_index(ctx.union.node_configs(d), ctx.union.parent_cards), ctx.mass


def _adapted_posterior(ctx: NodeContext, own: dict, conc: tuple, has_sd: bool) -> tuple[tuple | None, Any]:
    r"""The adapted estimate's ``unseen_sd`` and posterior.  The population's answers for
    a configuration absent below each pooled node already include a fresh domain's
    spread when the population has domains; a population fitted without them gains it
    here (:math:`\mathrm{Dir}(s_D\,\theta)` around each pooled vector,
    :func:`~pybncsmooth.estimators.posterior.predictive_sd`).  Draws: the population's
    posterior, the domains with a concentration of their own (``own``) drawn with it."""
    est = ctx.inner.estimate
    if not has_sd:
        return None, None
    probs, _, unseen = ctx.levels
    if ctx.has_domain:
        post = est.posterior.with_own(own, _dense_mass(ctx)) if isinstance(est.posterior, DomainPosterior) else None
        return tuple(unseen), post
    w = shrink_weight(*conc)
    unseen_sd = tuple(predictive_sd(m, v, w) for m, v in zip(probs, unseen))
    post = DomainPosterior(est.posterior, ctx.inner.tree, *conc, own) if est.posterior is not None else None
    return unseen_sd, post


def node_result(ctx: NodeContext, estimator: Any, conc: tuple, code: int, n_domains: int, dom: str
                ) -> DomainLastCPD:
    """Step two: the node's CPD with the domain's leaves the posterior under its
    concentration ``conc`` (``(log_s, weights)``), the other domains' leaves and the
    node's shared concentration unchanged."""
    inner, union = ctx.inner, ctx.union
    tree, est = inner.tree, inner.estimate
    d, r = len(union.parents), tree.child_card
    cfg_old, cnt_old, leaf_old_p, leaf_old_sd = ctx.old
    p_new, sd_new = estimator.domain_posterior(ctx.dcnt.astype(np.float64), ctx.mean, *conc, mean_sd=ctx.mean_sd,
                                               mass=ctx.leaf_mass)
    all_cfg = np.concatenate([cfg_old, ctx.dcfg]).reshape(-1, d + 1)
    order = np.argsort(ctx.parent * n_domains + all_cfg[:, -1], kind="stable")
    leaf_level = TreeLevel(ctx.parent[order], all_cfg[order, -1],
                           np.concatenate([cnt_old, ctx.dcnt]).reshape(-1, r)[order])
    out_tree = ContextTree(tree.child, tuple(tree.parents[:d]) + (dom,), r, tuple(tree.parent_cards[:d]) + (n_domains,),
                           tuple(union.levels) + (leaf_level,))
    probs, sds, _ = ctx.levels
    sd_all = None
    if sds and sd_new is not None and (leaf_old_sd is not None or not len(cfg_old)):
        old_sd = leaf_old_sd if leaf_old_sd is not None else np.zeros((0, r))
        sd_all = tuple(sds) + (np.concatenate([old_sd, sd_new]).reshape(-1, r)[order],)
    info = dict(est.info) if ctx.has_domain else dict(est.info, **concentration_info(*conc))
    info = with_own_concentration(info, code, *conc)
    if ctx.mass is not None:
        info["s_domain_mass"] = ctx.mass
    unseen_sd, post = _adapted_posterior(ctx, own_concentrations(info), conc, sd_all is not None)
    all_p = np.concatenate([leaf_old_p, p_new]).reshape(-1, r)[order]
    new_est = replace(est, probs=tuple(probs) + (all_p,), info=info, sd=sd_all, unseen_sd=unseen_sd, posterior=post)
    return DomainLastCPD(TreeCPD(out_tree, new_est, domain_last=True))
