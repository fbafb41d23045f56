r"""What drives a query's uncertainty: the share of its posterior variance owed to each
node's CPT.

A query's answer :math:`q(\theta) = P(x_T \mid x_E; \theta)` is a function of every
node's table :math:`\theta_v`, and the tables are independent a posteriori (the posterior
factorises over the nodes).  The share of node ``v`` is the first-order Sobol index

.. math:: S_v = \frac{\mathrm{Var}\big(E[q \mid \theta_v]\big)}{\mathrm{Var}(q)},

the part of the variance that knowing :math:`\theta_v` exactly would remove (Sobol 2001):
in ``[0, 1]``, summing to at most 1 over the nodes, the rest being owed to interactions
between tables.  More data on a node with a large share sharpens the answer most.

Estimated by pick-freeze: two independent sets of ``D`` posterior draws of every
table, ``A`` and ``B``, and for each node ``A`` with that node's tables taken from ``B``,
:math:`A_B^{(v)}`; the answers :math:`Y = q(B)` and :math:`Y' = q(A_B^{(v)})` share
:math:`\theta_v` only, so their covariance is :math:`\mathrm{Var}(E[q \mid \theta_v])`,
estimated as Janon et al. (2014, Sec. 2) do (asymptotically efficient among these
estimators, and unchanged by :math:`q \to 1 - q`, so a binary target's two states get
one share):

.. math:: \hat S_v = \frac{\overline{Y Y'} - \bar m^2}{\overline{(Y^2 + Y'^2)/2} - \bar m^2},
          \qquad \bar m = \overline{(Y + Y')/2},

clipped to ``[0, 1]`` (its Monte Carlo error can take a small share below 0).  Only the
nodes the query's elimination uses can have a share (the others, pruned as barren or
d-separated, have exactly 0); each costs one evaluation of the query on ``D`` parameter
sets.  Monte Carlo standard errors from 10 batches of the draws.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..errors import DataError
from ..validation import check_int, check_random_state
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


def _janon(y: np.ndarray, y2: np.ndarray) -> np.ndarray:
    """Janon et al.'s first-order index from answers ``y``, ``y2`` ``(D, states)`` that
    share one node's tables (0 where the answer does not vary)."""
    m = ((y + y2) / 2).mean(axis=0)
    num = (y * y2).mean(axis=0) - m * m
    den = ((y * y + y2 * y2) / 2).mean(axis=0) - m * m
    return np.where(den > 1e-300, num / np.where(den > 1e-300, den, 1.0), 0.0)


def _pick_freeze(bound: Any, nodes: list[str], A: dict, B: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node, the answers on ``B`` and on ``A`` with the node's tables from ``B``
    ``(nodes, 2, D, states)`` over the draws where every set allows the evidence, the
    number of those draws, and ``Var(q)`` per state."""
    yA, yB = _answers(bound, A), _answers(bound, B)
    yC = np.stack([_answers(bound, {**A, v: B[v]}) for v in nodes]) if nodes else np.zeros((0, *yA.shape))
    ok = np.isfinite(yA).all(axis=1) & np.isfinite(yB).all(axis=1) & np.isfinite(yC).all(axis=(0, 2))
    pooled = np.concatenate([yA[ok], yB[ok]])
    var = pooled.var(axis=0, ddof=1) if len(pooled) > 1 else np.zeros(yA.shape[1])
    pairs = np.stack([np.broadcast_to(yB[ok], yC[:, ok].shape), yC[:, ok]], axis=1)
    return pairs, np.asarray(ok.sum()), var


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
    draws = check_int("draws", draws, low=2 * BATCHES)
    check_random_state(random_state)
    tt = check_targets(net, targets)
    qnet = domain_network(net, domain, on_unseen_domain)
    answer = qnet.query(list(tt), evidence)  # checks the evidence; refuses evidence of probability zero
    bound = _bound(qnet, tt, evidence)
    used = {f.node for f in bound.plan.factors}
    nodes = [v for v in qnet.nodes if v in used]
    rng = np.random.default_rng(random_state)
    A, B = sample_tables(qnet, draws, rng), sample_tables(qnet, draws, rng)
    pairs, used_draws, var = _pick_freeze(bound, nodes, A, B)
    share = np.array([_janon(*p) for p in pairs]).reshape(len(nodes), -1)
    k = pairs.shape[2] // BATCHES
    batches = np.array([[_janon(p[0][b * k:(b + 1) * k], p[1][b * k:(b + 1) * k]) for b in range(BATCHES)]
                        for p in pairs]).reshape(len(nodes), BATCHES, -1)
    se = batches.std(axis=1, ddof=1) / np.sqrt(BATCHES)
    states = answer.index
    out = pd.DataFrame(np.clip(share, 0.0, 1.0), index=pd.Index(nodes, name="node"), columns=states)
    out.attrs.update(
        se=pd.DataFrame(se, index=out.index, columns=states),
        variance=pd.Series(var, index=states, name="variance"),
        answer=answer,
        draws=int(used_draws),
        unexplained=pd.Series(1.0 - out.sum(axis=0).to_numpy(), index=states),
    )
    return out
