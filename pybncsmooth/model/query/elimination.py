r"""Elimination orders for exact queries: cheap ones first, better ones when it pays.

Summing out the hidden variables of a query one at a time costs, at each step, the
cells of the factor that merges every factor holding the variable,

.. math:: w(v) = |X_v| \prod_{u \in N(v)} |X_u|,

with :math:`N(v)` its neighbours in the interaction graph of the factors still live;
the *total cost* of an order is the sum of these, its *width* the largest.  Finding the
order of least total cost is NP-hard; the classical greedy rules pick the next variable
by a local score (Koller and Friedman 2009, Sec. 9.4.3.2; Kjærulff 1990):

* **min-weight**: the smallest :math:`w(v)`;
* **min-fill**: the fewest *fill edges* (pairs of neighbours not yet linked, which
  eliminating :math:`v` links), ties by :math:`w(v)`;
* **weighted min-fill**: the fill edges weighed by the product of their two
  variables' cardinalities, ties by :math:`w(v)`.

No rule wins everywhere, so :func:`choose_order` starts with min-weight (optimal or
nearly so on most query patterns, and the cheapest to find) and, when the time the
evaluation is predicted to take (its total cost) is large against the time a search
would take (predicted from the work min-weight's own greedy pass did), also runs the
other rules and restarts of them with random tie-breaking and mildly randomised scores
(Kask et al. 2011), as many as that time allows, keeping the order
of least total cost among those whose largest factor fits the budget.  Both
predictions count operations, not seconds, and the restarts are seeded: a pattern
always gets the same plan.
"""

from __future__ import annotations

import heapq
import math
import random
from typing import Mapping, Sequence

__all__ = ["Order", "choose_order", "order_cost"]

#: total cost (cells) below which min-weight's order is kept without a search
_SEARCH_FROM = 1 << 18
#: a step of the greedy search (a neighbour scored) costs about as much time as this many
#: cells of the evaluation (interpreted Python against a compiled product)
_OP_CELLS = 40
#: the share of the predicted evaluation time a search may take
_SEARCH_SHARE = 0.5
_MAX_RESTARTS = 12
_RULES = ("weight", "wfill", "fill")


class Order(tuple):
    """An elimination order with its total cost and width (cells per row), the variable
    whose elimination builds the widest factor, and the steps the greedy search that
    found it took (``ops``: neighbours scored)."""

    cost: int
    width: int
    widest: str | None
    ops: int

    def __new__(cls, order: Sequence[str], cost: int, width: int, widest: str | None, ops: int = 0) -> "Order":
        self = super().__new__(cls, order)
        self.cost, self.width, self.widest, self.ops = cost, width, widest, ops
        return self


def _eliminate(g: dict[str, set[str]], cards: Mapping[str, int], v: str) -> tuple[int, set[str]]:
    """Remove ``v`` from the graph ``g``, linking its neighbours; the cells of the factor
    its elimination merges, and its neighbours."""
    nb = g.pop(v)
    w = cards[v] * math.prod(cards[u] for u in nb)
    for a in nb:
        g[a] |= nb
        g[a].discard(a)
        g[a].discard(v)
    return w, nb


def order_cost(adj: Mapping[str, set[str]], cards: Mapping[str, int], order: Sequence[str]) -> Order:
    """The total cost and width of eliminating ``order`` from the graph ``adj``."""
    g = {v: set(n) for v, n in adj.items()}
    cost = width = 0
    widest = None
    for v in order:
        w, _ = _eliminate(g, cards, v)
        cost += w
        if w > width:
            width, widest = w, v
    return Order(order, cost, width, widest)


def _score(g: Mapping[str, set[str]], cards: Mapping[str, int], v: str, rule: str) -> tuple[float, int]:
    nb = g[v]
    w = cards[v] * math.prod(cards[u] for u in nb)
    if rule == "weight":
        return (w, 0)
    fill = 0
    nbl = list(nb)
    for i, a in enumerate(nbl):
        ga = g[a]
        for b in nbl[i + 1 :]:
            if b not in ga:
                fill += 1 if rule == "fill" else cards[a] * cards[b]
    return (fill, w)


def _greedy(adj: Mapping[str, set[str]], cards: Mapping[str, int], eliminate: Sequence[str], rule: str,
            rng: random.Random | None) -> Order:
    """One greedy order by ``rule``; ``rng`` breaks ties at random and jitters scores."""
    g = {v: set(n) for v, n in adj.items()}
    todo = set(eliminate)
    rank = {v: (rng.random() if rng else i) for i, v in enumerate(eliminate)}
    jitter = (lambda: 1.0 + 0.25 * rng.random()) if rng else (lambda: 1.0)  # noqa: E731
    ver = dict.fromkeys(eliminate, 0)
    ops = [0]

    def entry(u: str) -> tuple:
        s = _score(g, cards, u, rule)
        ops[0] += len(g[u]) ** (1 if rule == "weight" else 2) + 1
        return (s[0] * jitter(), s[1], rank[u], ver[u], u)

    heap = [entry(v) for v in eliminate]
    heapq.heapify(heap)
    order: list[str] = []
    cost = width = 0
    widest = None
    while heap:
        *_, version, v = heapq.heappop(heap)
        if v not in todo or version != ver[v]:
            continue  # stale entry
        todo.discard(v)
        order.append(v)
        w, nb = _eliminate(g, cards, v)
        cost += w
        if w > width:
            width, widest = w, v
        touched = set(nb) if rule == "weight" else set(nb).union(*(g[a] for a in nb))
        for u in touched & todo:
            ver[u] += 1
            heapq.heappush(heap, entry(u))
    return Order(order, cost, width, widest, ops[0])


def choose_order(adj: Mapping[str, set[str]], cards: Mapping[str, int], eliminate: Sequence[str],
                 budget: int) -> Order:
    """An order of ``eliminate`` (the hidden variables) on the interaction graph ``adj``
    (every variable of the query, targets included, to its neighbours): min-weight's,
    or the cheapest of the orders a search finds among those whose width is at most
    ``budget`` cells (the narrowest when none is).  The search runs when min-weight's
    cost exceeds :data:`_SEARCH_FROM` cells (or its width the budget), for as long as
    :data:`_SEARCH_SHARE` of the predicted evaluation allows."""
    best = _greedy(adj, cards, eliminate, "weight", None)
    if best.cost <= _SEARCH_FROM and best.width <= budget:
        return best
    # a fill-rule pass scores every neighbour pair where min-weight scored neighbours
    mean_deg = best.ops / max(len(eliminate), 1)
    per_run = max(best.ops * (1.0 + mean_deg), 1.0)
    search = _OP_CELLS * per_run
    allowed = _MAX_RESTARTS if search == 0 else int(_SEARCH_SHARE * best.cost / search)
    if best.width > budget:
        allowed = max(allowed, len(_RULES) - 1)  # always look for an order that fits
    tried = [best]
    rng = random.Random(len(eliminate))
    for i in range(min(allowed, _MAX_RESTARTS)):
        rule = _RULES[1 + i % (len(_RULES) - 1)] if i < len(_RULES) - 1 else _RULES[i % len(_RULES)]
        tried.append(_greedy(adj, cards, eliminate, rule, random.Random(rng.random()) if i >= len(_RULES) - 1
                             else None))
    fitting = [o for o in tried if o.width <= budget]
    if fitting:
        return min(fitting, key=lambda o: (o.cost, o.width))
    return min(tried, key=lambda o: (o.width, o.cost))
