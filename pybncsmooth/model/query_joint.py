r"""Queries of a tiny network from its whole joint distribution.

When the joint :math:`P(x_V) = \prod_v P(x_v \mid x_{\pi_v})` of every variable has few
cells (at most :data:`JOINT_CELLS`, e.g. the bnlearn repository's asia, cancer,
earthquake, survey and sachs), it is built once per network (cached) and a query is
one slice and one sum,

.. math:: P(x_T \mid x_O) = \frac{\sum_{x_H} P(x_T, x_H, x_O)}{\sum_{x_T, x_H} P(x_T, x_H, x_O)},

which on such a network costs less than compiling a plan for the pattern
(:mod:`pybncsmooth.model.query_plan`).  The denominator is :math:`P(x_O)` itself, so a
zero there is exactly evidence of probability zero, wherever its zero lies (no
separate check, :mod:`pybncsmooth.model.query_zeros`, is needed).  Exactness needs every
positive cell of the joint to be a normal double: the joint is built only when the
product over the nodes of each table's smallest positive entry is above
:data:`_SMALLEST_CELL` (no positive product can underflow to zero or lose digits);
otherwise, and for multi-domain networks, the planned elimination answers.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from .query_engine import network_tables

__all__ = ["JOINT_CELLS", "joint_table", "joint_posterior"]

#: largest joint (cells) built for the whole network (2 MB of doubles)
JOINT_CELLS = 1 << 18
#: the smallest product of positive entries the joint may hold (far above the subnormals)
_SMALLEST_CELL = 1e-280
#: most nodes (axes) of a joint
_MAX_NODES = 32


def _build(net: Any) -> np.ndarray | None:
    nodes = list(net.nodes)
    cards = [net.schema.cardinality(v) for v in nodes]
    if len(nodes) > _MAX_NODES or getattr(net, "domain", None) is not None or math.prod(cards) > JOINT_CELLS:
        return None
    tables = network_tables(net)
    pos = {v: i for i, v in enumerate(nodes)}
    joint = np.ones(cards)
    floor = 1.0
    for v in nodes:  # each family's table, broadcast over the other axes, multiplied in
        t = tables[v]
        if t is None:
            return None
        positive = t[t > 0]
        floor *= float(positive.min()) if positive.size else 1.0
        axes = [*(pos[p] for p in net.parents(v)), pos[v]]
        order = sorted(range(len(axes)), key=axes.__getitem__)
        shape = [1] * len(nodes)
        for a in axes:
            shape[a] = cards[a]
        joint *= t.transpose(order).reshape(shape)
    return joint if floor > _SMALLEST_CELL else None


def joint_table(net: Any) -> np.ndarray | None:
    """The joint distribution of every node, axes in node order (cached on the network,
    which is immutable); ``None`` when the network is too large for it, has a domain
    axis, or has tables whose products could underflow."""
    cache = net.__dict__
    if "_query_joint" not in cache:
        cache["_query_joint"] = _build(net)
    return cache["_query_joint"]


def joint_posterior(net: Any, targets: Sequence[str], evidence: Mapping[str, int], budget: int
                    ) -> np.ndarray | None:
    """:math:`P(X_T \\mid x_O)` as ``(1, *target cards)`` from the joint (NaN throughout
    when :math:`P(x_O) = 0`); ``evidence`` maps observed nodes to level codes.  ``None``
    when the network has no joint (:func:`joint_table`) or when the joint is larger than
    the factor budget (``budget`` bytes: the option ``max_factor_bytes``)."""
    cells = net.__dict__.get("_query_joint_cells")
    if cells is None:
        cells = net.__dict__["_query_joint_cells"] = math.prod(net.schema.cardinality(v) for v in net.nodes)
    joint = joint_table(net) if 8 * cells <= budget else None
    if joint is None:
        return None
    axes, summed, perm = _pattern(net, tuple(targets), tuple(evidence))
    at: list[Any] = [slice(None)] * len(net.nodes)
    for a, c in zip(axes, evidence.values()):
        at[a] = c
    post = joint[tuple(at)].sum(axis=summed)
    if perm is not None:
        post = post.transpose(perm)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (post / post.sum())[None]


def _pattern(net: Any, targets: tuple[str, ...], observed: tuple[str, ...]) -> tuple[tuple, tuple, tuple | None]:
    """The joint's axes of the observed nodes, the axes left after slicing them that are
    summed out, and the order that puts the targets' axes as ``targets`` lists them
    (``None``: they already are); cached per pattern."""
    cache = net.__dict__.setdefault("_query_joint_patterns", {})
    how = cache.get((targets, observed))
    if how is None:
        nodes = list(net.nodes)
        free = [v for v in nodes if v not in observed]
        kept = sorted(free.index(t) for t in targets)
        perm = tuple(kept.index(free.index(t)) for t in targets)
        summed = tuple(i for i in range(len(free)) if i not in kept)
        how = cache[(targets, observed)] = (tuple(nodes.index(v) for v in observed), summed,
                                            None if perm == tuple(range(len(perm))) else perm)
    return how
