r"""A new domain from a few rows, with a fitted population as its prior.

For every node the population's context tree (the domain split last, or no domain
at all) keeps its estimates; the new rows add leaves below their parent
configurations, each the posterior of the estimator's domain model with the
population held fixed,

.. math:: \hat\theta_{x \mid y, d} = \frac{n_{yxd} + s_D\, \hat\theta_{x \mid y}}{n_{yd} + s_D},

with :math:`\hat\theta_{x \mid y}` what the population answers for configuration ``y``
and :math:`s_D` the node's domain concentration, averaged over the posterior the fit
learned (maximum likelihood keeps the domain's own frequencies).  No estimator runs again: the cost
is counting the new rows.  Rows for a domain that already exists add to its counts,
so adapting twice equals adapting once with all the rows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..counting.context_tree import ContextTree, TreeLevel
from ..counting.network import count_specs
from ..data.encode import encode
from ..data.sources import as_source
from ..errors import DataError, HyperparameterError, UnknownNodeError
from ..estimators._pooling import concentration_info, fixed_concentration, shrink_weight
from ..estimators.posterior import DomainPosterior, predictive_sd
from ..data.weights import check_weights
from ..options import Options
from ..validation import check_number
from .cpd import DomainLastCPD, TreeCPD

__all__ = ["adapt_network"]

#: the domain column of a network fitted without ``domain=`` once it is adapted
DEFAULT_DOMAIN_NAME = "domain"


def _rows_frame(rows: Any, options: Options) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The new rows as one frame (index reset) and their weights (``options.weights``: a
    column of the rows, or one number per row; ``None``: every row counts once)."""
    if isinstance(rows, pd.DataFrame):
        df = rows
    else:
        parts = list(as_source(rows, chunksize=options.chunksize).chunks())
        if not parts:
            raise DataError("adapt: the new rows are empty")
        df = pd.concat(parts, ignore_index=True)
    w = options.weights
    if w is None:
        return df.reset_index(drop=True), None
    if isinstance(w, str):
        if w not in df.columns:
            raise DataError(f"weights={w!r} is not a column of the new rows (columns: {list(df.columns)[:10]})")
        weights = check_weights(pd.to_numeric(df[w], errors="coerce").to_numpy(), df.index, f"weights {w!r}")
        return df.drop(columns=w).reset_index(drop=True), weights
    return df.reset_index(drop=True), check_weights(w, df.index, "weights")


def _kind(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    return type(v).__name__


def _domain_label(label: Any, levels: list, column: str) -> Any:
    """``label`` as a level of the domain column, matched as queries match values
    (:func:`~pybncsmooth.data.encode.encode`): equal to a level, or, against levels that
    are all text, by its text (1978 is '1978').  A new label joins text levels as text;
    against levels of another type (numbers) a label of a different type is refused rather
    than added beside them (queries would never match the two alike)."""
    label = label.item() if isinstance(label, np.generic) else label
    if label in levels:
        return levels[levels.index(label)]
    if levels and all(isinstance(v, str) for v in levels):
        return label if isinstance(label, str) else str(label)
    kinds = sorted({_kind(v) for v in levels})
    if levels and _kind(label) not in kinds:
        shown = ", ".join(repr(v) for v in levels[:5]) + (", ..." if len(levels) > 5 else "")
        raise DataError(
            f"adapt: the domain label {label!r} is a {_kind(label)}, and the domain levels of {column!r} are "
            f"{'/'.join(kinds)} ({shown}); pass the label as a {kinds[0]}"
        )
    return label


def _check_label_column(df: pd.DataFrame, column: str, label: Any) -> pd.DataFrame:
    """Rows may carry the domain column: every value must then be ``label`` (a text
    label also matches a value whose text it is)."""
    if column not in df.columns:
        return df
    col = df[column]
    text = isinstance(label, str)
    same = col.astype(object).map(lambda v: v == label or (text and not isinstance(v, str) and str(v) == label))
    bad = col.isna() | ~same.astype(bool)
    if bad.any():
        first = df.index[int(np.argmax(bad.to_numpy()))]
        raise DataError(
            f"adapt(domain={label!r}): row {first!r} has {column}={col[first]!r}; the rows of one call "
            f"belong to one domain (drop the column or split the rows by {column!r})"
        )
    return df.drop(columns=column)


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


def _adapt_node(
    cpd: Any,
    new_tree: ContextTree,
    code: int,
    n_domains: int,
    estimator: Any,
    conc: tuple[np.ndarray, np.ndarray],
    has_domain: bool,
    dom: str,
) -> DomainLastCPD:
    """One node's CPD with domain ``code`` given (or added) the counts of ``new_tree``."""
    inner: TreeCPD = cpd.inner if has_domain else cpd
    tree, est = inner.tree, inner.estimate
    d, r = len(new_tree.parents), tree.child_card
    pooled_old = tree.truncate(d) if has_domain else tree
    union = pooled_old.merge(new_tree) if new_tree.total else pooled_old  # the new rows' configurations added
    cfg_old, cnt_old, leaf_old_p, leaf_old_sd, *base = _split_leaves(tree, est, code, d, has_domain)
    dcfg, dcnt = _domain_counts(tree, new_tree, tuple(base), code, n_domains)
    want_sd = est.sd is not None
    probs, sds, unseen = _pooled_levels(inner, union, d, want_sd)
    # the domain level: old leaves of the other domains and the new ones, each under its configuration
    all_cfg = np.concatenate([cfg_old, dcfg]).reshape(-1, d + 1)
    _, parent, _ = union.find(all_cfg[:, :d])
    # the new leaves around their configuration's pooled estimate
    mean = probs[d][parent[len(cfg_old) :]]
    mean_sd = sds[d][parent[len(cfg_old) :]] if want_sd else None
    p_new, sd_new = estimator.domain_posterior(dcnt.astype(np.float64), mean, *conc, mean_sd=mean_sd)
    order = np.argsort(parent * n_domains + all_cfg[:, -1], kind="stable")
    leaf_level = TreeLevel(parent[order], all_cfg[order, -1], np.concatenate([cnt_old, dcnt]).reshape(-1, r)[order])
    out_tree = ContextTree(tree.child, tuple(tree.parents[:d]) + (dom,), r,
                           tuple(tree.parent_cards[:d]) + (n_domains,), tuple(union.levels) + (leaf_level,))
    sd_all = None
    if want_sd and sd_new is not None and (leaf_old_sd is not None or not len(cfg_old)):
        old_sd = leaf_old_sd if leaf_old_sd is not None else np.zeros((0, r))
        sd_all = tuple(sds) + (np.concatenate([old_sd, sd_new]).reshape(-1, r)[order],)
    info = dict(est.info, **concentration_info(*conc))
    unseen_sd, post = _adapted_posterior(est, tree, probs, unseen, conc, has_domain, sd_all is not None)
    # the unseen rule and its tables kept (a population fitted with domains has no fallback table)
    all_p = np.concatenate([leaf_old_p, p_new]).reshape(-1, r)[order]
    new_est = replace(est, probs=tuple(probs) + (all_p,), info=info, sd=sd_all, unseen_sd=unseen_sd, posterior=post)
    return DomainLastCPD(TreeCPD(out_tree, new_est, domain_last=True))


def _check_adaptable(net: Any, has_domain: bool) -> None:
    """Every node's CPD holds a context tree with its estimate, the domain split last."""
    for n in net.nodes:
        cpd = net.cpd(n)
        ok = isinstance(cpd, DomainLastCPD) if has_domain else isinstance(cpd, TreeCPD)
        if not ok:
            why = (
                "a multi-domain fit with the domain split last (hmd's domain_model='joint' and compat='bnlearn' "
                "split it first: refit with the default domain model)"
                if has_domain
                else "a fitted network with context trees (tables read from a file have none)"
            )
            raise DataError(f"adapt needs {why}; node {n!r} has a {type(cpd).__name__}")
    if net.estimator is None:
        raise DataError("adapt needs the estimator the network was fitted with (this network does not name one)")


def _adapted_posterior(est: Any, tree: ContextTree, probs: list, unseen: list, conc: tuple, has_domain: bool,
                       has_sd: bool) -> tuple[tuple | None, Any]:
    r"""The adapted estimate's ``unseen_sd`` and posterior.  The population's answers for
    a configuration absent below each pooled node (``unseen``, levels ``0..d``) already
    include a fresh domain's spread when the population has domains; a population
    fitted without them gains it here (:math:`\mathrm{Dir}(s_D\,\theta)` around each
    pooled vector, :func:`~pybncsmooth.estimators.posterior.predictive_sd`).  Draws:
    the population's posterior with the domains' concentration ``conc`` below it."""
    if not has_sd:
        return None, None
    if has_domain:
        post = est.posterior.with_concentration(*conc) if isinstance(est.posterior, DomainPosterior) else None
        return tuple(unseen), post
    w = shrink_weight(*conc)
    unseen_sd = tuple(predictive_sd(m, v, w) for m, v in zip(probs, unseen))
    post = DomainPosterior(est.posterior, tree, *conc) if est.posterior is not None else None
    return unseen_sd, post


def adapt_network(
    net: Any,
    rows: Any,
    label: Any,
    *,
    column: str | None = None,
    s_domain: float | Mapping[str, float] | None = None,
    options: Options | None = None,
) -> Any:
    """See :meth:`FittedNetwork.adapt` (``options``: the call's, built at the ``adapt``
    entry point: ``weights``, ``chunksize``, ``on_unseen``)."""
    options = options if options is not None else Options.build("adapt")
    has_domain = net.domain is not None
    if has_domain and column is not None and column != net.domain:
        raise DataError(f"the network's domain column is {net.domain!r}, not {column!r}")
    dom = net.domain if has_domain else (column or DEFAULT_DOMAIN_NAME)
    if not has_domain and dom in net.schema:
        raise DataError(f"{dom!r} is a node of the network: name the domain column with column=")
    if label is None or (isinstance(label, float) and np.isnan(label)):
        raise DataError("adapt needs a domain label (domain=...), not a missing value")
    _check_adaptable(net, has_domain)
    if isinstance(s_domain, Mapping):
        unknown = [k for k in s_domain if k not in net.dag]
        if unknown:
            raise UnknownNodeError(unknown[0], f"(s_domain gives a value for it; the nodes are {net.nodes})")
    levels = list(net.schema[dom]) if has_domain else []
    label = _domain_label(label, levels, dom)
    df, weights = _rows_frame(rows, options)
    df = _check_label_column(df, dom, label)
    policy = net.options.missing
    na = policy.counting
    # as the network's queries: under na="level" a node without that level in training
    # takes its missing values as unobserved (counted on the available cases); a level
    # unseen in training is an error, or unobserved with on_unseen="backoff"
    enc = encode(df, net.schema, variables=net.nodes, na=na, on_unseen=options.on_unseen, empty_ok=True,
                 na_label=policy.label, missing_unobserved=True)
    if enc.n_rows == 0:
        raise DataError(f"adapt(domain={label!r}): no row is left after missing values are handled (na={na!r})")
    if label in levels:
        code = levels.index(label)
    else:
        code, levels = len(levels), levels + [label]
    schema = net.schema.with_levels(dom, levels)
    kept = None if weights is None else weights[np.asarray(enc.index, dtype=np.int64)]
    trees = dict(zip(net.nodes, count_specs(enc, [(n, tuple(net.parents(n))) for n in net.nodes], weights=kept)))
    cpds = {}
    for n in net.nodes:
        cpd = net.cpd(n)
        s = _s_for(n, cpd, s_domain, has_domain, net.schema.cardinality(n))
        cpds[n] = _adapt_node(cpd, trees[n], code, len(levels), net.estimator, s, has_domain, dom)
    info = dict(net.info)
    adapted = dict(info.get("adapted", {}))
    adapted[label] = adapted.get(label, 0) + enc.n_rows
    info["adapted"] = adapted
    out = type(net)(net.dag, schema, cpds, domain=dom, estimator=net.estimator, info=info,
                    options=net.options.replace(domain=dom) if net.options.domain != dom else net.options)
    out.transformer = net.transformer
    return out


def _s_for(node: str, cpd: Any, s_domain: Any, has_domain: bool, r: int) -> tuple[np.ndarray, np.ndarray]:
    """The domain concentration of ``node`` as ``(log_s, weights)``: given, the posterior
    the fit learned, or (a network fitted without domains) the number of the node's
    levels."""
    if s_domain is not None:
        val = s_domain.get(node) if isinstance(s_domain, Mapping) else s_domain
        if val is not None:
            v = check_number("s_domain", val, strict=False)
            if v > 1e10:
                raise HyperparameterError(f"s_domain must be <= 1e10, not {val!r}")
            return fixed_concentration(v)
        if isinstance(s_domain, Mapping) and not has_domain:
            raise HyperparameterError(f"s_domain gives no value for node {node!r}")
    info = cpd.estimate.info if has_domain else {}
    if "s_domain_log" in info:
        log_s, weights = info["s_domain_log"], info["s_domain_weights"]
        return np.asarray(log_s, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    return fixed_concentration(float(info.get("s_domain", r)))
