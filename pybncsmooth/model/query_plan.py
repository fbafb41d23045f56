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
4. **Elimination order.**  The unobserved non-targets are summed out one at a time,
   greedily the one whose merged factor is smallest (min-weight; the scores of a
   variable's neighbours are updated as it goes).

*Soft* evidence variables are observed in some rows of a batch and not in others:
they stay axes and get an indicator factor :math:`\lambda_v(x) = [x = x_v]` (all
ones in a row where :math:`v` is unobserved), so rows with different missing cells
share one plan.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..errors import DataError
from .inference import MAX_FACTOR_CELLS

__all__ = ["FactorSpec", "Step", "QueryPlan", "make_plan", "elimination_order", "MAX_FACTOR_CELLS"]


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
    final product over the targets) into slot ``result``."""

    operands: tuple[int, ...]
    result: int
    summed: str | None


@dataclass
class QueryPlan:
    """A compiled query pattern (see the module docstring).

    Slots ``0 .. len(factors) - 1`` hold the CPD factors, the next ``len(soft_kept)``
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
    specs: list[FactorSpec], soft: Sequence[str], targets: Sequence[str]
) -> tuple[list[FactorSpec], list[str]]:
    """The factors (and soft indicators) in the connected components of the targets."""
    root: dict[str, str] = {}
    for f in specs:
        for v in f.free:
            root.setdefault(v, v)
        for v in f.free[1:]:
            a, b = _find(root, f.free[0]), _find(root, v)
            if a != b:
                root[b] = a
    for v in list(soft) + list(targets):
        root.setdefault(v, v)
    keep = {_find(root, t) for t in targets}
    kept = [f for f in specs if f.free and _find(root, f.free[0]) in keep]
    return kept, [s for s in soft if _find(root, s) in keep]


def _factor_specs(
    nodes: Sequence[str], parents: Mapping[str, Sequence[str]], cards: Mapping[str, int], rel: set[str], obs: set[str]
) -> list[FactorSpec]:
    out = []
    for n in nodes:
        if n not in rel:
            continue
        fam = (*parents[n], n)
        o = tuple(v for v in fam if v in obs)
        free = tuple(v for v in fam if v not in obs)
        perm = tuple(fam.index(v) for v in o + free)
        out.append(FactorSpec(n, o, free, perm, tuple(cards[v] for v in o)))
    return out


def _weight(adj: Mapping[str, set[str]], v: str, cards: Mapping[str, int]) -> int:
    return cards[v] * math.prod(cards[u] for u in adj[v])


def elimination_order(
    scopes: Sequence[Sequence[str]], eliminate: Sequence[str], cards: Mapping[str, int]
) -> list[str]:
    """Greedy min-weight order: repeatedly the variable of ``eliminate`` whose merged
    factor (itself and its current neighbours) has the fewest cells; ties go to the
    earliest in ``eliminate``.  Neighbours become linked as a variable goes, and only
    their scores change."""
    adj: dict[str, set[str]] = {}
    for s in scopes:
        for v in s:
            adj.setdefault(v, set()).update(u for u in s if u != v)
    rank = {v: i for i, v in enumerate(eliminate)}
    score = {v: _weight(adj, v, cards) for v in eliminate}
    heap = [(score[v], rank[v], v) for v in eliminate]
    heapq.heapify(heap)
    order: list[str] = []
    done: set[str] = set()
    while heap:
        w, _, v = heapq.heappop(heap)
        if v in done or w != score[v]:
            continue
        done.add(v)
        order.append(v)
        nbrs = adj.pop(v)
        for u in nbrs:
            adj[u].discard(v)
            adj[u].update(x for x in nbrs if x != u)
            if u in score and u not in done:
                score[u] = _weight(adj, u, cards)
                heapq.heappush(heap, (score[u], rank[u], u))
    return order


def _steps(
    scopes: list[tuple[str, ...]], order: Sequence[str], targets: Sequence[str], cards: Mapping[str, int]
) -> tuple[list[Step], int, int]:
    """The elimination steps (appending the result scopes to ``scopes``), the largest
    merged factor and the total cells visited (both per row)."""
    active = list(range(len(scopes)))
    steps: list[Step] = []
    biggest, work = 1, 0
    for v in [*order, None]:
        ops = [i for i in active if v is None or v in scopes[i]]
        union: list[str] = []
        for i in ops:
            union += [u for u in scopes[i] if u not in union]
        size = math.prod(cards[u] for u in union)
        if size > MAX_FACTOR_CELLS:
            raise DataError(
                f"exact inference needs a factor over {len(union)} variables ({size:,} cells, more than "
                f"{MAX_FACTOR_CELLS:,}) when summing out {v!r}: too many connected unobserved variables"
                if v is not None
                else f"the joint posterior of {list(targets)} has {size:,} cells (more than {MAX_FACTOR_CELLS:,})"
            )
        biggest, work = max(biggest, size), work + size
        res = tuple(u for u in union if u != v) if v is not None else tuple(targets)
        scopes.append(res)
        steps.append(Step(tuple(ops), len(scopes) - 1, v))
        active = [i for i in active if i not in ops] + [len(scopes) - 1]
    return steps, biggest, work


def make_plan(
    nodes: Sequence[str],
    parents: Mapping[str, Sequence[str]],
    cards: Mapping[str, int],
    targets: Sequence[str],
    observed: Sequence[str] = (),
    soft: Sequence[str] = (),
) -> QueryPlan:
    """The plan of :math:`P(X_T \\mid x_O, \\lambda_S)` on the DAG ``parents`` (see the
    module docstring).  ``targets``, ``observed`` and ``soft`` must be disjoint."""
    obs = set(observed)
    rel = _ancestral(parents, [*targets, *observed, *soft])
    specs = _factor_specs(nodes, parents, cards, rel, obs)
    kept, soft_kept = _relevant(specs, soft, targets)
    scopes = [f.free for f in kept] + [(s,) for s in soft_kept]
    tset = set(targets)
    free_order = []
    for s in scopes:
        free_order += [v for v in s if v not in tset and v not in free_order]
    order = elimination_order(scopes, free_order, cards)
    steps, biggest, work = _steps(scopes, order, targets, cards)
    return QueryPlan(
        tuple(targets), tuple(observed), tuple(soft), tuple(kept), tuple(soft_kept), tuple(steps), tuple(scopes),
        dict(cards), biggest, work,
    )
