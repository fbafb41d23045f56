r"""One node of a network adapted to a domain (:mod:`pybncsmooth.model.domains.adapt`), in two
steps, so that the domain's posterior can be learned from every node's rows at once
between them: :func:`node_context` (the domain's counts at the configurations of the
population united with its rows', the pooled vectors they shrink toward, the mass
:math:`A_y` these are known with) and :func:`node_result` (the node's CPD with the
domain's leaves set to its posterior, kept beside the population's tree:
:mod:`pybncsmooth.model.domains.overlay`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...counting.context_tree import ContextTree, TreeLevel, config_index
from ...estimators.domains.prior import moment_mass, with_own_concentration
from ...estimators.domains.pooling import concentration_info, shrink_weight
from ...estimators.posterior import DirichletMixture, DomainPosterior, predictive_sd
from .overlay import AddedLeaves, pooled_levels, union_index, union_mass
from ..cpd import DomainLastCPD, TreeCPD

__all__ = ["NodeContext", "AdaptedNode", "node_context", "node_result", "atom_dirichlets"]


@dataclass
class NodeContext:
    """What one node's adaptation needs between its two steps."""

    inner: TreeCPD  # the population's (as fitted: added domains aside)
    added: dict  # the domains already added beside it (code -> AddedLeaves)
    has_domain: bool
    union: ContextTree  # the pooled tree with the domain's rows' configurations added
    remap: np.ndarray | None  # the population's pooled configurations in the union's last level (None: the same)
    dcounts: np.ndarray  # (Q, r): the domain's counts at every configuration of the union's last level
    rows: np.ndarray  # (Q, r): of them, the rows adapt counted (this call's and earlier calls')
    levels: tuple  # the union's pooled levels: estimates, sds, unseen configurations' sds
    mass: np.ndarray | None  # A_y of the union's configurations (None: known exactly)
    shared: tuple | None  # the node's concentration posterior shared by the fitted domains
    dpos: np.ndarray = field(init=False)  # the configurations where the domain has rows

    def __post_init__(self) -> None:
        self.dpos = np.flatnonzero(self.dcounts.sum(axis=1) > 0)

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
    posterior means and sds (``None``: the estimator gives none), the mixture they come
    from (``None``: no posterior), the new type's concentration posterior ``conc`` and
    the summary of :func:`~pybncsmooth.estimators.domains.prior.own_urns`."""

    pos: np.ndarray
    probs: np.ndarray
    sd: np.ndarray | None
    mixture: DirichletMixture | None
    conc: tuple[np.ndarray, np.ndarray]
    urn: tuple[float, int, float, float] = (1.0, -1, 0.0, 0.0)


def _rows_tree(pooled: ContextTree, new_tree: ContextTree, earlier: AddedLeaves | None) -> ContextTree:
    """The rows ``adapt`` counted for the domain, this call's and earlier calls', as a
    tree over the pooled parents."""
    if earlier is None:
        return new_tree
    old = ContextTree.from_leaves(pooled.child, pooled.parents, pooled.child_card, pooled.parent_cards,
                                  earlier.configs, earlier.rows)
    return old.merge(new_tree) if new_tree.total else old


def node_context(cpd: Any, new_tree: ContextTree, code: int, n_domains: int, has_domain: bool) -> NodeContext:
    """Step one: the domain's counts (its old ones and ``new_tree``'s) at the
    configurations of the union, the pooled vectors they shrink toward and their masses."""
    inner: TreeCPD = cpd.base if has_domain else cpd
    added = dict(cpd.added) if has_domain else {}
    tree, est = inner.tree, inner.estimate
    d = len(new_tree.parents)
    pooled_old = tree.truncate(d) if has_domain else tree
    rows_tree = _rows_tree(pooled_old, new_tree, added.get(code))
    union = pooled_old.merge(rows_tree) if rows_tree.total else pooled_old  # the rows' configurations added
    r = tree.child_card
    Q = len(union.levels[d].value)
    dcounts, rows = np.zeros((Q, r)), np.zeros((Q, r))
    remap = None
    if has_domain and Q != len(pooled_old.levels[d].value):
        remap = union_index(union, d, pooled_old.node_configs(d))
    rcfg, rcnt = rows_tree.leaf_table()
    if len(rcnt):
        np.add.at(rows, union_index(union, d, rcfg), rcnt)
    dcounts += rows
    if has_domain and code < tree.parent_cards[-1]:  # a fitted domain given more rows: its fitted leaves too
        leaves = tree.levels[-1]
        mine = np.flatnonzero(leaves.value == code)
        par = leaves.parent[mine] if remap is None else remap[leaves.parent[mine]]
        np.add.at(dcounts, par, leaves.counts[mine])
    levels = pooled_levels(inner, union, d, est.sd is not None)
    shared = None
    if has_domain and "s_domain_log" in est.info:
        shared = (np.asarray(est.info["s_domain_log"], dtype=np.float64), np.asarray(est.info["s_domain_weights"]))
    mass = union_mass(inner, union, d, levels, shared)
    return NodeContext(inner, added, has_domain, union, remap, dcounts, rows, levels, mass, shared)


def _concentration_mean(shared: tuple) -> float:
    """The posterior geometric mean of the shared concentration (0: no pooling)."""
    ls, w = shared
    return float(np.exp(w @ ls)) if np.isfinite(ls).all() else 0.0


def atom_dirichlets(ctx: NodeContext, rows: np.ndarray, where: np.ndarray) -> np.ndarray:
    r"""``(K, len(where), r)``: the Dirichlet parameters at the union's configurations
    ``where`` of the fitted domains the fit kept for adapt (rows ``rows`` of its
    ``s_atom_alpha``, :func:`~pybncsmooth.estimators.domains.prior.atom_table`); at a
    configuration the population never saw, its answer there with a fresh domain's
    spread (:func:`~pybncsmooth.model.domains.overlay.fresh_mass`), or without sds the shared concentration."""
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


def without_domains(inner: Any, node: Any, dcounts: np.ndarray, union: ContextTree, levels: tuple, code: int,
                    n_domains: int, dom: str) -> Any:
    r"""A network fitted without domains adapted: its tree (the union) with the one
    domain's leaves below it, every other domain answered by the population; a domain
    without rows somewhere gains a fresh domain's spread (:math:`\mathrm{Dir}(s_D\,\theta)`
    around each pooled vector, :func:`~pybncsmooth.estimators.posterior.predictive_sd`)."""
    tree, est = inner.tree, inner.estimate
    d, r = len(union.parents), tree.child_card
    dc = dcounts[node.pos]
    if np.array_equal(dc, np.round(dc)):
        dc = dc.astype(np.int64)
    level = TreeLevel(np.asarray(node.pos, dtype=np.int64), np.full(len(node.pos), code, dtype=np.int64), dc)
    out_tree = ContextTree(tree.child, tuple(tree.parents[:d]) + (dom,), r, tuple(tree.parent_cards[:d]) + (n_domains,),
                           tuple(union.levels) + (level,))
    info = with_own_concentration(dict(est.info, **concentration_info(*node.conc)), code, *node.conc, urn=node.urn)
    probs, sds, unseen = levels
    sd = tuple(sds) + (node.sd,) if sds and node.sd is not None else None
    unseen_sd, post = None, None
    if sd is not None:
        w = shrink_weight(*node.conc)
        unseen_sd = tuple(predictive_sd(m, v, w) for m, v in zip(probs, unseen))
        if est.posterior is not None:
            post = DomainPosterior(est.posterior, tree, *node.conc)
            if node.mixture is not None:
                cfg = config_index(union.node_configs(d), union.parent_cards)[node.pos]
                post = post.with_own(code, cfg, node.mixture)
    new_est = replace(est, probs=tuple(probs) + (node.probs,), info=info, sd=sd, unseen_sd=unseen_sd, posterior=post)
    return DomainLastCPD(TreeCPD(out_tree, new_est, domain_last=True))


def node_result(ctx: NodeContext, node: AdaptedNode, code: int, n_domains: int, dom: str) -> DomainLastCPD:
    """Step two: the node's CPD with the domain's leaves set to ``node``: kept beside the
    population's tree (whose leaves, and the other domains', are untouched), or, for a
    population fitted without domains, its tree with the domain below it."""
    if not ctx.has_domain:
        return without_domains(ctx.inner, node, ctx.dcounts, ctx.union, ctx.levels, code, n_domains, dom)
    d = len(ctx.union.parents)
    cfg = ctx.union.node_configs(d)[node.pos]
    counts = ctx.dcounts[node.pos]
    leaves = AddedLeaves(cfg, counts, ctx.rows[node.pos], node.probs, node.sd, node.mixture, node.conc, node.urn)
    return DomainLastCPD(ctx.inner, {**ctx.added, int(code): leaves}, n_domains)

