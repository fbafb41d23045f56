r"""Plans of exact queries: which factors a query needs and in which order to sum.

A query asks for :math:`P(X_T \mid x_O)`, the joint posterior of the targets
:math:`T` given evidence on the variables :math:`O`.  Its *pattern* is the triple
(targets, hard evidence variables, soft evidence variables); a plan depends on the
pattern and the structure only, never on the observed values, so it is built once
and reused for every query (and every row of a batch) with that pattern.

Building a plan (Koller and Friedman 2009, Sec. 9.3 and 9.4):

1. **Barren nodes.**  Only the ancestors of :math:`T \cup O \cup S` matter: the
   CPD of any other node sums to one once its descendants are summed out.
2. **Evidence.**  In every remaining family the observed variables become indices
   (the factor is sliced at the observed values), the others stay axes.
3. **Irrelevant factors.**  Factors are linked through the unobserved variables
   they share; factors outside the connected components holding a target multiply
   to a constant of the targets (they are d-separated from the targets by the
   evidence) and are dropped: they change :math:`P(x_O)`, not the posterior.
4. **Elimination order.**  The unobserved non-targets are summed out one at a time in
   an order of small total cost (:mod:`pybncsmooth.model.query.elimination`: min-weight,
   and on costly patterns min-fill, weighted min-fill and randomised restarts, the
   cheapest kept among those whose largest factor fits the budget).

*Soft* evidence variables are observed in some rows of a batch and not in others:
they stay axes and get an indicator factor :math:`\lambda_v(x) = [x = x_v]` (all
ones in a row where :math:`v` is unobserved), so rows with different missing cells
share one plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .elimination import choose_order

__all__ = ["FactorSpec", "Step", "QueryPlan", "make_plan"]

#: a step's result is rescaled once it holds the product of this many input factors
#: (each at most 1, and in practice above 1e-30: no product of four underflows)
_RESCALE_FOLDS = 4


@dataclass(frozen=True)
class FactorSpec:
    """The factor of one node's CPD in a plan.

    ``obs`` are the family's observed variables (indices), ``free`` its axes, and
    ``perm`` orders the axes of the CPD table laid out ``(*parents, node)`` as
    ``obs + free``."""

    node: str
    obs: tuple[str, ...]
    free: tuple[str, ...]
    perm: tuple[int, ...]
    obs_cards: tuple[int, ...]


@dataclass(frozen=True)
class Step:
    """Multiply the factors in slots ``operands`` and sum out ``summed`` (``None``: the
    final product over the targets) into slot ``result``; ``rescale``: divide the
    result by its maximum in each row (every few products, so that no chain of
    products can underflow)."""

    operands: tuple[int, ...]
    result: int
    summed: str | None
    rescale: bool = True


@dataclass
class QueryPlan:
    """A compiled query pattern (see the module docstring).

    ``max_cells`` is the largest factor it builds and ``work`` the cells it visits, both
    per row of evidence.  Slots ``0 .. len(factors) - 1`` hold the CPD factors, the next ``len(soft_kept)``
    the indicator factors of the soft evidence, then one slot per step; ``scopes[i]``
    is the variable axes of slot ``i``."""

    targets: tuple[str, ...]
    observed: tuple[str, ...]
    soft: tuple[str, ...]
    factors: tuple[FactorSpec, ...]
    soft_kept: tuple[str, ...]
    steps: tuple[Step, ...]
    scopes: tuple[tuple[str, ...], ...]
    cards: Mapping[str, int]
    max_cells: int
    work: int
    #: the variable whose elimination builds the largest factor (``None``: the targets' joint)
    widest: str | None = None
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_inputs(self) -> int:
        """Slots filled before the first step: CPD factors and indicators."""
        return len(self.factors) + len(self.soft_kept)


def _ancestral(parents: Mapping[str, Sequence[str]], start: Sequence[str]) -> set[str]:
    """``start`` and all their ancestors."""
    out: set[str] = set()
    stack = list(start)
    while stack:
        v = stack.pop()
        if v not in out:
            out.add(v)
            stack.extend(parents[v])
    return out


def _find(root: dict[str, str], v: str) -> str:
    while root[v] != v:
        root[v] = root[root[v]]
        v = root[v]
    return v


def _relevant(
    specs: list[FactorSpec], soft: Sequence[str], targets: Sequence[str], keep: Sequence[str] = ()
) -> tuple[list[FactorSpec], list[str]]:
    """The factors (and soft indicators) in the connected components of the targets
    (and of the variables ``keep``)."""
    root: dict[str, str] = {}
    for f in specs:
        for v in f.free:
            root.setdefault(v, v)
        for v in f.free[1:]:
            a, b = _find(root, f.free[0]), _find(root, v)
            if a != b:
                root[b] = a
    for v in [*soft, *targets, *keep]:
        root.setdefault(v, v)
    roots = {_find(root, t) for t in [*targets, *keep]}
    kept = [f for f in specs if f.free and _find(root, f.free[0]) in roots]
    return kept, [s for s in soft if _find(root, s) in roots]


def _factor_specs(
    nodes: Sequence[str], parents: Mapping[str, Sequence[str]], cards: Mapping[str, int], rel: set[str], obs: set[str]
) -> list[FactorSpec]:
    out = []
    pos = {v: i for i, v in enumerate(nodes)}
    for n in sorted(rel, key=pos.__getitem__):
        fam = (*parents[n], n)
        if obs.isdisjoint(fam):
            out.append(FactorSpec(n, (), fam, tuple(range(len(fam))), ()))
            continue
        o = tuple(v for v in fam if v in obs)
        free = tuple(v for v in fam if v not in obs)
        perm = tuple(fam.index(v) for v in o + free)
        out.append(FactorSpec(n, o, free, perm, tuple(cards[v] for v in o)))
    return out


class _Graph:
    """The interaction graph of the live factors, as variables are summed out."""

    def __init__(self, scopes: list[tuple[str, ...]], cards: Mapping[str, int]) -> None:
        self.scopes, self.cards = scopes, cards
        self.holding: dict[str, set[int]] = {}
        self.adj: dict[str, set[str]] = {}
        for i, sc in enumerate(scopes):
            for u in sc:
                self.holding.setdefault(u, set()).add(i)
                self.adj.setdefault(u, set()).update(sc)
        for u, a in self.adj.items():
            a.discard(u)
        self.live = set(range(len(scopes)))
        self.folds = [1] * len(scopes)

    def merge(self, ops: list[int], res: tuple[str, ...], summed: str | None) -> Step:
        """Replace the factors ``ops`` by their product over ``res``."""
        k = len(self.scopes)
        self.scopes.append(res)
        self.live.difference_update(ops)
        self.live.add(k)
        fold = sum(self.folds[i] for i in ops)
        rescale = fold >= _RESCALE_FOLDS or summed is None
        self.folds.append(1 if rescale else fold)
        return Step(tuple(ops), k, summed, rescale)

    def eliminate(self, v: str) -> tuple[Step, list[str]]:
        """Sum out ``v``; the variables whose neighbourhood changed."""
        ops = sorted(self.holding.pop(v))
        nbrs = self.adj.pop(v)
        res = tuple(u for u in dict.fromkeys(u for i in ops for u in self.scopes[i]) if u != v)
        step = self.merge(ops, res, v)
        for u in nbrs:
            hu = self.holding[u]
            hu.difference_update(ops)
            hu.add(step.result)
            au = self.adj[u]
            au.update(nbrs)
            au.discard(u)
            au.discard(v)
        return step, list(nbrs)


def _steps(
    scopes: list[tuple[str, ...]], eliminate: Sequence[str], cards: Mapping[str, int], targets: Sequence[str],
    budget: int,
) -> tuple[list[Step], int, int, str | None]:
    """Sum out ``eliminate`` in the order :func:`choose_order` picks, then the product
    over ``targets``.  The steps (result scopes appended to ``scopes``), the largest
    merged factor and the total cells visited, both per row, and the variable whose
    elimination builds the largest factor (``None``: the targets' joint)."""
    g = _Graph(scopes, cards)
    order = choose_order(g.adj, cards, eliminate, budget)
    steps = [g.eliminate(v)[0] for v in order]
    size = math.prod(cards[t] for t in targets)
    steps.append(g.merge(sorted(g.live), tuple(targets), None))
    widest = order.widest if order.width >= size else None
    return steps, max(order.width, size), order.cost + size, widest


def make_plan(
    nodes: Sequence[str],
    parents: Mapping[str, Sequence[str]],
    cards: Mapping[str, int],
    targets: Sequence[str],
    observed: Sequence[str] = (),
    soft: Sequence[str] = (),
    budget: int = 1 << 62,
    keep: Sequence[str] = (),
) -> QueryPlan:
    """The plan of :math:`P(X_T \\mid x_O, \\lambda_S)` on the DAG ``parents`` (see the
    module docstring).  ``targets``, ``observed`` and ``soft`` must be disjoint;
    ``budget`` is the largest factor (cells per row) the order should build, if it can.
    The plan is made whatever its size: the engine refuses to run one over the budget.
    ``keep``: unobserved variables whose components step 3 keeps although the evidence
    separates them from the targets; each is summed to a constant of the targets (a
    zero there, evidence of probability zero, makes the answer undefined: NaN)."""
    obs = set(observed)
    rel = _ancestral(parents, [*targets, *observed, *soft])
    specs = _factor_specs(nodes, parents, cards, rel, obs)
    kept, soft_kept = _relevant(specs, soft, targets, keep)
    scopes = [f.free for f in kept] + [(s,) for s in soft_kept]
    tset = set(targets)
    free_order = []
    for s in scopes:
        free_order += [v for v in s if v not in tset and v not in free_order]
    steps, biggest, work, widest = _steps(scopes, free_order, cards, targets, budget)
    return QueryPlan(
        tuple(targets), tuple(observed), tuple(soft), tuple(kept), tuple(soft_kept), tuple(steps), tuple(scopes),
        dict(cards), biggest, work, widest,
    )
