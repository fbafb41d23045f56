r"""One node of a network adapted to a domain (:mod:`pybncsmooth.model.adapt`): its
population's tree with the domain's leaves added or grown, in two steps, so that the
domain's posterior can be learned from every node's rows at once between them:
:func:`node_context` (the domain's counts, the pooled vectors its leaves shrink toward,
the mass :math:`A_y` these are known with, and the fitted domains' own tables) and
:func:`node_result` (the node's CPD with the domain's leaves set to its posterior)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..counting.context_tree import ContextTree, TreeLevel, config_index
from ..estimators._domain_prior import moment_mass, with_own_concentration
from ..estimators._pooling import concentration_info, shrink_weight
from ..estimators.posterior import DirichletMixture, DomainPosterior, predictive_sd
from .cpd import DomainLastCPD, TreeCPD

__all__ = ["NodeContext", "AdaptedNode", "node_context", "node_result", "atom_dirichlets"]


@dataclass
class NodeContext:
    """What one node's adaptation needs between its two steps."""

    inner: TreeCPD
    has_domain: bool
    union: ContextTree  # the pooled tree with the new rows' configurations added
    remap: np.ndarray | None  # the population's pooled configurations in the union's last level (None: the same)
    dcounts: np.ndarray  # (Q, r): the domain's counts at every configuration of the union's last level
    levels: tuple  # the union's pooled levels: estimates, sds, unseen configurations' sds
    mass: np.ndarray | None  # A_y of the union's configurations (None: known exactly)
    shared: tuple | None  # the node's concentration posterior shared by the fitted domains

    @property
    def parent(self) -> np.ndarray:
        """The population's leaves' configurations, as indices of the union's last level."""
        par = self.inner.tree.levels[-1].parent
        return par if self.remap is None else self.remap[par]

    @property
    def dpos(self) -> np.ndarray:
        """The configurations where the domain has rows."""
        return np.flatnonzero(self.dcounts.sum(axis=1) > 0)

    @property
    def dcnt(self) -> np.ndarray:
        return self.dcounts[self.dpos]

    @property
    def pooled(self) -> np.ndarray:
        """``(Q, r)``: the population's vector of every configuration of the union."""
        return self.levels[0][-1]

    @property
    def mean(self) -> np.ndarray:
        """The pooled vector of each configuration where the domain has rows."""
        return self.pooled[self.dpos]

    @property
    def leaf_mass(self) -> np.ndarray | None:
        return None if self.mass is None else self.mass[self.dpos]


@dataclass
class AdaptedNode:
    """The domain's posterior in one node: at the union's configurations ``pos`` its
    counts, posterior means and sds (``None``: the estimator gives none), the mixture
    they come from (``None``: no posterior), the new type's concentration posterior
    ``conc`` and the summary of :func:`~pybncsmooth.estimators._domain_prior.own_urns`."""

    pos: np.ndarray
    probs: np.ndarray
    sd: np.ndarray | None
    mixture: DirichletMixture | None
    conc: tuple[np.ndarray, np.ndarray]
    urn: tuple[float, int, float, float] = (1.0, -1, 0.0, 0.0)


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


def _union_index(union: ContextTree, d: int, configs: np.ndarray) -> np.ndarray:
    """Indices in the union's last level of prefix ``configs`` (every one present)."""
    keys = config_index(union.node_configs(d), union.parent_cards[:d])
    return np.searchsorted(keys, config_index(configs, union.parent_cards[:d]))


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
    return moment_mass(mean, np.sqrt(np.maximum(v, 0.0)))


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
    """Step one: the domain's counts (its old ones and ``new_tree``'s) at the
    configurations of the union, the pooled vectors they shrink toward and their masses."""
    inner: TreeCPD = cpd.inner if has_domain else cpd
    tree, est = inner.tree, inner.estimate
    d = len(new_tree.parents)
    pooled_old = tree.truncate(d) if has_domain else tree
    union = pooled_old.merge(new_tree) if new_tree.total else pooled_old  # the new rows' configurations added
    r = tree.child_card
    dcounts = np.zeros((len(union.levels[d].value), r))
    remap = None
    if has_domain:
        if len(union.levels[d].value) != len(pooled_old.levels[d].value):
            remap = _union_index(union, d, pooled_old.node_configs(d))
        if code < tree.parent_cards[-1]:  # a fitted domain given more rows: its old leaves
            leaves = tree.levels[-1]
            mine = np.flatnonzero(leaves.value == code)
            par = leaves.parent[mine] if remap is None else remap[leaves.parent[mine]]
            np.add.at(dcounts, par, leaves.counts[mine])
    ncfg, ncnt = new_tree.leaf_table()
    if len(ncnt):
        np.add.at(dcounts, _union_index(union, d, ncfg), ncnt)
    levels = _pooled_levels(inner, union, d, est.sd is not None)
    shared = None
    if has_domain and "s_domain_log" in est.info:
        shared = (np.asarray(est.info["s_domain_log"], dtype=np.float64), np.asarray(est.info["s_domain_weights"]))
    mass = _union_mass(inner, union, d, levels, shared)
    return NodeContext(inner, has_domain, union, remap, dcounts, levels, mass, shared)


def _concentration_mean(shared: tuple) -> float:
    """The posterior geometric mean of the shared concentration (0: no pooling)."""
    ls, w = shared
    return float(np.exp(w @ ls)) if np.isfinite(ls).all() else 0.0


def atom_dirichlets(ctx: NodeContext, rows: np.ndarray, where: np.ndarray) -> np.ndarray:
    r"""``(K, len(where), r)``: the Dirichlet parameters at the union's configurations
    ``where`` of the fitted domains the fit kept for adapt (rows ``rows`` of its
    ``s_atom_alpha``, :func:`~pybncsmooth.estimators._domain_prior.atom_table`); at a
    configuration the population never saw, its answer there with a fresh domain's
    spread (:func:`_fresh_mass`), or without sds the shared concentration."""
    info = ctx.inner.estimate.info
    stored = np.asarray(info["s_atom_alpha"])[rows]
    pos = np.arange(stored.shape[1]) if ctx.remap is None else ctx.remap
    col = np.full(len(ctx.pooled), -1, dtype=np.int64)
    col[pos] = np.arange(len(pos))
    j = col[where]
    out = np.empty((len(rows), len(where), ctx.union.child_card))
    hit = j >= 0
    out[:, hit] = stored[:, j[hit]]
    if (~hit).any():
        new = where[~hit]
        mean = ctx.pooled[new]
        if ctx.inner.estimate.sd is not None:  # what the population answers a domain without rows there
            fresh = moment_mass(mean, ctx.levels[1][-1][new])
        else:
            s_bar = _concentration_mean(ctx.shared) if ctx.shared is not None else 0.0
            A = ctx.mass[new] if ctx.mass is not None else np.full(len(new), np.inf)
            fresh = np.where(np.isfinite(A), s_bar * A / (s_bar + A + 1.0), s_bar)
        out[:, ~hit] = (np.maximum(fresh, 1e-6)[:, None] * np.maximum(mean, 1e-300))[None]
    return out


def _insert_leaves(ctx: NodeContext, code: int, n_domains: int, node: AdaptedNode) -> tuple:
    """The leaf level with the domain's old leaves replaced by ``node``'s: the leaves'
    union configurations, domain codes, counts, estimates and sds (or ``None``),
    sorted by configuration then domain.  A new domain (the last code) goes at the end
    of each configuration's block: one copy of the population's arrays."""
    inner = ctx.inner
    est = inner.estimate
    r = ctx.union.child_card
    if ctx.has_domain:
        leaves = inner.tree.levels[-1]
        parent, value, counts = ctx.parent, leaves.value, leaves.counts
        probs = est.probs[-1]
        sd = est.sd[-1] if est.sd is not None else None
        if code < inner.tree.parent_cards[-1]:  # a domain the tree has: its old leaves go
            keep = value != code
            parent, value, counts, probs = parent[keep], value[keep], counts[keep], probs[keep]
            sd = sd[keep] if sd is not None else None
            at = np.searchsorted(parent * n_domains + value, node.pos * n_domains + code)
        else:
            at = np.searchsorted(parent, node.pos, side="right")
    else:
        parent, value = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        counts, probs, sd = np.zeros((0, r), dtype=np.int64), np.zeros((0, r)), None
        at = np.zeros(len(node.pos), dtype=np.int64)
    dc = ctx.dcounts[node.pos]
    if counts.dtype.kind != "f":
        if np.array_equal(dc, np.round(dc)):
            dc = dc.astype(counts.dtype)
        else:  # weighted rows: the whole level becomes fractional
            counts = counts.astype(np.float64)
    out_sd = None
    if node.sd is not None and (sd is not None or not len(parent)):
        out_sd = _spliced(sd if sd is not None else np.zeros((0, r)), at, node.sd)
    return (_spliced(parent, at, node.pos), _spliced(value, at, np.full(len(at), code, dtype=value.dtype)),
            _spliced(counts, at, dc), _spliced(probs, at, node.probs), out_sd)


def _spliced(old: np.ndarray, at: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``old`` with ``rows`` inserted before the sorted positions ``at`` (one copy:
    the slices between the positions and the new rows, concatenated)."""
    parts, prev = [], 0
    for i, a in enumerate(at):
        parts.append(old[prev:a])
        parts.append(rows[i:i + 1])
        prev = a
    parts.append(old[prev:])
    return np.concatenate(parts)


def _adapted_posterior(ctx: NodeContext, node: AdaptedNode, code: int, has_sd: bool) -> tuple[tuple | None, Any]:
    r"""The adapted estimate's ``unseen_sd`` and posterior.  The population's answers for
    a configuration absent below each pooled node already include a fresh domain's
    spread when the population has domains; a population fitted without them gains it
    here (:math:`\mathrm{Dir}(s_D\,\theta)` around each pooled vector,
    :func:`~pybncsmooth.estimators.posterior.predictive_sd`).  Draws: the population's
    posterior, the domain's own mixture drawn as it is."""
    est = ctx.inner.estimate
    if not has_sd:
        return None, None
    probs, _, unseen = ctx.levels
    d = len(ctx.union.parents)
    cfg = config_index(ctx.union.node_configs(d), ctx.union.parent_cards)[node.pos]
    if ctx.has_domain:
        post = est.posterior
        if isinstance(post, DomainPosterior) and node.mixture is not None:
            post = post.with_own(code, cfg, node.mixture)
        return tuple(unseen), post if isinstance(post, DomainPosterior) else None
    w = shrink_weight(*node.conc)
    unseen_sd = tuple(predictive_sd(m, v, w) for m, v in zip(probs, unseen))
    post = None
    if est.posterior is not None:
        post = DomainPosterior(est.posterior, ctx.inner.tree, *node.conc)
        if node.mixture is not None:
            post = post.with_own(code, cfg, node.mixture)
    return unseen_sd, post


def node_result(ctx: NodeContext, node: AdaptedNode, code: int, n_domains: int, dom: str) -> DomainLastCPD:
    """Step two: the node's CPD with the domain's leaves set to ``node``, the other
    domains' leaves and the node's shared concentration unchanged."""
    inner, union = ctx.inner, ctx.union
    tree, est = inner.tree, inner.estimate
    d, r = len(union.parents), tree.child_card
    parent, value, counts, leaf_p, leaf_sd = _insert_leaves(ctx, code, n_domains, node)
    out_tree = ContextTree(tree.child, tuple(tree.parents[:d]) + (dom,), r, tuple(tree.parent_cards[:d]) + (n_domains,),
                           tuple(union.levels) + (TreeLevel(parent, value, counts),))
    probs, sds, _ = ctx.levels
    sd_all = tuple(sds) + (leaf_sd,) if sds and leaf_sd is not None else None
    info = dict(est.info) if ctx.has_domain else dict(est.info, **concentration_info(*node.conc))
    info = with_own_concentration(info, code, *node.conc, urn=node.urn)
    if ctx.mass is not None:
        info["s_domain_mass"] = ctx.mass
    unseen_sd, post = _adapted_posterior(ctx, node, code, sd_all is not None)
    new_est = replace(est, probs=tuple(probs) + (leaf_p,), info=info, sd=sd_all, unseen_sd=unseen_sd, posterior=post)
    return DomainLastCPD(TreeCPD(out_tree, new_est, domain_last=True))
