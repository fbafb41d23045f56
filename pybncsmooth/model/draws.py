r"""Whole parameter sets drawn from the posterior of a fitted network's CPTs.

The posterior of a network's parameters factorises over its nodes (each node's
tables are estimated from its own context tree), so a joint draw is one draw of
every node's table, independently across nodes.  Within a node the draw is joint:
every parent configuration's vector from the estimator's posterior
(:class:`~pybncsmooth.estimators.posterior.TreePosterior`): exact Dirichlet draws for
``bayes``, the recorded sweeps' states of the sampler for ``hdp`` (then the
Dirichlet vectors given each state) and its recorded coefficients for
``hls-bayes``, the hyperparameters' posterior and the Dirichlet columns given them
for ``hmd``; configurations absent from the data are fresh draws from the
hierarchy's predictive around the node they back off to.

:func:`posterior_tables` is the engine behind :meth:`FittedNetwork._posterior_tables`
(and the query engine's intervals), :func:`sample_parameters` behind
:meth:`FittedNetwork.sample_parameters`, and :func:`draw_intervals` gives equal-tailed
intervals from the draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import StatisticUnavailableError
from ..validation import check_int, check_random_state
from .cpd import CPD, DomainLastCPD, FixedPrefixCPD, TableCPD, TreeCPD

__all__ = ["posterior_tables", "sample_parameters", "cpd_draws", "draw_intervals", "entry_intervals",
           "beta_interval", "posterior_of", "interval_kind", "check_calibrated"]


def _no_draws(net: Any, node: str, why: str | None = None) -> StatisticUnavailableError:
    return StatisticUnavailableError("draws", net.method, node, reason=why)


def _tree_draws(net: Any, cpd: TreeCPD, n: int, rng: np.random.Generator) -> np.ndarray:
    est = cpd.estimate
    if est.posterior is None:
        why = None
        if est.sd is not None:
            why = "the fit kept no posterior state to draw from (record_states=0): refit with record_states > 0"
        raise _no_draws(net, cpd.node, why)
    return est.posterior.draw(cpd.tree, n, rng)


def cpd_draws(net: Any, cpd: CPD, n: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, Q, r)`` posterior draws of ``cpd``'s dense table, configuration-major over
    ``cpd.parent_cards`` (the layout of :meth:`CPD._matrix`)."""
    if isinstance(cpd, TreeCPD):
        return _tree_draws(net, cpd, n, rng)
    if isinstance(cpd, DomainLastCPD):
        m = _tree_draws(net, cpd.inner, n, rng)
        J = cpd.parent_cards[0]
        return np.ascontiguousarray(m.reshape(n, -1, J, cpd.card).transpose(0, 2, 1, 3)).reshape(n, -1, cpd.card)
    if isinstance(cpd, FixedPrefixCPD):
        if min(cpd.prefix_codes, default=0) < 0:
            inner = cpd.inner.inner if isinstance(cpd.inner, DomainLastCPD) else cpd.inner
            post = getattr(getattr(inner, "estimate", None), "posterior", None)
            if post is None or not hasattr(post, "draw_new_domain"):
                raise _no_draws(net, cpd.node, "no posterior for a domain unseen in training")
            return post.draw_new_domain(inner.tree, n, rng)
        full = cpd_draws(net, cpd.inner, n, rng)
        q = cpd.n_configs
        start = 0
        for c, k in zip(cpd.prefix_codes, cpd.inner.parent_cards):
            start = start * k + c
        return full[:, start * q : (start + 1) * q]
    if isinstance(cpd, TableCPD):
        raise StatisticUnavailableError("draws", None, cpd.node, reason="its table is fixed: read from a file, or "
                                        "one posterior draw already; fit the network from data, or read a .pbn "
                                        "file, for draws")
    raise _no_draws(net, cpd.node)  # pragma: no cover - every CPD type is handled above


def _as_tables(cpd: CPD, m: np.ndarray, prefix: int) -> np.ndarray:
    """Draws ``(n, Q, r)`` as tables ``(n, node, *parents)`` with the ``prefix`` leading
    conditioning variables (the domain) moved last, as :meth:`FittedNetwork.cpt`."""
    n = m.shape[0]
    t = np.moveaxis(m.reshape(n, *cpd.parent_cards, cpd.card), -1, 1)
    if prefix:
        t = np.moveaxis(t, list(range(2, 2 + prefix)), list(range(t.ndim - prefix, t.ndim)))
    return t


def posterior_tables(net: Any, n: int, rng: np.random.Generator, nodes: Any = None) -> dict[str, np.ndarray]:
    """For each node (of ``nodes``: those, in the network's order), ``(n,
    *net.cpt(node).shape)`` draws: draw ``k`` of every node forms one joint parameter
    set (nodes drawn independently, as the posterior factorises); every column sums to
    1.  :class:`StatisticUnavailableError` names the method when it has no posterior."""
    k = len(net._prefix)
    wanted = net.nodes if nodes is None else [v for v in net.nodes if v in set(nodes)]
    return {node: _as_tables(net.cpd(node), cpd_draws(net, net.cpd(node), n, rng), k) for node in wanted}


def sample_parameters(net: Any, n: int, random_state: Any = None) -> list:
    """``n`` networks whose CPTs are one joint posterior draw each (see
    :meth:`FittedNetwork.sample_parameters`)."""
    n = check_int("n", n, low=0)
    rng = np.random.default_rng(check_random_state(random_state))
    k = len(net._prefix)
    draws = {node: cpd_draws(net, net.cpd(node), n, rng) for node in net.nodes}
    out = []
    for j in range(n):
        cpds = {}
        for node, m in draws.items():
            cpd = net.cpd(node)
            table = np.moveaxis(m[j].reshape(*cpd.parent_cards, cpd.card), -1, 0)
            cpds[node] = TableCPD(node, cpd.parents, table)
        info = dict(net.info, posterior_draw=j)
        one = type(net)(net.dag, net.schema, cpds, domain=net.domain if k else None, estimator=net.estimator,
                            info=info)
        one.transformer = net.transformer
        out.append(one)
    return out


def draw_intervals(draws: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed ``level`` intervals over the first axis of ``draws``."""
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(draws, [tail, 1.0 - tail], axis=0)
    return lo, hi


def posterior_of(cpd: CPD) -> Any:
    """The estimate's posterior behind ``cpd`` (through the domain wrappers), or ``None``."""
    while isinstance(cpd, (FixedPrefixCPD, DomainLastCPD)):
        cpd = cpd.inner
    est = getattr(cpd, "estimate", None)
    return None if est is None else est.posterior


def check_calibrated(net: Any, stat: str, nodes: Any = None, *, query: bool = False) -> None:
    """Raise :class:`~pybncsmooth.errors.StatisticUnavailableError` when the posterior of
    a node (of ``nodes``; default every node) says its intervals (``query``: the
    intervals of queries, from its draws) are not calibrated (a bootstrap over rows:
    :mod:`pybncsmooth.estimators.bootstrap`; ``mestimate``'s draws), naming the
    estimators whose intervals are."""
    for v in net.nodes if nodes is None else nodes:
        post = posterior_of(net.cpd(v))
        if post is not None and not getattr(post, "query_calibrated" if query else "calibrated", True):
            raise post.refusal(stat, None if nodes is None else v)


def beta_interval(mean: np.ndarray, sd: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed ``level`` interval of the Beta distribution with the given mean and sd
    (the exact marginal of a Dirichlet posterior)."""
    from scipy.stats import beta

    m = np.clip(np.asarray(mean, dtype=float), 0.0, 1.0)
    v = np.asarray(sd, dtype=float) ** 2
    lo = np.where(v > 0, 0.0, m)
    hi = np.where(v > 0, 1.0, m)
    ok = (v > 0) & (m > 0) & (m < 1) & (v < m * (1 - m))
    if ok.any():
        k = m[ok] * (1 - m[ok]) / v[ok] - 1.0
        a, b = m[ok] * k, (1 - m[ok]) * k
        tail = (1.0 - level) / 2
        lo[ok] = beta.ppf(tail, a, b)
        hi[ok] = beta.isf(tail, a, b)
    return lo, hi


def entry_intervals(net: Any, node: str, mean: np.ndarray, sd: np.ndarray, level: float, draws: int,
                    random_state: Any) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed ``level`` credible intervals of every entry of ``cpt(node)``.

    Where the posterior of a configuration is one Dirichlet (``bayes``), the exact Beta
    marginal's quantiles (a Beta is fixed by its mean and sd).  Where it is a mixture
    (over a sampler's states, the hyperparameters' posterior, a domain concentration,
    and the predictive of unseen configurations), quantiles of ``draws`` joint
    posterior draws (``random_state`` seeds them): a Beta matched to the mixture's
    mean and sd misplaces its tails, which for an entry with most of its mass near 0
    is the whole interval.  Estimates with sds but no posterior state (``hdp`` with
    ``record_states=0``, networks saved by older versions): the matched Beta.  The
    estimators without a posterior give their own (``entry_interval``): ``mle`` the
    Wilson score intervals, the others the percentiles of ``draws`` bootstrap
    replicates (:mod:`pybncsmooth.estimators.bootstrap`)."""
    post = posterior_of(net.cpd(node))
    cpd = net.cpd(node)
    k = len(net._prefix)
    if hasattr(post, "entry_interval") and isinstance(cpd, TreeCPD):
        rng = np.random.default_rng(check_random_state(random_state))
        lo, hi = post.entry_interval(cpd.tree, level, draws, rng)
        return _as_tables(cpd, lo[None], k)[0], _as_tables(cpd, hi[None], k)[0]
    if post is None or getattr(post, "beta_exact", False) or draws == 0:
        return beta_interval(mean, sd, level)
    rng = np.random.default_rng(check_random_state(random_state))
    return draw_intervals(_as_tables(cpd, cpd_draws(net, cpd, draws, rng), k), level)


def interval_kind(net: Any, node: str | None = None, *, draws: bool = False) -> str:
    """What the intervals of ``node`` (default: the first node) are: ``"credible"`` (a
    posterior's), ``"confidence"`` (``mle``'s proportion intervals) or ``"bootstrap"``
    (percentiles of a bootstrap over rows); ``draws=True``: those of its parameter
    draws (queries), where ``mle``'s are its bootstrap's."""
    post = posterior_of(net.cpd(node if node is not None else net.nodes[0]))
    return getattr(post, "draw_kind" if draws else "interval_kind", "credible")
