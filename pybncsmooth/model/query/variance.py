r"""What drives a query's uncertainty: the share of its posterior variance owed to each
node's CPT.

A query's answer :math:`q(\theta) = P(x_T \mid x_E; \theta)` is a function of every
node's table :math:`\theta_v`, and the tables are independent a posteriori (the posterior
factorises over the nodes).  The share of node ``v`` is the first-order Sobol index

.. math:: S_v = \frac{\mathrm{Var}\big(E[q \mid \theta_v]\big)}{\mathrm{Var}(q)},

the part of the variance that knowing :math:`\theta_v` exactly would remove (Sobol 2001):
in ``[0, 1]``, summing to at most 1 over the nodes, the rest being owed to interactions
between tables.  More data on a node with a large share sharpens the answer most.

Estimated by pick-freeze (Saltelli et al. 2010, Sec. 3, their estimator (b), with the
answers centred): two independent sets of ``D`` posterior draws of every table, ``A`` and
``B``, and for each node ``A`` with that node's tables taken from ``B``,
:math:`A_B^{(v)}`, which shares :math:`\theta_v` only with ``B``; then

.. math:: \widehat{\mathrm{Var}}\big(E[q \mid \theta_v]\big) =
          \frac1D \sum_d \big(q(B_d) - \bar q_B\big)\,\big(q(A_{B,d}^{(v)}) - q(A_d)\big),

and :math:`\mathrm{Var}(q)` the sample variance of the ``2D`` answers on ``A`` and ``B``.
Swapping the tables of a node that matters little changes the answer little, so its
share's Monte Carlo error is small too; centring makes the estimate the same for
:math:`q` and :math:`1 - q` (a binary target's two states get one share).  Shares are
clipped to ``[0, 1]`` (the error can take a share of 0 just below it); ``unexplained``,
``1 -`` their sum, is computed before clipping.  Only the nodes the query's elimination
uses can have a share (the others, pruned as barren or d-separated, have exactly 0);
each costs one evaluation of the query on ``D`` parameter sets.

Monte Carlo standard errors are the delete-a-group jackknife's (Efron and Tibshirani
1993, Ch. 11) over :data:`GROUPS` groups of the draws: each share recomputed without
one group, numerator *and* denominator (both carry Monte Carlo error, and they move
together), and likewise ``unexplained`` (whose error is that of the sum of the
shares).  Across seeds the shares spread as these errors say (the test suite checks it
over 40 seeds).  The default of 4,000 draws puts the error of a share near 0.5 at about
0.02.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ...errors import DataError
from ...validation import check_draws, check_random_state
from .queries import sample_tables
from .batch import bind_rows
from .engine import _query_tables
from .evidence import check_targets, dict_codes, domain_network

__all__ = ["variance_shares", "GROUPS", "DEFAULT_DRAWS"]

#: groups of the draws the jackknife leaves out one at a time (the Monte Carlo errors)
GROUPS = 20
#: draws of each of the two sets by default
DEFAULT_DRAWS = 4000


def _bound(net: Any, targets: tuple[str, ...], evidence: Mapping[str, Any] | None) -> Any:
    codes = {v: np.array([c], dtype=np.int64) for v, c in dict_codes(net, evidence, targets).items()}
    return bind_rows(net, targets, codes, 1)[0][1]


def _answers(bound: Any, tables: Mapping[str, np.ndarray]) -> np.ndarray:
    """``(D, states)`` answers of the query on ``D`` parameter sets."""
    vals = _query_tables(bound, tables)
    return vals.reshape(vals.shape[0], -1)


def _pick_freeze(bound: Any, nodes: list[str], A: dict, B: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The answers on ``A`` and ``B`` ``(D', states)`` and the differences
    :math:`q(A_B^v) - q(A)` ``(nodes, D', states)`` over the ``D'`` draws where every
    set allows the evidence."""
    yA, yB = _answers(bound, A), _answers(bound, B)
    yC = np.stack([_answers(bound, {**A, v: B[v]}) for v in nodes]) if nodes else np.zeros((0, *yA.shape))
    ok = np.isfinite(yA).all(axis=1) & np.isfinite(yB).all(axis=1) & np.isfinite(yC).all(axis=(0, 2))
    return yA[ok], yB[ok], yC[:, ok] - yA[ok][None]


def _shares(sums: dict[str, np.ndarray], n: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Shares ``(nodes, states)`` and ``Var(q)`` ``(states,)`` from the sums over ``n``
    draws (of ``a``, ``b``, ``a^2``, ``b^2``, ``d`` and ``b d``; any leading axes are
    jackknife replicates): the pick-freeze numerator
    :math:`\\overline{b d} - \\bar b\\, \\bar d` over the pooled sample variance of
    ``a`` and ``b``."""
    nn = np.asarray(n, dtype=np.float64)
    mean_b = sums["b"] / nn[..., None]
    num = sums["bd"] / nn[..., None, None] - mean_b[..., None, :] * sums["d"] / nn[..., None, None]
    m = 2 * nn[..., None]
    total = sums["a"] + sums["b"]
    var = (sums["a2"] + sums["b2"] - total**2 / m) / np.maximum(m - 1, 1)
    var = np.where(m > 1, np.maximum(var, 0.0), 0.0)
    safe = np.where(var > 0, var, 1.0)
    return np.where(var[..., None, :] > 0, num / safe[..., None, :], 0.0), var


def _jackknife(yA: np.ndarray, yB: np.ndarray, diff: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shares ``(nodes, states)``, ``Var(q)``, and the jackknife's standard errors of the
    shares and of ``1 -`` their sum (``(nodes + 1, states)``, the last row the sum's;
    NaN with fewer than two draws a group)."""
    D = len(yA)
    terms = {"a": yA, "b": yB, "a2": yA**2, "b2": yB**2, "d": diff, "bd": yB[None] * diff}
    full = {k: v.sum(axis=-2) for k, v in terms.items()}
    share, var = _shares(full, D)
    G = min(GROUPS, D // 2)
    if G < 2:
        return share, var, np.full((share.shape[0] + 1, share.shape[1]), np.nan)
    group = np.arange(D) * G // D  # G groups of consecutive draws, sizes differing by at most one
    sizes = np.bincount(group, minlength=G)

    def by_group(v: np.ndarray) -> np.ndarray:  # (..., D, S) -> (G, ..., S)
        out = np.zeros((G, *v.shape[:-2], v.shape[-1]))
        np.add.at(out, group, np.moveaxis(v, -2, 0))
        return out

    left = {k: full[k][None] - by_group(v) for k, v in terms.items()}
    rep, _ = _shares(left, D - sizes)  # (G, nodes, states)
    rep = np.concatenate([rep, 1.0 - rep.sum(axis=1, keepdims=True)], axis=1)
    se = np.sqrt((G - 1) / G * ((rep - rep.mean(axis=0)) ** 2).sum(axis=0))
    return share, var, se


def variance_shares(
    net: Any,
    targets: Any,
    evidence: Mapping[str, Any] | None = None,
    *,
    draws: int = DEFAULT_DRAWS,
    random_state: Any = None,
    domain: Any = None,
    on_unseen_domain: str | None = None,
) -> pd.DataFrame:
    """See :meth:`pybncsmooth.FittedNetwork.variance_shares`."""
    if isinstance(evidence, (pd.DataFrame, pd.Series)):
        raise DataError("variance_shares answers one query: give the evidence as a mapping {variable: level}")
    draws = check_draws(draws, low=2 * GROUPS)
    check_random_state(random_state)
    tt = check_targets(net, targets)
    qnet = domain_network(net, domain, on_unseen_domain)
    answer = qnet.query(list(tt), evidence)  # checks the evidence; refuses evidence of probability zero
    bound = _bound(qnet, tt, evidence)
    used = {f.node for f in bound.plan.factors}
    nodes = [v for v in qnet.nodes if v in used]
    rng = np.random.default_rng(random_state)
    A, B = sample_tables(qnet, draws, rng, nodes), sample_tables(qnet, draws, rng, nodes)
    yA, yB, diff = _pick_freeze(bound, nodes, A, B)
    share, var, se = _jackknife(yA, yB, diff)
    states = answer.index
    out = pd.DataFrame(np.clip(share, 0.0, 1.0), index=pd.Index(nodes, name="node"), columns=states)
    out.attrs.update(
        se=pd.DataFrame(se[:-1], index=out.index, columns=states),
        variance=pd.Series(var, index=states, name="variance"),
        answer=answer,
        draws=int(len(yA)),
        unexplained=pd.Series(1.0 - share.sum(axis=0), index=states),
        unexplained_se=pd.Series(se[-1], index=states),
    )
    return out
