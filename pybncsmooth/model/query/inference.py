r"""Exact inference over the missing cells of rows: what a row's observed cells say.

For a row with observed cells :math:`x_O` and missing cells :math:`X_M`,

.. math:: P(x_O) = \sum_{x_M} \prod_v P(x_v \mid x_{\pi_v}), \qquad
          P(t \mid x_O) \propto \sum_{x_M} \prod_v P(x_v \mid x_{\pi_v})\big|_{X_t = t},

computed by variable elimination, batched over the rows that share a missingness
pattern.  Missing nodes with no observed descendant (barren nodes) sum to one and are
pruned first; the others contribute one factor per node whose family holds a missing
variable (or the target), built from the CPD's own queries (so a domain's tables and
the back-off of the trees apply); the variables are summed out one at a time, the next
one the one giving the smallest new factor.  Factors carry a row axis and are rescaled
per row after every product (the log of the scale kept), so long rows do not
underflow.
"""

from __future__ import annotations

import math
import string
from typing import Any, Mapping, Sequence

import numpy as np

from ...errors import DataError

__all__ = ["log_marginal", "log_posterior", "joint_posterior", "pattern_groups"]

_LETTERS = string.ascii_letters
#: largest factor (cells per row) variable elimination builds
MAX_FACTOR_CELLS = 1 << 22


class _Factor:
    """A non-negative array with a leading row axis over the variables ``vars``."""

    __slots__ = ("vars", "values")

    def __init__(self, vars_: tuple[str, ...], values: np.ndarray) -> None:
        self.vars = vars_
        self.values = values


def _pruned(net: Any, missing: set[str], keep: set[str]) -> set[str]:
    """Missing nodes that are barren: every child is barren too (and none is kept)."""
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for v in missing - out - keep:
            if all(c in out for c in net.children(v)):
                out.add(v)
                changed = True
    return out


def _family_factor(net: Any, node: str, codes: Mapping[str, np.ndarray], free: Sequence[str],
                   prefix: Sequence[str]) -> np.ndarray:
    """``P(node | parents)`` for the rows of ``codes``, over every combination of the
    ``free`` variables of the family: shape ``(B, *cards(free))``."""
    cpd = net.cpd(node)
    cond = list(prefix) + net.parents(node)
    cards = [net.schema.cardinality(v) for v in free]
    B = len(next(iter(codes.values())))
    K = math.prod(cards)
    grid = np.indices(cards).reshape(len(cards), -1) if cards else np.zeros((0, 1), dtype=np.int64)
    pos = {v: j for j, v in enumerate(free)}

    def col(v: str) -> np.ndarray:
        if v in pos:
            return np.tile(grid[pos[v]], B)
        return np.repeat(codes[v], K)

    x = col(node)
    P = np.column_stack([col(v) for v in cond]) if cond else np.zeros((B * K, 0), dtype=np.int64)
    return cpd.prob_of(x.astype(np.int64), P.astype(np.int64)).reshape(B, *cards)


def _multiply(factors: list[_Factor], logscale: np.ndarray) -> _Factor:
    """The product of ``factors`` (rescaled per row; the scale added to ``logscale``)."""
    vars_: list[str] = []
    for f in factors:
        vars_ += [v for v in f.vars if v not in vars_]
    letter = {v: _LETTERS[i + 1] for i, v in enumerate(vars_)}
    spec = ",".join("a" + "".join(letter[v] for v in f.vars) for f in factors)
    out = np.einsum(spec + "->a" + "".join(letter[v] for v in vars_), *[f.values for f in factors])
    return _rescale(_Factor(tuple(vars_), out), logscale)


def _rescale(f: _Factor, logscale: np.ndarray) -> _Factor:
    if f.values.ndim > 1:
        m = f.values.reshape(len(f.values), -1).max(axis=1)
    else:
        m = f.values.copy()
    ok = m > 0
    with np.errstate(divide="ignore"):
        logscale += np.where(ok, np.log(np.where(ok, m, 1.0)), -np.inf)
    shape = (-1,) + (1,) * (f.values.ndim - 1)
    f.values = f.values / np.where(ok, m, 1.0).reshape(shape)
    return f


def _merged_size(factors: list[_Factor], v: str, card: Mapping[str, int]) -> int:
    """Cells (per row) of the product of the factors holding ``v``."""
    vs: set[str] = set()
    for f in factors:
        if v in f.vars:
            vs.update(f.vars)
    return math.prod(card[u] for u in vs)  # Python ints: no int64 overflow


def _eliminate(
    factors: list[_Factor], order_vars: set[str], card: Mapping[str, int], logscale: np.ndarray
) -> list[_Factor]:
    """Sum out ``order_vars``, the next variable always the one whose merged factor is smallest."""
    remaining = set(order_vars)
    while remaining:
        v = min(sorted(remaining), key=lambda u: _merged_size(factors, u, card))
        size = _merged_size(factors, v, card)
        if size > MAX_FACTOR_CELLS:
            raise DataError(
                f"summing out the missing cells of {len(logscale)} row(s) needs a factor of {size:,} cells "
                f"(more than {MAX_FACTOR_CELLS:,}): too many connected missing values in one row for exact inference"
            )
        remaining.discard(v)
        touching = [f for f in factors if v in f.vars]
        factors = [f for f in factors if v not in f.vars]
        prod = _multiply(touching, logscale)
        axis = 1 + prod.vars.index(v)
        summed = _Factor(tuple(u for u in prod.vars if u != v), prod.values.sum(axis=axis))
        factors.append(_rescale(summed, logscale))
    return factors


def pattern_groups(missing: np.ndarray) -> list[np.ndarray]:
    """Row indices grouped by missingness pattern (``missing``: ``(n, V)`` booleans)."""
    if missing.shape[0] == 0:
        return []
    _, inv = np.unique(missing, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    bounds = np.flatnonzero(np.diff(inv[order])) + 1
    return np.split(order, bounds)


def _nodes_of(net: Any, only: Sequence[str] | None) -> list[str]:
    """The network's nodes, or those of ``only``, in the network's order."""
    if only is None:
        return list(net.nodes)
    keep = set(only)
    return [v for v in net.nodes if v in keep]


def _sum_out(
    net: Any, codes: Mapping[str, np.ndarray], missing: set[str], keep: set[str], only: Sequence[str] | None = None
) -> tuple[_Factor, np.ndarray]:
    """For rows sharing the missing set ``missing``: the product of every factor (of the
    nodes ``only``, default all) with the missing variables but ``keep`` summed out
    (barren ones pruned first), as a factor over ``keep`` (none: a factor without
    variables), and the per-row log scale."""
    prefix = [v for v in codes if v not in net.dag]
    nodes = _nodes_of(net, only)
    n = len(next(iter(codes.values())))
    gone = _pruned(net, missing, keep)
    free_all = missing - gone
    card = {v: net.schema.cardinality(v) for v in free_all}
    logscale = np.zeros(n)
    factors: list[_Factor] = []
    for v in nodes:
        if v in gone:
            continue
        free = [u for u in [v] + net.parents(v) if u in free_all]
        vals = _family_factor(net, v, codes, free, prefix)
        if free:
            factors.append(_rescale(_Factor(tuple(free), vals), logscale))
        else:
            with np.errstate(divide="ignore"):
                logscale += np.log(vals)
    rest = _eliminate(factors, free_all - keep, card, logscale)
    final = _multiply(rest, logscale) if rest else _Factor((), np.ones(n))
    return final, logscale


def _run(net: Any, codes: Mapping[str, np.ndarray], target: str | None, only: Sequence[str] | None = None
         ) -> np.ndarray:
    """``log P(x_O)`` per row (``target`` None) or the ``(n, r)`` log of
    :math:`P(t, x_O)` (codes ``-1`` are missing); ``only``: the factors of those nodes."""
    nodes = _nodes_of(net, only)
    n = len(next(iter(codes.values())))
    r = net.schema.cardinality(target) if target is not None else 1
    out = np.zeros((n, r)) if target is not None else np.zeros(n)
    miss = np.column_stack([codes[v] < 0 if v != target else np.ones(n, dtype=bool) for v in nodes])
    keep = {target} if target is not None else set()
    for rows in pattern_groups(miss):
        m = {v for v, b in zip(nodes, miss[rows[0]]) if b}
        final, logscale = _sum_out(net, {v: c[rows] for v, c in codes.items()}, m, keep, only)
        with np.errstate(divide="ignore"):
            out[rows] = (logscale[:, None] if target is not None else logscale) + np.log(final.values)
    return out


def joint_posterior(
    net: Any, codes: Mapping[str, np.ndarray], keep: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """For rows that share one missingness pattern, the posterior of the missing
    variables ``keep`` given each row's observed cells: ``(log P(x_O), P(keep | x_O))``,
    the second of shape ``(n, *cards(keep))`` in the order of ``keep``."""
    n = len(next(iter(codes.values())))
    missing = {v for v in net.nodes if codes[v][0] < 0}
    final, logscale = _sum_out(net, codes, missing, set(keep))
    order = [final.vars.index(v) + 1 for v in keep]
    values = np.transpose(final.values, [0, *order]) if keep else final.values
    norm = values.reshape(n, -1).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        post = values / norm.reshape((n,) + (1,) * len(keep))
    return logscale + np.log(norm), post


def log_marginal(net: Any, codes: Mapping[str, np.ndarray], nodes: Sequence[str] | None = None) -> np.ndarray:
    """``log P(x_O)`` of each row: the probability of its observed cells, the missing
    ones (codes ``-1``) summed out.  ``codes`` maps every node (and the domain, if any)
    to its codes.  ``nodes``: only the factors of these nodes, a part of the network
    closed under the missing variables it holds (each missing variable's own factor and
    its children's among them): the log of that part's sum."""
    return _run(net, codes, None, nodes)


def log_posterior(net: Any, codes: Mapping[str, np.ndarray], target: str) -> np.ndarray:
    """The ``(n, r)`` logs of :math:`P(\\text{target} = t, x_O)` (unnormalised posterior
    of ``target``), the missing cells summed out."""
    return _run(net, codes, target)
