r"""Evaluating a query plan: evidence slices the CPD tables, einsum sums the products.

Every CPD enters as a dense table laid out ``(*parents, node)``, compiled once per
network from the CPD's own cached query matrix (so unseen parent configurations carry
the estimator's back-off, and a domain's tables its pooled fallback).  For a factor
whose family holds observed variables the table is reordered to ``(observed, free)``
once per plan and each row picks its slice with one gather of the mixed-radix index
of its observed values.  A factor without observed variables is shared by every row
and has no row axis; einsum broadcasts it.  Each step of the plan multiplies the
factors holding one variable and sums it out,

.. math:: \psi(\mathbf{y}) = \sum_{x_v} \prod_{\phi \ni v} \phi(x_v, \mathbf{y}),

and divides the result by its maximum in each row (the scale is a constant of the
targets, so the normalised posterior is unchanged and long chains cannot underflow).

Axes of every factor: an optional leading *draw* axis (parameter sets: one posterior
draw of all CPTs each), an optional *row* axis (queries of a batch), then one axis per
variable.  :func:`_query_tables` evaluates one bound query on ``D`` parameter sets at
once.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from ...errors import FactorBudgetError
from ..cpd import QUERY_DENSE_CELLS
from .inference import _family_factor
from .plan import QueryPlan

__all__ = ["BoundQuery", "network_tables", "run_query", "_query_tables", "check_budget"]

_DRAW, _ROW = "Y", "Z"
#: the leading subscripts of an operand with a draw axis and/or a row axis
_HEADS = {(a, b): (_DRAW if a else "") + (_ROW if b else "") for a in (False, True) for b in (False, True)}
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
#: most operands one einsum call multiplies (numpy's limit is higher on recent versions)
_MAX_OPERANDS = 24
#: products of three or more factors holding more cells than this are taken pairwise
_PAIRWISE_CELLS = 4096
#: rows of a batch are evaluated in chunks of at most this many cells per factor
_CHUNK_CELLS = 1 << 23


class BoundQuery(NamedTuple):
    """A plan with the evidence of its rows: ``codes[v]`` holds one code per row for
    every observed and soft variable of the plan (``-1``: unobserved, soft only)."""

    plan: QueryPlan
    codes: Mapping[str, np.ndarray]
    n_rows: int


class _Tables(dict):
    """Each node's dense CPT laid out ``(*parents, node)``, compiled on first use."""

    def __init__(self, net: Any) -> None:
        super().__init__()
        self.net = net

    def __missing__(self, node: str) -> np.ndarray | None:
        cpd = self.net.cpd(node)
        t = None
        if cpd.n_configs * cpd.card <= QUERY_DENSE_CELLS:
            t = cpd._query_matrix().reshape(*cpd.parent_cards, cpd.card)
        self[node] = t
        return t


def network_tables(net: Any) -> Mapping[str, np.ndarray | None]:
    """Each node's dense CPT laid out ``(*parents, node)``, from the CPD's cached query
    matrix (so the estimator's back-off fills unseen configurations), compiled when a
    plan first needs it and cached on the network (which is immutable); ``None`` for a
    table over :data:`QUERY_DENSE_CELLS` cells, whose factors are then built from the
    CPD's queries row by row."""
    cache = net.__dict__.get("_query_tables")
    if cache is None:
        cache = net.__dict__["_query_tables"] = _Tables(net)
    return cache


def _flat_index(codes: Mapping[str, np.ndarray], obs: Sequence[str], cards: Sequence[int]) -> np.ndarray:
    idx = np.asarray(codes[obs[0]], dtype=np.int64)
    for v, c in zip(obs[1:], cards[1:]):
        idx = idx * c + codes[v]
    return idx


def _reordered(table: np.ndarray, f: Any, lead: int) -> np.ndarray:
    """``table`` (with ``lead`` leading axes) as ``(lead..., observed configurations, *free)``."""
    t = table.transpose([*range(lead), *(lead + p for p in f.perm)])
    if f.obs:
        t = t.reshape(*t.shape[:lead], math.prod(f.obs_cards), *t.shape[lead + len(f.obs) :])
    return t


def _factor_values(
    bound: BoundQuery, i: int, table: np.ndarray | None, net: Any, draws: bool, cached: bool
) -> np.ndarray:
    """The values of factor ``i`` for the rows of ``bound``: ``(D?, B?, *free)``."""
    plan, codes = bound.plan, bound.codes
    f = plan.factors[i]
    if table is None:  # too large to materialise: the CPD's queries over the free axes
        fam = {v: np.asarray(codes[v], dtype=np.int64) for v in f.obs}
        return _family_factor(net, f.node, fam or {f.node: np.zeros(bound.n_rows, np.int64)}, f.free, ())
    lead = 1 if draws else 0
    if cached:  # the network's own tables: each reordering made once, shared by the plans
        store = net.__dict__.setdefault("_query_sliced", {})
        t = store.get((f.node, f.perm, len(f.obs)))
        if t is None:
            t = store[(f.node, f.perm, len(f.obs))] = np.ascontiguousarray(_reordered(table, f, 0))
    else:
        t = _reordered(table, f, lead)
    if not f.obs:
        return t
    idx = _flat_index(codes, f.obs, f.obs_cards)
    return np.take(t, idx, axis=lead)


def _indicator(code: np.ndarray, card: int) -> np.ndarray:
    """``lambda[b, x] = [x = code_b]``, all ones where the row leaves the variable unobserved."""
    code = np.asarray(code, dtype=np.int64)
    return ((code[:, None] == np.arange(card)) | (code < 0)[:, None]).astype(np.float64)


def _input_flags(plan: QueryPlan, dense: Sequence[bool], draws: bool) -> tuple[tuple[bool, bool], ...]:
    """(draw axis, row axis) of every input slot."""
    flags = [(draws, bool(f.obs) or not d) for f, d in zip(plan.factors, dense)]
    return tuple(flags + [(False, True)] * len(plan.soft_kept))


def _program(plan: QueryPlan, flags: tuple[tuple[bool, bool], ...]) -> list[tuple[tuple[int, ...], str, int, tuple]]:
    """The einsum calls of ``plan`` for inputs with the axes ``flags`` (cached on the plan):
    ``(operand slots, subscripts, result slot, variable axes of the result)``."""
    key = ("program", flags)
    prog = plan.cache.get(key)
    if prog is not None:
        return prog
    lead = {i: fl for i, fl in enumerate(flags)}
    prog = []
    extra = len(plan.scopes)
    for st in plan.steps:
        ops = list(st.operands)
        while len(ops) > _MAX_OPERANDS:  # fold the first operands into one, nothing summed
            head, ops = ops[:_MAX_OPERANDS], ops[_MAX_OPERANDS:]
            union = tuple(dict.fromkeys(v for i in head for v in _scope(plan, i)))
            plan.cache.setdefault("extra_scopes", {})[extra] = union
            prog.append(_call(plan, head, extra, union, lead, False))
            ops.insert(0, extra)
            extra += 1
        prog.append(_call(plan, ops, st.result, plan.scopes[st.result], lead, st.rescale))
    plan.cache[key] = prog
    plan.cache[("lead", flags)] = lead[plan.steps[-1].result]
    return prog


def _scope(plan: QueryPlan, i: int) -> tuple[str, ...]:
    return plan.scopes[i] if i < len(plan.scopes) else plan.cache["extra_scopes"][i]


def _call(plan: QueryPlan, ops: Sequence[int], out: int, scope: tuple[str, ...], lead: dict, rescale: bool) -> tuple:
    """One einsum call ``(operands, subscripts, result slot, axes to rescale over or
    None)``; records the result's leading axes in ``lead``."""
    scopes = [_scope(plan, i) for i in ops]
    letter: dict[str, str] = {}
    for sc in [*scopes, scope]:
        for v in sc:
            if v not in letter:
                letter[v] = _LETTERS[len(letter)]
    d = any(lead[i][0] for i in ops)
    r = any(lead[i][1] for i in ops)
    lead[out] = (d, r)
    spec = ",".join(_HEADS[lead[i]] + "".join(map(letter.__getitem__, sc)) for i, sc in zip(ops, scopes))
    spec += "->" + _HEADS[(d, r)] + "".join(map(letter.__getitem__, scope))
    n_lead = int(d) + int(r)
    return tuple(ops), spec, out, tuple(range(n_lead, n_lead + len(scope))) if rescale else None


def _rescaled(r: np.ndarray, axes: tuple) -> np.ndarray:
    """``r`` divided by its maximum over ``axes`` (rows and draws kept apart)."""
    m = r.max(axis=axes, keepdims=True) if axes else r.copy()
    np.divide(r, m, out=r, where=m > 0)
    return r


def _evaluate(plan: QueryPlan, inputs: list[np.ndarray], flags: tuple[tuple[bool, bool], ...]) -> np.ndarray:
    """Run the steps on the input factors; the last result, over the targets."""
    vals: dict[int, np.ndarray] = dict(enumerate(inputs))
    out = None
    for ops, spec, res, axes in _program(plan, flags):
        args = [vals.pop(j) for j in ops]
        # a large product of three or more factors goes pairwise (BLAS where it can);
        # small ones in one call, whose overhead is less than that of planning pairs
        big = len(args) > 2 and sum(a.size for a in args) > _PAIRWISE_CELLS
        out = np.einsum(spec, *args, optimize="greedy" if big else False)
        if not out.flags.writeable or out.base is not None:
            out = np.array(out)
        vals[res] = _rescaled(out, axes) if axes is not None else out
    return vals[plan.steps[-1].result]


def _inputs(bound: BoundQuery, tables: Mapping[str, np.ndarray | None], net: Any, draws: bool, cached: bool):
    plan = bound.plan
    vals = [_factor_values(bound, i, tables[f.node], net, draws, cached) for i, f in enumerate(plan.factors)]
    vals += [_indicator(bound.codes[s], plan.cards[s]) for s in plan.soft_kept]
    flags = _input_flags(plan, [tables[f.node] is not None for f in plan.factors], draws)
    return vals, flags


def _evaluate_rows(bound: BoundQuery, tables: Mapping[str, Any], net: Any, draws: int, cached: bool) -> np.ndarray:
    """The unnormalised posterior ``(D?, B, *target cards)`` of the rows of ``bound``."""
    plan = bound.plan
    vals, flags = _inputs(bound, tables, net, bool(draws), cached)
    post = _evaluate(plan, vals, flags)
    d, r = plan.cache[("lead", flags)]
    # the result's axes follow its operands': give it the draw and row axes it lacks
    if not r:
        post = np.expand_dims(post, int(d))
    if draws and not d:
        post = post[None]
    shape = ((draws,) if draws else ()) + (bound.n_rows,) + tuple(plan.cards[t] for t in plan.targets)
    return np.broadcast_to(post, shape)


def _chunks(bound: BoundQuery, draws: int) -> list[BoundQuery]:
    """``bound`` split into row chunks that keep every factor under :data:`_CHUNK_CELLS` cells."""
    per_row = bound.plan.max_cells * max(draws, 1)
    size = max(1, _CHUNK_CELLS // per_row)
    if bound.n_rows <= size:
        return [bound]
    out = []
    for a in range(0, bound.n_rows, size):
        b = min(a + size, bound.n_rows)
        out.append(BoundQuery(bound.plan, {v: c[a:b] for v, c in bound.codes.items()}, b - a))
    return out


def check_budget(plan: QueryPlan, budget: int, draws: int = 0) -> None:
    """Refuse a plan whose largest factor (one row, all ``draws``) exceeds ``budget``
    bytes, naming the option that sets it."""
    cells = plan.max_cells * max(draws, 1)
    if 8 * cells > budget:
        raise FactorBudgetError(cells, budget, plan.widest, list(plan.targets))


def _posterior(bound: BoundQuery, tables: Mapping[str, Any], net: Any, draws: int, cached: bool) -> np.ndarray:
    parts = [_evaluate_rows(b, tables, net, draws, cached) for b in _chunks(bound, draws)]
    post = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1 if draws else 0)
    axes = tuple(range(post.ndim - len(bound.plan.targets), post.ndim))
    total = post.sum(axis=axes, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return post / total


def run_query(net: Any, bound: BoundQuery, budget: int) -> np.ndarray:
    """:math:`P(X_T \\mid \\text{evidence})` for every row of ``bound`` with the network's
    own (posterior mean) tables: ``(B, *target cards)``; a row whose evidence has
    probability zero is all NaN (the caller reports it).  A plan whose largest factor
    exceeds ``budget`` bytes is refused (:class:`~pybncsmooth.errors.FactorBudgetError`)."""
    check_budget(bound.plan, budget)
    return _posterior(bound, network_tables(net), net, 0, True)


def _query_tables(bound: BoundQuery, tables_by_node: Mapping[str, np.ndarray], budget: int | None = None) -> np.ndarray:
    """Evaluate one bound query on ``D`` parameter sets at once.

    ``tables_by_node[node]`` is an array of shape ``(D, r, *parent_cards)``: ``D``
    draws of the node's CPT in :meth:`FittedNetwork.cpt`'s layout (the node first,
    then its parents; columns sum to one).  Draw ``d`` of every node together is one
    parameter set.  Returns ``(D, B, *target cards)``: for each parameter set, the
    posterior of the targets in each row of ``bound`` (NaN where that parameter set
    gives the row's evidence probability zero).  The plan, the evidence slices and the
    elimination order are the same as for the point answer; only the tables differ.
    ``budget`` (bytes) bounds the largest factor over all the draws.
    """
    D = None
    tabs: dict[str, np.ndarray] = {}
    for f in bound.plan.factors:
        t = np.asarray(tables_by_node[f.node], dtype=np.float64)
        if t.ndim < 2 or (D is not None and t.shape[0] != D):
            raise ValueError(f"the tables of {f.node!r} must have a leading draw axis of {D or 'the same'} size")
        D = t.shape[0]
        tabs[f.node] = np.moveaxis(t, 1, -1)
    if D is None:  # no factor involves an unobserved variable: cannot happen with a target
        raise ValueError("the plan has no factor")
    if budget is not None:
        check_budget(bound.plan, budget, D)
    return _posterior(bound, tabs, None, D, False)
