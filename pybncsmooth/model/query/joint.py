r"""Queries of a tiny network from its whole joint distribution.

When the joint :math:`P(x_V) = \prod_v P(x_v \mid x_{\pi_v})` of every variable has few
cells (at most :data:`JOINT_CELLS`, e.g. the bnlearn repository's asia, cancer,
earthquake, survey and sachs), it is built once per network (cached) and a query is
one slice and one sum,

.. math:: P(x_T \mid x_O) = \frac{\sum_{x_H} P(x_T, x_H, x_O)}{\sum_{x_T, x_H} P(x_T, x_H, x_O)},

which on such a network costs less than compiling a plan for the pattern
(:mod:`pybncsmooth.model.query.plan`).  The denominator is :math:`P(x_O)` itself, so a
zero there is exactly evidence of probability zero, wherever its zero lies (no
separate check, :mod:`pybncsmooth.model.query.zeros`, is needed).  Exactness needs every
positive cell of the joint to be a normal double: the joint is built only when the
product over the nodes of each table's smallest positive entry is above
:data:`_SMALLEST_CELL` (no positive product can underflow to zero or lose digits);
otherwise, and for multi-domain networks, the planned elimination answers.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from .engine import network_tables

__all__ = ["JOINT_CELLS", "joint_table", "joint_posterior"]

#: largest joint (cells) built for the whole network (2 MB of doubles)
JOINT_CELLS = 1 << 18
#: the smallest product of positive entries the joint may hold (far above the subnormals)
_SMALLEST_CELL = 1e-280
#: most nodes (axes) of a joint
_MAX_NODES = 32


def _build(net: Any) -> tuple[np.ndarray, tuple[str, ...]] | None:
    cards = [net.schema.cardinality(v) for v in net.nodes]
    if len(cards) > _MAX_NODES or getattr(net, "domain", None) is not None or math.prod(cards) > JOINT_CELLS:
        return None
    tables = network_tables(net)
    joint = np.ones(())
    have: list[str] = []  # the joint's axes so far, the newest first
    floor = 1.0
    for v in net.dag.topological_order():  # each family's table times the partial joint
        t = tables[v]
        if t is None:
            return None
        positive = t[t > 0]
        floor *= float(positive.min()) if positive.size else 1.0
        pa = net.parents(v)
        fam = sorted(range(len(pa)), key=lambda i: have.index(pa[i]))
        shape = [t.shape[-1]] + [1] * len(have)
        for i in fam:
            shape[1 + have.index(pa[i])] = t.shape[i]
        # the new axis first: the older axes, mostly not the family's, stay one long inner loop
        joint = t.transpose([len(pa), *fam]).reshape(shape) * joint[None]
        have.insert(0, v)
    return (joint, tuple(have)) if floor > _SMALLEST_CELL else None


def joint_table(net: Any) -> tuple[np.ndarray, tuple[str, ...]] | None:
    """The joint distribution of every node and the node of each of its axes (cached on
    the network, which is immutable); ``None`` when the network is too large for it, has
    a domain axis, or has tables whose products could underflow."""
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
    built = joint_table(net) if 8 * cells <= budget else None
    if built is None:
        return None
    joint, order = built
    axes, summed, perm = _pattern(order, net.__dict__, tuple(targets), tuple(evidence))
    at: list[Any] = [slice(None)] * len(order)
    for a, c in zip(axes, evidence.values()):
        at[a] = c
    post = joint[tuple(at)].sum(axis=summed)
    if perm is not None:
        post = post.transpose(perm)
    total = post.sum()
    if total > 0:
        return (post / total)[None]
    return np.full((1, *post.shape), np.nan)  # 0 / 0 in every cell: P(x_O) = 0


def _pattern(nodes: tuple[str, ...], store: dict, targets: tuple[str, ...], observed: tuple[str, ...]
             ) -> tuple[tuple, tuple, tuple | None]:
    """The axes of the observed nodes in a joint over ``nodes``, the axes left after
    slicing them that are summed out, and the order that puts the targets' axes as
    ``targets`` lists them (``None``: they already are); cached per pattern in ``store``."""
    cache = store.setdefault("_query_joint_patterns", {})
    how = cache.get((targets, observed))
    if how is None:
        nodes = list(nodes)
        free = [v for v in nodes if v not in observed]
        kept = sorted(free.index(t) for t in targets)
        perm = tuple(kept.index(free.index(t)) for t in targets)
        summed = tuple(i for i in range(len(free)) if i not in kept)
        how = cache[(targets, observed)] = (tuple(nodes.index(v) for v in observed), summed,
                                            None if perm == tuple(range(len(perm))) else perm)
    return how
