r"""Approximate queries by likelihood weighting, with their Monte Carlo error.

When exact inference would need more memory than the budget allows, a query asked
with ``method="approximate"`` is answered by importance sampling with the network's
own prior as the proposal (likelihood weighting; Fung and Chang 1990, Koller and
Friedman 2009, Sec. 12.2).  Each of :math:`S` samples draws the unobserved ancestors of
the targets and the evidence forward, in topological order, clamps every evidence
variable to its observed value and carries the weight

.. math:: w_s = \prod_{v \in E} P(x_v = e_v \mid \pi_v^{(s)}),

so that

.. math:: \hat p(x_T) = \frac{\sum_s w_s \, [x_T^{(s)} = x_T]}{\sum_s w_s}

estimates :math:`P(x_T \mid e)` (a ratio estimator, consistent as :math:`S \to \infty`).
Its Monte Carlo standard error is the delta method's (Koller and Friedman 2009,
Sec. 12.2.3; Owen 2013, Sec. 9.2),

.. math:: \widehat{\mathrm{se}}(\hat p) = \frac{\sqrt{\sum_s w_s^2 \,
          ([x_T^{(s)} = x_T] - \hat p)^2}}{\sum_s w_s},

and the effective sample size :math:`(\sum_s w_s)^2 / \sum_s w_s^2` says how many
unweighted samples the weighted ones are worth (few when the evidence is unlikely).
Nodes that are neither targets, evidence nor their ancestors are not sampled (they sum
to one).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ...errors import ImpossibleEvidenceError
from .engine import network_tables
from .plan import _ancestral

__all__ = ["LWResult", "likelihood_weighting"]


class LWResult(tuple):
    """``(prob, se, ess)``: the estimated posterior over the targets' joint states (flat,
    last target fastest), its Monte Carlo standard errors and the effective sample size."""

    @property
    def prob(self) -> np.ndarray:
        return self[0]

    @property
    def se(self) -> np.ndarray:
        return self[1]

    @property
    def ess(self) -> float:
        return self[2]


def _ancestral_order(net: Any, start: Sequence[str]) -> list[str]:
    """``start`` and their ancestors, in the network's topological order."""
    keep = _ancestral({v: net.parents(v) for v in net.nodes}, start)
    return [v for v in net.dag.topological_order() if v in keep]


def _probs(net: Any, node: str, codes: Mapping[str, np.ndarray], n: int) -> np.ndarray:
    """``(n, r)`` distributions of ``node`` given its parents' sampled codes."""
    pa = net.parents(node)
    table = network_tables(net)[node]
    if table is not None:
        if not pa:
            return np.broadcast_to(table, (n, table.shape[-1]))
        return table[tuple(codes[p] for p in pa)]
    P = np.column_stack([codes[p] for p in pa]) if pa else np.zeros((n, 0), dtype=np.int64)
    return net.cpd(node).probs(P)


def likelihood_weighting(
    net: Any, targets: Sequence[str], evidence: Mapping[str, int], samples: int, rng: np.random.Generator
) -> LWResult:
    """:math:`P(X_T \\mid e)` from ``samples`` likelihood-weighted samples (see the module
    docstring); ``evidence`` maps nodes to level codes."""
    order = _ancestral_order(net, [*targets, *evidence])
    codes: dict[str, np.ndarray] = {}
    logw = np.zeros(samples)
    for v in order:
        p = _probs(net, v, codes, samples)
        if v in evidence:
            e = evidence[v]
            with np.errstate(divide="ignore"):
                logw += np.log(p[:, e])
            codes[v] = np.full(samples, e, dtype=np.int64)
            continue
        cum = np.cumsum(p, axis=1)
        u = rng.random(samples) * cum[:, -1]
        codes[v] = np.minimum((cum < u[:, None]).sum(axis=1), p.shape[1] - 1)
    if not np.isfinite(logw.max()):
        raise ImpossibleEvidenceError(
            f"none of the {samples:,} samples is compatible with the evidence: its probability is zero, or too "
            "small for this many samples (give more samples=)"
        )
    w = np.exp(logw - logw.max())  # the scale cancels in every ratio below
    cards = [net.schema.cardinality(t) for t in targets]
    idx = np.ravel_multi_index([codes[t] for t in targets], cards)
    total = w.sum()
    prob = np.bincount(idx, weights=w, minlength=int(np.prod(cards))) / total
    w2 = w * w
    # sum_s w_s^2 (1[x_s = x] - p)^2 = sum_{s: x_s = x} w_s^2 (1 - 2p) + p^2 sum_s w_s^2
    hits = np.bincount(idx, weights=w2, minlength=len(prob))
    var = hits * (1 - 2 * prob) + prob**2 * w2.sum()
    se = np.sqrt(np.maximum(var, 0.0)) / total
    return LWResult((prob, se, float(total**2 / w2.sum())))
