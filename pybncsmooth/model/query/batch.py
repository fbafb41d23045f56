"""Posteriors for rows of evidence: plans cached by pattern, rows grouped to share them.

Rows whose observed variables are the same share one plan, and are evaluated together
along a leading row axis.  When a batch mixes many patterns (say one random query per
row), compiling and running a plan per pattern costs more than one plan for all rows:
the variables observed in every row are then hard evidence, those observed in some
rows soft evidence (an indicator factor per row, see
:mod:`pybncsmooth.model.query.plan`), chosen by comparing the merged plan's work per
row times the rows with an overhead per pattern.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ...options import factor_budget
from .inference import pattern_groups
from .engine import BoundQuery, run_query
from .evidence import domain_network_by_code
from .plan import QueryPlan, make_plan

__all__ = ["plan_for", "bind_rows", "posterior_rows", "log_posterior_rows", "budget_of"]

#: plans kept per network (the oldest go first)
_PLAN_CACHE_SIZE = 4096
#: cells of work one extra pattern's plan is worth (compiling and calling it), a fixed
#: part and a part per step of the merged plan (a pattern's plan has fewer steps);
#: measured on alarm, insurance and a random 200-node network: one cell about 6 ns,
#: a plan about 100 us plus 10 us a step
_PATTERN_OVERHEAD = 20_000
_STEP_OVERHEAD = 1_500


def budget_of(net: Any, max_factor_bytes: int | None = None) -> int:
    """The factor budget of a query in bytes: ``max_factor_bytes`` if given, else the
    network's option, else the default share of memory."""
    if max_factor_bytes is None:
        max_factor_bytes = getattr(getattr(net, "options", None), "max_factor_bytes", None)
    return factor_budget(max_factor_bytes)


def plan_for(
    net: Any, targets: Sequence[str], observed: Sequence[str], soft: Sequence[str] = (), budget: int | None = None,
    keep: Sequence[str] = (),
) -> QueryPlan:
    """The plan of a pattern on ``net`` (cached on the network: its structure and levels
    never change), its order chosen to fit ``budget`` bytes per factor where it can;
    ``keep`` as :func:`~pybncsmooth.model.query.plan.make_plan` takes it."""
    cache = net.__dict__.setdefault("_query_plans", {})
    cells = (budget if budget is not None else budget_of(net)) // 8
    key = (tuple(targets), tuple(observed), tuple(soft), cells, tuple(keep))
    plan = cache.get(key)
    if plan is None:
        meta = _meta(net)
        plan = make_plan(meta[3], meta[0], meta[1], targets, observed, soft, cells, keep)
        if len(cache) >= _PLAN_CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = plan
    return plan


def _meta(net: Any) -> tuple[dict, dict, dict, list]:
    """Parents, cardinalities and positions of the nodes, and the node list (cached)."""
    meta = net.__dict__.get("_query_meta")
    if meta is None:
        nodes = net.nodes
        meta = (
            {v: net.parents(v) for v in nodes},
            {v: net.schema.cardinality(v) for v in nodes},
            {v: i for i, v in enumerate(nodes)},
            nodes,
        )
        net.__dict__["_query_meta"] = meta
    return meta


def bind_rows(
    net: Any, targets: Sequence[str], codes: Mapping[str, np.ndarray], n: int, budget: int | None = None
) -> list[tuple[np.ndarray | None, BoundQuery]]:
    """The rows (``None``: all of them) and bound query of each group of rows (plans
    made for ``budget`` bytes a factor, the network's budget by default)."""
    budget = budget_of(net) if budget is None else budget
    pos = _meta(net)[2]
    vs = sorted((v for v in codes if v not in targets and (codes[v] >= 0).any()), key=pos.__getitem__)
    if not vs:
        return [(None, BoundQuery(plan_for(net, targets, (), (), budget), {}, n))]
    if n == 1:
        obs = tuple(v for v in vs if codes[v][0] >= 0)
        return [(None, BoundQuery(plan_for(net, targets, obs, (), budget), {v: codes[v] for v in obs}, n))]
    seen = np.column_stack([codes[v] >= 0 for v in vs])
    groups = pattern_groups(seen)
    if len(groups) == 1:
        obs = tuple(v for v, b in zip(vs, seen[0]) if b)
        return [(None, BoundQuery(plan_for(net, targets, obs, (), budget), {v: codes[v] for v in obs}, n))]
    everywhere = seen.all(axis=0)
    hard = tuple(v for v, b in zip(vs, everywhere) if b)
    soft = tuple(v for v, b in zip(vs, everywhere) if not b)
    merged = plan_for(net, targets, hard, soft, budget)
    if 8 * merged.max_cells > budget:  # the patterns' own plans are smaller
        merged = None
    per_pattern = _PATTERN_OVERHEAD + _STEP_OVERHEAD * len(merged.steps) if merged is not None else 0
    if merged is not None and merged.work * n <= per_pattern * len(groups):
        return [(None, BoundQuery(merged, {v: codes[v] for v in hard + soft}, n))]
    out = []
    for rows in groups:
        obs = tuple(v for v, b in zip(vs, seen[rows[0]]) if b)
        plan = plan_for(net, targets, obs, (), budget)
        out.append((rows, BoundQuery(plan, {v: codes[v][rows] for v in obs}, len(rows))))
    return out


def posterior_rows(
    net: Any, targets: Sequence[str], codes: Mapping[str, np.ndarray], n: int, budget: int | None = None
) -> np.ndarray:
    """:math:`P(X_T \\mid x_{O_i})` for each row ``i``: ``(n, *target cards)``, the
    evidence of row ``i`` the codes ``>= 0`` in row ``i`` of ``codes`` (node -> codes);
    NaN in a row whose evidence has probability zero.  A factor may take ``budget``
    bytes (default: the network's option ``max_factor_bytes``)."""
    budget = budget_of(net) if budget is None else budget
    cards = tuple(net.schema.cardinality(t) for t in targets)
    parts = bind_rows(net, targets, codes, n, budget)
    if len(parts) == 1:
        return run_query(net, parts[0][1], budget)
    out = np.empty((n, *cards))
    for rows, bound in parts:
        out[rows] = run_query(net, bound, budget)
    return out


def log_posterior_rows(net: Any, codes: Mapping[str, np.ndarray], target: str) -> np.ndarray:
    """The ``(n, r)`` log posterior of ``target`` in each row given the row's observed
    codes (node -> codes, ``-1`` unobserved; ``codes[net.domain]`` the row's domain in a
    multi-domain fit, ``-1`` for one unseen in training: the population-level tables);
    ``-inf`` throughout a row whose evidence has probability zero."""
    n = len(next(iter(codes.values()))) if codes else 0
    out = np.empty((n, net.schema.cardinality(target)))
    dom = np.asarray(codes[net.domain]) if net.domain is not None else np.zeros(n, dtype=np.int64)
    for d in np.unique(dom):
        rows = np.flatnonzero(dom == d) if net.domain is not None else slice(None)
        sub = {v: c[rows] for v, c in codes.items() if v != net.domain and v != target}
        qnet = domain_network_by_code(net, int(d)) if net.domain is not None else net
        out[rows] = posterior_rows(qnet, [target], sub, n if net.domain is None else len(rows))
    with np.errstate(divide="ignore"):
        return np.where(np.isnan(out), -np.inf, np.log(out))
