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
each costs one evaluation of the query on ``D`` parameter sets.  Monte Carlo standard
errors from 10 batches of the draws.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..errors import DataError
from ..validation import check_draws, check_random_state
from .query import sample_tables
from .query_batch import bind_rows
from .query_engine import _query_tables
from .query_evidence import check_targets, dict_codes, domain_network

__all__ = ["variance_shares", "BATCHES"]

#: batches of the draws behind the Monte Carlo standard errors
BATCHES = 10


def _bound(net: Any, targets: tuple[str, ...], evidence: Mapping[str, Any] | None) -> Any:
    codes = {v: np.array([c], dtype=np.int64) for v, c in dict_codes(net, evidence, targets).items()}
    return bind_rows(net, targets, codes, 1)[0][1]


def _answers(bound: Any, tables: Mapping[str, np.ndarray]) -> np.ndarray:
    """``(D, states)`` answers of the query on ``D`` parameter sets."""
    vals = _query_tables(bound, tables)
    return vals.reshape(vals.shape[0], -1)


def _pick_freeze(bound: Any, nodes: list[str], A: dict, B: dict) -> tuple[np.ndarray, int, np.ndarray]:
    """Per node, the terms :math:`(q(B) - \\bar q_B)(q(A_B^v) - q(A))` ``(nodes, D', states)``
    over the ``D'`` draws where every set allows the evidence, ``D'``, and ``Var(q)`` per
    state."""
    yA, yB = _answers(bound, A), _answers(bound, B)
    yC = np.stack([_answers(bound, {**A, v: B[v]}) for v in nodes]) if nodes else np.zeros((0, *yA.shape))
    ok = np.isfinite(yA).all(axis=1) & np.isfinite(yB).all(axis=1) & np.isfinite(yC).all(axis=(0, 2))
    pooled = np.concatenate([yA[ok], yB[ok]])
    var = pooled.var(axis=0, ddof=1) if len(pooled) > 1 else np.zeros(yA.shape[1])
    centred = yB[ok] - yB[ok].mean(axis=0)
    return centred[None] * (yC[:, ok] - yA[ok][None]), int(ok.sum()), var


def variance_shares(
    net: Any,
    targets: Any,
    evidence: Mapping[str, Any] | None = None,
    *,
    draws: int = 1000,
    random_state: Any = None,
    domain: Any = None,
    on_unseen_domain: str | None = None,
) -> pd.DataFrame:
    """See :meth:`pybncsmooth.FittedNetwork.variance_shares`."""
    if isinstance(evidence, (pd.DataFrame, pd.Series)):
        raise DataError("variance_shares answers one query: give the evidence as a mapping {variable: level}")
    draws = check_draws(draws, low=2 * BATCHES)
    check_random_state(random_state)
    tt = check_targets(net, targets)
    qnet = domain_network(net, domain, on_unseen_domain)
    answer = qnet.query(list(tt), evidence)  # checks the evidence; refuses evidence of probability zero
    bound = _bound(qnet, tt, evidence)
    used = {f.node for f in bound.plan.factors}
    nodes = [v for v in qnet.nodes if v in used]
    rng = np.random.default_rng(random_state)
    A, B = sample_tables(qnet, draws, rng, nodes), sample_tables(qnet, draws, rng, nodes)
    terms, used_draws, var = _pick_freeze(bound, nodes, A, B)
    safe = np.where(var > 0, var, 1.0)
    share = np.where(var > 0, terms.mean(axis=1) / safe, 0.0)
    k = terms.shape[1] // BATCHES
    batch = terms[:, : k * BATCHES].reshape(len(nodes), BATCHES, k, -1).mean(axis=2)
    se = batch.std(axis=1, ddof=1) / np.sqrt(BATCHES) / safe
    states = answer.index
    out = pd.DataFrame(np.clip(share, 0.0, 1.0), index=pd.Index(nodes, name="node"), columns=states)
    out.attrs.update(
        se=pd.DataFrame(se, index=out.index, columns=states),
        variance=pd.Series(var, index=states, name="variance"),
        answer=answer,
        draws=int(used_draws),
        unexplained=pd.Series(1.0 - share.sum(axis=0), index=states),
    )
    return out
