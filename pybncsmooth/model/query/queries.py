r"""Queries of a fitted network: :math:`P(X_T \mid x_E)`, MAP states, credible intervals.

For targets :math:`T` and evidence :math:`x_E`,

.. math:: P(x_T \mid x_E) = \frac{\sum_{x_H} \prod_v P(x_v \mid x_{\pi_v})}
                                 {\sum_{x_T, x_H} \prod_v P(x_v \mid x_{\pi_v})},

the hidden variables :math:`H` (neither target nor evidence) summed out by variable
elimination (Koller and Friedman 2009, Ch. 9) on a plan compiled once per query
pattern (:mod:`pybncsmooth.model.query.plan`) and evaluated on dense CPT tables
(:mod:`pybncsmooth.model.query.engine`).  The tables are the network's posterior
means, with every unseen parent configuration filled by the estimator's back-off, as
:meth:`~pybncsmooth.FittedNetwork.cpt` shows them.

The MAP state is :math:`\hat x_T = \arg\max_{x_T} P(x_T \mid x_E)`, the most probable
*joint* state of the targets with the other hidden variables summed out (the
"marginal MAP" of Koller and Friedman 2009, Sec. 13.1; with every unobserved variable
a target, the most probable explanation).

A credible interval treats the CPTs :math:`\theta` as unknown: with draws
:math:`\theta^{(1)}, \dots, \theta^{(D)}` of whole parameter sets from their posterior
given the training data, the interval of :math:`P(x_T \mid x_E)` at level
:math:`1 - \alpha` is the equal-tailed interval of the :math:`D` values
:math:`P(x_T \mid x_E; \theta^{(d)})` (their :math:`\alpha/2` and :math:`1 - \alpha/2`
quantiles), each computed exactly on the same plan.  ``mle`` has no posterior: its
draws are replicates of a bootstrap over rows (:mod:`pybncsmooth.estimators.bootstrap`)
and the interval a percentile bootstrap interval, ``attrs["interval"]`` then
``"bootstrap"`` (``"credible"`` otherwise); ``hgs``, ``mbranch`` and ``hls``, whose
bootstrap does not cover the truth, and ``mestimate``, whose posterior draws cover
its CPT entries but not queries' answers, raise
:class:`~pybncsmooth.errors.StatisticUnavailableError`.
"""

from __future__ import annotations

import inspect
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ...errors import HyperparameterError, ImpossibleEvidenceError, StatisticUnavailableError
from ...options import Options
from ...validation import check_choice, check_draws, check_int, check_probability, check_random_state
from .approximate import likelihood_weighting
from ..draws import check_calibrated, interval_kind
from .batch import bind_rows, budget_of, posterior_rows
from .engine import _query_tables
from .evidence import check_no_domain, check_targets, dict_codes, domain_network, frame_codes
from .joint import joint_posterior
from .answer import levels_dtype, prob_series, state_index
from .zeros import impossible_rows, posterior_and_parts

__all__ = ["query", "map_query", "sample_tables", "MapResult"]

class MapResult(NamedTuple):
    """The most probable joint state of the targets (``{target: level}``) and its
    posterior probability."""

    state: dict
    prob: float


def sample_tables(net: Any, n: int, random_state: Any = None, nodes: Sequence[str] | None = None
                  ) -> dict[str, np.ndarray]:
    """``n`` draws of every CPT from its posterior: ``{node: array (n, *net.cpt(node).shape)}``,
    draw ``d`` of all nodes together one parameter set.

    Served by the network's hook ``net._posterior_tables(n, rng)``, whose contract is:
    ``rng`` is a ``numpy.random.Generator`` (the only source of randomness, so a seed
    reproduces the draws); it returns ``{node: array}`` for every node, each array of
    shape ``(n, *net.cpt(node).shape)`` (the node's levels, then its parents', in
    :meth:`~pybncsmooth.FittedNetwork.cpt`'s layout) with every column a distribution;
    draw ``d`` of all nodes together is one draw of the whole parameter set from its
    joint posterior given the training data (unseen parent configurations drawn from
    the hierarchy's predictive spread, not copied from their back-off); and it raises
    :class:`~pybncsmooth.errors.StatisticUnavailableError` when the network has no such
    posterior (maximum likelihood, tables read from a file).  For a multi-domain fit the
    queries call it on the domain's network (:meth:`~pybncsmooth.FittedNetwork.for_domain`;
    the population-level network for a label unseen in training), whose tables have no
    domain axis.  Without the hook, this raises that error too.  A hook that takes
    ``nodes=`` (the network's does) is asked for the tables of ``nodes`` only (those a
    query uses: the others cost draws and change nothing)."""
    n = check_draws(n)
    check_random_state(random_state)
    hook = getattr(net, "_posterior_tables", None)
    if hook is None:
        raise StatisticUnavailableError("draws of its tables", net.method)
    rng = np.random.default_rng(random_state)
    partial = nodes is not None and "nodes" in inspect.signature(hook).parameters
    tables = hook(n, rng, nodes=list(nodes)) if partial else hook(n, rng)
    for v in nodes if partial else net.nodes:
        want = (n, *net.cpt(v).shape)
        got = np.shape(tables.get(v)) if v in tables else None
        if got != want:
            raise ValueError(f"the posterior draws of {v!r} have shape {got}, expected {want}")
    return tables


def _impossible(
    net: Any, post: np.ndarray, codes: Mapping[str, np.ndarray], labels: Sequence[Any], evidence: dict | None,
    targets: Sequence[str], whole: bool = False, summed: bool = False,
) -> None:
    """Raise on queries whose evidence has probability zero: those the elimination
    found (NaN posteriors), and those :func:`~pybncsmooth.model.query.evidence.impossible_rows`
    finds (a zero in a factor the evidence d-separates from the targets included);
    ``whole``: ``post`` came from the whole joint, whose NaNs are all of them;
    ``summed``: its plan summed the parts that may be zero
    (:func:`~pybncsmooth.model.query.zeros.posterior_and_parts`)."""
    bad = np.isnan(post.reshape(len(post), -1)).any(axis=1)
    never = None if whole else impossible_rows(net, codes, len(post), targets, summed)
    if never is not None:
        bad |= never
    if bad.any():
        if evidence is None:
            rows = [labels[i] for i in np.flatnonzero(bad)[:5]]
            where = f"row(s) {rows}{' ...' if bad.sum() > 5 else ''} of the evidence frame"
        else:
            where = f"the evidence {evidence}"
        raise ImpossibleEvidenceError(
            f"{where} has probability zero under the network (an estimate with zeros, e.g. mle or a "
            "table read from a file): the posterior is undefined"
        )


def _evaluate(net: Any, targets: tuple[str, ...], evidence: Any, budget: int) -> tuple[np.ndarray, Any, Any]:
    """The posterior of each query ``(n, *cards)``, the frame's index (``None`` for a
    mapping) and the encoded evidence ``(codes, n)`` (codes: an array of rows per
    variable, or for a mapping one int); factors of at most ``budget`` bytes."""
    if isinstance(evidence, pd.DataFrame):
        codes, index = frame_codes(net, evidence, targets)
        n = len(index)
        post = posterior_rows(net, targets, codes, n, budget) if n else np.zeros((0, *_cards(net, targets)))
        _impossible(net, post, codes, list(index), None, targets)
        return post, index, (codes, n)
    ev = dict_codes(net, evidence, targets)
    post = joint_posterior(net, targets, ev, budget)  # a tiny network: its joint, whose zeros are all seen
    whole = post is not None
    summed = False
    if not whole:
        post, summed = posterior_and_parts(net, targets, ev, budget)
    if not whole or np.isnan(post.flat[0]):  # the joint's answer is NaN throughout or nowhere
        shown = {v: net.schema[v][c] for v, c in ev.items()}
        _impossible(net, post, _one_row(ev), [], shown, targets, whole, summed)
    return post, None, (ev, 1)


def _one_row(codes: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Codes of one query (ints) or of rows (arrays) as arrays of rows."""
    return {v: np.atleast_1d(np.asarray(c, dtype=np.int64)) for v, c in codes.items()}


def _cards(net: Any, targets: Sequence[str]) -> tuple[int, ...]:
    return tuple(net.schema.cardinality(t) for t in targets)


def _intervals(
    net: Any, targets: tuple[str, ...], coded: tuple, level: float, draws: int, random_state: Any, budget: int
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds ``(n, *cards)`` from ``draws`` posterior parameter sets."""
    codes, n = coded
    groups = bind_rows(net, targets, _one_row(codes), n, budget)
    used = {f.node for _, bound in groups for f in bound.plan.factors}
    tables = sample_tables(net, draws, random_state, nodes=[v for v in net.nodes if v in used])
    lower = np.empty((n, *_cards(net, targets)))
    upper = np.empty_like(lower)
    tail = (1.0 - level) / 2
    for rows, bound in groups:
        vals = _query_tables(bound, tables, budget)  # (D, rows, *cards); NaN: a draw that rules the row out
        sel = slice(None) if rows is None else rows
        with np.errstate(invalid="ignore"):
            lower[sel], upper[sel] = np.nanquantile(vals, [tail, 1.0 - tail], axis=0)
    return lower, upper


def query(
    net: Any,
    targets: str | Sequence[str],
    evidence: Mapping[str, Any] | pd.DataFrame | None = None,
    *,
    interval: float | None = None,
    draws: int = 1000,
    random_state: Any = None,
    domain: Any = None,
    on_unseen_domain: str | None = None,
    method: str = "exact",
    samples: int = 20_000,
    max_factor_bytes: int | None = None,
) -> pd.Series | pd.DataFrame:
    """See :meth:`pybncsmooth.FittedNetwork.query`."""
    tt = check_targets(net, targets)
    check_no_domain(net, evidence)
    method = check_choice("method", method, ("exact", "approximate"))
    if interval is not None:
        interval = check_probability("interval", interval)
        draws = check_draws(draws, interval)
        check_random_state(random_state)
    budget = _budget(net, max_factor_bytes)
    qnet = domain_network(net, domain, on_unseen_domain)
    if interval is not None:
        check_calibrated(qnet, "query interval", query=True)
    if method == "approximate":
        if interval is not None:
            raise HyperparameterError("interval= needs method='exact' (an approximate answer states its Monte Carlo "
                                      "error instead)")
        return _approximate(qnet, tt, evidence, check_int("samples", samples, low=2), random_state)
    post, index, coded = _evaluate(qnet, tt, evidence, budget)
    states = state_index(qnet, tt)
    flat = post.reshape(len(post), -1)
    if interval is not None:
        lo, hi = (a.reshape(len(post), -1)
                  for a in _intervals(qnet, tt, coded, interval, draws, random_state, budget))
    if index is None:
        if interval is None:
            return prob_series(flat[0], states)  # a fresh array, ours alone
        out = pd.DataFrame({"prob": flat[0], "lower": lo[0], "upper": hi[0]}, index=states)
    else:
        out = pd.DataFrame(flat, index=index, columns=states)
        if interval is None:
            return out
        parts = {"prob": out, "lower": pd.DataFrame(lo, index=index, columns=states),
                 "upper": pd.DataFrame(hi, index=index, columns=states)}
        out = pd.concat(parts, axis=1, names=["stat"])
    out.attrs.update(interval=interval_kind(qnet, draws=True), level=float(interval), draws=int(draws))
    return out


def map_query(
    net: Any,
    targets: str | Sequence[str],
    evidence: Mapping[str, Any] | pd.DataFrame | None = None,
    *,
    domain: Any = None,
    on_unseen_domain: str | None = None,
    max_factor_bytes: int | None = None,
) -> MapResult | pd.DataFrame:
    """See :meth:`pybncsmooth.FittedNetwork.map_query`."""
    tt = check_targets(net, targets)
    check_no_domain(net, evidence)
    budget = _budget(net, max_factor_bytes)
    qnet = domain_network(net, domain, on_unseen_domain)
    post, index, _ = _evaluate(qnet, tt, evidence, budget)
    flat = post.reshape(len(post), -1)
    best = flat.argmax(axis=1)
    prob = flat[np.arange(len(flat)), best]
    codes = np.unravel_index(best, _cards(qnet, tt))
    if index is None:
        state = {t: qnet.schema[t][int(c[0])] for t, c in zip(tt, codes)}
        return MapResult(state, float(prob[0]))
    cols = {t: pd.Categorical.from_codes(c, dtype=levels_dtype(qnet.schema[t])) for t, c in zip(tt, codes)}
    out = pd.DataFrame(cols, index=index)
    out["prob"] = prob
    return out


def _budget(net: Any, max_factor_bytes: Any) -> int:
    """The query's factor budget in bytes: ``max_factor_bytes`` (checked as the option
    is) or the network's."""
    if max_factor_bytes is not None:
        max_factor_bytes = Options().replace(max_factor_bytes=max_factor_bytes).max_factor_bytes
    return budget_of(net, max_factor_bytes)


def _approximate(net: Any, targets: tuple[str, ...], evidence: Any, samples: int, random_state: Any) -> pd.DataFrame:
    """Likelihood weighting (:mod:`pybncsmooth.model.query.approximate`): a frame with the
    estimate ``prob`` and its Monte Carlo standard error ``se`` per state (a frame of
    evidence: columns ``(stat, state)``, one row per query); ``attrs["ess"]`` holds the
    effective sample size (one per row)."""
    rng = np.random.default_rng(check_random_state(random_state))
    states = state_index(net, targets)
    if not isinstance(evidence, pd.DataFrame):
        ev = dict_codes(net, evidence, targets)
        res = likelihood_weighting(net, targets, ev, samples, rng)
        out = pd.DataFrame({"prob": res.prob, "se": res.se}, index=states)
        out.attrs.update(ess=res.ess, samples=samples, method="likelihood weighting")
        return out
    codes, index = frame_codes(net, evidence, targets)
    probs, ses, ess = [], [], []
    for i in range(len(index)):
        res = likelihood_weighting(net, targets, {v: int(c[i]) for v, c in codes.items() if c[i] >= 0}, samples, rng)
        probs.append(res.prob), ses.append(res.se), ess.append(res.ess)
    shape = (len(index), len(states))
    parts = {"prob": pd.DataFrame(np.reshape(probs, shape), index=index, columns=states),
             "se": pd.DataFrame(np.reshape(ses, shape), index=index, columns=states)}
    out = pd.concat(parts, axis=1, names=["stat"])
    out.attrs.update(ess=np.array(ess), samples=samples, method="likelihood weighting")
    return out
