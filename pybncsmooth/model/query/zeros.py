r"""Evidence of probability zero: the rows a query must refuse, wherever the zero lies.

A query's posterior :math:`P(x_T \mid x_O)` leaves out the factors the evidence
d-separates from the targets (they change :math:`P(x_O)`, not the posterior), and a row's
posterior in :meth:`~pybncsmooth.FittedNetwork.predict_proba` reads only the target's
Markov blanket; a zero among the factors left out would go unseen, and the query would
answer evidence that cannot happen.  :math:`P(x_O)` is the product over the ancestors of
the observed variables of their families' factors; factors linked through unobserved
variables form parts whose sums multiply, so :math:`P(x_O) = 0` exactly when one part
sums to zero.  A part whose tables have no zero sums to a positive number, and the
part holding a target is the query's own (its zero shows as an undefined posterior);
the other parts holding a zero are checked here, per evidence pattern (cached): an
observed family by a look-up, a larger part by the query of one of its unobserved
variables (whose plan evaluates that part alone).  Networks without zeros (every
Bayesian estimate) pay one look-up of a cached flag.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ...errors import DataError, DenseTableTooLargeError
from .inference import log_marginal, pattern_groups
from .batch import log_posterior_rows, plan_for, posterior_rows
from .engine import BoundQuery, run_query
from .evidence import never_observed

__all__ = ["impossible_rows", "has_zeros", "zero_nodes", "posterior_and_parts"]

_UNSEEN = np.full(1, -1, dtype=np.int64)


def _zero_masks(net: Any) -> dict[str, np.ndarray | None]:
    """For each node whose CPT has a zero entry, where (a boolean table in
    :meth:`~pybncsmooth.FittedNetwork.cpt`'s layout; ``None`` for a table too large to
    build, which counts as one that may have zeros).  Cached on the network."""
    out = net.__dict__.get("_query_zero_masks")
    if out is None:
        out = {}
        for v in net.nodes:
            try:
                t = net.cpt(v)
            except DenseTableTooLargeError:
                out[v] = None
                continue
            if float(t.min()) <= 0.0:
                out[v] = t <= 0.0
        net.__dict__["_query_zero_masks"] = out
    return out


def zero_nodes(net: Any) -> frozenset:
    """The nodes whose CPT has (or may have) a zero entry."""
    return frozenset(_zero_masks(net))


def has_zeros(net: Any) -> bool:
    """Whether some CPT of the network has a zero entry (see :func:`zero_nodes`)."""
    return bool(_zero_masks(net))


def _may_be_zero(net: Any, part: tuple[str, ...], codes: Mapping[str, np.ndarray], n: int) -> np.ndarray:
    """Rows where some table of the part has a zero in the slice its observed values
    select (elsewhere every product of the part, so its sum, is positive)."""
    masks = _zero_masks(net)
    maybe = np.zeros(n, dtype=bool)
    for v in part:
        if v not in masks:
            continue
        m = masks[v]
        if m is None or net.domain is not None:  # no table to slice (or a domain axis): the part is summed
            return np.ones(n, dtype=bool)
        fam = (v, *net.parents(v))
        axes = [i for i, u in enumerate(fam) if codes[u][0] >= 0]
        sliced = np.moveaxis(m, axes, range(len(axes)))[tuple(codes[fam[i]] for i in axes)]
        maybe |= sliced.reshape(n, -1).any(axis=1) if axes else bool(m.any())
    return maybe


def _observed_family_is_zero(net: Any, v: str, codes: Mapping[str, np.ndarray]) -> np.ndarray:
    """Rows where the observed family of ``v`` has probability zero: a look-up of its
    zero mask (its probability, in a multi-domain network or for a table too large)."""
    m = _zero_masks(net).get(v)
    if net.domain is None and m is not None:
        return m[tuple(codes[u] for u in (v, *net.parents(v)))]
    return ~(log_marginal(net, codes, (v,)) > -np.inf)


def _free_parts_are_zero(net: Any, parts: list[tuple[str, ...]], codes: Mapping[str, np.ndarray], n: int
                         ) -> np.ndarray:
    """Rows where one of the ``parts`` (each with unobserved variables) sums to zero:
    the joint query of one unobserved variable of each part evaluates those parts alone
    and is undefined exactly there; asked only in the rows where a zero can be reached
    (a domain network's parts one by one, each on its domain's tables)."""
    out = np.zeros(n, dtype=bool)
    maybe = [(p, _may_be_zero(net, p, codes, n)) for p in parts]
    maybe = [(p, m) for p, m in maybe if m.any()]
    if not maybe:
        return out
    rows = np.flatnonzero(np.logical_or.reduce([m for _, m in maybe]))
    sub = {v: c[rows] for v, c in codes.items()}
    reps = [next(u for u in p if codes[u][0] < 0) for p, _ in maybe]
    if net.domain is None:
        post = posterior_rows(net, reps, {v: c for v, c in sub.items() if v not in reps}, len(rows))
        out[rows] = np.isnan(post.reshape(len(rows), -1)).any(axis=1)
    else:
        for r in reps:
            out[rows] |= np.isneginf(log_posterior_rows(net, sub, r)).all(axis=1)
    return out


def _zero_parts(net: Any, observed: tuple[str, ...], targets: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The parts of :math:`P(x_O)` that can be zero for the evidence pattern ``observed``
    and that a query of ``targets`` does not evaluate (cached per pattern).

    :math:`P(x_O)` is the product, over the ancestors of the observed variables, of
    their families' factors; factors linked through unobserved variables form parts
    whose sums multiply.  A part made of tables without zeros sums to a positive
    number; the part holding a target is the query's own (its zero shows as NaN).  The
    others holding a table with a zero are returned, each as its nodes."""
    cache = net.__dict__.setdefault("_query_zero_parts", {})
    key = (observed, targets)
    if key in cache:
        return cache[key]
    obs, zero = set(observed), set(_zero_masks(net))
    rel, stack = set(), list(observed)
    while stack:  # the observed variables and their ancestors
        v = stack.pop()
        if v not in rel:
            rel.add(v)
            stack.extend(net.parents(v))
    root = {v: v for v in rel if v not in obs}

    def find(v: str) -> str:
        while root[v] != v:
            root[v] = root[root[v]]
            v = root[v]
        return v

    for v in rel:  # the unobserved variables of one family are linked
        free = [u for u in (v, *net.parents(v)) if u not in obs]
        for u in free[1:]:
            root[find(u)] = find(free[0])
    parts: dict[Any, list[str]] = {}
    for v in rel:
        free = [u for u in (v, *net.parents(v)) if u not in obs]
        parts.setdefault(find(free[0]) if free else ("observed", v), []).append(v)
    hit = {find(t) for t in targets if t in root}
    out = [tuple(p) for k, p in parts.items() if k not in hit and zero.intersection(p)]
    cache[key] = out
    return out


def impossible_rows(net: Any, codes: Mapping[str, np.ndarray], n: int,
                    targets: Sequence[str] = (), parts_summed: bool = False) -> np.ndarray | None:
    r"""Rows whose evidence has probability zero under the network, :math:`P(x_O) = 0`,
    where a query of ``targets`` cannot see it (see the module docstring; ``codes``:
    node -> codes of the ``n`` rows, ``-1`` or absent: unobserved; the domain's codes
    in a multi-domain fit); ``None`` when no row is.  A level of probability zero
    under every parent configuration is caught first
    (:func:`~pybncsmooth.model.query.evidence.never_observed`).  Where a part needs too
    large a factor to sum, the rows the query itself finds (NaN) are the ones refused.
    ``parts_summed``: the query summed the parts with unobserved variables itself
    (:func:`posterior_and_parts`), so only observed families are looked up."""
    bad = never_observed(net, codes)
    if n == 0 or not has_zeros(net):
        return bad
    seen = {v: np.asarray(c, dtype=np.int64) >= 0 for v, c in codes.items() if v in net.dag}
    vs = [v for v in net.nodes if v in seen and seen[v].any() and v not in targets]
    if not vs:
        return bad
    miss = np.full(n, -1, dtype=np.int64)
    full = {v: np.asarray(codes[v], dtype=np.int64) if v in codes and v not in targets else miss
            for v in ([net.domain] if net.domain is not None else []) + list(net.nodes)}
    mask = np.column_stack([seen[v] for v in vs])
    zero = np.zeros(n, dtype=bool)
    for rows in pattern_groups(mask) if n > 1 else [np.arange(1)]:
        observed = tuple(v for v, b in zip(vs, mask[rows[0]]) if b)
        sub = {v: c[rows] for v, c in full.items()} if n > 1 else full
        parts = _zero_parts(net, observed, tuple(targets))
        free = [p for p in parts if any(sub[u][0] < 0 for u in p)]
        try:
            for p in parts:
                if p not in free:  # an observed family
                    zero[rows] |= _observed_family_is_zero(net, p[0], sub)
            if free and not parts_summed:
                zero[rows] |= _free_parts_are_zero(net, free, sub, len(rows))
        except (DataError, DenseTableTooLargeError):  # too large a factor or table: the query's own check stands
            continue
    return zero if bad is None else bad | zero


def posterior_and_parts(net: Any, targets: tuple[str, ...], evidence: Mapping[str, int], budget: int
                        ) -> tuple[np.ndarray, bool]:
    """The posterior of one query ``(1, *target cards)`` (``evidence``: node -> code, in
    node order), and whether it summed in its own plan the parts of :math:`P(x_O)` that
    may be zero (see the module docstring): then a NaN answer is every zero of those
    parts, and :func:`impossible_rows` need only look up the observed families
    (``parts_summed=True``), without a second plan.  Without such parts, or when keeping
    them would need a factor over ``budget`` bytes, the query's plain posterior."""
    codes = {v: np.array([c], dtype=np.int64) for v, c in evidence.items()}
    if net.domain is None and codes and has_zeros(net):
        full = {v: codes.get(v, _UNSEEN) for v in net.nodes}
        parts = [p for p in _zero_parts(net, tuple(codes), targets) if any(u not in codes for u in p)]
        reps = tuple(next(u for u in p if u not in codes) for p in parts if _may_be_zero(net, p, full, 1)[0])
        if reps:
            plan = plan_for(net, targets, tuple(codes), (), budget, keep=reps)
            if 8 * plan.max_cells <= budget:
                return run_query(net, BoundQuery(plan, codes, 1), budget), True
    return posterior_rows(net, targets, codes, 1, budget), False
